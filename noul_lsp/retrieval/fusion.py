"""Reciprocal rank fusion and top-k selection."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def top_k(scores: np.ndarray, k: int, *, floor: float = 0.0) -> np.ndarray:
    """Indices of the k highest scores above `floor`, best first (argpartition, then sort only k)."""
    candidates = np.flatnonzero(scores > floor)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    return candidates[np.argsort(-scores[candidates], kind="stable")]


def reciprocal_rank_fusion(rankings: list[Sequence[Hashable]], k: int) -> dict[Hashable, float]:
    """Σ 1/(k + rank) over the rankings each item appears in (rank 1-based). Rankings are short lists."""
    fused: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
