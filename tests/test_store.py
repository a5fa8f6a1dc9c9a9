import multiprocessing
import os
import signal
import time

import lmdb
import numpy as np
import pytest

from noul_lsp.store import ChunkRecord, ChunkStore, FileRecord, IndexLocked, StoreError, WriteBatch, lmdb_store


def _chunk(key: str, path: str = "a.py", text: str = "def f(): pass") -> ChunkRecord:
    return ChunkRecord(key, path, 1, 1, "f", "python", "function", "", text, "h-" + key)


def test_batch_round_trip(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    batch = WriteBatch()
    batch.put_chunk(_chunk("k1"), {"def": 1, "f": 1})
    batch.put_file(FileRecord("a.py", 5, 10, "filehash", ("k1",)))
    batch.put_vector("model@256", "h-k1", np.arange(4, dtype=np.float32))
    store.apply(batch)
    assert store.files()["a.py"].chunks == ("k1",)
    assert store.chunks(["k1", "missing"])[0].text == "def f(): pass"
    assert store.lexical(["k1"]) == [{"def": 1, "f": 1}]
    np.testing.assert_array_equal(store.vectors("model@256", ["h-k1"])[0], np.arange(4))
    assert store.vectors("other@256", ["h-k1"]) == [None]
    assert store.missing_vectors("model@256", {"h-k1", "h-k2"}) == {"h-k2"}
    assert store.counts() == {"files": 1, "chunks": 1, "vectors": 1}
    assert store.generation() == 1


def test_a_full_map_grows_instead_of_failing(tmp_path, monkeypatch):
    monkeypatch.setattr(lmdb_store, "INITIAL_MAP_BYTES", 1 << 20)
    store = ChunkStore(tmp_path / "idx")
    batch = WriteBatch()
    for i in range(600):
        batch.put_vector("m", f"h{i}", np.random.rand(384))  # ~1.5 KB each: > 1 MB in one transaction
    store.apply(batch)
    assert store.counts()["vectors"] == 600
    assert store.env.info()["map_size"] > 1 << 20


def test_schema_mismatch_rebuilds_with_a_reason(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    batch = WriteBatch()
    batch.put_file(FileRecord("a.py", 1, 1, "h", ()))
    store.apply(batch)
    with store.env.begin(write=True) as txn:
        txn.put(b"schema", b"0", db=store._dbs["meta"])
    store.close()
    reopened = ChunkStore(tmp_path / "idx")
    assert "schema 0" in reopened.rebuilt_reason
    assert reopened.files() == {}


def test_an_index_of_schema_1_is_rebuilt_but_keeps_its_vectors(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    unit = np.full(4, 0.5, dtype=np.float32)
    with store.env.begin(write=True) as txn:  # what schema 1 wrote: plain values, no checksums
        txn.put(b"schema", b"1", db=store._dbs["meta"])
        txn.put(b"files-are-here", b"{}", db=store._dbs["files"])
        txn.put(b"model@128\0h-kept", unit.tobytes(), db=store._dbs["vectors"])
        txn.put(b"model@128\0h-damaged", np.full(4, 9.0, dtype=np.float32).tobytes(), db=store._dbs["vectors"])
        txn.put(b"model@128\0h-short", b"abc", db=store._dbs["vectors"])
    store.close()
    reopened = ChunkStore(tmp_path / "idx")
    assert "schema 1" in reopened.rebuilt_reason and "keeping 1 vectors" in reopened.rebuilt_reason
    assert reopened.files() == {}
    np.testing.assert_array_equal(reopened.vectors("model@128", ["h-kept"])[0], unit)
    assert reopened.vectors("model@128", ["h-damaged", "h-short"]) == [None, None]
    reopened.close()


def test_a_file_that_is_not_lmdb_is_set_aside_and_replaced(tmp_path):
    directory = tmp_path / "idx"
    directory.mkdir()
    (directory / "data.mdb").write_bytes(b"this is not an lmdb file" * 100)
    store = ChunkStore(directory)
    assert "not an LMDB file" in store.rebuilt_reason and "moved to" in store.rebuilt_reason
    assert store.files() == {}
    kept = list(tmp_path.glob("idx.damaged-*"))
    assert len(kept) == 1 and (kept[0] / "data.mdb").read_bytes().startswith(b"this is not")


def test_an_unusable_folder_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the index folder"):
        ChunkStore(blocker / "idx")


def test_only_one_indexer_at_a_time(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    with store.indexing_lock():
        other = ChunkStore(tmp_path / "idx")
        with pytest.raises(IndexLocked, match=f"pid {os.getpid()}"):
            with other.indexing_lock():
                pass
    with store.indexing_lock():
        pass  # released


def _write_forever(directory: str) -> None:
    store = ChunkStore(directory)
    i = 0
    while True:
        batch = WriteBatch()
        for j in range(50):
            key = f"k{i}-{j}"
            batch.put_chunk(_chunk(key, path=f"f{i}.py"), {"x": 1})
        batch.put_file(FileRecord(f"f{i}.py", i, i, "h", tuple(f"k{i}-{j}" for j in range(50))))
        store.apply(batch)
        i += 1


def test_kill_9_mid_write_leaves_a_consistent_index(tmp_path):
    directory = str(tmp_path / "idx")
    ChunkStore(directory).close()
    process = multiprocessing.get_context("spawn").Process(target=_write_forever, args=(directory,))
    process.start()
    time.sleep(1.5)
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    store = ChunkStore(directory)
    files = store.files()
    assert files, "the writer committed nothing before it was killed"
    keys = {k for record in files.values() for k in record.chunks}
    chunk_keys = {c.key for c in store.chunks()}
    assert keys == chunk_keys  # every file's chunks are there, and no chunk without its file
    assert len(store.lexical(keys)) == len(keys)


def test_lmdb_is_imported_only_by_the_store():
    import pathlib

    package = pathlib.Path(lmdb_store.__file__).parents[1]
    offenders = [p for p in package.rglob("*.py") if "store" not in p.parts
                 and any(line.strip().startswith(("import lmdb", "from lmdb")) for line in p.read_text().splitlines())]
    assert offenders == []
    assert lmdb.version()  # the real library is what we test against
