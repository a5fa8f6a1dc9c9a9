"""The ranking stage: a fitted linear model re-scores candidate files and chunks from their features.

Why linear and listwise: a few hundred labeled queries fit a few dozen weights without overfitting when
the loss is the one the product is judged by, "the gold file first": for each query, the softmax of the
candidates' scores, and the loss is minus the log-probability of its gold files (ListNet with one-hot
targets). It is convex, so Newton's method finds the optimum in a few steps with numpy alone, and the
weights are plain numbers in a JSON file with their provenance (`noul rank-fit`, per embedder, under
models/ranking/). The softmax also gives each candidate a probability among the candidates, which is the
score results show.

Without a fitted file for the embedder in use the engine keeps reciprocal rank fusion and says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from noul_lsp.models.registry import (
    RANKING_DIR,
    fitted_file_name,
    fitted_parameters,
)
from noul_lsp.retrieval.features import FEATURES, Blocks, root_features


@dataclass(frozen=True)
class RankModel:
    """Standardised features -> a linear score; `features` names the columns it reads."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    embedder: str
    provenance: dict
    #: per cross-encoder id, the weight of its logit against the ranker's log-probability in the rerank
    #: stage (`noul rank-fit --rerank`); a reranker without one orders its short list alone
    rerank_weights: dict = field(default_factory=dict)
    _linear: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def score(self, matrix: np.ndarray, columns: tuple[str, ...]) -> np.ndarray:
        """Scores of feature rows whose columns are named by `columns` (a superset of `features`)."""
        if not len(matrix):
            return np.zeros(0, dtype=np.float64)
        weights, bias = self.linear(tuple(columns))
        return matrix @ weights + bias

    def linear(self, columns: tuple[str, ...]) -> tuple[np.ndarray, float]:
        """(weights over `columns`, bias) such that `matrix @ weights + bias` is the model's score: the
        standardisation folded into the weights, so that scoring never copies the feature rows (thousands
        of candidate chunks a query), and a column the model does not read weighs 0."""
        cached = self._linear.get(columns)
        if cached is None:
            folded = self.coef / self.scale
            index = {name: i for i, name in enumerate(columns)}
            weights = np.zeros(len(columns), dtype=np.float64)
            for position, name in enumerate(self.features):
                if name in index:
                    weights[index[name]] = folded[position]
            # a column the rows lack reads as 0, standardised to -mean/scale (as the unfolded form had it)
            cached = (weights, -float(self.mean @ folded))
            self._linear[columns] = cached
        return cached

    def to_json(self) -> dict:
        data = {"embedder": self.embedder, "features": list(self.features), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "coef": self.coef.tolist(), "provenance": self.provenance}
        if self.rerank_weights:
            data["rerank"] = self.rerank_weights
        return data

    @classmethod
    def from_json(cls, data: dict) -> RankModel:
        return cls(tuple(data["features"]), np.array(data["mean"], dtype=np.float64),
                   np.array(data["scale"], dtype=np.float64), np.array(data["coef"], dtype=np.float64),
                   data["embedder"], data.get("provenance", {}), data.get("rerank", {}))

    def fingerprint(self) -> str:
        """A short digest of the fitted numbers: what a workspace's level (reference.py) was measured with,
        so that a level measured under a ranker since refitted is measured again, not read in the wrong units."""
        digest = hashlib.sha1(",".join(self.features).encode())
        for numbers in (self.mean, self.scale, self.coef):
            digest.update(np.ascontiguousarray(numbers, dtype=np.float64).tobytes())
        return digest.hexdigest()[:12]

    def rerank_weight(self, reranker: str) -> float | None:
        """The fitted weight of `reranker`'s logit; None without one, or when the fit chose the logit alone."""
        entry = self.rerank_weights.get(reranker) or {}
        return None if entry.get("weight") is None else float(entry["weight"])


@dataclass(frozen=True)
class RankingQuery:
    """One labeled query's candidates for fitting: feature rows and which rows are gold."""

    group: str  # the repository (leave-one-repository-out holds out a group)
    matrix: np.ndarray
    gold: np.ndarray  # bool per row
    #: the query's share of the loss (labels of another kind than the dev set's count as a whole apart)
    weight: float = 1.0


def untrained_model(embedder: str) -> RankModel:
    """All-zero weights over every feature: scores nothing, but lets the stage build its feature rows."""
    size = len(FEATURES)
    return RankModel(FEATURES, np.zeros(size), np.ones(size), np.zeros(size), embedder, {})


def softmax(scores: np.ndarray) -> np.ndarray:
    if not len(scores):
        return scores
    shifted = np.exp(scores - scores.max())
    return shifted / shifted.sum()


def fit_rank_model(queries: list[RankingQuery], features: tuple[str, ...], *, embedder: str, l2: float = 1.0,
                   iterations: int = 30, provenance: dict | None = None) -> RankModel:
    """Minimise Σ_queries weight·−mean(log softmax(score)[gold]) + l2/2·|w|² over standardised features
    (Newton). Queries without a gold candidate carry no signal and are left out."""
    usable = [q for q in queries if q.gold.any() and len(q.matrix) > 1]
    if not usable:
        raise ValueError("no labeled query has its gold file among the candidates: nothing to fit")
    stacked = np.vstack([q.matrix for q in usable]).astype(np.float64)
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    standardised = [((q.matrix - mean) / scale, q.gold.astype(np.float64) / q.gold.sum(), q.weight) for q in usable]

    def loss(w: np.ndarray) -> float:
        total = 0.5 * l2 * float(w @ w)
        for x, target, weight in standardised:
            scores = x @ w
            top = scores.max()
            log_partition = top + np.log(np.exp(scores - top).sum())
            total -= weight * float(target @ (scores - log_partition))
        return total

    weights = np.zeros(len(features))
    current = loss(weights)
    for _ in range(iterations):
        gradient = l2 * weights
        hessian = l2 * np.eye(len(features))
        for x, target, weight in standardised:
            p = softmax(x @ weights)
            gradient += weight * (x.T @ (p - target))
            weighted = x * p[:, None]
            hessian += weight * (x.T @ weighted - np.outer(weighted.sum(axis=0), weighted.sum(axis=0)))
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(features)), gradient)
        size = 1.0  # Newton's full step can overshoot far from the optimum: halve until the loss falls
        while size > 1e-4 and loss(weights - size * step) > current:
            size /= 2
        weights = weights - size * step
        previous, current = current, loss(weights)
        if abs(previous - current) < 1e-9 * max(1.0, abs(current)):
            break
    return RankModel(tuple(features), mean, scale, weights, embedder, provenance or {})


def ranking_file_name(embedder_key: str) -> str:
    return fitted_file_name(embedder_key)


def load_rank_model(embedder_key: str | None) -> RankModel | None:
    """The model fitted for exactly this embedder (id + token budget): $NOUL_RANKING_DIR, then
    models/ranking; None without one."""
    if not embedder_key:
        return None
    return fitted_parameters("ranking", embedder_key, RANKING_DIR, identity_key="embedder", parse=RankModel.from_json)


@dataclass
class Ranking:
    """The ranking stage's output. `scored` holds files (file mode) or chunks (chunk mode), best first, each
    scored by its probability among the candidates (the softmax of the model's scores)."""

    scored: list[tuple[float, list[tuple[int, int]]]]
    #: candidate chunks best first by their own score (what a reranker's short list is cut from)
    chunk_order: list[tuple[int, int]]
    #: for `noul rank-fit`: the candidate files' paths and feature rows (only when asked to record)
    record: dict
    #: the model's score of its first file minus the median score of its candidate files, before the
    #: softmax: how far the best file stands above a typical candidate in the ranker's own units, which
    #: P(here) reads (the probabilities keep the lead over the runner-up only; the raw score's level moves
    #: with the kind of query, this difference much less: docs/benchmarks.md)
    lead: float | None = None
    #: the dense leg's best cosine within the ranker's first file: whether the file the ranker chose is also
    #: close in meaning, where the top cosine may sit in a file it passed over. Read from the best-ranked
    #: file the dense leg has a vector of (while the transformer fills in, or in a search of several roots
    #: of which some have no dense leg, the first file may have none: its filler, the query's mean cosine,
    #: would read as a weak match); None when no candidate file has one
    top_cosine: float | None = None
    #: the same from the static leg, which covers every chunk: what P(here) reads while the transformer fills
    #: in (calibrate.STATIC_EVIDENCE); None when no candidate file has a static vector
    top_static_cosine: float | None = None
    #: the two best files' probabilities among the candidates, whatever the mode shows (files or chunks):
    #: P(here) reads the ranker's confidence in a file, and a find must not change its mind with the display
    top_probabilities: list[float] = field(default_factory=list)
    #: whether the ranker's first file defines a name the query gives (the `defines` column, max over its
    #: chunks) or is the file the query names by its path: for a bare name, the best evidence that it is here,
    #: wherever else it is defined too
    top_defines: float | None = None


#: chunks of one file a ranked file carries (its hit's ranges; the rerank short list takes at most 3 a file)
CHUNKS_PER_FILE = 3
#: the head of the global chunk order handed on (the rerank short list and chunk-mode hits are cut from it)
CHUNK_ORDER_SIZE = 500
#: where a file row holds its best chunk's cosine under the dense leg, and whether none of its chunks has a
#: vector (pooled by minimum: 1 only when every chunk misses one) (Ranking.top_cosine)
_DENSE_COLUMN = FEATURES.index("dense")
_DENSE_MISSING_COLUMN = FEATURES.index("dense_missing")
_STATIC_COLUMN = FEATURES.index("static")
_STATIC_MISSING_COLUMN = FEATURES.index("static_missing")
#: where a file row holds whether one of its chunks defines a name of the query, and whether the query names the
#: file by its path (Ranking.top_defines: a bare `pubspec.yaml` or `Info.plist` is here when that file is first;
#: it was "probably not here", P(here) 0.06 and 0.04, with the file first)
_DEFINES_COLUMN = FEATURES.index("defines")
_PATH_NAMED_COLUMN = FEATURES.index("path_named")


def _best_ranked_cosine(cosines: np.ndarray, file_scores: np.ndarray) -> float | None:
    """A leg's cosine of the best-ranked file it has a vector of (`cosines` NaN where it has none)."""
    covered = np.flatnonzero(~np.isnan(cosines))
    return float(cosines[covered[np.argmax(file_scores[covered])]]) if len(covered) else None


def _top(scores: np.ndarray, size: int) -> np.ndarray:
    """Positions of the `size` best scores, best first (argpartition, then sort only those)."""
    if len(scores) > size:
        head = np.argpartition(-scores, size - 1)[:size]
        return head[np.argsort(-scores[head], kind="stable")]
    return np.argsort(-scores, kind="stable")


def _seed_terms(arrays):
    """features.SeedTerms over one corpus state: its rows' terms as codes, with their idf."""

    def terms_of(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        positions, ids = arrays.row_term_pairs(rows)
        idf = arrays.bm25.idf
        known = ids < len(idf)
        values = np.zeros(len(ids), dtype=np.float32)
        values[known] = idf[ids[known]]
        return positions, arrays.vocabulary.codes_of(ids), values

    return terms_of


def rank_candidates(model: RankModel, candidates: list, fused, analysis, *, mode: str, rrf_k: int,
                    record: bool = False) -> Ranking:
    """Score every candidate file and chunk of every root with `model` (features.py builds the rows).
    Only what later stages read becomes Python objects: each file's best chunks and the head of the chunk
    order."""
    file_roots, file_ids, file_scores, file_defines = [], [], [], []
    file_cosines: dict[str, list[np.ndarray]] = {"dense": [], "static": []}
    chunk_roots, chunk_rows, chunk_scores, chunk_files = [], [], [], []
    recorded: list[tuple[str, list[float]]] = []
    offset = 0
    for index, candidate in enumerate(candidates):
        arrays = candidate.arrays
        if not arrays.rows:
            continue
        rows, scores = fused.rows_of(index)
        built = root_features(analysis=analysis, table=arrays.symbols, row_file=arrays.row_file,
                              term_ids=arrays.vocabulary, idf=arrays.bm25.idf, lexical=candidate.lexical_all,
                              dense=candidate.dense_all, fused_rows=rows, fused_scores=scores, rrf_k=rrf_k,
                              allowed=candidate.allowed, rows_containing=arrays.bm25.contains,
                              static=candidate.static_all, seed_terms=_seed_terms(arrays),
                              allowed_files=candidate.allowed_files,
                              lexical_best=float(candidate.bm25[1][0]) if len(candidate.bm25[1]) else 0.0)
        if not len(built.files):
            continue
        file_roots.append(np.full(len(built.files), index, dtype=np.int64))
        file_ids.append(built.files.astype(np.int64))
        file_scores.append(model.score(built.file_matrix, FEATURES))
        # NaN for a file without a vector: this root has no such leg, or none of the file's chunks is embedded
        for leg, values, column, missing in (("dense", candidate.dense_all, _DENSE_COLUMN, _DENSE_MISSING_COLUMN),
                                             ("static", candidate.static_all, _STATIC_COLUMN, _STATIC_MISSING_COLUMN)):
            covered = built.file_matrix[:, missing] < 1 if values is not None and not np.isnan(values.best) \
                else np.zeros(len(built.files), dtype=bool)
            file_cosines[leg].append(np.where(covered, built.file_matrix[:, column], np.nan))
        file_defines.append(np.maximum(built.file_matrix[:, _DEFINES_COLUMN], built.file_matrix[:, _PATH_NAMED_COLUMN]))
        chunk_roots.append(np.full(len(built.rows), index, dtype=np.int64))
        chunk_rows.append(built.rows.astype(np.int64))
        chunk_scores.append(built.row_scores(*model.linear(FEATURES)))
        chunk_files.append(built.row_owner.astype(np.int64) + offset)  # position among all candidate files
        offset += len(built.files)
        if record:
            recorded.extend((arrays.files[f], [round(float(v), 5) for v in row])
                            for f, row in zip(built.files.tolist(), built.file_matrix, strict=True))
    payload = {"features": list(FEATURES), "files": [p for p, _ in recorded], "matrix": [r for _, r in recorded]} \
        if record else {}
    if not file_scores:
        return Ranking([], [], payload)
    roots, rows, row_scores, owners = (np.concatenate(a) for a in (chunk_roots, chunk_rows, chunk_scores, chunk_files))
    all_file_scores = np.concatenate(file_scores)
    lead = float(all_file_scores.max() - np.median(all_file_scores))
    top_cosine, top_static_cosine = (_best_ranked_cosine(np.concatenate(file_cosines[leg]), all_file_scores)
                                     for leg in ("dense", "static"))
    file_probabilities = softmax(all_file_scores)
    confidence = {"top_probabilities": np.sort(file_probabilities)[::-1][:2].tolist(),
                  "top_defines": float(np.concatenate(file_defines)[np.argmax(all_file_scores)])}
    head = _top(row_scores, CHUNK_ORDER_SIZE)
    chunk_order = list(zip(roots[head].tolist(), rows[head].tolist(), strict=True))
    if mode != "files":
        probabilities = softmax(row_scores)
        return Ranking([(p, [k]) for p, k in zip(probabilities[head].tolist(), chunk_order, strict=True)], chunk_order,
                       payload, lead, top_cosine, top_static_cosine, **confidence)
    # each file's best chunks: rows grouped by file (owners ascend), the first CHUNKS_PER_FILE of each, best first
    kept = Blocks.of(owners).top(row_scores, CHUNKS_PER_FILE)
    best_chunks: dict[int, list[tuple[int, int]]] = {}
    for owner, root, row in zip(owners[kept].tolist(), roots[kept].tolist(), rows[kept].tolist(), strict=True):
        best_chunks.setdefault(owner, []).append((root, row))
    ranked_files = np.argsort(-all_file_scores, kind="stable").tolist()
    scored = [(float(file_probabilities[f]), best_chunks[f]) for f in ranked_files if f in best_chunks]
    return Ranking(scored, chunk_order, payload, lead, top_cosine, top_static_cosine, **confidence)
