"""What `noul find` prints for people: the terminal's width and colours on a terminal, plain unwrapped lines
when piped, P(here) and each hit's score labelled, the file's role shown."""

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from io import StringIO
from pathlib import Path

from rich.console import Console

from noul_lsp.cli import _print_human
from noul_lsp.retrieval.result import FindResult, Hit, IndexState

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
QUERY = "token bucket rate limiter middleware"


def find_args(root: Path) -> list[str]:
    return [sys.executable, "-m", "noul_lsp", "find", QUERY, "--path", str(root), "--limit", "3"]


def plain_env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    return {**env, "NOUL_CACHE_DIR": str(cache), "TERM": "xterm-256color"}


def in_terminal(args: list[str], columns: int, env: dict) -> str:
    """stdout of `args` run on a pseudo-terminal `columns` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=300) == 0
    return b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")


def test_piped_output_is_plain_and_never_wrapped(polyglot, tmp_path):
    done = subprocess.run(find_args(polyglot), capture_output=True, text=True, env={**plain_env(tmp_path / "c"),
                                                                                     "COLUMNS": "40"}, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not ANSI.search(done.stdout)
    assert re.match(r"P\(here\) ([01]\.\d\d|not calibrated)", lines[0])
    hits = [line for line in lines if re.match(r" ?\d+  ", line)]
    assert len(hits) == 3
    for line in hits:  # rank, labelled score, role, path:lines, on one line however narrow COLUMNS is
        assert re.match(r" ?\d+  (P\(answer\) [01]\.\d\d|(\d+|<1)% of (candidates|top)) +[a-z]+ +\S+:\d+-\d+", line), line
    assert hits[0].split()[-2].startswith("web/src/rateLimiter.ts:")
    assert max(len(line) for line in lines) > 40  # not wrapped at COLUMNS


def test_terminal_output_fits_80_and_uses_200_columns(polyglot, tmp_path):
    env = plain_env(tmp_path / "c")
    narrow = in_terminal(find_args(polyglot), 80, env)
    wide = in_terminal(find_args(polyglot), 200, env)
    assert ANSI.search(narrow)  # colours on a terminal
    for text, width in ((narrow, 80), (wide, 200)):
        shown = [ANSI.sub("", line) for line in text.split("\n")]
        start = next(i for i, line in enumerate(shown) if line.startswith("P(here)"))
        result = shown[start:]
        assert all(len(line) <= width for line in result), (width, result)
        assert any(re.match(r" 1  \S", line) for line in result)
    assert "…" in narrow  # long lines are cropped, not wrapped, at 80 columns
    plain = in_terminal(find_args(polyglot), 80, {**env, "NO_COLOR": "1"})
    assert "P(here)" in plain and not ANSI.search(plain[plain.index("P(here)"):])  # no colour, no bold, no dim


def test_a_reader_gone_ends_the_text_output_as_the_json_one(polyglot, tmp_path):
    """`noul find ... | head -1`: the status of a closed pipe (141) for text as for --json, never rich's 1."""
    env = plain_env(tmp_path / "c")
    command = " ".join(f"'{a}'" for a in find_args(polyglot)) + " | true; exit ${PIPESTATUS[0]}"  # gone at once
    subprocess.run(find_args(polyglot), capture_output=True, env=env, timeout=300)  # index first
    done = subprocess.run(["bash", "-c", command], capture_output=True, env=env, timeout=300)
    assert done.returncode == 141 and b"Traceback" not in done.stderr


def test_each_hit_line_carries_a_labelled_score_and_the_role():
    hits = [Hit("src/net/retry.py", 21, 30, 1, 0.62, "upload_with_retry", "def upload_with_retry(client, blob):\n"
                "Send a blob, retrying failed uploads with exponential backoff" + " and jitter" * 12, "function",
                role="source"),
            Hit("tests/test_retry.py", 3, 9, 2, 0.2, "", "def test_retry():", "function", role="test")]
    result = FindResult("retry uploads", hits, IndexState(2, 2, 2, 0, False, "m", "cpu"), {"total": 3.0},
                        here_probability=0.93, signals={"ranking": "fitted (m@128)", "rerank": "off"})
    out = StringIO()
    _print_human(result, Console(file=out, force_terminal=True, width=80, color_system=None, highlight=False))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("P(here) 0.93  (P(here): is it in this workspace; %: the hit's share")
    assert lines[1] == " 1  62% of candidates  source  src/net/retry.py:21-30  upload_with_retry"
    assert lines[3].endswith("…") and len(lines[3]) == 80
    assert lines[4] == " 2  20% of candidates  test    tests/test_retry.py:3-9"


def test_a_long_path_loses_its_middle_folders_and_the_symbol_before_its_lines():
    """At 80 columns a monorepo's test path ran past the edge: its extension and lines were cropped away."""
    path = "packages/solid-query/src/__tests__/useQuery.test.tsx"
    hits = [Hit(path, 1204, 1260, 1, 0.09, "describe \"useQuery\".it \"should extract retryDelay from error\"",
                "it('should extract retryDelay from error', async () => {", "test", role="test")]
    result = FindResult("retryDelay test", hits, IndexState(2, 2, 2, 0, False, "m", "cpu"), {"total": 3.0},
                        here_probability=0.9, signals={"ranking": "fitted (m@128)", "rerank": "off"})
    out = StringIO()
    _print_human(result, Console(file=out, force_terminal=True, width=70, color_system=None, highlight=False))
    line = out.getvalue().splitlines()[1]
    assert line.startswith(" 1  9% of candidates  test  packages/…/useQuery.test.tsx:1204-1260  ") and len(line) <= 70
    out = StringIO()  # where it fits, as it is
    _print_human(result, Console(file=out, force_terminal=True, width=200, color_system=None, highlight=False))
    assert f"{path}:1204-1260  describe" in out.getvalue()


def test_a_filter_that_leaves_nothing_says_no_results_not_uncalibrated():
    result = FindResult("retry", [], IndexState(2, 2, 2, 0, False, "m", "cpu"), {"total": 1.0}, here_probability=None,
                        signals={"ranking": "fitted (m@128)", "rerank": "off"},
                        notes=["no indexed file matches --include 'nothing/**'"])
    out = StringIO()
    _print_human(result, Console(file=out, force_terminal=False, width=200, color_system=None, highlight=False))
    assert out.getvalue().splitlines()[0] == "no results" and "not calibrated" not in out.getvalue()


def test_a_control_character_in_a_file_name_stays_on_its_hit_line():
    """git allows a newline in a file name: printed as is, it would split a hit over two lines."""
    hits = [Hit("src/weird\nname.js", 1, 1, 1, 0.5, "weirdNameFn", "function weirdNameFn() {}", "function",
                role="source")]
    result = FindResult("weirdNameFn", hits, IndexState(1, 1, 1, 0, False, "m", "cpu"), {"total": 1.0},
                        here_probability=0.9, signals={"ranking": "fitted (m@128)", "rerank": "off"})
    out = StringIO()
    _print_human(result, Console(file=out, force_terminal=False, width=200, color_system=None, highlight=False))
    assert out.getvalue().splitlines()[1] == " 1  50% of candidates  source  src/weird\\nname.js:1-1  weirdNameFn"


def test_a_log_gets_progress_lines_while_the_index_embeds(polyglot, tmp_path, monkeypatch, capsys):
    """`noul index` with stderr not a terminal (a log, CI) said nothing for the minutes of embedding."""
    from noul_lsp import cli
    from noul_lsp.config import parse_settings
    from noul_lsp.session.workspace import Workspace

    settings, problems = parse_settings({"cacheDir": str(tmp_path / "cache"), "index": {"embedBatch": 4}})
    assert problems == []
    monkeypatch.setattr(cli, "LOG_PROGRESS_SECONDS", 0.0)
    workspace = Workspace(polyglot, settings)
    try:
        cli._update(workspace, embed=True, quiet=False)
    finally:
        workspace.close()
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("embedding: ")]
    assert lines and all("chunks/s on cpu; about" in line for line in lines)
    done = [int(line.split()[1].split("/")[0]) for line in lines]
    assert done == sorted(done) and done[0] >= 4


def test_status_groups_a_reason_many_skipped_files_share():
    """A notebook repository's 72 PNGs were 72 lines of `status`; a few stay one a line."""
    from noul_lsp.cli import _skipped_lines

    binaries = [{"path": f"figures/{n}.png", "reason": f"binary (a NUL byte at byte {n})"} for n in range(8)]
    big = [{"path": "data/huge.json", "reason": "2000000 bytes is over the 1000000-byte cap"}]
    lines = _skipped_lines(binaries + big)
    assert lines[0].startswith("skipped  8 files, binary: figures/0.png, ") and lines[0].count(".png") == 5
    assert "and 3 more" in lines[0] and lines[1] == "skipped  data/huge.json: 2000000 bytes is over the 1000000-byte cap"
    assert _skipped_lines(binaries[:2]) == [f"skipped  figures/{n}.png: binary (a NUL byte at byte {n})" for n in (0, 1)]
