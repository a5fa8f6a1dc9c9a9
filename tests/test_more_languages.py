"""The grammars beyond the first ten, end to end: a folder with one file in each is indexed with the
real offline models, and a description of each file's code finds that file first, in a chunk its grammar
cut (a definition or the lines between definitions, not a plain line window)."""

import shutil
from pathlib import Path

import pytest

from noul_lsp.session.workspace import Workspace

FIXTURE = Path(__file__).parent / "fixtures" / "more_languages"

DESCRIPTIONS = [
    ("wait longer after each failed upload before trying again", "kotlin/RetryPolicy.kt"),
    ("send the cookies the server set back on the next request", "csharp/CookieJar.cs"),
    ("drop the least recently used image when the cache is full", "swift/ImageCache.swift"),
    ("read a file from the filesystem mounted under the location's prefix", "php/MountManager.php"),
    ("refuse command-line flags that were never declared", "scala/OptionParser.scala"),
    ("redraw the status line when the editor mode changes", "lua/statusline.lua"),
    ("decode JSON literals null true false and integers", "elixir/decoder.ex"),
    ("count how many examples passed and failed", "haskell/Runner.hs"),
    ("look up the handler registered for a request path", "zig/router.zig"),
    ("attach to a running tmux session when a new terminal opens", "bash/tmux.plugin.sh"),
    ("delete the load balancer's old access logs from the bucket after some days", "terraform/logs.tf"),
    ("send the picked files to the receiving device one at a time", "dart/transfer_queue.dart"),
    ("jump a second time in mid-air with a sideways speed boost", "gdscript/player.gd"),
]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    from noul_lsp.config import parse_settings

    root = tmp_path_factory.mktemp("more") / "workspace"
    shutil.copytree(FIXTURE, root)
    settings, problems = parse_settings({"cacheDir": str(root.parent / "cache")})
    assert problems == []
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    yield workspace
    workspace.close()


@pytest.mark.parametrize("query,expected", DESCRIPTIONS)
def test_a_description_finds_its_file_first_in_a_chunk_its_grammar_cut(indexed, query, expected):
    result = indexed.find(query)
    first = result.hits[0]
    assert first.path == expected
    assert first.kind != "text"
    assert result.index.pending == 0
