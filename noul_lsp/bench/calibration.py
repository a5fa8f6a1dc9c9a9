"""`noul calibrate`: fit P(here) and per-result probabilities on benchmark records, measured honestly.

Records come from `noul bench` (per_query.jsonl): answerable queries, the describe set's not_here
queries and SWE-bench issues asked against another repository (and, as extra training only, other
repositories' commit labels with their cross-repo negatives). Quality is measured leave-one-repository-
out (fit on every other repository, predict the held-out one), because the cut-off of raw scores moves
between codebases and a calibration must survive a codebase it has not seen. The file written is the
fit on everything, with those held-out figures as its provenance.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from noul_lsp.bench import metrics as m
from noul_lsp.retrieval.calibrate import (
    HERE_SHAPES,
    HIT_FEATURES,
    INSTANT,
    QUERY_FEATURES,
    RANKED_SHORT_FEATURES,
    SHAPE_FALLBACK,
    SHAPE_FEATURES,
    STATIC_EVIDENCE,
    SYMBOL_FEATURES_WITH_DEFINES,
    UNLEVELLED,
    Calibration,
    calibration_file_name,
    fit_logistic,
    hit_features,
    query_shape,
)
from noul_lsp.retrieval.reference import SHORT_FEATURES_WITH_LEVEL

#: a query shape gets its own P(here) model when its records hold at least this many of each kind;
#: otherwise every record's model answers for it
MIN_PER_KIND = 10


class CalibrationDataError(ValueError):
    pass


def load_records(paths: list[Path], pipeline: str) -> list[dict]:
    records = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            if (record["pipeline"] == pipeline and record.get("features") and record["searched"] in ("own", "cross-repo")
                    and record["kind"] in ("answerable", "not_here")):
                records.append(record)
    return records


def static_evidence(record: dict) -> bool:
    """Whether a record's P(here) features are the static leg's evidence (an instant find's)."""
    return bool(record["features"].get(STATIC_EVIDENCE))


def _hit_rows(record: dict) -> tuple[list[dict], list[int]]:
    gold = set(record["gold_files"])
    hits = record["hits"]
    top = hits[0]["score"] if hits else 0.0
    dense_rank = "staticRank" if static_evidence(record) else "denseRank"
    rows = [hit_features(record["features"], rank=h["rank"], score=h["score"], top_score=top,
                         bm25_rank=h.get("bm25Rank"), dense_rank=h.get(dense_rank)) for h in hits]
    return rows, [int(h["path"] in gold) for h in hits]


def _fit_here(records: list[dict], extra: Sequence[dict] = (), extra_weight: float = 1.0) -> dict:
    """One P(here) model per query shape that has enough of both kinds, and one over every record ("all")
    for the shapes that have not. `extra` records (other repositories' commit labels and their cross-repo
    negatives) train beside `records`, weighted so that those of a shape count `extra_weight` times as
    much together as the records of that shape: commit messages outnumber the descriptions many times.
    The short shape reads RANKED_SHORT_FEATURES (the ranker's lead, the cosine of its first file) where
    every record of it carries them, as every record of a pair with a fitted ranker and a dense leg does,
    and the lead against the workspace's level (SHORT_FEATURES_WITH_LEVEL, with an unlevelled twin) where
    every record of it carries that too. The symbol shape reads SYMBOL_FEATURES_WITH_DEFINES (the list
    features and whether the ranker's first file defines the name) where every record of it carries them.
    An extra record without a column a model reads (an older run, a commit asked of a workspace under
    reference.MIN_CHUNKS: no level) trains the models it can; each extra record keeps the weight it has among
    all the shape's extra records."""
    def fit(chosen: list[dict], theirs: list[dict], features: tuple[str, ...], of: int | None = None):
        """`of`: how many extra records the share is spread over (default: `theirs`; more when some lack
        a column and were left out)."""
        share = extra_weight * len(chosen) / (of or len(theirs)) if theirs else 0.0
        rows = chosen + theirs
        return fit_logistic([r["features"] for r in rows], [int(r["kind"] == "answerable") for r in rows],
                            features, weights=[1.0] * len(chosen) + [share] * len(theirs))

    def carrying(rows: list[dict], features: tuple[str, ...]) -> list[dict]:
        return [r for r in rows if set(features) <= r["features"].keys()]

    def all_carry(rows: list[dict], features: tuple[str, ...]) -> bool:
        return len(carrying(rows, features)) == len(rows)

    def fit_where_carried(mine: list[dict], theirs: list[dict], features: tuple[str, ...]):
        """Fitted on `mine` (all carry `features`) and those of `theirs` that carry them, at their share
        among all of `theirs`."""
        return fit(mine, carrying(theirs, features), features, len(theirs))

    models = {}
    within_shape = tuple(f for f in QUERY_FEATURES if f not in SHAPE_FEATURES)
    for shape in HERE_SHAPES:
        mine = [r for r in records if query_shape(r["features"]) == shape]
        theirs = [r for r in extra if query_shape(r["features"]) == shape]
        answerable = sum(r["kind"] == "answerable" for r in mine)
        if min(answerable, len(mine) - answerable) < MIN_PER_KIND:
            continue
        if shape == "symbol" and all_carry(mine, SYMBOL_FEATURES_WITH_DEFINES):
            models[shape] = fit_where_carried(mine, theirs, SYMBOL_FEATURES_WITH_DEFINES)
        elif shape == "short" and all_carry(mine, SHORT_FEATURES_WITH_LEVEL):
            models[shape] = fit_where_carried(mine, theirs, SHORT_FEATURES_WITH_LEVEL)
            # for a find without the workspace's level (several roots, an organisation, a small workspace)
            models[shape + UNLEVELLED] = fit_where_carried(mine, theirs, RANKED_SHORT_FEATURES)
        elif shape == "short" and all_carry(mine, RANKED_SHORT_FEATURES):
            models[shape] = fit_where_carried(mine, theirs, RANKED_SHORT_FEATURES)
        else:
            models[shape] = fit(mine, theirs, within_shape)
    if any(shape not in models and SHAPE_FALLBACK.get(shape) not in models for shape in HERE_SHAPES):
        models["all"] = fit(records, list(extra), QUERY_FEATURES)
    return models


def _fit(records: list[dict], extra: Sequence[dict] = (), extra_weight: float = 1.0) -> tuple:
    here = _fit_here(records, extra, extra_weight)
    answerable = [r for r in records if r["kind"] == "answerable"]
    hit_rows, hit_labels = [], []
    for record in answerable:
        rows, labels = _hit_rows(record)
        hit_rows += rows
        hit_labels += labels
    hit = fit_logistic(hit_rows, hit_labels, HIT_FEATURES)
    return here, hit


def _fitted(pair: str, records: list[dict], extra: Sequence[dict], extra_weight: float, provenance: dict,
            static: bool) -> Calibration:
    """A calibration of `records`' fit; with `static`, its models are those read with the static leg's
    evidence (the INSTANT ones, read against the static leg's own level where the records carry it, and
    `hit_instant`), and a complete file takes them beside the others."""
    here, hit = _fit(records, extra, extra_weight)
    if static:
        return Calibration(pair, {INSTANT + shape: model for shape, model in here.items()}, hit, provenance, hit)
    return Calibration(pair, here, hit, provenance)


def query_style(record: dict) -> str:
    """"description" (a one-line describe query), "symbol" (a bare name) or "issue" (a SWE-bench issue
    text): P(here) rests on different evidence for each, so its quality is reported for each."""
    return {"describe": "description", "symbol": "symbol"}.get(record.get("source", ""), "issue")


def _by_group(predictions: list[float], labels: list[int], groups: list[str]) -> dict:
    result = {}
    for group in sorted(set(groups)):
        mine = [i for i, g in enumerate(groups) if g == group]
        ps, ys = [predictions[i] for i in mine], [labels[i] for i in mine]
        result[group] = {"queries": len(mine), "answerable": int(sum(ys)), "auroc": m.auroc(ps, ys),
                         "ece": m.expected_calibration_error(ps, ys), "brier": m.brier(ps, ys)}
    return result


def held_out_fits(records: list[dict], extra: Sequence[dict] = (), extra_weight: float = 1.0,
                  repositories: Sequence[str] | None = None) -> Iterator[tuple[str, Calibration]]:
    """For each repository (default: those of `records`), the calibration fitted without it: without its
    records and without the extra records asked of it or written about it."""
    for held_out in sorted(repositories if repositories is not None else {r["searched_repo"] for r in records}):
        train = [r for r in records if r["searched_repo"] != held_out]
        if len({r["kind"] for r in train}) < 2:
            continue
        theirs = [r for r in extra if held_out not in (r["searched_repo"], r.get("repo"))]
        yield held_out, _fitted("held-out", train, theirs, extra_weight, {}, static_evidence(records[0]))


def leave_one_repository_out(records: list[dict], extra: Sequence[dict] = (), extra_weight: float = 1.0) -> dict:
    """Held-out predictions for every record, and the metrics over all of them; `extra` records train every
    fit (P(here) only) and are never scored."""
    repositories = sorted({r["searched_repo"] for r in records})
    here_predictions, here_labels, hit_predictions, hit_labels, groups = [], [], [], [], []
    for held_out, calibration in held_out_fits(records, extra, extra_weight, repositories):
        for record in (r for r in records if r["searched_repo"] == held_out):
            probability = calibration.here_probability(record["features"])
            here_predictions.append(probability)
            here_labels.append(int(record["kind"] == "answerable"))
            groups.append(query_style(record))
            rows, labels = _hit_rows(record)
            hit_predictions += calibration.hit_probabilities(rows, probability, static_evidence=static_evidence(record))
            hit_labels += labels
    return {
        "repositories": repositories,
        "queries": len(here_labels),
        "answerable": int(sum(here_labels)),
        "not_here": int(len(here_labels) - sum(here_labels)),
        "auroc": m.auroc(here_predictions, here_labels),
        "ece": m.expected_calibration_error(here_predictions, here_labels),
        "brier": m.brier(here_predictions, here_labels),
        "hit_ece": m.expected_calibration_error(hit_predictions, hit_labels),
        "hit_brier": m.brier(hit_predictions, hit_labels),
        "by_query_style": _by_group(here_predictions, here_labels, groups),
        "_here": (here_predictions, here_labels),
        "_hit": (hit_predictions, hit_labels),
    }


def reliability_plot(held_out: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, key, title in ((axes[0], "_here", "P(here), leave-one-repository-out"),
                           (axes[1], "_hit", "P(file is an answer)")):
        predictions, labels = (np.asarray(v, dtype=float) for v in held_out[key])
        bins = np.minimum((predictions * 10).astype(int), 9)
        xs, ys, ns = [], [], []
        for b in range(10):
            members = bins == b
            if members.any():
                xs.append(predictions[members].mean())
                ys.append(labels[members].mean())
                ns.append(int(members.sum()))
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        ax.plot(xs, ys, marker="o")
        for x, y, n in zip(xs, ys, ns, strict=True):
            ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("predicted probability")
        ax.set_ylabel("observed frequency")
        ax.set_title(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def calibrate(paths: list[Path], *, pipeline: str, out_dir: Path, plot: Path | None = None,
              extra_paths: Sequence[Path] = (), extra_weight: float = 1.0) -> tuple[Path, dict]:
    """Fit P(here) and P(answer) on `paths`' records, measured leave-one-repository-out, and write the
    pair's file. `pipeline` may name several (`hybrid-all,instant`): the records whose dense evidence is the
    static leg's (an instant find's, STATIC_EVIDENCE) fit the file's INSTANT models, the others the rest,
    each measured apart (the instant ones under `instant_leave_one_repository_out`, and in the metrics
    returned under "instant"). `extra_paths` hold records that only train P(here) (`noul train labels` of
    other repositories, benched with --cross-repo-negatives), weighted per query shape by `extra_weight`."""
    pipelines = [name.strip() for name in pipeline.split(",") if name.strip()]
    records = [r for name in pipelines for r in load_records(paths, name)]
    if not records:
        raise CalibrationDataError(f"no {pipeline} records with features in {', '.join(map(str, paths))}")
    pairs = {r.get("pair") for r in records}
    if len(pairs) != 1 or None in pairs or "" in pairs:
        raise CalibrationDataError(f"records mix or lack model pairs ({sorted(map(str, pairs))}): calibrate one pair at a time")
    (pair,) = pairs
    extra = [r for name in pipelines for r in load_records(list(extra_paths), name)] if extra_paths else []
    extra_pairs = {r.get("pair") for r in extra}
    if extra and extra_pairs != pairs:
        raise CalibrationDataError(f"the extra records were made with {sorted(map(str, extra_pairs))}, "
                                   f"the records with {pair}")
    groups = {static: [r for r in records if static_evidence(r) == static] for static in (False, True)}
    if not groups[False]:
        raise CalibrationDataError(f"the {pipeline} records all read the static leg's evidence: a file needs the "
                                   "transformer's too (`--pipeline hybrid-all,instant`)")
    provenance = {"data": [str(p) for p in paths], "pipeline": pipeline, "models": pair,
                  "date": datetime.date.today().isoformat(), "fitted_on": len(groups[False])}
    if extra:
        provenance.update(extra_data=[str(p) for p in extra_paths], extra_repositories=len({r["repo"] for r in extra}),
                          extra_weight=extra_weight)
    fitted, measured = [], {}
    for static, mine in groups.items():
        if not mine:
            continue
        if len({r["kind"] for r in mine}) < 2:
            raise CalibrationDataError("calibration needs both answerable and not_here queries "
                                       "(run the bench with --cross-repo-negatives or the describe set)")
        theirs = [r for r in extra if static_evidence(r) == static]
        provenance["instant_extra_records" if static else "extra_records"] = len(theirs)
        held_out = leave_one_repository_out(mine, theirs, extra_weight)
        key = "instant_leave_one_repository_out" if static else "leave_one_repository_out"
        measured[key] = {k: v for k, v in held_out.items() if not k.startswith("_")}
        if static:
            provenance["instant_fitted_on"] = len(mine)
        elif plot is not None:
            reliability_plot(held_out, plot)
        fitted.append(_fitted(pair, mine, theirs, extra_weight, provenance, static))
    provenance.update(measured)
    calibration = fitted[0]
    if len(fitted) > 1:
        calibration.here.update(fitted[1].here)
        calibration.hit_instant = fitted[1].hit_instant
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / calibration_file_name(pair)
    path.write_text(json.dumps(calibration.to_json(), indent=2) + "\n")
    metrics = measured["leave_one_repository_out"]
    if "instant_leave_one_repository_out" in measured:
        metrics = metrics | {"instant": measured["instant_leave_one_repository_out"]}
    return path, metrics
