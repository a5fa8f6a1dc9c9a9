"""The in-memory mirror of a store that queries run against.

It follows the store by generation: `sync` reads only what changed (chunks of added files, vectors that
arrived), and the numpy arrays (BM25 postings, the dense matrix, per-row file ids) are rebuilt lazily on
the next query after a change. Chunk texts stay in LMDB; only the few shown in results are read back.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from noul_lsp.retrieval.bm25 import BM25Index
from noul_lsp.store import ChunkStore


@dataclass(slots=True)
class _Entry:
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    hash: str
    term_ids: np.ndarray
    term_counts: np.ndarray


@dataclass(frozen=True)
class CorpusArrays:
    """Immutable arrays of one corpus state; a query holds one while the corpus moves on."""

    keys: list[str]
    entries: list[_Entry]
    files: list[str]
    row_file: np.ndarray  # int32 file index per row
    bm25: BM25Index
    dense_rows: np.ndarray  # int32 rows that have a vector
    dense_matrix: np.ndarray  # float32 [len(dense_rows), dims]
    vocabulary: dict[str, int]

    @property
    def rows(self) -> int:
        return len(self.keys)


class Corpus:
    def __init__(self, store: ChunkStore, model_key: str | None) -> None:
        self.store = store
        self.model_key = model_key
        self._entries: dict[str, _Entry] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._vocabulary: dict[str, int] = {}
        self._generation = -1
        self._arrays: CorpusArrays | None = None
        self._lock = threading.Lock()
        self.file_count = 0
        self.skipped_files = 0
        self._embedded = 0

    def _term_ids(self, counts: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        vocabulary = self._vocabulary
        ids = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in counts), dtype=np.int32, count=len(counts))
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def sync(self) -> bool:
        """Catch up with the store; returns True when anything changed."""
        with self._lock:
            generation = self.store.generation()
            if generation == self._generation:
                return False
            files = self.store.files()
            self.file_count = sum(1 for record in files.values() if not record.skipped)
            self.skipped_files = len(files) - self.file_count
            wanted = {key for record in files.values() for key in record.chunks}
            for key in [k for k in self._entries if k not in wanted]:
                del self._entries[key]
            added = [k for k in wanted if k not in self._entries]
            if added:
                records = self.store.chunks(added)
                for record, counts in zip(records, self.store.lexical(r.key for r in records), strict=True):
                    ids, tfs = self._term_ids(counts)
                    self._entries[record.key] = _Entry(record.path, record.start_line, record.end_line, record.symbol,
                                                       record.kind, record.hash, ids, tfs)
            if self.model_key is not None:
                live_hashes = {e.hash for e in self._entries.values()}
                for stale in [h for h in self._vectors if h not in live_hashes]:
                    del self._vectors[stale]
                missing = [h for h in live_hashes if h not in self._vectors]
                for content_hash, vector in zip(missing, self.store.vectors(self.model_key, missing), strict=True):
                    if vector is not None:
                        self._vectors[content_hash] = vector
            self._generation = generation
            self._arrays = None
            # counted here, once per change, so that reading it (every find reports it) is free
            self._embedded = sum(1 for e in self._entries.values() if e.hash in self._vectors)
            return True

    @property
    def embedded_chunks(self) -> int:
        return self._embedded

    @property
    def chunk_count(self) -> int:
        return len(self._entries)

    def arrays(self) -> CorpusArrays:
        with self._lock:
            if self._arrays is None:
                self._arrays = self._build()
            return self._arrays

    def _build(self) -> CorpusArrays:
        keys = sorted(self._entries)  # path-major: rows of one file are adjacent
        entries = [self._entries[k] for k in keys]
        files: list[str] = []
        file_index: dict[str, int] = {}
        row_file = np.fromiter((file_index.setdefault(e.path, len(file_index)) for e in entries),
                               dtype=np.int32, count=len(entries))
        files = list(file_index)
        bm25 = BM25Index([e.term_ids for e in entries], [e.term_counts for e in entries], len(self._vocabulary))
        dense_rows = np.fromiter((i for i, e in enumerate(entries) if e.hash in self._vectors), dtype=np.int32)
        if len(dense_rows):
            dense_matrix = np.stack([self._vectors[entries[i].hash] for i in dense_rows]).astype(np.float32)
        else:
            dense_matrix = np.zeros((0, 1), dtype=np.float32)
        return CorpusArrays(keys, entries, files, row_file, bm25, dense_rows, dense_matrix, dict(self._vocabulary))
