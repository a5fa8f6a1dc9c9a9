"""Reciprocal rank fusion and top-k selection."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

#: from this many scores on, `top_k` first narrows them by a threshold drawn from a sample
SAMPLED_FROM = 65_536
#: one score in this many is in the sample
SAMPLE_STEP = 64


def sampled_threshold(sample: np.ndarray, k: int) -> float | None:
    """From every SAMPLE_STEP-th score (those that count only), a score about 4k of all the scores exceed;
    None when the sample is too small to say. A caller keeps the scores above it, and checks that at least
    k did: then every score at or above the k-th is among them."""
    rank = 4 * k // SAMPLE_STEP + 1
    if len(sample) <= rank:
        return None
    return float(np.partition(sample, len(sample) - rank)[len(sample) - rank])


def top_k(scores: np.ndarray, k: int, *, floor: float = 0.0) -> np.ndarray:
    """Indices of the k highest scores above `floor`, best first (argpartition, then sort only k).

    Over many scores (a long query's BM25 touches most of a million rows), listing every score above the
    floor is the cost; so a threshold is taken from a regular sample, low enough that about 4k scores of
    the whole pass it, and the pass keeps only those. When fewer than k pass, the floor is used after all:
    the answer is the same either way."""
    if len(scores) >= SAMPLED_FROM and k > 0:
        sample = scores[::SAMPLE_STEP]
        # the sample's scores above the floor only: a description's BM25 is 0 for most rows, and numpy's
        # selection over that many equal values took 0.8 ms at 782k rows (0.08 ms once they are left out)
        threshold = sampled_threshold(sample[sample > floor], k)
        if threshold is not None:  # (None: the floor is the threshold)
            candidates = np.flatnonzero(scores > threshold)
            if len(candidates) >= k:
                part = np.argpartition(-scores[candidates], k - 1)[:k]
                candidates = candidates[part]
                return candidates[np.argsort(-scores[candidates], kind="stable")]
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


Key = tuple[int, int]  # (root index, corpus row)


@dataclass
class Fused:
    """The fusion stage's output: every leg's global ranking, the fused chunk scores and their order."""

    bm25_ranking: list[Key]
    dense_ranking: list[Key]
    scores: dict[Key, float]
    order: list[Key]
    bm25_rank: dict[Key, int]
    dense_rank: dict[Key, int]
    static_ranking: list[Key]
    static_rank: dict[Key, int]

    def rows_of(self, root_index: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, fused scores) of one root's chunks in the fused ranking."""
        mine = [(row, score) for (index, row), score in self.scores.items() if index == root_index]
        if not mine:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        rows, scores = zip(*mine, strict=True)
        return np.array(rows, dtype=np.int32), np.array(scores, dtype=np.float32)


def global_ranking(per_root: list[tuple[np.ndarray, np.ndarray]], size: int) -> list[Key]:
    """(root index, row) pairs of every root's list merged by raw score, best first, at most `size`."""
    keys = [(index, int(row), float(score)) for index, (rows, scores) in enumerate(per_root)
            for row, score in zip(rows.tolist(), scores.tolist(), strict=True)]
    keys.sort(key=lambda item: -item[2])
    return [(index, row) for index, row, _ in keys[:size]]


def fuse(bm25_lists: list[tuple[np.ndarray, np.ndarray]], dense_lists: list[tuple[np.ndarray, np.ndarray]],
         static_lists: list[tuple[np.ndarray, np.ndarray]] | None = None, *, size: int, rrf_k: int) -> Fused:
    """Each leg's lists merged across roots by raw score (cosines share one model; BM25 scores share one idf
    in a multi-root find), then reciprocal rank fusion of the global rankings: a root's top hit is not worth
    more for being alone in a small root. A leg with no list (the transformer before its first vectors)
    is left out of the fusion, not counted as an empty vote."""
    bm25_ranking = global_ranking(bm25_lists, size)
    dense_ranking = global_ranking(dense_lists, size)
    static_ranking = global_ranking(static_lists or [], size)
    scores = reciprocal_rank_fusion([r for r in (bm25_ranking, dense_ranking, static_ranking) if r], rrf_k)
    order = sorted(scores, key=lambda key: -scores[key])
    return Fused(bm25_ranking, dense_ranking, scores, order,
                 {key: rank for rank, key in enumerate(bm25_ranking, 1)},
                 {key: rank for rank, key in enumerate(dense_ranking, 1)},
                 static_ranking, {key: rank for rank, key in enumerate(static_ranking, 1)})
