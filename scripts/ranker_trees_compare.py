"""Gradient-boosted trees (LightGBM's lambdarank) against the shipped linear ranker, held out by repository.

Issue 11 allows LightGBM's lambdarank "if you can justify the dependency". This is the measurement that
decides: the same bench records `noul rank-fit` fits on, the same folds (each repository ranked by a model
fitted on the others), and the held-out Acc@k the shipped ranking file records in its provenance (its
`metrics.held_out`, from the same protocol) beside them. LightGBM is not a dependency of noul: install it
for this script alone (`pip install lightgbm`).

    python scripts/ranker_trees_compare.py /tmp/runs/t117/per_query.jsonl /tmp/wk/runs/w1/per_query.jsonl \
        --ranking models/ranking/all-minilm-l6-v2-int8@128.json --leaves 15 --rounds 300
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from noul_lsp.bench.rank_fit import LabeledCandidates, accuracy_table, load_candidates


def fit_trees(train: list[LabeledCandidates], params: dict, rounds: int):
    import lightgbm

    usable = [i for i in train if np.isin(i.files, i.gold).any() and len(i.files) > 1]
    matrix = np.vstack([i.matrix for i in usable])
    relevance = np.concatenate([np.isin(i.files, i.gold).astype(int) for i in usable])
    data = lightgbm.Dataset(matrix, relevance, group=[len(i.files) for i in usable])
    return lightgbm.train(params, data, rounds)


def held_out_rankings(items: list[LabeledCandidates], params: dict,
                      rounds: int) -> list[tuple[LabeledCandidates, list[str]]]:
    rankings = []
    for repo in sorted({i.repo for i in items}):
        booster = fit_trees([i for i in items if i.repo != repo], params, rounds)
        for item in (i for i in items if i.repo == repo):
            scores = booster.predict(item.matrix)
            rankings.append((item, [item.files[k] for k in np.argsort(-scores, kind="stable")]))
    return rankings


def pooled(table: dict, label_files: set[str]) -> tuple[float, float, int]:
    """Acc@1, Acc@5 and queries over some label files of an `accuracy_table` (the trees' and the ranking
    file's `metrics.held_out` alike), each file weighed by its queries."""
    rows = [table[name] for name in label_files if name in table]
    count = sum(r["queries"] for r in rows)
    return (sum(r["acc@1"] * r["queries"] for r in rows) / count, sum(r["acc@5"] * r["queries"] for r in rows) / count,
            count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path, help="per_query.jsonl files of `noul bench`")
    parser.add_argument("--ranking", type=Path, required=True,
                        help="the linear ranking file fitted on the same records")
    parser.add_argument("--pipeline", default="hybrid")
    parser.add_argument("--leaves", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--min-data-in-leaf", type=int, default=50)
    args = parser.parse_args()
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        print("lightgbm is not installed (it is no dependency of noul): pip install lightgbm", file=sys.stderr)
        return 2
    items, _ = load_candidates(args.records, (args.pipeline,))
    params = {"objective": "lambdarank", "num_leaves": args.leaves, "learning_rate": args.learning_rate,
              "min_data_in_leaf": args.min_data_in_leaf, "feature_fraction": 0.8, "bagging_fraction": 0.8,
              "bagging_freq": 1, "lambdarank_truncation_level": 10, "lambda_l2": 1.0, "num_threads": 1,
              "verbose": -1, "seed": 1}
    started = time.perf_counter()
    rankings = held_out_rankings(items, params, args.rounds)
    held_out = json.loads(args.ranking.read_text())["provenance"]["metrics"]["held_out"]
    walkthroughs = {i.label_file for i in items if i.label_file.startswith("walk-")}
    groups = {"walkthroughs": walkthroughs, "dev": {i.label_file for i in items} - walkthroughs,
              "all": {i.label_file for i in items}}
    for name in sorted({i.label_file for i in items}):
        groups[name] = {name}
    print(f"held out by repository; trees: {args.leaves} leaves, {args.rounds} rounds, "
          f"{time.perf_counter() - started:.0f} s")
    print(f"{'records':34s} {'queries':>7s}  {'trees Acc@1/5':>13s}  {'linear Acc@1/5':>14s}")
    trees_held_out = accuracy_table(rankings)
    for name, label_files in groups.items():
        trees, linear = pooled(trees_held_out, label_files), pooled(held_out, label_files)
        print(f"{name:34s} {trees[2]:7d}  {trees[0]:.3f} / {trees[1]:.3f}  {linear[0]:.3f} / {linear[1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
