"""The rerank stage: a cross-encoder re-scores a short list of the fused chunks.

Which chunks it sees matters as much as the model: a reranker can only promote what reaches it. The plain
short list is the top `size` chunks of the fused ranking; a file-diverse one takes at most `per_file`
chunks of any file, so one file's many near-identical methods cannot fill the list and push a second gold
file out (what multi-file SWE-bench issues need). docs/benchmarks.md measures both by the share of gold
files that reach the list.

Reranked chunks score 1 + sigmoid(logit): above every chunk the reranker did not see (fused RRF scores
stay below 2/(k+1)), ordered among themselves by the cross-encoder alone, and still summed by the file
aggregation like any chunk score.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np

Key = TypeVar("Key")

#: the floor of a reranked chunk's score: above any fused score, so a reranked chunk outranks the rest
RERANKED_FLOOR = 1.0


def shortlist(ranking: Sequence[Key], file_of: Callable[[Key], Hashable], size: int, per_file: int = 0) -> list[Key]:
    """The first `size` keys of `ranking`; with `per_file` > 0, at most that many of any one file (the
    skipped chunks do not take a place, so the list reaches further down the ranking)."""
    if per_file <= 0:
        return list(ranking[:size])
    taken: dict[Hashable, int] = {}
    chosen: list[Key] = []
    for key in ranking:
        file = file_of(key)
        if taken.get(file, 0) >= per_file:
            continue
        taken[file] = taken.get(file, 0) + 1
        chosen.append(key)
        if len(chosen) == size:
            break
    return chosen


def reranked_scores(logits: np.ndarray) -> np.ndarray:
    """Chunk scores of reranked chunks from the cross-encoder's logits (see the module docstring)."""
    return RERANKED_FLOOR + 1.0 / (1.0 + np.exp(-np.clip(logits.astype(np.float64), -30, 30)))
