"""The `ripgrep` baseline: what an agent's grep gets. Files ranked by how many query words they match."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from noul_lsp.text.terms import STOP_WORDS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
MAX_WORDS = 64


def ripgrep_available() -> bool:
    return shutil.which("rg") is not None


def query_words(query: str) -> list[str]:
    """Distinct words of 3+ characters that are not stop words, in order, at most MAX_WORDS."""
    words = [w for w in dict.fromkeys(m.lower() for m in _WORD.findall(query)) if w not in STOP_WORDS]
    return words[:MAX_WORDS]


def ripgrep_rank(root: Path, query: str, limit: int = 10) -> tuple[list[tuple[str, float]], float]:
    """([(path, matches)], milliseconds): case-insensitive whole-word fixed-string matches per file."""
    words = query_words(query)
    started = time.perf_counter()
    if not words:
        return [], 0.0
    command = ["rg", "--count-matches", "--ignore-case", "--word-regexp", "--fixed-strings", "--no-messages",
               "--with-filename"]
    for word in words:
        command += ["-e", word]
    done = subprocess.run(command + ["."], cwd=root, capture_output=True, text=True, errors="replace")
    counts: list[tuple[str, float]] = []
    for line in done.stdout.splitlines():
        path, _, count = line.rpartition(":")
        if path and count.isdigit():
            counts.append((path[2:] if path.startswith("./") else path, float(count)))
    counts.sort(key=lambda item: (-item[1], item[0]))
    return counts[:limit], (time.perf_counter() - started) * 1000
