"""The `noul` command as a user runs it: a real process, real exit codes, no tracebacks."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from noul_lsp.cli import here_text


def noul(*args: str, cache: Path, timeout: int = 300, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NOUL_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "noul_lsp", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=cwd)


def test_find_json_indexes_on_first_use_and_reports(polyglot, tmp_path):
    done = noul("find", "retry failed uploads with exponential backoff", "--path", str(polyglot), "--json",
                "--limit", "3", cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["results"][0]["path"] == "src/net/retry.py"
    assert report["files"]["src/net/retry.py"][0][0] >= 1
    assert report["index"]["pending"] == 0 and report["index"]["chunks"] > 10
    assert "total" in report["timings"]


def test_human_output_has_rank_location_symbol_and_preview(polyglot, tmp_path):
    done = noul("find", "token bucket", "--path", str(polyglot), "--no-wait", "--limit", "2", cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    here, first = done.stdout.splitlines()[:2]
    # --no-wait on a fresh index: the static leg embeds the small fixture within its budget and answers
    # beside BM25; P(here) reads its evidence while the transformer's is pending
    assert re.match(r"P\(here\) [01]\.\d\d", here)
    assert first.split()[0] == "1" and "web/src/rateLimiter.ts:" in first and "P(answer) 0." in first
    assert "static vectors for" in done.stderr and "static leg answers alone" in done.stdout
    assert "lexical only" not in done.stdout


def test_no_wait_without_a_static_leg_answers_from_bm25_and_says_so(polyglot, tmp_path):
    done = noul("find", "token bucket", "--path", str(polyglot), "--no-wait", "--limit", "2", "--static", "none",
                cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    assert "web/src/rateLimiter.ts:" in done.stdout.splitlines()[1]
    assert "lexical only: no chunk is embedded yet" in done.stdout
    assert "static leg answers" not in done.stdout and "static vectors" not in done.stderr  # no leg it did not use


def test_here_text_warns_below_the_threshold():
    assert here_text(0.08) == "P(here) 0.08 — probably not in this workspace"
    assert here_text(0.91) == "P(here) 0.91" and here_text(None) == "P(here) not calibrated"


def test_index_then_status(polyglot, tmp_path):
    before = noul("status", str(polyglot), "--json", cache=tmp_path / "c")
    assert before.returncode == 0 and json.loads(before.stdout)["indexed"] is False
    assert not (tmp_path / "c" / "indexes").exists()  # asking created nothing
    assert noul("index", str(polyglot), "-q", cache=tmp_path / "c").returncode == 0
    done = noul("status", str(polyglot), "--json", cache=tmp_path / "c")
    status = json.loads(done.stdout)
    assert status["embeddedShare"] == 1.0 and status["files"] >= 14 and status["skippedFiles"] == 2
    assert len(status["skipped"]) == 2 and all(entry["path"] and entry["reason"] and not entry["reason"].startswith(
        entry["path"]) for entry in status["skipped"])
    assert status["model"] == "all-minilm-l6-v2-int8@128"
    assert status["embedderDevice"] == "cpu" and status["reranker"] == "none"
    assert "GPU" in status["embedderFallback"] or "CUDA" in status["embedderFallback"]  # asked for, not there: said
    assert Path(status["location"]).is_dir() and status["indexBytes"] > 0
    # `noul index` ended by writing the corpus snapshot: a new process opens from it, not from every record
    assert (Path(status["location"]) / "corpus-snapshot" / "meta.json").is_file()
    assert status["openedFromSnapshot"] is not None
    assert status["excludedByDefault"] == {}  # the fixture's excludes are its .gitignore's and .noulignore's
    # `--path` as `noul find` takes it (it printed every command's usage); two folders are an error, not a guess
    assert json.loads(noul("status", "--path", str(polyglot), "--json", cache=tmp_path / "c").stdout)["indexed"] is True
    both = noul("status", str(tmp_path), "--path", str(polyglot), cache=tmp_path / "c")
    assert both.returncode == 2 and "two folders given" in both.stderr


def test_a_find_after_a_save_answers_from_the_edit(polyglot, tmp_path):
    """The snapshot plus the change log: the saved file's new text answers, its old text no longer does."""
    cache = tmp_path / "c"
    assert noul("index", str(polyglot), "-q", cache=cache).returncode == 0
    (polyglot / "src" / "net" / "retry.py").write_text("def ziggurat_quaternion():\n    return 42\n")
    done = noul("find", "ziggurat quaternion", "--path", str(polyglot), "--json", "--limit", "1", cache=cache)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["path"] == "src/net/retry.py"
    gone = noul("find", "exponential backoff retry", "--path", str(polyglot), "--json", "--limit", "5",
                "--mode", "chunks", cache=cache)
    assert all("upload_with_retry" not in r["symbol"] for r in json.loads(gone.stdout)["results"])


@pytest.mark.parametrize("args,code,message", [
    (("find", "x", "--path", "/no/such/folder"), 2, "no such folder"),
    (("find", "   ", "--path", "."), 2, "query is empty"),
    (("index", "/no/such/folder"), 2, "no such folder"),
])
def test_bad_input_exits_non_zero_with_one_clear_line(tmp_path, args, code, message):
    done = noul(*args, cache=tmp_path / "c")
    assert done.returncode == code
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_corrupt_index_is_set_aside_and_rebuilt_not_crashed_on(polyglot, tmp_path):
    cache = tmp_path / "c"
    assert noul("index", str(polyglot), "-q", "--no-embed", cache=cache).returncode == 0
    (data,) = (cache / "indexes").glob("*/data.mdb")
    data.write_bytes(b"garbage" * 1000)
    done = noul("find", "retry", "--path", str(polyglot), "--json", "--no-wait", cache=cache)
    assert done.returncode == 0, done.stderr
    assert "was damaged" in done.stderr and "moved to" in done.stderr and "Traceback" not in done.stderr
    assert any(r["path"] == "src/net/retry.py" for r in json.loads(done.stdout)["results"])
    assert len(list((cache / "indexes").glob("*.damaged-*"))) == 1


def test_a_busy_index_still_answers_find_and_refuses_a_second_indexer(polyglot, tmp_path):
    from noul_lsp.store import ChunkStore, index_directory

    cache = tmp_path / "c"
    assert noul("index", str(polyglot), "-q", "--no-embed", cache=cache).returncode == 0
    store = ChunkStore(index_directory(polyglot, str(cache)))
    with store.indexing_lock():
        found = noul("find", "token bucket", "--path", str(polyglot), "--json", cache=cache)
        assert found.returncode == 0
        assert any("being updated" in n for n in json.loads(found.stdout)["notes"])
        indexing = noul("index", str(polyglot), cache=cache)
        assert indexing.returncode == 1 and "being updated by pid" in indexing.stderr and "--wait" in indexing.stderr
        # with --wait it waits for the other process (an editor's server embedding), then does what is left
        waiting = subprocess.Popen([sys.executable, "-m", "noul_lsp.cli", "index", str(polyglot), "--wait",
                                    "--no-embed"], env={**os.environ, "NOUL_CACHE_DIR": str(cache)},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(4)
        assert waiting.poll() is None
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and "waiting (Ctrl-C stops" in err and err.count("waiting") == 1, err


def test_models_list_shows_the_bundled_default_and_pull_offline_fails_clearly(tmp_path):
    listed = noul("models", "list", "--json", cache=tmp_path / "c")
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert rows["all-minilm-l6-v2-int8"]["available"] == "bundled"
    assert rows["bge-small-en-v1.5"]["available"] == "not downloaded"
    assert rows["bge-reranker-v2-m3"]["kind"] == "reranker" and rows["noul-code-static-v2"]["kind"] == "static"
    env_offline = {"HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "noul_lsp", "models", "pull", "bge-small-en-v1.5"],
                          capture_output=True, text=True, env={**os.environ, **env_offline, "NOUL_CACHE_DIR": str(tmp_path / "c")},
                          timeout=120)
    assert done.returncode == 1 and "could not download BAAI/bge-small-en-v1.5" in done.stderr
    # neither registered nor owner/name: said before any request (with the network up it tried the hub)
    unknown = noul("models", "pull", "no-such-model", cache=tmp_path / "c")
    assert unknown.returncode == 1 and "unknown model 'no-such-model'" in unknown.stderr


def test_find_in_a_folder_of_an_indexed_workspace_searches_its_index_within_the_folder(polyglot, tmp_path):
    """As git grep run in `src/`: the repository's index, narrowed to the folder (a second index of the
    subfolder would embed its files again and miss everything around it)."""
    odd = polyglot / "lib[old]"  # a folder name that is a glob
    odd.mkdir()
    (odd / "retry_old.py").write_text((polyglot / "src/net/retry.py").read_text())
    nested = polyglot / "vendor_repo"  # a repository of its own inside: not searched in the outer index
    nested.mkdir()
    (nested / ".git").mkdir()
    (nested / "tool.py").write_text("def tool():\n    return 'a retry helper'\n")
    assert noul("index", str(polyglot), "-q", cache=tmp_path / "c").returncode == 0
    indexes = set((tmp_path / "c" / "indexes").iterdir())
    done = noul("find", "rate limit", "--path", str(polyglot / "web"), "--json", cache=tmp_path / "c")
    answer = json.loads(done.stdout)
    assert answer["results"] and all(r["path"].startswith("web/") for r in answer["results"])
    assert any("within web/" in note for note in answer["notes"])
    typed = json.loads(noul("find", "rate limit", "--path", str(polyglot / "web"), "--include", "*.ts", "--json",
                            cache=tmp_path / "c").stdout)
    assert typed["results"] and all(r["path"].startswith("web/") and r["path"].endswith(".ts")
                                    for r in typed["results"])
    assert set((tmp_path / "c" / "indexes").iterdir()) == indexes  # no index of the subfolder
    # run in the folder, the hits' paths are written from there (as git grep writes them); --json keeps the root's
    here = noul("find", "rate limit", "--limit", "3", cache=tmp_path / "c", cwd=polyglot / "web")
    assert here.returncode == 0 and "src/rateLimiter.ts:" in here.stdout and "web/src/" not in here.stdout
    assert "the whole index: " in here.stdout  # its counts are the workspace's, not the folder's
    excluded = json.loads(noul("find", "rate limit", "--path", str(polyglot / "web"), "--exclude", "src/*.ts", "--json",
                               cache=tmp_path / "c").stdout)
    assert all(not (r["path"].startswith("web/src/") and r["path"].endswith(".ts")) for r in excluded["results"])
    literal = json.loads(noul("find", "retry uploads", "--path", str(odd), "--json", cache=tmp_path / "c").stdout)
    assert [r["path"] for r in literal["results"]] == ["lib[old]/retry_old.py"]
    status = json.loads(noul("status", str(polyglot / "web"), "--json", cache=tmp_path / "c").stdout)
    assert status["root"] == str(polyglot.resolve()) and status["within"] == "web"
    own = json.loads(noul("find", "retry helper", "--path", str(nested), "--json", "--no-wait", cache=tmp_path / "c").stdout)
    assert not any("searched the index of" in note for note in own["notes"])
    # a find over an index with nothing to update says nothing of it; `noul index` does
    quiet = noul("find", "rate limit", "--path", str(polyglot), cache=tmp_path / "c")
    assert quiet.returncode == 0 and "indexed 0 changed files" not in quiet.stderr
    assert "the whole index" not in quiet.stdout
    assert "indexed 0 changed files (0 chunks added" in noul("index", str(polyglot), cache=tmp_path / "c").stderr
