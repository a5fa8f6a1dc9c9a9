"""The in-memory mirror of a store that queries run against.

It follows the store by generation: `sync` reads only what changed (chunks of added files, vectors that
arrived), and the numpy arrays are rebuilt lazily on the next query after a change: the lexical part
(BM25 postings, per-row file ids) when chunks changed, the dense matrices when vectors arrived. Chunk
texts stay in LMDB; only the few shown in results are read back.

Two sets of vectors are followed: the transformer's (`model_key`, filled in behind by the background
pass) and the static model's (`static_key`, computed for every chunk as soon as it is indexed), each
with its own rows and matrix.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from noul_lsp.retrieval.bm25 import BM25Index
from noul_lsp.retrieval.symbols import SymbolTable, build_symbol_table
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
    dense_rows: np.ndarray  # int32 rows that have a transformer vector
    dense_matrix: np.ndarray  # float32 [len(dense_rows), dims]
    static_rows: np.ndarray  # int32 rows that have a static vector
    static_matrix: np.ndarray  # float32 [len(static_rows), static dims]
    #: shared and only ever extended; ids past the BM25 index's vocabulary size score nothing
    vocabulary: dict[str, int]

    @property
    def rows(self) -> int:
        return len(self.keys)

    @cached_property
    def symbols(self) -> SymbolTable:
        """Definitions, scopes, paths, roles and whole-file BM25 of this state (built on first use: only the
        ranking stage reads them)."""
        return build_symbol_table(symbols=[e.symbol for e in self.entries], files=self.files,
                                  row_file=self.row_file, hashes=[e.hash for e in self.entries],
                                  row_term_ids=[e.term_ids for e in self.entries],
                                  row_term_counts=[e.term_counts for e in self.entries],
                                  vocabulary_size=self.bm25.vocabulary_size)


class _VectorSet:
    """The vectors of one model for the corpus's content hashes, and its (rows, matrix) once built."""

    def __init__(self, model_key: str | None) -> None:
        self.model_key = model_key
        self.vectors: dict[str, np.ndarray] = {}
        self.missing: set[str] = set()
        self.embedded = 0  # chunks (not distinct texts) that have a vector
        self.built: tuple[np.ndarray, np.ndarray] | None = None

    def reset(self, hash_uses: Counter[str]) -> None:
        for stale in [h for h in self.vectors if h not in hash_uses]:
            del self.vectors[stale]
        self.missing = {h for h in hash_uses if h not in self.vectors} if self.model_key else set()
        self.embedded = sum(n for h, n in hash_uses.items() if h in self.vectors)
        self.built = None

    def load_missing(self, store: ChunkStore, hash_uses: Counter[str]) -> None:
        if self.model_key is None or not self.missing:
            return
        missing = list(self.missing)
        for content_hash, vector in zip(missing, store.vectors(self.model_key, missing), strict=True):
            if vector is not None:
                self.vectors[content_hash] = vector
                self.missing.discard(content_hash)
                self.embedded += hash_uses[content_hash]
                self.built = None

    def build(self, entries: list[_Entry]) -> tuple[np.ndarray, np.ndarray]:
        if self.built is None:
            rows = np.fromiter((i for i, e in enumerate(entries) if e.hash in self.vectors), dtype=np.int32)
            matrix = (np.stack([self.vectors[entries[i].hash] for i in rows]).astype(np.float32) if len(rows)
                      else np.zeros((0, 1), dtype=np.float32))
            self.built = (rows, matrix)
        return self.built


class Corpus:
    def __init__(self, store: ChunkStore, model_key: str | None, static_key: str | None = None) -> None:
        self.store = store
        self._entries: dict[str, _Entry] = {}
        self._dense = _VectorSet(model_key)
        self._static = _VectorSet(static_key)
        self._vocabulary: dict[str, int] = {}
        self._generation = -1
        self._chunk_generation = -1
        self._hash_uses: Counter[str] = Counter()
        #: the arrays are rebuilt in parts: lexical (on chunk changes), each vector set (on its vectors)
        self._lexical: tuple | None = None
        self._arrays: CorpusArrays | None = None
        self._lock = threading.Lock()
        self.file_count = 0
        self.skipped_files = 0

    def _term_ids(self, counts: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        vocabulary = self._vocabulary
        ids = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in counts), dtype=np.int32, count=len(counts))
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def sync(self) -> bool:
        """Catch up with the store; returns True when anything changed. When only vectors arrived (the
        background embedding commits a batch every second or so), only they are read, and only the dense
        matrix is rebuilt on the next query: the chunks, BM25 postings and file table stay."""
        with self._lock:
            generation, chunk_generation = self.store.generations()
            if generation == self._generation:
                return False
            if chunk_generation != self._chunk_generation:
                self._reload_chunks()
                self._chunk_generation = chunk_generation
            self._dense.load_missing(self.store, self._hash_uses)
            self._static.load_missing(self.store, self._hash_uses)
            self._generation = generation
            return True

    def _reload_chunks(self) -> None:
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
        self._hash_uses = Counter(e.hash for e in self._entries.values())
        self._dense.reset(self._hash_uses)
        self._static.reset(self._hash_uses)
        self._lexical = None

    @property
    def embedded_chunks(self) -> int:
        """Chunks with a transformer vector."""
        return self._dense.embedded

    @property
    def static_chunks(self) -> int:
        """Chunks with a static vector."""
        return self._static.embedded

    @property
    def chunk_count(self) -> int:
        return len(self._entries)

    def arrays(self) -> CorpusArrays:
        with self._lock:
            if self._lexical is None:
                self._lexical = self._build_lexical()
                self._dense.built = self._static.built = None  # row numbers moved
            if self._arrays is None or self._dense.built is None or self._static.built is None:
                entries = self._lexical[1]
                self._arrays = CorpusArrays(*self._lexical, *self._dense.build(entries), *self._static.build(entries),
                                            self._vocabulary)
            return self._arrays

    def _build_lexical(self) -> tuple:
        keys = sorted(self._entries)  # path-major: rows of one file are adjacent
        entries = [self._entries[k] for k in keys]
        file_index: dict[str, int] = {}
        row_file = np.fromiter((file_index.setdefault(e.path, len(file_index)) for e in entries),
                               dtype=np.int32, count=len(entries))
        bm25 = BM25Index([e.term_ids for e in entries], [e.term_counts for e in entries], len(self._vocabulary))
        return keys, entries, list(file_index), row_file, bm25
