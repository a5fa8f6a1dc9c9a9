"""Acc@1/Acc@5 of one pipeline from bench records, per label file, raw and with the hits of embed_last files
(tests, docs) removed: the same chunk set as a run whose tests and docs have no vectors.

    python scripts/dense_leg_compare.py /tmp/c0/per_query.jsonl /tmp/c1/per_query.jsonl [--pipeline dense]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from noul_lsp.bench import metrics as m
from noul_lsp.config import IndexSettings
from noul_lsp.workspace.discovery import gitignore_spec


def table(path: Path, pipeline: str, filtered: bool) -> dict[str, tuple[float, float, int]]:
    embed_last = gitignore_spec(IndexSettings().embed_last)
    rows: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["pipeline"] != pipeline or record["kind"] != "answerable" or record.get("searched") != "own":
            continue
        ranked = [p for p, _ in record["ranked"]]
        if filtered:
            ranked = [p for p in ranked if not embed_last.match_file(p)]
        for key in (Path(record["label_file"]).stem, "all"):
            rows[key].append((m.accuracy_at(ranked, record["gold_files"], 1),
                              m.accuracy_at(ranked, record["gold_files"], 5)))
    return {k: (round(sum(a for a, _ in v) / len(v), 3), round(sum(b for _, b in v) / len(v), 3), len(v))
            for k, v in sorted(rows.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path)
    parser.add_argument("--pipeline", default="dense")
    args = parser.parse_args()
    for path in args.records:
        for filtered in (False, True):
            print(f"{path} {args.pipeline} {'filtered' if filtered else 'raw'}", table(path, args.pipeline, filtered))


if __name__ == "__main__":
    main()
