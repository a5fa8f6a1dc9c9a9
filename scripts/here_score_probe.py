"""P(here) on one-line descriptions from the fitted ranker's own score: a probe over `noul bench` records.

The listwise ranker's softmax probability (P(here)'s `rank_top_probability`) keeps only how far its first
file leads the others; its score before the softmax weighs every code-aware signal on one absolute scale.
This probe scores every description record's candidate files (`rank_candidates`) with a ranker fitted
leave-one-repository-out (on the other repositories' answerable records, and on `--extra` records as
`noul rank-fit --extra` fits the shipped one), takes the first file's score, and measures P(here) on the
descriptions leave-one-repository-out (bench/calibration.py's protocol) with that score beside or instead
of the shipped features, and the same for its lead (the first file's score minus the median candidate's:
what P(here) now reads for one-line queries, `rank_lead`).

    python scripts/here_score_probe.py /tmp/runs/t12/per_query.jsonl --pipeline hybrid [--extra /tmp/runs/ct4/per_query.jsonl]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import noul_lsp.bench.calibration as calibration
from noul_lsp.bench import metrics as m
from noul_lsp.bench.rank_fit import _training, load_candidates
from noul_lsp.retrieval.features import FEATURES
from noul_lsp.retrieval.rank import fit_rank_model

SCORE, LEAD = "rank_top_score", "rank_lead_out_of_fold"


def out_of_fold_scores(records: list[dict], items: list, extra: list, embedder: str) -> None:
    """Each record's first-file score and lead under a ranker fitted without its repository, into its
    features."""
    columns = list(range(len(FEATURES)))
    for repository in sorted({r["searched_repo"] for r in records}):
        train = _training([i for i in items if i.repo != repository], [i for i in extra if i.repo != repository],
                          columns, 1.0)
        model = fit_rank_model(train, FEATURES, embedder=embedder)
        for record in records:
            if record["searched_repo"] == repository:
                matrix = np.array(record["rank_candidates"]["matrix"], dtype=np.float64)
                scores = model.score(matrix, FEATURES)
                record["features"][SCORE] = float(scores.max())
                record["features"][LEAD] = float(scores.max() - np.median(scores))


def held_out(records: list[dict], features: tuple[str, ...]) -> tuple[float, float]:
    """Descriptions' AUROC and ECE, leave-one-repository-out, with the short model fitted on `features`."""
    calibration.QUERY_FEATURES = features  # the probe's columns; SHAPE_FEATURES are left out as shipped
    result = calibration.leave_one_repository_out(records)["by_query_style"]["description"]
    return result["auroc"], result["ece"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--pipeline", default="hybrid")
    parser.add_argument("--extra", type=Path, action="append", default=[],
                        help="records that train the out-of-fold rankers too (as the shipped ranker's --extra)")
    args = parser.parse_args()
    shipped = calibration.QUERY_FEATURES
    records = [r for r in calibration.load_records([args.records], args.pipeline) if r.get("source") == "describe"]
    for record in records:  # a record's own lead is the shipped ranker's (in sample); the probe's columns decide
        record["features"].pop("rank_lead", None)
    items, embedder = load_candidates([args.records], (args.pipeline,))
    extra = load_candidates(args.extra, (args.pipeline,))[0] if args.extra else []
    out_of_fold_scores(records, items, extra, embedder)
    labels = [int(r["kind"] == "answerable") for r in records]
    print(f"{len(records)} descriptions ({sum(labels)} answerable); alone, the score orders them at AUROC "
          f"{m.auroc([r['features'][SCORE] for r in records], labels):.3f}, the lead at "
          f"{m.auroc([r['features'][LEAD] for r in records], labels):.3f}")
    for name, features in (("the 14 features", shipped), ("the 14 + the score", (*shipped, SCORE)),
                           ("the score alone", (SCORE,)), ("the score + dense_top", (SCORE, "dense_top")),
                           ("the 14 + the lead", (*shipped, LEAD)), ("the lead alone", (LEAD,)),
                           ("the lead + dense_top", (LEAD, "dense_top"))):
        auroc, ece = held_out(records, features)
        print(f"{name:24s} AUROC {auroc:.3f}  ECE {ece:.3f}")


if __name__ == "__main__":
    main()
