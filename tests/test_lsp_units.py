"""Settings from editors, and the conversion of results to LSP shapes (UTF-16 columns)."""

from lsprotocol import types

from noul_lsp.config import Settings
from noul_lsp.labels import hover_markdown, score_texts
from noul_lsp.lsp.convert import code_units, line_range
from noul_lsp.lsp.settings import settings_from_client
from noul_lsp.retrieval.result import FindResult, Hit, IndexState


def test_vscode_flat_section_and_neovim_tree_both_parse():
    vscode, problems = settings_from_client({"noul": {"limit": 20, "model": "bge-small-en-v1.5", "useGpu": False,
                                                      "excludes": ["vendor/"], "serverPath": "/usr/bin/noul-lsp"}})
    assert problems == []
    assert vscode.search.limit == 20 and vscode.models.embedder == "bge-small-en-v1.5"
    assert vscode.models.use_gpu is False and vscode.index.exclude == ("vendor/",)
    neovim, problems = settings_from_client({"search": {"limit": 7}, "index": {"tokenBudget": 128}})
    assert problems == [] and neovim.search.limit == 7 and neovim.index.token_budget == 128


def test_every_setting_the_vscode_extension_contributes_is_read_or_known_as_the_clients():
    """VS Code sends its whole `noul` section on a change, each key at its default unless set: a key the
    server neither reads nor knows as the client's own is a warning in every window."""
    import json
    from pathlib import Path

    manifest = json.loads((Path(__file__).parents[1] / "editors/vscode/package.json").read_text())
    section: dict = {}
    for key, spec in manifest["contributes"]["configuration"]["properties"].items():
        *groups, name = key.removeprefix("noul.").split(".")
        target = section
        for group in groups:
            target = target.setdefault(group, {})
        target[name] = spec["default"]
    assert {"searchDelay", "serverPath", "limit", "trace"} <= section.keys()
    assert settings_from_client({"noul": section})[1] == []


def test_a_relative_cache_folder_and_a_limit_past_a_requests_are_refused():
    """The server's working folder is the editor's choice: a relative cacheDir put the index wherever that
    was. A limit over 1000 is one a find request would refuse."""
    import os

    settings, problems = settings_from_client({"noul": {"cacheDir": "relcache", "limit": 5000}})
    assert settings.cache_dir == "" and settings.search.limit == 10
    assert any("cacheDir must be an absolute folder" in p for p in problems)
    assert any("search.limit must be at most 1000" in p for p in problems)
    home, _ = settings_from_client({"noul": {"cacheDir": "~/noul-cache"}})
    assert home.cache_dir == os.path.expanduser("~/noul-cache")


def test_bad_settings_keep_defaults_and_say_why():
    settings, problems = settings_from_client({"noul": {"limit": "lots", "colour": 1}})
    assert settings == Settings()
    assert any("search.limit must be an integer" in p for p in problems)
    assert any("colour" in p for p in problems)
    assert settings_from_client("nonsense")[1] and settings_from_client(None) == (Settings(), [])


def test_a_configuration_change_is_laid_over_the_initialization_options():
    """A client that gives the cache folder at start and changes only the limit later keeps its index where
    it was; what the change names wins, in either shape."""
    start = {"noul": {"cacheDir": "/data/noul", "limit": 5, "index": {"tokenBudget": 64}}}
    changed, problems = settings_from_client({"noul": {"limit": 2}}, base=start)
    assert not problems and changed.cache_dir == "/data/noul" and changed.search.limit == 2
    assert changed.index.token_budget == 64
    nested, _ = settings_from_client({"index": {"maxFileBytes": 1000}}, base=start)
    assert nested.index.token_budget == 64 and nested.index.max_file_bytes == 1000
    assert settings_from_client({"noul": {"cacheDir": "/elsewhere"}}, base=start)[0].cache_dir == "/elsewhere"


def test_columns_count_utf16_code_units():
    line = "emoji = '\U0001F600é'"
    assert code_units(line, types.PositionEncodingKind.Utf16) == len(line) + 1  # the emoji takes 2 units
    assert code_units(line, types.PositionEncodingKind.Utf8) == len(line.encode())
    assert code_units(line, types.PositionEncodingKind.Utf32) == len(line)
    span = line_range(["first", line, "third"], 1, 2, types.PositionEncodingKind.Utf16)
    assert (span.start.line, span.start.character, span.end.line, span.end.character) == (0, 0, 1, len(line) + 1)


def test_hover_names_rank_role_labelled_scores_and_signals():
    hit = Hit("a.py", 3, 9, 2, 0.0312, "retry", "", "function", bm25_rank=1, dense_rank=4, role="test")
    text = hover_markdown(hit, None, "retry uploads", top=0.0624)
    assert "rank 2" in text and "`retry`" in text and "test file" in text
    assert "BM25 rank 1" in text and "embedding rank 4" in text and "score 0.0312" in text
    assert "50% of top" in text and "P(here) not calibrated" in text
    narrowed = hover_markdown(hit, None, "retry uploads", top=0.0624, here_why="not measured for a narrowed search")
    assert "P(here) not measured for a narrowed search" in narrowed and "not calibrated" not in narrowed
    calibrated = Hit("a.py", 3, 9, 1, 0.62, "retry", "", "function", probability=0.8)
    text = hover_markdown(calibrated, 0.91, "q", share=True, top=0.62)
    assert "P(answer) 0.80 · 62% of candidates · P(here) 0.91" in text


def test_one_labelled_score_per_hit():
    hits = [Hit("a.py", 1, 2, 1, 0.7, "", "", "function"), Hit("b.py", 1, 2, 2, 0.004, "", "", "function"),
            Hit("c.py", 1, 2, 3, 0.3, "", "", "function", probability=0.27)]
    index = IndexState(3, 3, 3, 0, False, "m", "cpu")
    fitted = FindResult("q", hits, index, {}, signals={"ranking": "fitted (m)"})
    assert score_texts(fitted) == {1: "70% of candidates", 2: "<1% of candidates", 3: "P(answer) 0.27"}
    fused = FindResult("q", hits, index, {}, signals={"ranking": "fusion"})
    assert score_texts(fused)[2] == "<1% of top" and score_texts(fused)[1] == "100% of top"
