"""The fault suite: a damaged index (truncated, flipped bytes, a kill -9 while indexing) never crashes the
process, never answers from a record that fails its check, and converges to what a fresh build holds.

Real LMDB, the real CLI; the byte flips and the kills run in a process of their own (tests/fault_runs.py)
so that a crash would be seen as one. Bounded: a four-file workspace, fixed seeds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from noul_lsp import cli
from noul_lsp.store import ChunkRecord, ChunkStore, FileRecord, IndexDamaged, WriteBatch, index_directory, lmdb_store

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"
FILES = ("src/net/retry.py", "src/store/cookies.py", "native/config.c", "docs/deploy.md")
QUERIES = ("retry failed requests with backoff", "where are cookies persisted")
RUNS = Path(__file__).with_name("fault_runs.py")
#: byte-flip runs: seeds 0..FLIP_SEEDS-1, FLIPS bytes each
FLIP_SEEDS = 30
FLIPS = 3
KILL_RUNS = 20


def small_workspace(folder: Path) -> Path:
    for name in FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / name, folder / name)
    return folder


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def answer(workspace: Path, cache: Path, query: str) -> tuple[list, str]:
    code, out, err = run_cli("find", query, "--path", str(workspace), "--cache-dir", str(cache), "--json",
                             "--mode", "chunks", "--limit", "8")
    assert code == 0, err
    assert "Traceback" not in err
    results = json.loads(out)["results"]
    return [(r["path"], r["startLine"], r["endLine"], r["rank"], round(r["score"], 6)) for r in results], err


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, dict]:
    """A small workspace, its fully embedded index (kept pristine) and the answers it gives."""
    base = tmp_path_factory.mktemp("faults")
    workspace = small_workspace(base / "ws")
    cache = base / "pristine"
    code, _, err = run_cli("index", str(workspace), "--cache-dir", str(cache), "--quiet")
    assert code == 0, err
    expected = {q: answer(workspace, cache, q)[0] for q in QUERIES}
    assert all(expected.values())
    return workspace, cache, expected


def copy_of(pristine: Path, target: Path) -> tuple[Path, Path]:
    shutil.copytree(pristine, target)
    (index,) = (target / "indexes").iterdir()
    return target, index / "data.mdb"


@pytest.mark.parametrize("cut", ["empty", "inside-meta", "after-metas", "half", "last-page", "one-byte"])
def test_a_truncated_data_file_is_set_aside_and_rebuilt_not_a_sigbus(built, tmp_path, cut):
    workspace, pristine, expected = built
    cache, data = copy_of(pristine, tmp_path / "cache")
    size = data.stat().st_size
    keep = {"empty": 0, "inside-meta": 100, "after-metas": 2 * 4096, "half": size // 2,
            "last-page": size - 4096, "one-byte": size - 1}[cut]
    os.truncate(data, keep)
    found, err = answer(workspace, cache, QUERIES[0])
    assert "was damaged" in err and "moved to" in err
    assert found == expected[QUERIES[0]]
    kept = [p for p in (cache / "indexes").iterdir() if ".damaged-" in p.name]
    assert len(kept) == 1 and (kept[0] / "data.mdb").stat().st_size == keep  # kept as it was, for a bug report
    again, err = answer(workspace, cache, QUERIES[1])
    assert again == expected[QUERIES[1]] and "damaged" not in err  # told once


def test_status_reports_a_damaged_index_once(built, tmp_path):
    workspace, pristine, _ = built
    cache, data = copy_of(pristine, tmp_path / "cache")
    os.truncate(data, data.stat().st_size // 2)
    code, out, err = run_cli("status", str(workspace), "--cache-dir", str(cache), "--json")
    assert code == 0 and "Traceback" not in err
    assert "truncated" in json.loads(out)["rebuilt"]
    code, out, _ = run_cli("status", str(workspace), "--cache-dir", str(cache), "--json")
    assert code == 0 and "rebuilt" not in json.loads(out)


def test_flipped_bytes_at_fixed_seeds_answer_as_before_or_rebuild(built, tmp_path):
    workspace, pristine, _ = built
    run = subprocess.run([sys.executable, str(RUNS), "flips", str(pristine), str(workspace), str(tmp_path),
                          f"0-{FLIP_SEEDS - 1}", str(FLIPS), *QUERIES],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]  # a signal (SIGBUS, SIGSEGV) would show here
    outcomes = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(outcomes) == FLIP_SEEDS
    failed = [o for o in outcomes if o["outcome"] not in ("same", "rebuilt")]
    assert failed == []
    assert any(o["outcome"] == "rebuilt" for o in outcomes)


def test_a_record_failing_its_checksum_is_damage_never_a_result(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    batch = WriteBatch()
    batch.put_chunk(ChunkRecord("a.py\x0000000001\x00h", "a.py", 1, 2, "f", "python", "function", "", "def f(): pass", "h"),
                    {"f": 1})
    batch.put_file(FileRecord("a.py", 1, 1, "fh", ("a.py\x0000000001\x00h",)))
    store.apply(batch)
    with store.env.begin(write=True) as txn:  # the same length, one byte changed: JSON that still parses
        raw = bytearray(txn.get(b"a.py\x0000000001\x00h", db=store._dbs["chunks"]))
        raw[raw.index(b"def f")] = ord("D")
        txn.put(b"a.py\x0000000001\x00h", bytes(raw), db=store._dbs["chunks"])
    with pytest.raises(IndexDamaged, match="checksum"):
        store.chunks(["a.py\x0000000001\x00h"])
    with pytest.raises(IndexDamaged, match="checksum"):
        store.chunks()
    store.close()


def test_a_chunk_its_file_lists_but_that_is_missing_is_damage(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    key = "a.py\x0000000001\x00h"
    batch = WriteBatch()
    batch.put_chunk(ChunkRecord(key, "a.py", 1, 2, "f", "python", "function", "", "x", "h"), {"f": 1})
    batch.put_file(FileRecord("a.py", 1, 1, "fh", (key,)))
    store.apply(batch)
    with store.env.begin(write=True) as txn:
        txn.delete(key.encode(), db=store._dbs["chunks"])
    with pytest.raises(IndexDamaged, match="missing"):
        store.chunks([key])
    assert store.chunks(["b.py\x0000000001\x00h"]) == []  # not listed by any file: just gone
    store.close()


def test_an_index_of_the_previous_schema_is_rebuilt_cleanly(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    with store.env.begin(write=True) as txn:  # what schema 1 wrote: plain values, no checksums
        txn.put(b"schema", b"1", db=store._dbs["meta"])
        txn.put(b"a.py", b'{"path":"a.py"}', db=store._dbs["files"])
    store.close()
    lmdb_store._OPEN.clear()
    reopened = ChunkStore(tmp_path / "idx")
    assert "schema 1" in reopened.rebuilt_reason
    assert reopened.files() == {}
    reopened.close()


def _snapshot(cache: Path, workspace: Path) -> dict:
    store = ChunkStore(index_directory(workspace, str(cache)))
    try:
        files = {p: (r.hash, r.chunks, r.skipped) for p, r in store.files().items()}
        chunks = sorted((c.key, c.text) for c in store.chunks())
        return {"files": files, "chunks": chunks, "counts": store.counts()}
    finally:
        store.close()


def test_kill_9_while_indexing_converges_to_a_fresh_build(built, tmp_path):
    workspace, pristine, _ = built
    fresh = _snapshot(pristine, workspace)
    rng = random.Random(13)
    cache = tmp_path / "cache"
    killed = 0
    for run in range(KILL_RUNS):
        if run % 4 == 0:  # cold starts, and runs that resume a killed one
            shutil.rmtree(cache, ignore_errors=True)
        process = subprocess.Popen([sys.executable, str(RUNS), "index", str(workspace), str(cache)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.1, 1.5))  # an index of the fixture takes ~2 s: most runs die mid-way
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            killed += 1
        _, err = process.communicate(timeout=60)
        assert b"Traceback" not in err
        code, _, err = run_cli("index", str(workspace), "--cache-dir", str(cache), "--quiet")
        assert code == 0, err
        assert _snapshot(cache, workspace) == fresh, f"run {run}"
    assert killed >= KILL_RUNS // 4  # many runs really were killed mid-way (the timing decides how many)
