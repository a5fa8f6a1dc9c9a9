"""One LMDB environment per workspace: the only module that imports lmdb.

Sub-databases:
  files   : path -> {mtime_ns, size, hash, chunks: [chunk keys]}
  chunks  : chunk key -> {path, start, end, symbol, language, kind, header, text, hash}
  lexical : chunk key -> {term: count}   (what BM25 needs, so loading never re-tokenises)
  vectors : "<model key>\\0<content hash>" -> float32 bytes   (never embedded twice)
  meta    : schema version, workspace root, generation counter

Every change goes through `apply(batch)`: one write transaction that commits whole or not at all, so a
kill -9 at any moment leaves the previous consistent state. A full map is grown and the batch retried.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np

from noul_lsp.chunking.chunk import path_key

SCHEMA_VERSION = 1
#: py-lmdb allows one Environment per file per process: stores of the same folder share it.
_OPEN: dict[str, tuple[lmdb.Environment, dict, int]] = {}
_OPEN_LOCK = threading.Lock()
INITIAL_MAP_BYTES = 256 << 20
_SUBDBS = (b"files", b"chunks", b"lexical", b"vectors", b"meta")


class StoreError(RuntimeError):
    """The index cannot be used; the message says why and what to do."""


class IndexLocked(StoreError):
    pass


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    mtime_ns: int
    size: int
    hash: str
    chunks: tuple[str, ...]
    #: why the file is not indexed (binary, too large); "" for indexed files
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    key: str
    path: str
    start_line: int
    end_line: int
    symbol: str
    language: str
    kind: str
    header: str
    text: str
    hash: str

    @property
    def embed_text(self) -> str:
        return f"{self.header}\n{self.text}" if self.header else self.text


@dataclass
class WriteBatch:
    """Changes applied together in one transaction by `ChunkStore.apply`."""

    files: dict[str, FileRecord | None] = field(default_factory=dict)
    chunks: dict[str, ChunkRecord | None] = field(default_factory=dict)
    lexical: dict[str, dict[str, int]] = field(default_factory=dict)
    vectors: dict[bytes, np.ndarray] = field(default_factory=dict)

    def put_file(self, record: FileRecord) -> None:
        self.files[record.path] = record

    def delete_file(self, path: str) -> None:
        self.files[path] = None

    def put_chunk(self, record: ChunkRecord, terms: dict[str, int]) -> None:
        self.chunks[record.key] = record
        self.lexical[record.key] = terms

    def delete_chunk(self, key: str) -> None:
        self.chunks[key] = None
        self.lexical.pop(key, None)

    def put_vector(self, model_key: str, content_hash: str, vector: np.ndarray) -> None:
        self.vectors[vector_key(model_key, content_hash)] = np.asarray(vector, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.files) + len(self.chunks) + len(self.vectors)


def vector_key(model_key: str, content_hash: str) -> bytes:
    return f"{model_key}\0{content_hash}".encode()


def _dump(value: dict) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _load(raw: bytes) -> dict:
    return json.loads(bytes(raw).decode("utf-8", "surrogatepass"))


class ChunkStore:
    """A workspace's persistent index. Safe to share between processes (LMDB does the locking)."""

    def __init__(self, directory: Path, *, root: str = "") -> None:
        self.directory = Path(directory)
        self.root = root
        #: set when an incompatible or unreadable index was replaced; the caller shows it to the user
        self.rebuilt_reason: str | None = None
        self._closed = False
        self.env = self._open()
        self._check_schema()

    def _open(self) -> lmdb.Environment:
        self.directory.mkdir(parents=True, exist_ok=True)
        key = str(self.directory.resolve())
        with _OPEN_LOCK:
            if key in _OPEN:
                env, dbs, users = _OPEN[key]
                _OPEN[key] = (env, dbs, users + 1)
            else:
                try:
                    env = lmdb.open(key, map_size=INITIAL_MAP_BYTES, max_dbs=len(_SUBDBS), subdir=True)
                    dbs = {name.decode(): env.open_db(name) for name in _SUBDBS}
                except lmdb.Error as error:
                    raise StoreError(f"the index at {self.directory} cannot be opened ({error}); "
                                     "run `noul index --rebuild` to build it again") from error
                _OPEN[key] = (env, dbs, 1)
        self._dbs = dbs
        return env

    def _release(self) -> None:
        key = str(self.directory.resolve())
        with _OPEN_LOCK:
            env, dbs, users = _OPEN[key]
            if users > 1:
                _OPEN[key] = (env, dbs, users - 1)
            else:
                del _OPEN[key]
                env.close()

    def _check_schema(self) -> None:
        with self.env.begin() as txn:
            found = txn.get(b"schema", db=self._dbs["meta"])
        if found is None:
            self._write_meta({"schema": str(SCHEMA_VERSION), "root": self.root, "generation": "0"})
            return
        if found.decode() != str(SCHEMA_VERSION):
            self.rebuilt_reason = (f"index schema {found.decode()} is not this version's {SCHEMA_VERSION}: "
                                   "rebuilding the index")
            self.destroy_and_reopen()

    def destroy_and_reopen(self) -> None:
        """Delete every record (files, chunks, vectors) and start an empty index of this schema."""
        self._release()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.env = self._open()
        self._write_meta({"schema": str(SCHEMA_VERSION), "root": self.root, "generation": "0"})

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release()

    # -- writing ---------------------------------------------------------------------------------

    def _write_meta(self, values: dict[str, str]) -> None:
        with self.env.begin(write=True) as txn:
            for key, value in values.items():
                txn.put(key.encode(), value.encode(), db=self._dbs["meta"])

    def apply(self, batch: WriteBatch) -> None:
        """Write the whole batch in one transaction and bump the generation; grows a full map."""
        if not len(batch):
            return
        while True:
            try:
                with self.env.begin(write=True) as txn:
                    self._write(txn, batch)
                return
            except lmdb.MapFullError:
                self.env.set_mapsize(self.env.info()["map_size"] * 2)

    def _write(self, txn: lmdb.Transaction, batch: WriteBatch) -> None:
        files, chunks, lexical, vectors = (self._dbs[n] for n in ("files", "chunks", "lexical", "vectors"))
        for path, record in batch.files.items():
            raw_path = path_key(path).encode("utf-8", "surrogateescape")
            if record is None:
                txn.delete(raw_path, db=files)
            else:
                txn.put(raw_path, _dump({"path": path, "mtime_ns": record.mtime_ns, "size": record.size,
                                         "hash": record.hash, "chunks": list(record.chunks),
                                         "skipped": record.skipped}), db=files)
        for key, chunk in batch.chunks.items():
            raw_key = key.encode("utf-8", "surrogateescape")
            if chunk is None:
                txn.delete(raw_key, db=chunks)
                txn.delete(raw_key, db=lexical)
                continue
            txn.put(raw_key, _dump({"path": chunk.path, "start": chunk.start_line, "end": chunk.end_line,
                                    "symbol": chunk.symbol, "language": chunk.language, "kind": chunk.kind,
                                    "header": chunk.header, "text": chunk.text, "hash": chunk.hash}), db=chunks)
            txn.put(raw_key, _dump(batch.lexical.get(key, {})), db=lexical)
        for key, vector in batch.vectors.items():
            txn.put(key, vector.astype(np.float32, copy=False).tobytes(), db=vectors)
        meta = self._dbs["meta"]
        counters = [b"generation", b"chunk_generation"] if batch.files or batch.chunks else [b"generation"]
        for counter in counters:
            txn.put(counter, str(int(txn.get(counter, default=b"0", db=meta)) + 1).encode(), db=meta)

    # -- reading ---------------------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[lmdb.Transaction]:
        try:
            txn = self.env.begin()
        except lmdb.MapResizedError:
            self.env.set_mapsize(0)  # another process grew the map: adopt its size
            txn = self.env.begin()
        try:
            yield txn
        finally:
            txn.abort()

    def generation(self) -> int:
        """Bumped by every write."""
        return self.generations()[0]

    def generations(self) -> tuple[int, int]:
        """(every write, writes that changed files or chunks): a reader that sees only the first move
        knows that only vectors arrived."""
        with self._read() as txn:
            meta = self._dbs["meta"]
            return (int(txn.get(b"generation", default=b"0", db=meta)),
                    int(txn.get(b"chunk_generation", default=b"0", db=meta)))

    def files(self) -> dict[str, FileRecord]:
        found: dict[str, FileRecord] = {}
        with self._read() as txn:
            for raw in txn.cursor(db=self._dbs["files"]).iternext(keys=False, values=True):
                value = _load(raw)
                path = value["path"]
                found[path] = FileRecord(path, value["mtime_ns"], value["size"], value["hash"], tuple(value["chunks"]),
                                         value.get("skipped", ""))
        return found

    def chunks(self, keys: Iterable[str] | None = None) -> list[ChunkRecord]:
        """The named chunks (missing ones skipped), or every chunk when `keys` is None."""
        with self._read() as txn:
            db = self._dbs["chunks"]
            if keys is None:
                pairs = ((bytes(k), v) for k, v in txn.cursor(db=db))
            else:
                pairs = ((k, txn.get(k, db=db)) for k in (key.encode("utf-8", "surrogateescape") for key in keys))
            return [_chunk_record(k.decode("utf-8", "surrogateescape"), raw) for k, raw in pairs if raw is not None]

    def lexical(self, keys: Iterable[str]) -> list[dict[str, int]]:
        with self._read() as txn:
            db = self._dbs["lexical"]
            found = []
            for key in keys:
                raw = txn.get(key.encode("utf-8", "surrogateescape"), db=db)
                found.append(_load(raw) if raw is not None else {})
            return found

    def vectors(self, model_key: str, hashes: Iterable[str]) -> list[np.ndarray | None]:
        with self._read() as txn:
            db = self._dbs["vectors"]
            found: list[np.ndarray | None] = []
            for content_hash in hashes:
                raw = txn.get(vector_key(model_key, content_hash), db=db)
                found.append(np.frombuffer(raw, dtype=np.float32).copy() if raw is not None else None)
            return found

    def missing_vectors(self, model_key: str, hashes: Iterable[str]) -> set[str]:
        with self._read() as txn:
            db = self._dbs["vectors"]
            return {h for h in hashes if txn.get(vector_key(model_key, h), db=db) is None}

    def counts(self) -> dict[str, int]:
        with self._read() as txn:
            return {name: txn.stat(self._dbs[name])["entries"] for name in ("files", "chunks", "vectors")}

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.glob("*.mdb"))

    @contextmanager
    def indexing_lock(self) -> Iterator[None]:
        """Exclusive right to index this workspace (two indexers would embed the same chunks twice)."""
        lock_path = self.directory / "indexer.lock"
        handle = open(lock_path, "a+")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as error:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise IndexLocked(f"the index at {self.directory} is being updated by {holder}; "
                                  "wait for it to finish") from error
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            yield
        finally:
            handle.close()


def _chunk_record(key: str, raw: bytes) -> ChunkRecord:
    value = _load(raw)
    return ChunkRecord(key, value["path"], value["start"], value["end"], value["symbol"], value["language"],
                       value["kind"], value["header"], value["text"], value["hash"])
