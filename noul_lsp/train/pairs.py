"""A mined pair and its files: what `noul train mine` writes and the trainers read.

Kept apart from the miner (tree-sitter, the index) and the trainers (torch) so that a training machine
with neither the chunker nor the index installed (a GPU box, `scripts/train_gpu.py`) reads the same pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Pair:
    query: str
    positive: str
    negatives: list[str]
    source: str  # "docstring" or "commit"
    repository: str
    path: str
    symbol: str
    language: str
    commit: str
    #: the positive's rank under BM25 among its repository's chunks (0 = first)
    bm25_rank: int
    #: its rank under the static model (-1: mined without one)
    static_rank: int = -1
    #: how many of the first negatives are test chunks (`noul train mine --test-negatives`)
    test_negatives: int = 0


def pairs_file(out: Path, repository: str) -> Path:
    return out / "repositories" / (repository.replace("/", "--") + ".jsonl")


def read_pairs(out: Path) -> list[Pair]:
    """Every mined pair of the repositories sources.json records (no pair without its provenance), in a
    stable order (repository, then file order)."""
    sources_path = Path(out) / "sources.json"
    if not sources_path.is_file():
        return []
    pairs: list[Pair] = []
    for repository in sorted(json.loads(sources_path.read_text())["repositories"]):
        path = pairs_file(Path(out), repository)
        if not path.is_file():
            continue
        with path.open() as handle:
            pairs.extend(Pair(**json.loads(line)) for line in handle if line.strip())
    return pairs
