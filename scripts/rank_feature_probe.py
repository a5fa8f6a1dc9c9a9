"""Try a ranking feature on stored bench records before building it into the engine.

A candidate column that can be derived from what `noul bench` already stored (the candidate files'
feature rows and the query-level features of each record) is appended to every query's matrix, and the
ranker is fitted and scored leave-one-repository-out exactly as `noul rank-fit` does, beside the same fit
without it. A variant that does not win here is not worth a bench run; one that does must still be built
and measured for real (the engine computes the column, `noul bench` stores it, `noul rank-fit` fits it).

Column specs (repeat `--variant NAME=SPEC,SPEC,...`):
  COLUMN:z       the column standardised within the query's candidates (a query-relative score)
  COLUMN:rel     the column divided by its best value among the query's candidates
  COLUMN:ir      1 / the file's rank by that column among the candidates (0 where the column is 0)
  QFEAT*COLUMN   a query-level feature of the record (e.g. bm25_coverage, dense_top) times the column

    python scripts/rank_feature_probe.py /tmp/r5/per_query.jsonl --extra /tmp/ct1/per_query.jsonl \
        --variant z_dense=dense:z,dense_mean:z --variant adaptive=bm25_coverage*dense,bm25_coverage*bm25
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from noul_lsp.bench import rank_fit as rf
from noul_lsp.retrieval.features import FEATURES


def _query_features(path: Path) -> list[dict]:
    """The query-level features of the records `rank_fit.load_candidates` keeps, in its order."""
    kept = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if (record["pipeline"] == "hybrid" and record["kind"] == "answerable"
                and (record.get("rank_candidates") or {}).get("files")):
            kept.append(record.get("features") or {})
    return kept


def _derived(spec: str, matrix: np.ndarray, query: dict) -> np.ndarray:
    if "*" in spec:
        factor, column = spec.split("*", 1)
        return float(query.get(factor, 0.0)) * matrix[:, FEATURES.index(column)]
    column, kind = spec.rsplit(":", 1)
    values = matrix[:, FEATURES.index(column)]
    if kind == "z":
        spread = values.std()
        return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)
    if kind == "rel":
        top = values.max() if len(values) else 0.0
        return values / top if top > 0 else np.zeros_like(values)
    if kind == "ir":
        rank = np.empty(len(values))
        rank[np.argsort(-values, kind="stable")] = np.arange(1, len(values) + 1)
        return np.where(values > 0, 1.0 / rank, 0.0)
    raise SystemExit(f"unknown column kind {kind!r} in {spec!r}")


def _load(path: Path, specs: list[str]) -> tuple[list[rf.LabeledCandidates], str]:
    items, embedder = rf.load_candidates([path], ("hybrid",))
    queries = _query_features(path)
    assert len(queries) == len(items), "records and query features out of step"
    widened = [rf.LabeledCandidates(i.label_file, i.repo, i.gold, i.files,
                                    np.column_stack([i.matrix, *(_derived(s, i.matrix, q) for s in specs)]),
                                    i.baseline) for i, q in zip(items, queries, strict=True)]
    return widened, embedder


def held_out(records: Path, extra: Path | None, specs: list[str]) -> dict:
    """`noul rank-fit`'s leave-one-repository-out figures with `specs` appended to the features."""
    items, embedder = _load(records, specs)
    features = (*FEATURES, *specs)
    return rf.leave_one_repository_out(items, features, l2=1.0, embedder=embedder,
                                       extra=_load(extra, specs)[0] if extra else [],
                                       columns=list(range(len(features))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--extra", type=Path, help="records that only train (`noul train labels` commits)")
    parser.add_argument("--variant", action="append", default=[], help="NAME=SPEC,SPEC,...")
    args = parser.parse_args()
    variants = {"(as shipped)": []} | {v.split("=", 1)[0]: v.split("=", 1)[1].split(",") for v in args.variant}
    for name, specs in variants.items():
        table = held_out(args.records, args.extra, specs)
        cells = "  ".join(f"{Path(k).stem} {v['acc@1']:.3f}/{v['acc@3']:.3f}/{v['acc@5']:.3f}"
                          for k, v in sorted(table.items()))
        print(f"{name:<16} {cells}", flush=True)


if __name__ == "__main__":
    main()
