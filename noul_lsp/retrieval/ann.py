"""The approximate index of a large vector table: faiss's inverted file over 8-bit scalar-quantised vectors
(IVF-SQ8), whose candidates the vector leg rescores exactly (dense.py).

Why IVF and not a graph: on this 2-core machine, over the 385k static vectors of 39 repositories, faiss
built IVF-SQ8 in 6 s (1,024 lists) and reached recall@50 0.991 after rescoring, where usearch's HNSW took
118 s to build and reached 0.96 (docs/benchmarks.md, "Scale"). An inverted file also takes new vectors by assigning each to its nearest
centroid, so the index stays incremental as the background pass fills vectors in, and it needs no
rebuild until the corpus has grown several times past what its centroids were trained on.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

#: inverted lists per index: about LISTS_PER_ROOT·sqrt(slots), within these bounds. With 256 lists probed,
#: 4·sqrt reached the recall@50 of 2·sqrt in two thirds of the time (408k static vectors: 0.991 in 2.1 ms
#: against 0.992 in 3.3 ms; 94k: 0.991 in 0.85 ms against 0.995 in 1.4 ms), built in 9 s at 408k;
#: 8·sqrt lost recall at the same probes (0.987) and took 25 s to build (docs/benchmarks.md, "Scale")
LISTS_PER_ROOT = 4
MIN_LISTS, MAX_LISTS = 256, 8192
#: lists a query visits
PROBES = 256
#: training sample per list (k-means needs a few dozen points per centroid)
TRAIN_PER_LIST = 40


def _faiss():
    import faiss  # imported on first need: small workspaces never load it

    return faiss


class ApproximateIndex:
    """An IVF-SQ8 index over some slots of one vector table (ids are slots)."""

    def __init__(self, index, dims: int) -> None:
        self._index = index
        self.dims = dims
        self._lock = threading.Lock()  # faiss allows no search while vectors are added

    @classmethod
    def build(cls, matrix: np.ndarray, slots: np.ndarray, *, seed: int = 0) -> ApproximateIndex:
        """Train centroids on a sample of `matrix[slots]` and add them all."""
        faiss = _faiss()
        dims = matrix.shape[1]
        lists = int(np.clip(LISTS_PER_ROOT * np.sqrt(max(len(slots), 1)), MIN_LISTS, MAX_LISTS))
        sample = slots
        if len(slots) > lists * TRAIN_PER_LIST:
            sample = np.sort(np.random.default_rng(seed).choice(slots, lists * TRAIN_PER_LIST, replace=False))
        quantizer = faiss.IndexFlatIP(dims)
        index = faiss.IndexIVFScalarQuantizer(quantizer, dims, lists, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        index.train(np.ascontiguousarray(matrix[sample], dtype=np.float32))
        built = cls(index, dims)
        built.add(slots, matrix[slots])
        return built

    @property
    def count(self) -> int:
        return int(self._index.ntotal)

    def add(self, slots: np.ndarray, vectors: np.ndarray) -> None:
        for start in range(0, len(slots), 65536):
            part = np.ascontiguousarray(vectors[start:start + 65536], dtype=np.float32)
            with self._lock:
                self._index.add_with_ids(part, np.asarray(slots[start:start + 65536], dtype=np.int64))

    def search(self, query: np.ndarray, k: int, probes: int = PROBES) -> np.ndarray:
        """The slots of about the k nearest vectors (approximately ordered; the caller rescores them)."""
        with self._lock:
            self._index.nprobe = probes
            _, found = self._index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k)
        found = found[0]
        return found[found >= 0]

    def save(self, path: Path) -> None:
        with self._lock:
            _faiss().write_index(self._index, str(path))

    @classmethod
    def load(cls, path: Path) -> ApproximateIndex:
        index = _faiss().read_index(str(path))
        return cls(index, index.d)
