"""P(here) on one-line descriptions, read against the workspace's own level: a probe over `noul bench` records.

The short-shape P(here) reads the fitted ranker's lead and the top cosine. Their level moves from one
workspace to the next: on four repositories that no part of P(here) was fitted on
(bench/labels/describe-train.jsonl), the shipped model scored AUROC 0.705 and ECE 0.203. A workspace can
measure its own level without labels: ask it a fixed set of generic descriptions
(reference.py's REFERENCE_QUERIES, written once, of no repository) and keep the median and the spread of each
feature. This probe asks them of every workspace a bench run left (`<work>/trees/<owner>+<name>`, with the
bench's index in `<work>/cache`), adds each feature's distance to that level (`_rel`: minus the median;
`_z`: over the spread as well; `_pct`: the share of reference queries below) to the description records,
and measures P(here) leave-one-repository-out (bench/calibration.py's fit) with the columns of each variant:
fitted on the dev descriptions alone, and on the dev and the new descriptions together.

    python scripts/here_reference_probe.py --dev /tmp/runs/b0/per_query.jsonl --new /tmp/runs/dt0/per_query.jsonl \
        --work /tmp/bw --work /tmp/bwt

A workspace's tree is the bench's last commit of it: for a repository whose SWE-bench issues come after its
descriptions (flask, requests, pytest) the level is measured on a later tree than the descriptions asked.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

import noul_lsp.bench.calibration as calibration
from noul_lsp.bench import metrics as m
from noul_lsp.config import Settings
from noul_lsp.retrieval.reference import REFERENCE_QUERIES
from noul_lsp.session.workspace import Workspace

LEVELLED = ("dense_top", "rank_lead")
VARIANTS = (("rank_lead", "dense_top"), ("rank_lead", "dense_top_rel"), ("rank_lead_rel", "dense_top_rel"),
            ("rank_lead", "dense_top_z"), ("rank_lead_z", "dense_top_z"), ("rank_lead_pct", "dense_top_pct"),
            ("dense_top_rel",), ("rank_lead_pct",))


def reference_features(work_dirs: list[Path], queries: list[str], repositories: set[str]) -> dict[str, list[dict]]:
    """Per repository, the P(here) features of each reference query asked of its bench workspace."""
    found: dict[str, list[dict]] = {}
    for work in work_dirs:
        settings = replace(Settings(), cache_dir=str(work / "cache"))
        for tree in sorted((work / "trees").iterdir()):
            repository = tree.name.replace("+", "/", 1)
            if repository not in repositories:
                continue
            workspace = Workspace(tree, settings)
            found[repository] = [workspace.find(q, limit=10, rerank=False, level=False).features for q in queries]
    return found


def add_levels(records: list[dict], reference: dict[str, list[dict]]) -> None:
    for record in records:
        features = record["features"]
        for name in LEVELLED:
            values = np.array([f.get(name, 0.0) for f in reference[record["searched_repo"]]])
            value, median = features.get(name, 0.0), float(np.median(values))
            features[f"{name}_rel"] = value - median
            features[f"{name}_z"] = (value - median) / (float(values.std()) + 1e-6)
            features[f"{name}_pct"] = float((values < value).mean())


def held_out(records: list[dict]) -> dict[tuple, float]:
    return {(record["id"], repository): fitted.here_probability(record["features"])
            for repository, fitted in calibration.held_out_fits(records)
            for record in records if record["searched_repo"] == repository}


def figures(predictions: dict[tuple, float], records: list[dict]) -> str:
    scores = [predictions[(r["id"], r["searched_repo"])] for r in records]
    labels = [int(r["kind"] == "answerable") for r in records]
    return f"{m.auroc(scores, labels):.3f} / {m.expected_calibration_error(scores, labels):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, required=True, help="the dev bench's per_query.jsonl")
    parser.add_argument("--new", type=Path, required=True, help="per_query.jsonl of describe-train.jsonl")
    parser.add_argument("--work", type=Path, action="append", required=True, help="a bench run's --work folder")
    parser.add_argument("--queries", type=Path, help="one reference query a line (default: reference.py's)")
    parser.add_argument("--pipeline", default="hybrid")
    args = parser.parse_args()
    describe = lambda path: [r for r in calibration.load_records([path], args.pipeline)  # noqa: E731
                             if calibration.query_style(r) == "description"]
    dev, new = describe(args.dev), describe(args.new)
    queries = ([line.strip() for line in args.queries.read_text().splitlines() if line.strip()] if args.queries
               else list(REFERENCE_QUERIES))
    reference = reference_features(args.work, queries, {r["searched_repo"] for r in dev + new})
    add_levels(dev + new, reference)
    print("| short-shape columns | dev alone: dev held out | dev + new: dev held out | dev + new: new held out "
          "| dev + new: all |")
    print("|---|---|---|---|---|")
    for variant in VARIANTS:
        calibration.RANKED_SHORT_FEATURES = calibration.SHORT_FEATURES_WITH_LEVEL = variant
        alone, both = held_out(dev), held_out(dev + new)
        print(f"| {', '.join(variant)} | {figures(alone, dev)} | {figures(both, dev)} | {figures(both, new)} "
              f"| {figures(both, dev + new)} |")


if __name__ == "__main__":
    main()
