"""The agent's answer (retrieval/answer.py) and `noul mcp`, the MCP server that serves it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from noul_lsp.retrieval.answer import (
    DEFAULT_TOKEN_BUDGET,
    TOKEN_COUNT,
    agent_answer,
    answer_size,
    approx_tokens,
    compact_json,
)
from noul_lsp.retrieval.result import FindResult, Hit, IndexState

# -- the answer, on made-up results ------------------------------------------------------------------


def _result(probabilities: list[float | None], *, ranges: int = 3, lines: int = 12, pending: int = 0) -> FindResult:
    hits = []
    for rank, probability in enumerate(probabilities, 1):
        spans = [(1 + 20 * i, 1 + 20 * i + lines - 1) for i in range(ranges)]
        hits.append(Hit(f"src/module_{rank}.py", spans[0][0], spans[0][1], rank, 1.0 / (60 + rank), f"function_{rank}",
                        f"def function_{rank}(argument):\nDo thing number {rank} carefully.", "function",
                        probability=probability, ranges=spans, root="/work/repo", role="source"))
    index = IndexState(files=40, chunks=400, embedded=400 - pending, pending=pending, stale=bool(pending),
                       model="test", device="cpu")
    return FindResult("do the thing", hits, index, {"total": 1.0}, here_probability=0.9)


def _source(root: str, path: str) -> list[str]:
    return [f"    line {number} of {path} with some code in it" for number in range(1, 200)]


def test_answer_size_keeps_the_files_that_raise_expected_f1():
    assert answer_size([0.8, 0.05, 0.03], [3, 2, 1]) == 1
    assert answer_size([0.45, 0.4, 0.05, 0.02], [4, 3, 2, 1]) == 2
    assert answer_size([0.0, 0.0], [2, 1]) == 1
    assert answer_size([], []) == 0
    # F2 weighs recall: it keeps more files than F1 on the same probabilities
    assert answer_size([0.5, 0.25, 0.2, 0.1], [4, 3, 2, 1], beta=2.0) > answer_size([0.5, 0.25, 0.2, 0.1], [4, 3, 2, 1])


def test_answer_size_without_probabilities_keeps_files_close_to_the_top_score():
    assert answer_size([None, None, None], [1.0, 0.95, 0.5]) == 2
    assert answer_size([None, None], [1.0, 0.2]) == 1


def test_answer_stays_within_its_token_budget_and_grows_with_it():
    result = _result([0.5, 0.42, 0.03, 0.02, 0.01])
    sizes = {}
    for budget in (200, 400, 800, 1600, 4000):
        answer = agent_answer(result, budget, source=_source)
        text = answer.text()
        assert answer.tokens <= budget
        assert answer.tokens == approx_tokens(text) == json.loads(text)["tokens"]
        assert json.loads(text)["tokenCount"] == TOKEN_COUNT
        assert answer.paths == ["src/module_1.py", "src/module_2.py"]  # the set does not depend on the budget
        sizes[budget] = answer.tokens
    assert sizes[200] < sizes[400] < sizes[800] < sizes[1600]


def test_a_small_budget_gives_ranges_and_previews_a_large_one_adds_cropped_code():
    result = _result([0.5, 0.42, 0.03])
    small = agent_answer(result, 200, source=_source).body
    assert [f["path"] for f in small["files"]] == ["src/module_1.py", "src/module_2.py"]
    assert small["files"][0]["ranges"][0] == {"lines": [1, 12], "symbol": "function_1",
                                              "preview": "def function_1(argument):\nDo thing number 1 carefully."}
    assert not any("code" in r for f in small["files"] for r in f["ranges"])
    large = agent_answer(result, 1000, source=_source).body
    first = large["files"][0]["ranges"][0]
    assert first["code"].split("\n")[0] == "    line 1 of src/module_1.py with some code in it"
    assert "preview" not in first  # the code says it
    shown = [r for f in large["files"] for r in f["ranges"] if "code" in r]
    cropped = [r for r in shown if "codeLines" in r]
    assert cropped and all(r["codeLines"][1] < r["lines"][1] for r in cropped)
    for r in shown:  # never more than the range
        start, end = r.get("codeLines", r["lines"])
        assert len(r["code"].split("\n")) == end - start + 1 <= r["lines"][1] - r["lines"][0] + 1


def test_an_answer_that_is_probably_not_here_names_its_ranges_without_their_code():
    from dataclasses import replace

    from noul_lsp.retrieval.answer import PROBABLY_ABSENT_NOTE

    absent = agent_answer(replace(_result([0.5, 0.42, 0.03]), here_probability=0.02), 4000, source=_source).body
    assert absent["files"] and not any("code" in r for f in absent["files"] for r in f["ranges"])
    assert PROBABLY_ABSENT_NOTE in absent["notes"] and absent["tokens"] < 600
    here = agent_answer(_result([0.5, 0.42, 0.03]), 4000, source=_source).body  # P(here) 0.9
    assert any("code" in r for f in here["files"] for r in f["ranges"]) and "notes" not in here


def test_the_best_file_is_always_there_even_over_a_tiny_budget():
    answer = agent_answer(_result([0.5, 0.45]), 10)
    assert answer.paths == ["src/module_1.py"]
    assert answer.body["omittedFiles"] == ["src/module_2.py"]
    assert answer.tokens > 10


def test_answer_says_what_is_pending_and_names_the_runners_up():
    body = agent_answer(_result([0.7, 0.05, 0.04, 0.03, 0.02], pending=120), DEFAULT_TOKEN_BUDGET).body
    assert body["index"]["pending"] == 120 and body["index"]["stale"] is True
    assert body["hereProbability"] == 0.9
    assert [f["path"] for f in body["alsoConsidered"]] == ["src/module_2.py", "src/module_3.py", "src/module_4.py"]
    assert body["root"] == "/work/repo" and "root" not in body["files"][0]


def test_an_organisation_file_names_its_repository_and_its_code_comes_from_the_store():
    result = _result([0.5, 0.45, 0.02])
    for hit in result.hits[1:]:  # two organisation hits, one of them at the same path as the local file
        hit.root, hit.repository = "", "acme/billing"
    result.hits[1].path = "src/module_1.py"
    result.organisation_files = {("acme/billing", path): [f"    acme/billing line {number}" for number in range(1, 200)]
                                 for path in ("src/module_1.py", "src/module_3.py")}
    body = agent_answer(result, 4000, source=_source).body
    local, org = body["files"][:2]
    assert body["root"] == "/work/repo" and "root" not in local and "repository" not in local
    assert (org["repository"], org["path"], "root" in org) == ("acme/billing", "src/module_1.py", False)
    assert "acme/billing line 1" in org["ranges"][0]["code"] and "of src/module_1.py" in local["ranges"][0]["code"]
    assert body["alsoConsidered"] == [{"path": "src/module_3.py", "repository": "acme/billing", "probability": 0.02}]
    assert agent_answer(result, 10).body["omittedFiles"] == ["acme/billing:src/module_1.py"]  # as hits are written
    result.here_probability = 0.05  # probably not here: the local code is left out, the organisation's comes
    absent = agent_answer(result, 4000, source=_source).body
    assert "code" not in absent["files"][0]["ranges"][0] and "code" in absent["files"][1]["ranges"][0]
    assert any(note.endswith("it cannot be read otherwise)") for note in absent["notes"])


def test_overlapping_ranges_of_a_file_are_merged():
    result = _result([0.9])
    result.hits[0].ranges = [(10, 20), (15, 30), (40, 45)]
    result.hits[0].start_line, result.hits[0].end_line = 10, 20
    ranges = agent_answer(result, 1000).body["files"][0]["ranges"]
    assert [r["lines"] for r in ranges] == [[10, 30], [40, 45]]


def test_uncalibrated_answers_carry_the_score_relative_to_the_top():
    body = agent_answer(_result([None, None, None]), 1000).body
    assert body["files"][0]["probability"] is None and body["files"][0]["scoreOfTop"] == 1.0
    assert compact_json(body) == agent_answer(_result([None, None, None]), 1000).text()



def test_bench_scores_the_answers_file_set_and_its_tokens():
    from noul_lsp.bench.report import answer_files, quality
    from noul_lsp.bench.runner import QueryRecord

    def record(hits, gold, answer=None):
        return QueryRecord("q", "dev", "describe", "o/r", "c", "answerable", [], "hybrid", gold, {},
                           [[h["path"], h["score"]] for h in hits], {}, 0.9, {"total": 1.0}, 10, hits=hits,
                           answer=answer or {})

    calibrated = [{"path": "a.py", "score": 0.03, "probability": 0.5}, {"path": "b.py", "score": 0.02, "probability": 0.42},
                  {"path": "c.py", "score": 0.01, "probability": 0.03}]
    older = record(calibrated, ["a.py"])  # a record of a run before answers were recorded: chosen again
    assert answer_files(older) == ["a.py", "b.py"]
    recorded = record(calibrated, ["a.py", "b.py"], {"files": ["a.py", "b.py"], "tokens": 900})
    summary = quality([older, recorded])
    assert summary["answer_f1"] == round((2 / 3 + 1.0) / 2, 4)
    assert summary["answer_files"] == 2.0 and summary["answer_tokens_p50"] == 900.0


# -- noul mcp over stdio, with the SDK's own client ---------------------------------------------------

RETRY_QUERY = "retry failed uploads with exponential backoff"


def _server(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "noul_lsp.cli", "mcp", *args])


def _body(result) -> dict:
    assert not result.is_error, result.content[0].text
    body = json.loads(result.content[0].text)
    assert body == result.structured_content
    return body


async def _until_embedded(session: ClientSession, seconds: float = 120.0) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        status = _body(await session.call_tool("status", {}))
        if status["roots"] and all(r.get("scanned") and r.get("pending") == 0 for r in status["roots"]):
            return status
        assert time.monotonic() < deadline, status
        await anyio.sleep(0.2)


@pytest.mark.slow
async def test_mcp_find_answers_the_file_and_range_over_stdio_and_survives_bad_arguments(polyglot: Path,
                                                                                         tmp_path: Path):
    params = _server("--path", str(polyglot), "--cache-dir", str(tmp_path / "cache"))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"find", "status", "reindex"}
        properties = tools["find"].input_schema["properties"]
        assert {"query", "path", "limit", "mode", "include", "exclude", "token_budget"} <= set(properties)
        # the bounds a schema-driven client checks before calling (the server checks them again)
        assert (properties["limit"]["minimum"], properties["limit"]["maximum"]) == (1, 100)
        assert (properties["token_budget"]["minimum"], properties["token_budget"]["maximum"]) == (200, 200_000)
        assert properties["query"]["minLength"] == 1

        early = _body(await session.call_tool("find", {"query": RETRY_QUERY}))  # answers before embedding ends
        assert early["files"] and "tokens" in early and "index" in early

        status = await _until_embedded(session)
        assert status["roots"][0]["root"] == str(polyglot.resolve())
        body = _body(await session.call_tool("find", {"query": RETRY_QUERY}))
        assert body["root"] == str(polyglot.resolve())
        first = body["files"][0]
        assert first["path"] == "src/net/retry.py" and first["role"] == "source"
        assert first["ranges"][0]["lines"] == [21, 30] and first["ranges"][0]["symbol"] == "upload_with_retry"
        assert body["hereProbability"] is None or body["hereProbability"] > 0.5
        assert "pending" not in body and body["tokens"] <= body["tokenBudget"] == DEFAULT_TOKEN_BUDGET
        assert "def upload_with_retry" in first["ranges"][0]["code"]

        small = _body(await session.call_tool("find", {"query": RETRY_QUERY, "token_budget": 200}))
        assert small["files"][0]["path"] == "src/net/retry.py" and small["tokens"] <= 200
        assert not any("code" in r for f in small["files"] for r in f["ranges"])

        scoped = _body(await session.call_tool("find", {"query": RETRY_QUERY, "path": str(polyglot / "web")}))
        assert scoped["scope"] == "web" and all(f["path"].startswith("web/") for f in scoped["files"])

        bad_calls = [
            {"query": ""},
            {"query": RETRY_QUERY, "limit": 0},
            {"query": RETRY_QUERY, "limit": "many"},
            {"query": RETRY_QUERY, "limit": True},
            {"query": RETRY_QUERY, "token_budget": "2000"},
            {"query": "x" * 70_000},
            {"query": RETRY_QUERY, "mode": "lines"},
            {"query": RETRY_QUERY, "token_budget": 5},
            {"query": RETRY_QUERY, "include": "src/**"},
            {"query": RETRY_QUERY, "path": str(tmp_path / "outside")},  # the conftest's folder beside the root
            {"query": RETRY_QUERY, "path": str(polyglot / "no-such-folder")},
            {"limit": 3},
        ]
        for arguments in bad_calls:
            result = await session.call_tool("find", arguments)
            assert result.is_error, arguments
            assert result.content[0].text
        refused = await session.call_tool("find", {"query": RETRY_QUERY, "path": str(tmp_path / "outside")})
        assert "outside the roots" in refused.content[0].text
        assert (await session.call_tool("reindex", {"path": "/"})).is_error
        assert (await session.call_tool("no_such_tool", {})).is_error

        ignored = _body(await session.call_tool("find", {"query": RETRY_QUERY,
                                                         "path": str(polyglot / "generated" / "out.py")}))
        assert not ignored["files"] and not any("include" in note for note in ignored["notes"])
        assert any(note.startswith("nothing at generated/out.py is in the index") for note in ignored["notes"])

        again = _body(await session.call_tool("find", {"query": RETRY_QUERY}))  # still answering
        assert again["files"][0]["path"] == "src/net/retry.py"
        queued = _body(await session.call_tool("reindex", {}))
        assert queued["queued"] == [str(polyglot.resolve())]


@pytest.mark.slow
async def test_mcp_without_path_takes_each_calls_root(polyglot: Path, tmp_path: Path):
    async with stdio_client(_server("--cache-dir", str(tmp_path / "cache"))) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        empty = await session.call_tool("find", {"query": RETRY_QUERY})
        assert empty.is_error and "path" in empty.content[0].text
        for broad in ("/", str(Path.home())):  # one call would have queued a scan of the whole disk
            refused = await session.call_tool("find", {"query": RETRY_QUERY, "path": broad})
            assert refused.is_error and "too broad to index as a root" in refused.content[0].text
        body = _body(await session.call_tool("find", {"query": RETRY_QUERY, "path": str(polyglot)}))
        assert body["files"][0]["path"] == "src/net/retry.py"
        status = _body(await session.call_tool("status", {}))
        assert status["rootsFrom"] == "calls" and [r["root"] for r in status["roots"]] == [str(polyglot.resolve())]


def test_noul_mcp_refuses_bad_arguments_before_serving(tmp_path: Path, capsys):
    from noul_lsp.cli import main

    assert main(["mcp", "--path", str(tmp_path / "missing")]) == 2
    assert main(["mcp", "--path", str(tmp_path), "--answer-tokens", "5"]) == 2
    # the embedder's chunk length, not the answer's size: checked as `index` checks it, and said which is which
    assert main(["mcp", "--path", str(tmp_path), "--token-budget", "4000", "--cache-dir", str(tmp_path / "c")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors[:2] == [f"noul: error: --path {tmp_path / 'missing'}: not a folder",
                          "noul: error: --answer-tokens must be from 200 to 200000, not 5"]
    assert errors[2].startswith("noul: error: --token-budget: the token budget 4000 is over the 512 tokens")
    assert errors[2].endswith("(the size of an answer is --answer-tokens)") and len(errors) == 3


@pytest.mark.slow
def test_one_root_set_serves_several_roots_and_narrows_to_a_folder(tmp_path: Path):
    import shutil

    from noul_lsp.config import Settings
    from noul_lsp.mcp.roots import CallError, RootSet

    fixture = Path(__file__).parent / "fixtures" / "polyglot"
    shutil.copytree(fixture, tmp_path / "a")
    shutil.copytree(fixture, tmp_path / "b [x]")  # glob characters in a root's name
    (tmp_path / "b [x]" / "src" / "net" / "retry.py").unlink()
    roots = RootSet(Settings(cache_dir=str(tmp_path / "cache")), [tmp_path / "a", tmp_path / "b [x]"], watch=False)
    try:
        assert roots.indexer.idle.wait(120)
        body = roots.find(RETRY_QUERY)
        assert body["files"][0]["path"] == "src/net/retry.py" and body["root"] == str((tmp_path / "a").resolve())
        others = {f.get("root", body["root"]) for f in body["alsoConsidered"]}
        assert others <= {str((tmp_path / "a").resolve()), str((tmp_path / "b [x]").resolve())}
        scoped = roots.find("token bucket rate limiter", path=str(tmp_path / "b [x]" / "web"))
        assert scoped["scope"] == "web" and scoped["root"] == str((tmp_path / "b [x]").resolve())
        assert all(f["path"].startswith("web/") for f in scoped["files"])
        with pytest.raises(CallError, match="outside the roots"):
            roots.find(RETRY_QUERY, path=str(tmp_path))
        with pytest.raises(CallError, match="in several roots"):  # both roots have web/: which one is meant
            roots.find("token bucket rate limiter", path="web")
        assert [r["root"] for r in roots.status()["roots"]] == [str((tmp_path / n).resolve()) for n in ("a", "b [x]")]
    finally:
        roots.close()


def test_the_first_find_after_a_restart_sees_what_changed_while_no_server_ran(tmp_path: Path):
    """An index reopened is as it was when last open: a file added meanwhile (a pull, a branch switch) was
    missing from the first find, and the agent read a low P(here) as "not here"."""
    import shutil

    from noul_lsp.config import Settings
    from noul_lsp.mcp.roots import RootSet

    shutil.copytree(Path(__file__).parent / "fixtures" / "polyglot", tmp_path / "a")
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    first = RootSet(settings, [tmp_path / "a"], watch=False)
    try:
        assert first.indexer.idle.wait(120)
    finally:
        first.close()
    (tmp_path / "a" / "src" / "geo.py").write_text(
        "def haversine_distance(a, b):\n    \"\"\"Great-circle distance between two latitude/longitude points.\"\"\"\n"
        "    return 6371 * central_angle(a, b)\n")
    again = RootSet(settings, [tmp_path / "a"], watch=False)
    try:
        body = again.find("great-circle distance between two latitude longitude points")
        assert body["files"][0]["path"] == "src/geo.py", body
    finally:
        again.close()


def test_a_find_does_not_wait_for_an_index_another_process_is_updating(tmp_path: Path):
    """Every call waited its 30 s for the first pass while a second editor's server held the index."""
    import shutil

    from conftest import hold_index_lock

    from noul_lsp.config import Settings
    from noul_lsp.mcp.roots import RootSet

    shutil.copytree(Path(__file__).parent / "fixtures" / "polyglot", tmp_path / "a")
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    first = RootSet(settings, [tmp_path / "a"], watch=False)
    try:
        assert first.indexer.idle.wait(120)
        directory = first.workspaces[(tmp_path / "a").resolve()].store.directory
    finally:
        first.close()
    holder = hold_index_lock(directory / "indexer.lock")
    again = RootSet(settings, [tmp_path / "a"], watch=False)
    try:
        started = time.monotonic()
        body = again.find(RETRY_QUERY)
        assert time.monotonic() - started < 10
        assert body["files"][0]["path"] == "src/net/retry.py"
        assert f"being updated by pid {holder.pid}" in body.get("pending", ""), body
        assert again.status()["roots"][0]["waitingFor"].endswith("wait for it to finish")
    finally:
        holder.communicate("", timeout=30)
        again.close()


@pytest.mark.slow
def test_a_root_inside_another_is_served_by_it_unless_its_scan_leaves_the_folder_out(tmp_path: Path):
    """`noul mcp --path A --path A/src` indexed src's files twice; now A serves src (a call naming src is
    narrowed to it), while a folder A's scan leaves out (its .gitignore) keeps an index of its own; a call
    naming a repository inside A opens it as a root."""
    import shutil
    import subprocess

    from noul_lsp.config import Settings
    from noul_lsp.mcp.roots import RootSet

    root = tmp_path / "a"
    shutil.copytree(Path(__file__).parent / "fixtures" / "polyglot", root)
    (root / "generated").mkdir()  # in the fixture's .gitignore
    (root / "generated" / "out.py").write_text("def generated_report_writer():\n    pass\n")
    roots = RootSet(Settings(cache_dir=str(tmp_path / "cache")), [root / "src", root, root / "generated"], watch=False)
    try:
        assert sorted(roots.workspaces) == [root.resolve(), (root / "generated").resolve()]
        assert roots.given == tuple(p.resolve() for p in (root / "src", root, root / "generated"))
        assert roots.indexer.idle.wait(120)
        body = roots.find(RETRY_QUERY, path=str(root / "src"))
        assert body["scope"] == "src" and body["files"][0]["path"] == "src/net/retry.py"
        assert all(f["path"].startswith("src/") for f in body["files"])
        assert roots.find("generated report writer")["files"][0]["path"] == "out.py"
    finally:
        roots.close()
    # a call naming a file of a repository inside a git work tree (git lists nothing in it), never given as a
    # root: it gets its own index (the call was narrowed to files the root's index never held)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "vendor" / "pad").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root / "vendor" / "pad", check=True)
    (root / "vendor" / "pad" / "pad.py").write_text("def left_pad_with_zeros(text, width):\n    return text.zfill(width)\n")
    roots = RootSet(Settings(cache_dir=str(tmp_path / "cache")), [root], watch=False)
    try:
        body = roots.find("left pad with zeros", path=str(root / "vendor" / "pad" / "pad.py"))
        assert body["root"] == str((root / "vendor" / "pad").resolve()) and body["scope"] == "pad.py"
        assert [f["path"] for f in body["files"]] == ["pad.py"]
        assert sorted(roots.workspaces) == [root.resolve(), (root / "vendor" / "pad").resolve()]
        ignored = roots.find("generated report writer", path=str(root / "generated"))  # .gitignore: stays out
        assert not ignored["files"] and (root / "generated").resolve() not in roots.workspaces
        # a repository inside that one: opened in its turn
        (root / "vendor" / "pad" / "inner").mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root / "vendor" / "pad" / "inner", check=True)
        (root / "vendor" / "pad" / "inner" / "trim.py").write_text("def trim_trailing_blanks(text):\n    return text.rstrip()\n")
        body = roots.find("trim trailing blanks", path=str(root / "vendor" / "pad" / "inner"))
        assert body["root"] == str((root / "vendor" / "pad" / "inner").resolve()) and body["files"][0]["path"] == "trim.py"
        # an ignored clone stays out, as any ignored folder
        subprocess.run(["git", "init", "-q"], cwd=root / "generated", check=True)
        clone = roots.find("generated report writer", path=str(root / "generated" / "out.py"))
        assert not clone["files"] and (root / "generated").resolve() not in roots.workspaces
    finally:
        roots.close()
