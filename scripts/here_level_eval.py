"""P(here) on one-line queries with and without the workspace's level (retrieval/reference.py), held out.

Reads `noul bench` records that carry the levelled columns (any bench run of this version): the dev
records with `bench/labels/describe-train.jsonl` among the labels, and, optionally, commit labels asked of
their own and the next repository (`noul train labels`, then `noul bench --cross-repo-negatives`). Prints,
for the unlevelled and the levelled short model, AUROC / ECE leave-one-repository-out (a fold drops the
repository from both sets) of the dev descriptions, the new ones, all of them and the commit messages,
with the commit messages beside the descriptions at each `--weights` (0: fitted on descriptions alone,
as `noul calibrate` does without `--extra`), and the commit messages read by an `--old` calibration file.

    python scripts/here_level_eval.py /tmp/runs/t18/per_query.jsonl --commits /tmp/runs/ct1/per_query.jsonl \\
        --pipeline hybrid --old OLD_CALIBRATION.json
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import noul_lsp.bench.calibration as calibration
from noul_lsp.bench import metrics as m
from noul_lsp.retrieval.calibrate import Calibration
from noul_lsp.retrieval.reference import LEVELLED_COLUMNS

NEW = "describe-train"


def unlevelled(records: list[dict]) -> list[dict]:
    records = copy.deepcopy(records)
    for record in records:
        for name in LEVELLED_COLUMNS:
            record["features"].pop(name, None)
    return records


def held_out(main: list[dict], extra: list[dict], weight: float) -> dict[tuple, float]:
    """Every record of both sets read by the fit without its repository (the extra records in the fit at
    `weight`, none at 0)."""
    repositories = {r["searched_repo"] for r in main + extra}
    return {key(record): fitted.here_probability(record["features"])
            for repository, fitted in calibration.held_out_fits(main, extra if weight else (), weight, repositories)
            for record in main + extra if record["searched_repo"] == repository}


def key(record: dict) -> tuple:
    return record["id"], record["searched_repo"], record["searched"]


def figures(probabilities: list[float], records: list[dict]) -> str:
    if not records:
        return "–"
    labels = [int(r["kind"] == "answerable") for r in records]
    return f"{m.auroc(probabilities, labels):.3f} / {m.expected_calibration_error(probabilities, labels):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--commits", type=Path, help="commit labels' records (fitted on none unless --weights)")
    parser.add_argument("--pipeline", default="hybrid")
    parser.add_argument("--weights", default="0,0.25,1", help="the commit messages' weights to fit with")
    parser.add_argument("--old", type=Path, help="a calibration file to read the commit messages with")
    args = parser.parse_args()
    records = calibration.load_records([args.records], args.pipeline)
    commits = calibration.load_records([args.commits], args.pipeline) if args.commits else []
    described = lambda rs, new: [r for r in rs if calibration.query_style(r) == "description"  # noqa: E731
                                 and (r["label_file"] == NEW) == new]
    if args.old and commits:
        old = Calibration.from_json(json.loads(args.old.read_text()))
        plain = unlevelled(commits)
        print(f"{args.old.name} on the commit messages: "
              f"{figures([old.here_probability(r['features']) for r in plain], plain)}")
    for name, chosen in (("unlevelled", unlevelled(records)), ("levelled", records)):
        dev = [r for r in chosen if r["label_file"] != NEW]
        fitted = Calibration("dev", calibration._fit_here(dev), None, {})
        new = described(chosen, True)
        print(f"{name}, fitted on the dev records alone, read the new descriptions at "
              f"{figures([fitted.here_probability(r['features']) for r in new], new)}")
    print("| columns | commit weight | dev descriptions | new descriptions | all descriptions | commit messages |")
    print("|---|---|---|---|---|---|")
    for name, main_records, extra in (("unlevelled", unlevelled(records), unlevelled(commits)),
                                      ("levelled", records, commits)):
        for weight in [float(w) for w in args.weights.split(",")] if commits else [0.0]:
            predictions = held_out(main_records, extra, weight)
            cells = [described(main_records, False), described(main_records, True),
                     described(main_records, False) + described(main_records, True), extra]
            print(f"| {name} | {weight:g} | " + " | ".join(
                figures([predictions[key(r)] for r in cell], cell) for cell in cells) + " |")


if __name__ == "__main__":
    main()
