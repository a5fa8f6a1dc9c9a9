"""Exact cosine search over a contiguous float32 matrix of normalised vectors.

Exact search stays under ~20 ms up to ~100k chunks of 384 dims on two cores, which covers workspaces this
tool indexes on a CPU; an ANN index would only pay off well beyond that.
"""

from __future__ import annotations

import numpy as np


def dense_scores(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    return matrix @ query.astype(np.float32, copy=False)
