"""Calibrated probabilities: P(here) for a find, P(this file is an answer) for each result.

Raw scores are not probabilities and their scale moves between codebases, so both probabilities come
from logistic models over *scale-free* features of the result list (normalised fused scores and margins,
how much of the query's idf mass BM25 matched, the top cosine and its margin, whether the two legs agree),
fitted on labeled answerable and not_here queries by `noul calibrate` and stored per embedder+reranker
pair under models/calibration/. Without a matching file the probabilities are None: never a guess.

P(here) has one model per query shape: an issue text that is not about this workspace names classes,
files and errors that are nowhere in it, and almost every feature separates it; a one-line description
of a missing feature still matches real code in words and meaning, and rests on weaker evidence that a
model fitted mostly on issue texts weighs wrongly (held out, one model for both put descriptions at
AUROC 0.74, ECE 0.12; docs/benchmarks.md).

Where the fitted ranker ran, a one-line query's model reads two features only: the ranker's lead (its
first file's score minus its median candidate's, in the ranker's own units) and the cosine of that first
file (its best chunk's, under the dense leg). The ranker weighs every code-aware signal of a file; its
softmax probability keeps only the first file's lead over the others, which a near miss with one
plausible file has too. Fourteen features over about a hundred labeled descriptions fitted noise; the
two order them better held out and stay calibrated on one-line queries of another kind, commit messages
(docs/benchmarks.md). The raw score orders descriptions as well but its level moves with the kind of
query; the lead's much less. The cosine is the first file's, not the best anywhere: where the thing
described is absent, the best cosine often sits in a file the ranker passed over (a near miss in
meaning), and the file it chose is close in words alone (held out: AUROC 0.808 -> 0.842 on the dev
descriptions, docs/benchmarks.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from noul_lsp.models.registry import (
    CALIBRATION_DIR,
    fitted_file_name,
    fitted_parameters,
)
from noul_lsp.retrieval.aggregate import file_order
from noul_lsp.retrieval.analyse import LONG_QUERY_TERMS
from noul_lsp.retrieval.bm25 import bm25_idf
from noul_lsp.retrieval.reference import LEVELLED_COLUMNS

if TYPE_CHECKING:
    from noul_lsp.retrieval.rank import Ranking

QUERY_FEATURES = ("fused_top", "fused_margin_2", "fused_margin_5", "bm25_coverage", "dense_top", "dense_margin_5",
                  "legs_agree", "top5_overlap", "query_terms_log", "long_query", "names_project_long",
                  "rank_top_probability", "rank_margin_2", "multi_line", "symbol_query")
#: the query shapes P(here) is fitted for apart (`query_shape`); "all" is the one model of an older file. A
#: bare symbol is a shape of its own where the records hold enough of them (an absent name is told by the
#: share of the query's idf BM25 matched, a description's near miss is not); without its model, the short one
HERE_SHAPES = ("short", "long", "symbol")
#: the model a shape is read by when a file has none of its own (before "all", an older file's one model)
SHAPE_FALLBACK = {"symbol": "short"}
#: what tells the shapes apart: a model of one shape leaves them out. Within a shape they say little, and
#: a query shorter than any it was fitted on would be read far outside its range (a three-word query got
#: P(here) 0.08 from the number of its terms alone)
SHAPE_FEATURES = ("query_terms_log", "long_query", "multi_line", "symbol_query")
#: the fitted ranker's lead (rank.Ranking.lead)
RANK_LEAD = "rank_lead"
#: the dense leg's cosine of the ranker's first file (rank.Ranking.top_cosine), where both ran
RANK_TOP_COSINE = "rank_top_cosine"
#: whether the ranker's first file defines a name the query gives or is the file it names by its path
#: (rank.Ranking.top_defines), where it ran
RANK_TOP_DEFINES = "rank_top_defines"
#: the symbol shape's P(here) features where every record carries RANK_TOP_DEFINES: a bare name is here when
#: a file defines it, however many do (the list features alone read a name defined in two files, `url_for`,
#: `Blueprint`, as a split decision: P(here) 0.30 and 0.59 in flask, docs/benchmarks.md)
SYMBOL_FEATURES_WITH_DEFINES = (*(f for f in QUERY_FEATURES if f not in SHAPE_FEATURES), RANK_TOP_DEFINES)
#: the short shape's P(here) features where the fitted ranker ran (a find without one has no lead, and the
#: calibration file of a pair without a fitted ranker is fitted on QUERY_FEATURES)
RANKED_SHORT_FEATURES = (RANK_LEAD, RANK_TOP_COSINE)
#: where every short record carries the lead against the workspace's own level (reference.py), the short
#: shape reads SHORT_FEATURES_WITH_LEVEL, and its model has an `UNLEVELLED` twin on RANKED_SHORT_FEATURES for a
#: find without a level (several roots, an organisation search, a small workspace)
UNLEVELLED = ":unlevelled"
#: columns that only some finds have: a model that reads one cannot read a find without it
OPTIONAL_COLUMNS = (RANK_LEAD, RANK_TOP_COSINE, RANK_TOP_DEFINES, *sorted(LEVELLED_COLUMNS))
#: set (1) in the features of a find whose dense evidence is the static leg's: the transformer has not embedded
#: every chunk (or does not run), so its cosines would read a file it has not reached as a weak match, while
#: the static leg covers every chunk from the first second. Such a find is read by the models fitted on the
#: instant pipeline's records (the `INSTANT` ones), never by those fitted on the transformer's evidence
STATIC_EVIDENCE = "static_evidence"
#: the prefix of the P(here) models, in a pair's file, that read the static leg's evidence
INSTANT = "instant:"
HIT_FEATURES = ("rank_log", "score_ratio", "bm25_inverse_rank", "dense_inverse_rank", "fused_top", "dense_top",
                "bm25_coverage")
CALIBRATED_LEGS = ("bm25", "dense")
#: the legs of a find read with the static leg's evidence (STATIC_EVIDENCE)
STATIC_CALIBRATED_LEGS = ("bm25", "static")


def query_features(*, file_scores: list[float], rrf_k: int, bm25_top: float, bm25_idf_mass: float,
                   dense_cosines: list[float], bm25_files: list[str], dense_files: list[str],
                   query_terms: int, names_project: bool = False, ranking: Ranking | None = None,
                   multi_line: bool = False, symbol: bool = False, static_evidence: bool = False) -> dict[str, float]:
    """Scale-free features of one result list (see the module docstring); where the fitted ranker ran
    (`ranking`), its confidence in its first file, its lead, that file's cosine and whether it defines a
    name of the query are more; `symbol`: the query is a bare name (analyse.py's "symbol" shape);
    `static_evidence`: `dense_cosines` and `dense_files` are the static leg's, and so is the cosine of the
    ranker's first file (STATIC_EVIDENCE)."""
    ranked_probabilities = ranking.top_probabilities if ranking is not None else []
    best = 2.0 / (rrf_k + 1)  # a chunk ranked first by both legs
    top = file_scores[0] if file_scores else 0.0
    second = file_scores[1] if len(file_scores) > 1 else 0.0
    fifth = file_scores[4] if len(file_scores) > 4 else 0.0
    dense_top = dense_cosines[0] if dense_cosines else 0.0
    dense_fifth = dense_cosines[4] if len(dense_cosines) > 4 else (dense_cosines[-1] if dense_cosines else 0.0)
    features = {
        "fused_top": top / best,
        "fused_margin_2": (top - second) / top if top else 0.0,
        "fused_margin_5": (top - fifth) / top if top else 0.0,
        "bm25_coverage": bm25_top / bm25_idf_mass if bm25_idf_mass > 0 else 0.0,
        "dense_top": dense_top,
        "dense_margin_5": dense_top - dense_fifth,
        "legs_agree": float(bool(bm25_files) and bool(dense_files) and bm25_files[0] == dense_files[0]),
        "top5_overlap": len(set(bm25_files[:5]) & set(dense_files[:5])) / 5.0,
        "query_terms_log": math.log1p(query_terms),
        "long_query": float(query_terms > LONG_QUERY_TERMS),
        # an issue-length text that names this workspace's project (workspace/project.py) was written about
        # it; in a one-line description the name is rare and says little (measured: docs/benchmarks.md)
        "names_project_long": float(names_project and query_terms > LONG_QUERY_TERMS),
        # the fitted ranker's own confidence: the top file's probability among the candidates, its lead
        "rank_top_probability": ranked_probabilities[0] if ranked_probabilities else 0.0,
        "rank_margin_2": (ranked_probabilities[0] - ranked_probabilities[1])
        if ranked_probabilities and len(ranked_probabilities) > 1 else 0.0,
        # a pasted issue, a traceback, a prompt: several lines; a palette query is one
        "multi_line": float(multi_line),
        "symbol_query": float(symbol),
    }
    if static_evidence:
        features[STATIC_EVIDENCE] = 1.0
    if ranking is not None:
        top_cosine = ranking.top_static_cosine if static_evidence else ranking.top_cosine
        for column, value in ((RANK_LEAD, ranking.lead), (RANK_TOP_COSINE, top_cosine),
                              (RANK_TOP_DEFINES, ranking.top_defines)):
            if value is not None:
                features[column] = value
    return features


def query_shape(features: dict[str, float]) -> str:
    """Which P(here) model a find's features are read by: "long" (an issue text, an agent's prompt: many
    terms or several lines), "symbol" (a bare name; a file without that model reads it with the short
    one) or "short" (a one-line description)."""
    if features.get("long_query") or features.get("multi_line"):
        return "long"
    return "symbol" if features.get("symbol_query") else "short"


def hit_features(query: dict[str, float], *, rank: int, score: float, top_score: float, bm25_rank: int | None,
                 dense_rank: int | None) -> dict[str, float]:
    """A hit's P(answer) features; `dense_rank`: its rank in the leg of the find's dense evidence (the
    static leg's where STATIC_EVIDENCE is set)."""
    return {
        "rank_log": math.log(rank),
        "score_ratio": score / top_score if top_score else 0.0,
        "bm25_inverse_rank": 1.0 / bm25_rank if bm25_rank else 0.0,
        "dense_inverse_rank": 1.0 / dense_rank if dense_rank else 0.0,
        "fused_top": query["fused_top"],
        "dense_top": query["dense_top"],
        "bm25_coverage": query["bm25_coverage"],
    }


@dataclass
class LogisticModel:
    """Standardised features -> sigmoid(w·x + b). Small, explicit, and stored as plain numbers."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def predict(self, rows: list[dict[str, float]]) -> np.ndarray:
        x = np.array([[row.get(name, 0.0) for name in self.features] for row in rows], dtype=np.float64)
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def to_json(self) -> dict:
        return {"features": list(self.features), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "coef": self.coef.tolist(), "intercept": self.intercept}

    @classmethod
    def from_json(cls, data: dict) -> LogisticModel:
        return cls(tuple(data["features"]), np.array(data["mean"], dtype=np.float64),
                   np.array(data["scale"], dtype=np.float64), np.array(data["coef"], dtype=np.float64),
                   float(data["intercept"]))


def fit_logistic(rows: list[dict[str, float]], labels: list[int], features: tuple[str, ...], *,
                 l2: float = 1.0, iterations: int = 50, weights: list[float] | None = None) -> LogisticModel:
    """L2-regularised logistic regression by Newton's method (IRLS) on standardised features; `weights`
    gives each row its share of the loss (default: 1 each)."""
    x = np.array([[row.get(name, 0.0) for name in features] for row in rows], dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    share = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    xs = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    coefficients = np.zeros(xs.shape[1])
    penalty = np.full(xs.shape[1], l2)
    penalty[-1] = 0.0  # the intercept is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(xs @ coefficients, -30, 30)))
        gradient = xs.T @ (share * (p - y)) + penalty * coefficients
        hessian = (xs * (share * p * (1 - p))[:, None]).T @ xs + np.diag(penalty) + 1e-9 * np.eye(xs.shape[1])
        step = np.linalg.solve(hessian, gradient)
        coefficients -= step
        if np.abs(step).max() < 1e-8:
            break
    return LogisticModel(features, mean, scale, coefficients[:-1].copy(), float(coefficients[-1]))


@dataclass
class Calibration:
    """The fitted models for one embedder+reranker pair, with where they came from. `here` holds a P(here)
    model per query shape (HERE_SHAPES), or one under "all" (a file fitted before the split)."""

    pair: str
    here: dict[str, LogisticModel]
    hit: LogisticModel
    provenance: dict
    #: P(answer) of a hit where the find's dense evidence is the static leg's (STATIC_EVIDENCE); the P(here)
    #: models of such finds are those of `here` named with the INSTANT prefix
    hit_instant: LogisticModel | None = None

    def reads_static_evidence(self) -> bool:
        """Whether this file has models for finds whose dense evidence is the static leg's."""
        return self.hit_instant is not None and any(name.startswith(INSTANT) for name in self.here)

    def _models_of(self, features: dict[str, float]) -> tuple[LogisticModel | None, LogisticModel | None]:
        """The model this find's shape is read by (its own, its fallback's, or "all", among the INSTANT ones
        for a find with the static leg's evidence) and that model's unlevelled twin, if it has one."""
        prefix = INSTANT if features.get(STATIC_EVIDENCE) else ""
        shape = query_shape(features)
        name = next((prefix + n for n in (shape, SHAPE_FALLBACK.get(shape), "all") if n and prefix + n in self.here),
                    None)
        return (None, None) if name is None else (self.here[name], self.here.get(name + UNLEVELLED))

    def reads_level(self, features: dict[str, float]) -> bool:
        """Whether this find's shape has a model that reads the workspace's level (reference.py)."""
        model = self._models_of(features)[0]
        return model is not None and any(c in LEVELLED_COLUMNS for c in model.features)

    def here_probability(self, features: dict[str, float]) -> float | None:
        """None where every model of the shape reads a column this find lacks: the ranker's lead or its first
        file's cosine (no fitted ranker ranked candidates, or no candidate has a vector), read as 0, would be
        a confident guess. A find without the workspace's level is read by the unlevelled twin. None too for
        a find with the static leg's evidence where the file has no model fitted on such finds."""
        for model in self._models_of(features):
            if model is not None and all(c in features for c in OPTIONAL_COLUMNS if c in model.features):
                return float(model.predict([features])[0])
        return None


    def hit_probabilities(self, rows: list[dict[str, float]], here: float, *,
                          static_evidence: bool = False) -> list[float]:
        """P(file is an answer) = P(here) · P(answer | here, its features), for `rows` in the order shown,
        never above the probability of a hit shown before it. The hit model reads each hit's ranks in the
        legs, not what the ranking stage knows (roles among them): a test both legs put first but the ranker
        put ninth read 0.18 under a second hit's 0.05. The order is the better judge (over the dev bench's
        697 finds the running minimum keeps the hits' AUROC, 0.933 -> 0.932, and ECE, 0.006 -> 0.007)."""
        if not rows:
            return []
        model = self.hit_instant if static_evidence and self.hit_instant is not None else self.hit
        return [float(here * p) for p in np.minimum.accumulate(model.predict(rows))]

    def to_json(self) -> dict:
        data = {"pair": self.pair, "here": {shape: model.to_json() for shape, model in self.here.items()},
                "hit": self.hit.to_json()}
        if self.hit_instant is not None:
            data["hit_instant"] = self.hit_instant.to_json()
        return data | {"provenance": self.provenance}

    @classmethod
    def from_json(cls, data: dict) -> Calibration:
        here = data["here"]
        models = {"all": LogisticModel.from_json(here)} if "features" in here else {
            shape: LogisticModel.from_json(model) for shape, model in here.items()}
        hit_instant = LogisticModel.from_json(data["hit_instant"]) if "hit_instant" in data else None
        return cls(data["pair"], models, LogisticModel.from_json(data["hit"]), data.get("provenance", {}), hit_instant)


def pair_name(embedder_key: str | None, reranker: str = "") -> str:
    return f"{embedder_key or 'lexical'}+{reranker or 'none'}"


def calibration_file_name(pair: str) -> str:
    return fitted_file_name(pair)


def load_calibration(pair: str) -> Calibration | None:
    """The calibration fitted for exactly this pair ($NOUL_CALIBRATION_DIR, then models/calibration), or
    None (results then say it is uncalibrated)."""
    return fitted_parameters("calibration", pair, CALIBRATION_DIR, identity_key="pair", parse=Calibration.from_json)


def result_features(analysis_terms: list[str], candidates: list, scored, fused, term_idf: dict[str, float] | None,
                    rrf_k: int, project_names: frozenset[str], ranking: Ranking | None = None,
                    multi_line: bool = False, symbol: bool = False, static_evidence: bool = False) -> dict[str, float]:
    """The P(here) features of one find (see `query_features`): from the fused file scores (`scored`), the
    legs' lists (`fused`), and the fitted ranker's `ranking` when it ran; with `static_evidence`, the dense
    evidence is the static leg's (STATIC_EVIDENCE)."""
    if term_idf is None:
        arrays = candidates[0].arrays
        unknown = float(bm25_idf(arrays.live_rows, np.zeros(1))[0])
        idf = arrays.bm25.idf
        ids = np.array([arrays.vocabulary.get(t, -1) for t in analysis_terms], dtype=np.int64)
        known = (ids >= 0) & (ids < len(idf))
        values = np.zeros(len(ids))
        if known.any():
            values[known] = idf[ids[known]]  # one gather: a corpus with a delta computes its idf when asked
        # a term no live row holds (never seen, or only in deleted files: idf 0) weighs as absent
        mass = sum(value or unknown for value in values.tolist())
    else:
        mass = sum(term_idf.values())
    bm25_top = max((float(c.bm25[1][0]) for c in candidates if len(c.bm25[1])), default=0.0)
    cosines = sorted((float(v) for c in candidates for v in (c.static if static_evidence else c.dense)[1][:5]),
                     reverse=True)
    return query_features(file_scores=[score for score, _ in scored[:5]], rrf_k=rrf_k, bm25_top=bm25_top,
                          bm25_idf_mass=mass, dense_cosines=cosines,
                          bm25_files=file_order(fused.bm25_ranking, candidates),
                          dense_files=file_order(fused.static_ranking if static_evidence else fused.dense_ranking,
                                                 candidates), query_terms=len(analysis_terms),
                          names_project=not project_names.isdisjoint(analysis_terms),
                          ranking=ranking, multi_line=multi_line, symbol=symbol, static_evidence=static_evidence)


def apply_calibration(calibration: Calibration | None, pair: str, legs, features: dict[str, float], hits: list,
                      notes: list[str]) -> float | None:
    """P(here), and each hit's probability, when a calibration fits this pair and pipeline; else None."""
    if calibration is None:
        notes.append(f"uncalibrated: no calibration for {pair} (run `noul calibrate`)")
        return None
    static_evidence = bool(features.get(STATIC_EVIDENCE))
    if not set(STATIC_CALIBRATED_LEGS if static_evidence else CALIBRATED_LEGS) <= set(legs):
        return None  # fitted on the full pipeline; a single leg is another model
    if static_evidence and not calibration.reads_static_evidence():
        if hits:  # without a hit (a filter no file passes) there is nothing to calibrate, and the embedding is not why
            notes.append("uncalibrated until the transformer has embedded every chunk: the calibration for "
                         f"{pair} has no model of the static leg's evidence (refit it with `noul calibrate "
                         "--pipeline hybrid-all,instant`)")
        return None
    if not features.get("dense_top"):
        # no vector among the candidates (a find before any is made: BM25 answers alone)
        if hits:
            notes.append("uncalibrated until some chunks are embedded")
        return None
    here = calibration.here_probability(features)
    if here is None:
        missing = ("no fitted ranker ranked candidates here" if RANK_LEAD not in features
                   else "no file it ranked has a vector of the dense leg yet")
        read = ("whether the fitted ranker's first file defines the name" if query_shape(features) == "symbol"
                else "the fitted ranker's lead and the cosine of its first file")
        notes.append(f"uncalibrated: the calibration for {pair} reads {read}, and {missing}")
        return None
    top = hits[0].score if hits else 0.0
    rows = [hit_features(features, rank=h.rank, score=h.score, top_score=top, bm25_rank=h.bm25_rank,
                         dense_rank=h.static_rank if static_evidence else h.dense_rank) for h in hits]
    for hit, probability in zip(hits, calibration.hit_probabilities(rows, here, static_evidence=static_evidence),
                                strict=True):
        hit.probability = probability
    return here
