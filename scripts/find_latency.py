"""Warm `noul find` latency per stage (not a test): medians over repeated queries on an indexed folder.

    NOUL_CACHE_DIR=... .venv/bin/python scripts/find_latency.py FOLDER [--rounds 5] [--issues LABELS.jsonl]

Uses the folder's existing index (run `noul index FOLDER` first) and the default settings. One-line
descriptions, and with --issues the issue texts of a label file, each timed twice in the same run: with
the ranking stage (the default) and with fusion alone (`rank=False`), so before/after share one process,
one index and one machine state. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

from noul_lsp.config import ModelSettings, Settings
from noul_lsp.session.workspace import Workspace

QUERIES = ["where is the configuration file parsed", "retry a failed request with backoff",
           "format an error message for the user", "register a command line option",
           "walk the directory tree and skip ignored files", "cache results between calls",
           "compare two versions", "emit a warning when an argument is deprecated"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--issues", help="a label file whose queries (issue texts) are timed too")
    parser.add_argument("--static", default="", help="the static leg's model (`none`: without the static leg)")
    parser.add_argument("--keep-static", action="store_true",
                        help="keep the static leg in beside a complete transformer (static_aside=False)")
    args = parser.parse_args()
    workspace = Workspace(Path(args.folder), replace(Settings(), models=ModelSettings(static=args.static)))
    workspace.find(QUERIES[0])  # load the arrays, the symbol table and the model once
    sets = {"descriptions": QUERIES}
    if args.issues:
        sets["issues"] = [json.loads(line)["query"] for line in Path(args.issues).read_text().splitlines()]
    report = {}
    for name, queries in sets.items():
        for ranked in (True, False):
            stages: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                for query in queries:
                    for stage, ms in workspace.find(query, rank=ranked,
                                                                 static_aside=not args.keep_static).timings.items():
                        stages.setdefault(stage, []).append(ms)
            report[f"{name} ({'ranking stage' if ranked else 'fusion only'})"] = {
                "queries": len(stages["total"]),
                "p50_ms": {stage: round(statistics.median(v), 2) for stage, v in stages.items()}}
    state = workspace.state()
    print(json.dumps({"folder": args.folder, "files": state.files, "chunks": state.chunks, "embedded": state.embedded,
                      "static": state.static, "staticModel": workspace.static_key,
                      "ranking": workspace.find(QUERIES[0]).signals.get("ranking"), **report}, indent=2))


if __name__ == "__main__":
    main()
