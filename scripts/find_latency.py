"""Warm `noul find` latency per stage (not a test): medians over repeated queries on an indexed folder.

    NOUL_CACHE_DIR=... .venv/bin/python scripts/find_latency.py FOLDER [--rounds 5]

Uses the folder's existing index (run `noul index FOLDER` first) and the default settings. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from noul_lsp.config import Settings
from noul_lsp.session.workspace import Workspace

QUERIES = ["where is the configuration file parsed", "retry a failed request with backoff",
           "format an error message for the user", "register a command line option",
           "walk the directory tree and skip ignored files", "cache results between calls",
           "compare two versions", "emit a warning when an argument is deprecated"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    workspace = Workspace(Path(args.folder), Settings())
    workspace.find(QUERIES[0])  # load the arrays and the model once
    stages: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for query in QUERIES:
            for stage, ms in workspace.find(query).timings.items():
                stages.setdefault(stage, []).append(ms)
    state = workspace.state()
    print(json.dumps({"folder": args.folder, "files": state.files, "chunks": state.chunks, "embedded": state.embedded,
                      "queries": len(stages["total"]),
                      "p50_ms": {stage: round(statistics.median(v), 2) for stage, v in stages.items()}}, indent=2))


if __name__ == "__main__":
    main()
