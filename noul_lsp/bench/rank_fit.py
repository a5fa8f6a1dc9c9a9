"""`noul rank-fit`: fit the ranking stage on benchmark records, measured leave-one-repository-out.

Records come from `noul bench` (per_query.jsonl): each hybrid query on its own repository carries its
candidate files and their feature rows (`rank_candidates`), and so do the `hybrid-all` (the static leg
beside the transformer) and `instant` ones (the same find before the transformer has embedded anything):
the ranker of the static leg is fitted on hybrid-all and instant records together, so it ranks a
workspace well at every moment of its filling in; the transformer's own ranker on hybrid records (the
default once every chunk has a transformer vector). Records made with different dense legs never mix
(`pipelines` picks). Figures of instant records are reported apart, under `instant:<label file>`. The ranker is fitted on every repository but
one and scored on the held-out one, for each repository in turn, so a figure never comes from a query the
weights have seen; the file written is the fit on everything, with those held-out figures, the ablation
(each feature group removed in turn, also held out) and the fusion baseline as its provenance.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noul_lsp.bench import metrics as m
from noul_lsp.retrieval.features import FEATURE_GROUPS, FEATURES
from noul_lsp.retrieval.rank import RankingQuery, RankModel, fit_rank_model, ranking_file_name
from noul_lsp.retrieval.rerank import combined_logit

KS = (1, 3, 5)


class RankDataError(ValueError):
    pass


@dataclass(frozen=True)
class LabeledCandidates:
    label_file: str  # "instant:<label file>" for a record of the instant pipeline
    repo: str
    gold: list[str]
    files: list[str]
    matrix: np.ndarray
    baseline: list[str]  # the files the record's own answer ranked (the fusion, or whatever ran)


#: the pipelines whose records a ranker can be fitted on (bench/runner.py RANKED_PIPELINES)
FITTED_PIPELINES = ("hybrid", "hybrid-all", "instant")


def load_candidates(paths: list[Path],
                    pipelines: tuple[str, ...] = FITTED_PIPELINES) -> tuple[list[LabeledCandidates], str]:
    """Answerable hybrid and instant records with candidates, and the ranking key they were made with."""
    found: list[LabeledCandidates] = []
    embedders: set[str] = set()
    for path in paths:
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            candidates = record.get("rank_candidates") or {}
            if (record["pipeline"] not in pipelines or record["kind"] != "answerable"
                    or not candidates.get("files")):
                continue
            if candidates["features"] != list(FEATURES):
                raise RankDataError(f"{path}: records were made with other features ({len(candidates['features'])} "
                                    "columns); rerun `noul bench` with this version")
            embedders.add(record["pair"].rsplit("+", 1)[0])
            label = f"instant:{record['label_file']}" if record["pipeline"] == "instant" else record["label_file"]
            found.append(LabeledCandidates(label, record["repo"], record["gold_files"],
                                           candidates["files"], np.array(candidates["matrix"], dtype=np.float64),
                                           [path for path, _ in record["ranked"]]))
    if not found:
        raise RankDataError("no hybrid record carries ranking candidates: run `noul bench` with the hybrid pipeline")
    if len(embedders) != 1:
        raise RankDataError(f"records of several embedders mixed: {sorted(embedders)} (pick the pipelines of one: "
                            "--pipelines hybrid, or --pipelines hybrid-all,instant)")
    return found, embedders.pop()


def _queries(items: list[LabeledCandidates], columns: list[int], weight: float = 1.0) -> list[RankingQuery]:
    return [RankingQuery(item.repo, item.matrix[:, columns], np.isin(item.files, item.gold), weight)
            for item in items]


def _training(items: list[LabeledCandidates], extra: list[LabeledCandidates], columns: list[int],
              extra_weight: float) -> list[RankingQuery]:
    """`items` at weight 1 and `extra` weighted so that together they count `extra_weight` times as much as
    `items` do: commit labels outnumber the dev labels many times, and would otherwise decide the weights
    for one-line descriptions and issue texts alike."""
    share = extra_weight * len(items) / len(extra) if extra else 0.0
    return _queries(items, columns) + _queries(extra, columns, share)


def _ranked(model: RankModel, item: LabeledCandidates, columns: list[int]) -> list[str]:
    scores = model.score(item.matrix[:, columns], model.features)
    return [item.files[i] for i in np.argsort(-scores, kind="stable")]


def accuracy_table(rankings: list[tuple[LabeledCandidates, list[str]]]) -> dict:
    """Acc@k (and Complete@5 for multi-file queries) per label file and over all."""
    table: dict[str, dict] = {}
    groups: dict[str, list] = {}
    for item, ranked in rankings:
        groups.setdefault(item.label_file, []).append((item, ranked))
        everything = "instant:all" if item.label_file.startswith("instant:") else "all"
        groups.setdefault(everything, []).append((item, ranked))
    for name, members in groups.items():
        row = {f"acc@{k}": float(np.mean([m.accuracy_at(r, i.gold, k) for i, r in members])) for k in KS}
        multi = [(i, r) for i, r in members if len(i.gold) > 1]
        if multi:
            row["complete@5_multi"] = float(np.mean([m.complete_at(r, i.gold, 5) for i, r in multi]))
        row["queries"] = len(members)
        table[name] = row
    return table


def leave_one_repository_out(items: list[LabeledCandidates], features: tuple[str, ...], *, l2: float,
                             embedder: str, extra: list[LabeledCandidates] = (), extra_weight: float = 1.0,
                             columns: list[int] | None = None) -> dict:
    """Each repository of `items` ranked by a fit on the others (and on the `extra` queries, which are never
    scored) but its own: a held-out repository's queries never train its fold, its extra ones (its commits) no
    more than its labels. `columns`: where each of `features` lies in the items' matrices (default: its place in
    FEATURES; a probe's derived columns lie past them)."""
    columns = [FEATURES.index(f) for f in features] if columns is None else columns
    rankings = []
    for repo in sorted({i.repo for i in items}):
        train = _training([i for i in items if i.repo != repo], [i for i in extra if i.repo != repo], columns,
                          extra_weight)
        model = fit_rank_model(train, features, embedder=embedder, l2=l2)
        rankings.extend((i, _ranked(model, i, columns)) for i in items if i.repo == repo)
    return accuracy_table(rankings)


def rank_fit(paths: list[Path], *, out_dir: Path, l2: float = 1.0, ablation: bool = True,
             pipelines: tuple[str, ...] = FITTED_PIPELINES, extra_paths: list[Path] = (),
             extra_weight: float = 1.0) -> tuple[Path, dict]:
    """Fit on everything, measure held out; write models/ranking/<embedder>.json. Returns (path, metrics).
    `extra_paths` holds records that only train (`noul train labels` of other repositories): every fit
    sees them, weighted to count `extra_weight` times as much as the records it is fitted with, and no
    figure is computed on them."""
    items, embedder = load_candidates(paths, pipelines)
    extra: list[LabeledCandidates] = []
    if extra_paths:
        extra, extra_embedder = load_candidates(list(extra_paths), pipelines)
        if extra_embedder != embedder:
            raise RankDataError(f"the extra records were made with {extra_embedder}, the records with {embedder}")
    every = tuple(FEATURES)
    metrics = {"baseline": accuracy_table([(i, i.baseline) for i in items])}
    # a fold fits on the other repositories (and the extra records): with one repository and nothing else,
    # there is nothing to fit a fold on, and the fit on everything is the only figure (said so)
    can_hold_out = len({i.repo for i in items}) > 1 or bool(extra)
    metrics["held_out"] = leave_one_repository_out(items, every, l2=l2, embedder=embedder, extra=extra,
                                                   extra_weight=extra_weight) if can_hold_out else None
    if not can_hold_out:
        metrics["held_out_note"] = (f"one repository ({items[0].repo}) and no --extra records: nothing to hold "
                                    "it out against, so no held-out figure (label a second repository, or fit "
                                    "beside other records with --extra)")
    reach = float(np.mean([bool(set(i.gold) & set(i.files)) for i in items]))
    metrics["candidates_reach_gold"] = reach
    if ablation and can_hold_out:
        metrics["ablation"] = {}
        for group, names in FEATURE_GROUPS.items():
            kept = tuple(f for f in every if f not in names)
            metrics["ablation"][f"without {group}"] = leave_one_repository_out(
                items, kept, l2=l2, embedder=embedder, extra=extra, extra_weight=extra_weight)
    columns = list(range(len(every)))
    model = fit_rank_model(_training(items, extra, columns, extra_weight), every, embedder=embedder, l2=l2)
    metrics["in_sample"] = accuracy_table([(i, _ranked(model, i, columns)) for i in items])
    provenance = {
        "fitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "records": [str(p) for p in paths], "queries": len(items),
        "extra_records": [str(p) for p in extra_paths], "extra_queries": len(extra),
        "extra_repositories": len({i.repo for i in extra}), "extra_weight": extra_weight,
        "repositories": sorted({i.repo for i in items}), "label_files": sorted({i.label_file for i in items}),
        "l2": l2, "commit": _commit(), "metrics": metrics,
    }
    model = RankModel(model.features, model.mean, model.scale, model.coef, embedder, provenance)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ranking_file_name(embedder)
    path.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    return path, metrics


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).parent)
        return done.stdout.strip()
    except OSError:
        return ""


def format_metrics(metrics: dict) -> str:
    """A markdown table: baseline, held out, in sample and each ablation, per label file."""
    rows = [("fusion (the records' own answer)", metrics["baseline"])]
    if metrics["held_out"] is not None:
        rows.append(("fitted, leave-one-repository-out", metrics["held_out"]))
    rows += [(f"  {name}, held out", table) for name, table in metrics.get("ablation", {}).items()]
    rows.append(("fitted, in sample", metrics["in_sample"]))
    label_files = sorted({name for _, table in rows for name in table if name != "all"}) + ["all"]
    lines = ["| ranking | " + " | ".join(f"{name} Acc@1/3/5" for name in label_files) + " |",
             "|---|" + "---|" * len(label_files)]
    for title, table in rows:
        cells = [("{acc@1:.3f} / {acc@3:.3f} / {acc@5:.3f}".format(**table[name]) if name in table else "")
                 for name in label_files]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lines.append(f"\nGold file among the candidates: {metrics['candidates_reach_gold']:.3f} of queries.")
    if metrics.get("held_out_note"):
        lines.append(f"Not held out: {metrics['held_out_note']}.")
    held_out, baseline = metrics["held_out"], metrics["baseline"]
    if held_out is not None and held_out["all"]["acc@1"] < baseline["all"]["acc@1"]:
        lines.append(f"Held out, the fitted ranker is below the fusion it replaces (Acc@1 {held_out['all']['acc@1']:.3f} "
                     f"against {baseline['all']['acc@1']:.3f}): more labels, or keep the fusion (do not point "
                     "NOUL_RANKING_DIR at this file).")
    return "\n".join(lines)


#: the weights of the cross-encoder's logit tried against the ranker's log-probability (None: the logit alone)
RERANK_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, None)


@dataclass(frozen=True)
class RerankedQuery:
    label_file: str
    repo: str
    gold: list[str]
    files: list[str]  # every file of the record, in its order
    #: the short-listed files, their probability under the ranker and their cross-encoder logit
    listed: list[str]
    probability: np.ndarray
    logits: np.ndarray


def load_reranked(paths: list[Path]) -> tuple[list[RerankedQuery], str, str]:
    """Answerable rerank-pipeline records on their own repository, with each short-listed file's score
    before the cross-encoder (`rankScore`, a ranker probability) and its logit; and (embedder key, reranker)."""
    found: list[RerankedQuery] = []
    pairs: set[str] = set()
    for path in paths:
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            if record["pipeline"] != "rerank" or record["kind"] != "answerable" or record.get("searched") != "own":
                continue
            if not (record.get("signals") or {}).get("ranking", "").startswith("fitted"):
                raise RankDataError(f"{path}: rerank records made without a fitted ranker; run `noul rank-fit` on the "
                                    "hybrid records first, then the rerank bench again")
            listed = [h for h in record["hits"] if h.get("rerankScore") is not None and h.get("rankScore") is not None]
            pairs.add(record["pair"])
            found.append(RerankedQuery(
                record["label_file"], record["repo"], record["gold_files"], [h["path"] for h in record["hits"]],
                [h["path"] for h in listed], np.array([h["rankScore"] for h in listed], dtype=np.float64),
                np.array([h["rerankScore"] for h in listed], dtype=np.float64)))
    if not found:
        raise RankDataError("no rerank record: run `noul bench --pipelines hybrid,rerank --reranker NAME --limit 20`")
    if len(pairs) != 1:
        raise RankDataError(f"records of several model pairs mixed: {sorted(pairs)}")
    embedder, reranker = pairs.pop().rsplit("+", 1)
    return found, embedder, reranker


def _reranked_order(item: RerankedQuery, weight: float | None) -> list[str]:
    if not len(item.listed):
        return item.files
    value = combined_logit(item.probability, item.logits, weight)  # what the rerank stage orders by
    listed = [item.listed[i] for i in np.argsort(-value, kind="stable")]
    taken = set(listed)
    return listed + [f for f in item.files if f not in taken]


def _choose_weight(items: list[RerankedQuery]) -> float | None:
    """The weight with the best Acc@1, then MRR (ties: the smaller weight; the logit alone is the largest)."""
    def quality(weight: float) -> tuple[float, float]:
        orders = [(_reranked_order(i, weight), i.gold) for i in items]
        return (float(np.mean([m.accuracy_at(o, g, 1) for o, g in orders])),
                float(np.mean([m.reciprocal_rank(o, g) for o, g in orders])))
    return max(RERANK_WEIGHTS, key=lambda w: (quality(w), -(np.inf if w is None else w)))


def fit_rerank_weight(paths: list[Path], *, out_dir: Path) -> tuple[Path, dict]:
    """Choose the weight of the cross-encoder's logit against the ranker on rerank records, measured
    leave-one-repository-out, and store it in the embedder's ranking file. Returns (path, metrics)."""
    items, embedder, reranker = load_reranked(paths)
    path = out_dir / ranking_file_name(embedder)
    if not path.is_file():
        raise RankDataError(f"{path} is missing: the weight is stored beside the ranker it was fitted with")
    held_out = []
    chosen = {}
    for repo in sorted({i.repo for i in items}):
        weight = _choose_weight([i for i in items if i.repo != repo])
        chosen[repo] = weight
        held_out.extend((i, _reranked_order(i, weight)) for i in items if i.repo == repo)
    weight = _choose_weight(items)
    metrics = {"ranker": accuracy_table([(i, _reranked_order(i, 0.0)) for i in items]),
               "cross_encoder_alone": accuracy_table([(i, _reranked_order(i, None)) for i in items]),
               "held_out": accuracy_table(held_out), "weights_held_out": chosen}
    data = json.loads(path.read_text())
    if data.get("embedder") != embedder:
        raise RankDataError(f"{path} is for {data.get('embedder')}, the records for {embedder}")
    data.setdefault("rerank", {})[reranker] = {
        "weight": weight, "fitted": datetime.datetime.now(datetime.timezone.utc)
        .isoformat(timespec="seconds"), "records": [str(p) for p in paths], "queries": len(items),
        "commit": _commit(), "metrics": metrics}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path, metrics
