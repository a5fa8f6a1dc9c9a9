"""Shared fixtures: a real polyglot workspace copied to a temporary folder, with the bad inputs added
at test time (binary, non-UTF-8, huge, symlink loop, links out of the root, an ignored folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from noul_lsp.config import Settings, parse_settings

FIXTURES = Path(__file__).parent / "fixtures"


def add_bad_inputs(root: Path, outside: Path) -> None:
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("def generated_should_not_be_indexed():\n    pass\n")
    (root / "run.log").write_text("debug log line\n")
    (root / "assets").mkdir()
    (root / "assets" / "logo.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / "src" / "legacy.py").write_bytes(
        "def caf\u00e9_menu():\n    return 'cr\u00e8me br\u00fbl\u00e9e'\n".encode("latin-1"))
    (root / "huge.txt").write_text("x = 1\n" * 400_000)  # 2.4 MB, over the 1 MB cap
    os.symlink(".", root / "loop")
    os.symlink(outside, root / "outside_link.py")
    os.symlink(root / "does-not-exist.py", root / "broken_link.py")


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "secret.py"
    target.write_text("def outside_secret_should_not_be_indexed():\n    pass\n")
    return target


@pytest.fixture
def polyglot(tmp_path: Path, outside_file: Path) -> Path:
    """The polyglot workspace as a plain folder (no git), bad inputs included."""
    root = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", root)
    add_bad_inputs(root, outside_file)
    return root


@pytest.fixture
def polyglot_git(polyglot: Path) -> Path:
    """The same workspace as a git repository with everything committed but the ignored paths."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q"], cwd=polyglot, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=polyglot, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "fixture"], cwd=polyglot, check=True, env=env)
    return polyglot


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with the index cache inside the test's temporary folder."""
    parsed, problems = parse_settings({"cacheDir": str(tmp_path / "cache")})
    assert problems == []
    return parsed


def hold_index_lock(lock: Path) -> subprocess.Popen:
    """Another process holding an index's indexing lock (as a second editor's server would) until its stdin
    closes; returns once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); f.seek(0); f.truncate(); "
        "f.write(f'pid {os.getpid()}'); f.flush(); print('held', flush=True); sys.stdin.read()"), str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder
