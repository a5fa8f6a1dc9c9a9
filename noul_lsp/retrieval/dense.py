"""Exact cosine search over a contiguous float32 matrix of normalised vectors.

Exact search stays under ~20 ms up to ~100k chunks of 384 dims on two cores, which covers workspaces this
tool indexes on a CPU; an ANN index would only pay off well beyond that.
"""

from __future__ import annotations

import numpy as np

from noul_lsp.retrieval.fusion import top_k


def dense_scores(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    return matrix @ query.astype(np.float32, copy=False)


def dense_top(matrix: np.ndarray, rows: np.ndarray, query: np.ndarray, k: int,
              allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(corpus rows, cosine) of the k nearest vectors; `allowed` masks corpus rows."""
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
    scores = dense_scores(matrix, query)
    if allowed is not None:
        scores = np.where(allowed[rows], scores, -np.inf)
    best = top_k(scores, k, floor=-np.inf)
    return rows[best], scores[best]
