"""One LMDB environment per workspace: the only module that imports lmdb.

Sub-databases:
  files   : path -> {mtime_ns, size, hash, chunks: [chunk keys]}
  chunks  : chunk key -> {path, start, end, symbol, language, kind, header, text, hash[, names]}
  lexical : chunk key -> {term: count}   (what BM25 needs, so loading never re-tokenises)
  vectors : "<model key>\\0<content hash>" -> float32 bytes   (never embedded twice)
  meta    : schema version, workspace root, generation counter
  changes : generation -> {paths: [files changed], vectors: {model key: [content hashes]}}   (the newest
            CHANGE_LOG_KEEP writes: a reader that follows the store reads what changed, not everything)

Every change goes through `apply(batch)`: one write transaction that commits whole or not at all, so a
kill -9 at any moment leaves the previous consistent state. A full map is grown and the batch retried.

The store verifies itself. Before LMDB maps the data file, its size is checked against the pages its meta
pages say are in use (a short file would kill the process with SIGBUS on the first read past its end).
Every value carries a CRC-32 of its sub-database, key and bytes, checked on every read; a count of what a
scan found is checked against what LMDB says the sub-database holds; a chunk that its file lists but
that is missing is damage too. Any of these, or an error LMDB raises for a damaged page, is one
exception, `IndexDamaged`: never a result read from a record that failed its check. Damage found while
opening is repaired at once (the folder is set aside, kept for a bug report, and an empty index takes
its place; `rebuilt_reason` says so); damage found later is raised, and the caller closes the store,
calls `set_aside` and reopens.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np

from noul_lsp.chunking.chunk import path_key

#: 2: every value is sealed with a checksum (an index of schema 1 is rebuilt).
SCHEMA_VERSION = 2
INITIAL_MAP_BYTES = 256 << 20
_SUBDBS = (b"files", b"chunks", b"lexical", b"vectors", b"meta", b"changes")
#: writes the change log keeps (one per `apply`; the background embedder commits about one a second)
CHANGE_LOG_KEEP = 4096
_GENERATION_KEY = struct.Struct(">Q")
#: damaged copies of one index kept beside it (older ones are deleted)
KEEP_DAMAGED = 2
_SEAL = struct.Struct("<I")
#: what LMDB raises for pages that are not what they should be
_LMDB_DAMAGE = (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.VersionMismatchError,
                lmdb.BadValsizeError, lmdb.BadTxnError, lmdb.BadDbiError, lmdb.IncompatibleError, lmdb.PanicError,
                lmdb.PageFullError, lmdb.BadChecksumError)
#: what decoding a damaged value raises (UnicodeDecodeError and JSONDecodeError are ValueErrors)
_DECODE_DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error)


class _Shared:
    """One open LMDB environment and the stores that use it (py-lmdb allows one per file per process)."""

    def __init__(self, env: lmdb.Environment, dbs: dict) -> None:
        self.env, self.dbs, self.users = env, dbs, 1


_OPEN: dict[str, _Shared] = {}
_OPEN_LOCK = threading.Lock()


class StoreError(RuntimeError):
    """The index cannot be used; the message says why and what to do."""


class IndexLocked(StoreError):
    pass


class IndexDamaged(StoreError):
    """The index failed a check (a short data file, a checksum, a damaged page). The caller closes the
    store, calls `set_aside(directory, reason)` and opens it again: it is then rebuilt from the files."""

    def __init__(self, directory: Path, reason: str) -> None:
        super().__init__(f"the index at {directory} is damaged ({reason})")
        self.directory = Path(directory)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    mtime_ns: int
    size: int
    hash: str
    chunks: tuple[str, ...]
    #: why the file is not indexed (binary, too large); "" for indexed files
    skipped: str = ""
    #: committed although the ignore rules match it (discovery.DiscoveredFile.vendored): cut as a tool's output
    vendored: bool = False


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
    #: the definitions nested in the chunk (chunking.Chunk.names)
    names: tuple[str, ...] = ()

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
    #: small named values of the index itself (e.g. the settings it was built with)
    meta: dict[str, str] = field(default_factory=dict)

    def put_meta(self, name: str, value: str) -> None:
        self.meta[name] = value

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
        return len(self.files) + len(self.chunks) + len(self.vectors) + len(self.meta)


@dataclass(frozen=True)
class Changes:
    """What the writes after some generation changed: the files (added, changed or removed) and, per
    model key, the content hashes that got a vector."""

    paths: frozenset[str]
    vectors: dict[str, frozenset[str]]


def vector_key(model_key: str, content_hash: str) -> bytes:
    return f"{model_key}\0{content_hash}".encode()


def _dump(value: dict) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _load(raw: bytes) -> dict:
    value = json.loads(bytes(raw).decode("utf-8", "surrogatepass"))
    if not isinstance(value, dict):
        raise ValueError(f"a record holds {type(value).__name__}, not an object")
    return value


class _Unsealed(ValueError):
    """A value whose checksum does not match its bytes."""


def _crc(db: bytes, key: bytes, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(key, zlib.crc32(db + b"\0")))


def seal(db: bytes, key: bytes, payload: bytes) -> bytes:
    """The stored form of a value: a CRC-32 of (sub-database, key, payload), then the payload."""
    return _SEAL.pack(_crc(db, key, payload)) + payload


def unseal(db: bytes, key: bytes, raw: bytes) -> bytes:
    """The payload of a stored value; `_Unsealed` when its checksum does not match."""
    raw = bytes(raw)
    if len(raw) < _SEAL.size or _SEAL.unpack_from(raw)[0] != _crc(db, key, raw[_SEAL.size:]):
        raise _Unsealed(f"the {db.decode()} record {key[:80]!r} fails its checksum")
    return raw[_SEAL.size:]


# -- the data file's own header ----------------------------------------------------------------------

#: LMDB's meta page (64-bit): a 16-byte page header, then magic, version, address, map size, two MDB_db
#: records of 48 bytes (the first one's md_pad is the page size), the last used page and the txn id.
_META = struct.Struct("<16xIIQQI44x48xQQ")
_LMDB_MAGIC = 0xBEEFC0DE


def data_file_problem(directory: Path) -> str | None:
    """Why `directory/data.mdb` must not be mapped (None when it may, or when there is none yet): a file
    shorter than the pages its newer meta page says are in use, or one whose meta pages are not LMDB's."""
    path = Path(directory) / "data.mdb"
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            first = handle.read(_META.size)
            if len(first) < _META.size:
                return f"data.mdb is {size} bytes, shorter than its header"
            magic, version, _address, _mapsize, page_size, _last, _txn = _META.unpack(first)
            if magic != _LMDB_MAGIC:
                return "data.mdb is not an LMDB file (bad magic)"
            if page_size < 512 or page_size > 1 << 16 or page_size & (page_size - 1):
                return f"data.mdb names an impossible page size {page_size}"
            handle.seek(page_size)
            second = handle.read(_META.size)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"data.mdb cannot be read ({error.strerror or error})"
    if len(second) < _META.size:
        return f"data.mdb is {size} bytes, shorter than its two meta pages (truncated)"
    metas = [_META.unpack(first), _META.unpack(second)]
    if any(meta[0] != _LMDB_MAGIC for meta in metas):
        return "data.mdb has a damaged meta page (bad magic)"
    newest = max(metas, key=lambda meta: meta[6])
    needed = (newest[5] + 1) * page_size
    if size < needed:
        return f"data.mdb is {size} bytes but its pages end at {needed} (truncated)"
    return None


def set_aside(directory: Path, reason: str) -> str:
    """Move a damaged index folder aside (kept for a bug report, the oldest beyond `KEEP_DAMAGED`
    deleted) so that the next open starts an empty one; returns the message to show the user once.
    Stores of this folder still open in this process keep working on the moved copy."""
    directory = Path(directory)
    with _OPEN_LOCK:
        _OPEN.pop(str(directory.resolve()), None)  # the next open maps the new folder, not the moved one
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = directory.with_name(f"{directory.name}.damaged-{stamp}-{os.getpid()}")
    try:
        directory.rename(aside)
    except FileNotFoundError:
        return f"the index at {directory} was damaged ({reason}) and is gone; rebuilding it"
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)
        return f"the index at {directory} was damaged ({reason}); it was deleted and is being rebuilt"
    older = sorted(directory.parent.glob(f"{directory.name}.damaged-*"), key=lambda p: p.stat().st_mtime)
    for stale in older[:-KEEP_DAMAGED]:
        shutil.rmtree(stale, ignore_errors=True)
    return f"the index at {directory} was damaged ({reason}); it was moved to {aside} and is being rebuilt"


class ChunkStore:
    """A workspace's persistent index. Safe to share between processes (LMDB does the locking)."""

    def __init__(self, directory: Path, *, root: str = "") -> None:
        self.directory = Path(directory)
        self.root = root
        #: set when an incompatible or unreadable index was replaced; the caller shows it to the user
        self.rebuilt_reason: str | None = None
        self._closed = False
        self._shared: _Shared | None = None
        try:
            self.env = self._open()
            self._check_schema()
        except IndexDamaged as damage:
            if self._shared is not None:
                self._release()
            self.rebuilt_reason = set_aside(self.directory, damage.reason)
            self.env = self._open()
            self._check_schema()

    def _open(self) -> lmdb.Environment:
        """The shared environment of this folder, opened (after the data file's size check) if needed."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot create the index folder {self.directory}: {error.strerror or error}") from error
        key = str(self.directory.resolve())
        with _OPEN_LOCK:
            shared = _OPEN.get(key)
            if shared is not None:
                shared.users += 1
            else:
                if (problem := data_file_problem(self.directory)) is not None:
                    raise IndexDamaged(self.directory, problem)
                try:
                    env = lmdb.open(key, map_size=INITIAL_MAP_BYTES, max_dbs=len(_SUBDBS), subdir=True)
                except _LMDB_DAMAGE as error:
                    raise IndexDamaged(self.directory, f"LMDB: {error}") from error
                except lmdb.Error as error:
                    raise StoreError(f"the index at {self.directory} cannot be opened ({error}); "
                                     "run `noul index --rebuild` to build it again") from error
                try:
                    dbs = {name.decode(): env.open_db(name) for name in _SUBDBS}
                except lmdb.Error as error:
                    env.close()
                    raise IndexDamaged(self.directory, f"LMDB: {error}") from error
                shared = _OPEN[key] = _Shared(env, dbs)
        self._shared = shared
        self._dbs = shared.dbs
        return shared.env

    def _release(self) -> None:
        shared, self._shared = self._shared, None
        if shared is None:
            return
        key = str(self.directory.resolve())
        with _OPEN_LOCK:
            shared.users -= 1
            if shared.users == 0:
                if _OPEN.get(key) is shared:
                    del _OPEN[key]
                shared.env.close()

    def _check_schema(self) -> None:
        found = self._meta(b"schema")
        if found is None:
            with self._read() as txn:
                empty = not txn.stat(self._dbs["files"])["entries"]
            if empty:
                self._write_meta({"schema": str(SCHEMA_VERSION), "root": self.root, "generation": "0"})
                return
            found = "(none)"
        if found != str(SCHEMA_VERSION):
            # vectors are keyed by model and content hash alone, so they outlive any change of the chunk
            # records' format: an upgrade re-reads files and re-chunks, it must not re-embed (minutes to hours)
            kept = self._plain_vectors() if found == "1" else {}
            self.rebuilt_reason = (f"index schema {found} is not this version's {SCHEMA_VERSION}: "
                                   f"rebuilding the index (keeping {len(kept)} vectors)")
            self.destroy_and_reopen()
            if kept:
                with self.env.begin(write=True) as txn:
                    for key, payload in kept.items():
                        txn.put(key, seal(b"vectors", key, payload), db=self._dbs["vectors"])

    def _plain_vectors(self) -> dict[bytes, bytes]:
        """The vectors of a schema-1 index (unsealed float32 bytes), each kept only when it reads as a
        finite unit vector: a damaged one is simply embedded again."""
        kept: dict[bytes, bytes] = {}
        try:
            with self._read() as txn:
                for key, raw in txn.cursor(db=self._dbs["vectors"]):
                    payload = bytes(raw)
                    if not payload or len(payload) % 4:
                        continue
                    vector = np.frombuffer(payload, dtype=np.float32)
                    norm = float(np.linalg.norm(vector)) if np.isfinite(vector).all() else 0.0
                    if 0.98 < norm < 1.02:
                        kept[bytes(key)] = payload
        except (IndexDamaged, lmdb.Error):
            return {}
        return kept

    def _meta(self, key: bytes) -> str | None:
        with self._read() as txn:
            raw = txn.get(key, db=self._dbs["meta"])
            if raw is None:
                return None
            try:
                return unseal(b"meta", key, raw).decode()
            except _Unsealed:
                if key == b"schema" and bytes(raw).isdigit():  # an index from before checksums
                    return bytes(raw).decode()
                raise

    def meta(self, key: str) -> str | None:
        """A value recorded with `WriteBatch.put_meta` (None when there is none)."""
        return self._meta(b"m:" + key.encode())

    def destroy_and_reopen(self) -> None:
        """Delete every record (files, chunks, vectors) and start an empty index of this schema."""
        self._release()
        with _OPEN_LOCK:
            _OPEN.pop(str(self.directory.resolve()), None)
        shutil.rmtree(self.directory, ignore_errors=True)
        self.env = self._open()
        self._write_meta({"schema": str(SCHEMA_VERSION), "root": self.root, "generation": "0"})

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release()

    # -- writing ---------------------------------------------------------------------------------

    def _write_meta(self, values: dict[str, str]) -> None:
        with self._write_txn() as txn:
            for key, value in values.items():
                raw = key.encode()
                txn.put(raw, seal(b"meta", raw, value.encode()), db=self._dbs["meta"])

    @contextmanager
    def _write_txn(self) -> Iterator[lmdb.Transaction]:
        """A write transaction; LMDB's damage errors and values failing their checks become IndexDamaged."""
        try:
            with self.env.begin(write=True) as txn:
                yield txn
        except _LMDB_DAMAGE as error:
            raise IndexDamaged(self.directory, f"LMDB: {error}") from error
        except _Unsealed as error:
            raise IndexDamaged(self.directory, str(error)) from error
        except (lmdb.MapFullError, lmdb.MapResizedError):
            raise
        except lmdb.Error as error:  # e.g. the store was closed meanwhile: not damage
            raise StoreError(f"the index at {self.directory} cannot be written ({error})") from error

    def apply(self, batch: WriteBatch) -> None:
        """Write the whole batch in one transaction and bump the generation; grows a full map."""
        if not len(batch):
            return
        while True:
            try:
                with self._write_txn() as txn:
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
                txn.put(raw_path, seal(b"files", raw_path, _dump({
                    "path": path, "mtime_ns": record.mtime_ns, "size": record.size, "hash": record.hash,
                    "chunks": list(record.chunks), "skipped": record.skipped,
                    **({"vendored": True} if record.vendored else {})})), db=files)
        for key, chunk in batch.chunks.items():
            raw_key = key.encode("utf-8", "surrogateescape")
            if chunk is None:
                txn.delete(raw_key, db=chunks)
                txn.delete(raw_key, db=lexical)
                continue
            txn.put(raw_key, seal(b"chunks", raw_key, _dump({
                "path": chunk.path, "start": chunk.start_line, "end": chunk.end_line, "symbol": chunk.symbol,
                "language": chunk.language, "kind": chunk.kind, "header": chunk.header, "text": chunk.text,
                "hash": chunk.hash, **({"names": list(chunk.names)} if chunk.names else {})})), db=chunks)
            txn.put(raw_key, seal(b"lexical", raw_key, _dump(batch.lexical.get(key, {}))), db=lexical)
        for key, vector in batch.vectors.items():
            txn.put(key, seal(b"vectors", key, vector.astype(np.float32, copy=False).tobytes()), db=vectors)
        meta = self._dbs["meta"]
        for name, value in batch.meta.items():
            raw = b"m:" + name.encode()
            txn.put(raw, seal(b"meta", raw, value.encode()), db=meta)
        txn.put(b"generation", seal(b"meta", b"generation", str(_counter(txn, meta, b"generation") + 1).encode()),
                db=meta)
        self._log_change(txn, batch)  # what a follower needs beyond the count: which files and vectors

    def _log_change(self, txn: lmdb.Transaction, batch: WriteBatch) -> None:
        """One change-log entry under this write's generation; the entry CHANGE_LOG_KEEP writes older goes."""
        generation = _counter(txn, self._dbs["meta"], b"generation")
        paths = set(batch.files)
        paths.update(chunk.path for chunk in batch.chunks.values() if chunk is not None)
        vectors: dict[str, list[str]] = {}
        for key in batch.vectors:
            model_key, _, content_hash = key.decode().partition("\0")
            vectors.setdefault(model_key, []).append(content_hash)
        changes = self._dbs["changes"]
        raw = _GENERATION_KEY.pack(generation)
        txn.put(raw, seal(b"changes", raw, _dump({"paths": sorted(paths), "vectors": vectors})), db=changes)
        if generation > CHANGE_LOG_KEEP:
            txn.delete(_GENERATION_KEY.pack(generation - CHANGE_LOG_KEEP), db=changes)

    # -- reading ---------------------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[lmdb.Transaction]:
        """A read transaction; whatever a damaged index makes LMDB or decoding raise is IndexDamaged."""
        try:
            try:
                txn = self.env.begin()
            except lmdb.MapResizedError:
                self.env.set_mapsize(0)  # another process grew the map: adopt its size
                txn = self.env.begin()
        except _LMDB_DAMAGE as error:
            raise IndexDamaged(self.directory, f"LMDB: {error}") from error
        try:
            yield txn
        except IndexDamaged:
            raise
        except _LMDB_DAMAGE as error:
            raise IndexDamaged(self.directory, f"LMDB: {error}") from error
        except _Unsealed as error:
            raise IndexDamaged(self.directory, str(error)) from error
        except _DECODE_DAMAGE as error:
            raise IndexDamaged(self.directory, f"a record cannot be decoded ({type(error).__name__}: {error})") from error
        except lmdb.Error as error:  # e.g. the store was closed meanwhile: not damage
            raise StoreError(f"the index at {self.directory} cannot be read ({error})") from error
        finally:
            txn.abort()

    def _count_check(self, txn: lmdb.Transaction, name: str, seen: int) -> None:
        expected = txn.stat(self._dbs[name])["entries"]
        if seen != expected:
            raise IndexDamaged(self.directory, f"a scan of {name} found {seen} records of {expected}")

    def generation(self) -> int:
        """Bumped by every write (`changes_since` says what each changed)."""
        with self._read() as txn:
            return _counter(txn, self._dbs["meta"], b"generation")

    def changes_since(self, generation: int) -> Changes | None:
        """What every write after `generation` changed, or None when the log does not reach back that far
        (an index older than the log, or more than CHANGE_LOG_KEEP writes ago): the caller reads it all."""
        paths: set[str] = set()
        vectors: dict[str, set[str]] = {}
        with self._read() as txn:
            current = _counter(txn, self._dbs["meta"], b"generation")
            if generation > current:  # the index was rebuilt since: nothing of the old one holds
                return None
            if generation == current:
                return Changes(frozenset(), {})
            cursor = txn.cursor(db=self._dbs["changes"])
            if not cursor.set_key(_GENERATION_KEY.pack(generation + 1)):
                return None
            expected = generation + 1
            for raw_key, raw in cursor:
                if _GENERATION_KEY.unpack(bytes(raw_key))[0] != expected:
                    return None  # a hole: the log is not whole
                value = _load(unseal(b"changes", bytes(raw_key), raw))
                paths.update(str(p) for p in value["paths"])
                for model_key, hashes in value["vectors"].items():
                    vectors.setdefault(str(model_key), set()).update(str(h) for h in hashes)
                expected += 1
            if expected != current + 1:
                return None
        return Changes(frozenset(paths), {k: frozenset(v) for k, v in vectors.items()})

    def files_at(self, paths: Iterable[str]) -> dict[str, FileRecord]:
        """The records of these files and of every file under them (a path may be a folder that moved
        or went): a save looks these up, not every record."""
        paths = list(paths)
        found: dict[str, FileRecord] = {}
        with self._read() as txn:
            db = self._dbs["files"]
            for path in paths:
                raw_path = path_key(path).encode("utf-8", "surrogateescape")
                raw = txn.get(raw_path, db=db)
                if raw is not None:
                    record = _file_record(_load(unseal(b"files", raw_path, raw)))
                    found[record.path] = record
                prefix = (path.rstrip("/") + "/").encode("utf-8", "surrogateescape")
                cursor = txn.cursor(db=db)
                if cursor.set_range(prefix):
                    for raw_key, raw in cursor:
                        if not bytes(raw_key).startswith(prefix):
                            break
                        record = _file_record(_load(unseal(b"files", bytes(raw_key), raw)))
                        found[record.path] = record
            # files whose path is too long for a key are keyed by a digest ("#..."): rare, so scanned
            folders = tuple(p.rstrip("/") + "/" for p in paths)
            cursor = txn.cursor(db=db)
            if cursor.set_range(b"#"):
                for raw_key, raw in cursor:
                    if not bytes(raw_key).startswith(b"#"):
                        break
                    record = _file_record(_load(unseal(b"files", bytes(raw_key), raw)))
                    if record.path in paths or record.path.startswith(folders):
                        found[record.path] = record
        return found

    def files(self) -> dict[str, FileRecord]:
        found: dict[str, FileRecord] = {}
        with self._read() as txn:
            seen = 0
            for raw_key, raw in txn.cursor(db=self._dbs["files"]):
                seen += 1
                record = _file_record(_load(unseal(b"files", bytes(raw_key), raw)))
                found[record.path] = record
            self._count_check(txn, "files", seen)
        return found

    def chunks(self, keys: Iterable[str] | None = None) -> list[ChunkRecord]:
        """The named chunks, or every chunk when `keys` is None. A named chunk that is missing is skipped
        (another process may have just removed it) unless its file still lists it: that is damage."""
        with self._read() as txn:
            db = self._dbs["chunks"]
            if keys is None:
                found = [_chunk_record(bytes(k), raw) for k, raw in txn.cursor(db=db)]
                self._count_check(txn, "chunks", len(found))
                return found
            found = []
            for raw_key in (key.encode("utf-8", "surrogateescape") for key in keys):
                raw = txn.get(raw_key, db=db)
                if raw is not None:
                    found.append(_chunk_record(raw_key, raw))
                else:
                    self._check_absent(txn, raw_key)
            return found

    def _check_absent(self, txn: lmdb.Transaction, raw_key: bytes) -> None:
        """A chunk is missing: damage when the file it belongs to (in the same snapshot) lists it."""
        raw_file_key = raw_key.split(b"\0", 1)[0]
        raw = txn.get(raw_file_key, db=self._dbs["files"])
        if raw is not None and raw_key.decode("utf-8", "surrogateescape") in _load(unseal(b"files", raw_file_key, raw))["chunks"]:
            raise IndexDamaged(self.directory, f"the chunk {raw_key[:80]!r} its file lists is missing")

    def lexical(self, keys: Iterable[str]) -> list[dict[str, int]]:
        with self._read() as txn:
            db = self._dbs["lexical"]
            found = []
            for key in keys:
                raw_key = key.encode("utf-8", "surrogateescape")
                raw = txn.get(raw_key, db=db)
                if raw is None:
                    if txn.get(raw_key, db=self._dbs["chunks"]) is not None:
                        raise IndexDamaged(self.directory, f"the terms of chunk {raw_key[:80]!r} are missing")
                    found.append({})
                    continue
                terms = _load(unseal(b"lexical", raw_key, raw))
                found.append({str(term): int(count) for term, count in terms.items()})
            return found

    def vectors(self, model_key: str, hashes: Iterable[str]) -> list[np.ndarray | None]:
        """The vectors of these content hashes (None where there is none yet: embedding fills it)."""
        with self._read() as txn:
            db = self._dbs["vectors"]
            found: list[np.ndarray | None] = []
            for content_hash in hashes:
                raw_key = vector_key(model_key, content_hash)
                raw = txn.get(raw_key, db=db)
                if raw is None:
                    found.append(None)
                    continue
                payload = unseal(b"vectors", raw_key, raw)
                if len(payload) % 4:
                    raise _Unsealed(f"the vector {raw_key[:80]!r} has {len(payload)} bytes")
                found.append(np.frombuffer(payload, dtype=np.float32).copy())
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


def _counter(txn: lmdb.Transaction, meta, name: bytes) -> int:
    raw = txn.get(name, db=meta)
    return 0 if raw is None else int(unseal(b"meta", name, raw))


def _file_record(value: dict) -> FileRecord:
    return FileRecord(str(value["path"]), int(value["mtime_ns"]), int(value["size"]), str(value["hash"]),
                      tuple(str(k) for k in value["chunks"]), str(value.get("skipped", "")),
                      bool(value.get("vendored", False)))


def _chunk_record(raw_key: bytes, raw: bytes) -> ChunkRecord:
    value = _load(unseal(b"chunks", raw_key, raw))
    return ChunkRecord(raw_key.decode("utf-8", "surrogateescape"), str(value["path"]), int(value["start"]),
                       int(value["end"]), str(value["symbol"]), str(value["language"]), str(value["kind"]),
                       str(value["header"]), str(value["text"]), str(value["hash"]),
                       tuple(str(name) for name in value.get("names", ())))
