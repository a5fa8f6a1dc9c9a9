"""Label files in the schema of shared/bench/README.md."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class LabeledQuery:
    id: str
    source: str
    repo: str
    commit: str
    commit_date: str
    query: str
    kind: str  # "answerable" or "not_here"
    tags: tuple[str, ...]
    gold_files: tuple[str, ...]
    gold_lines: dict[str, list[list[int]]] = field(default_factory=dict)
    label_file: str = ""

    @property
    def answerable(self) -> bool:
        return self.kind == "answerable"


class LabelError(ValueError):
    pass


def _cited_lines(row: dict) -> dict[str, list[list[int]]]:
    """A walkthrough's label names its answer's line as `cite: "path:line"` (the definition it read): that line
    of a gold file is its labeled lines, so that `line_hit@5` and `located@5` measure where its hits open."""
    path, _, line = str(row.get("cite") or "").rpartition(":")
    return {path: [[int(line), int(line)]]} if line.isdigit() and path in row.get("gold_files", ()) else {}


def load_labels(paths: list[Path]) -> list[LabeledQuery]:
    """Every query of the files, in file order; a malformed line is an error naming file and line."""
    queries: list[LabeledQuery] = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                queries.append(LabeledQuery(
                    id=row["id"], source=row.get("source", ""), repo=row["repo"], commit=row["commit"],
                    commit_date=row.get("commit_date", ""), query=row["query"], kind=row.get("kind", "answerable"),
                    tags=tuple(row.get("tags", ())), gold_files=tuple(row.get("gold_files", ())),
                    gold_lines=row.get("gold_lines", {}) or _cited_lines(row), label_file=Path(path).stem))
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise LabelError(f"{path}:{number}: not a label row ({error})") from error
    return queries
