"""The language server end to end: pytest-lsp drives `python -m noul_lsp` over real stdio, once with
VS Code's client capabilities and once with Neovim's."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time

import pytest
import pytest_lsp
from conftest import FIXTURES, add_bad_inputs
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIND = "workspace/semanticFind"
TOKEN = "noul/indexing"


@pytest.fixture
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("lsp")
    first = base / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", first)
    outside = base / "outside.py"
    outside.write_text("def outside(): pass\n")
    add_bad_inputs(first, outside)
    second = base / "second"
    second.mkdir()
    (second / "mailer.py").write_text(
        "def send_welcome_email(user):\n    \"\"\"Email a greeting to a newly registered user.\"\"\"\n"
        "    smtp.send(user.address, 'Welcome aboard')\n")
    return first, second, base / "cache"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "noul_lsp"]),
                    params=["visual-studio-code", "neovim"])
async def client(request, lsp_client: LanguageClient, roots):
    first, second, cache = roots
    lsp_client.client_name = request.param
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param),
        workspace_folders=[types.WorkspaceFolder(from_fs_path(str(first)), "polyglot"),
                           types.WorkspaceFolder(from_fs_path(str(second)), "second")],
        initialization_options={"noul": {"cacheDir": str(cache), "limit": 5}}))
    await wait_for_progress_end(lsp_client)
    lsp_client.roots = (first, second)
    yield
    await lsp_client.shutdown_session()


def indexing_spans(client: LanguageClient) -> dict[str, list]:
    """The reports of each indexing progress token, in the order the tokens were created."""
    return {token: reports for token, reports in client.progress_reports.items() if str(token).startswith(TOKEN + "/")}


async def wait_for_progress_end(client: LanguageClient, spans: int = 1, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ended = [r for r in indexing_spans(client).values() if r and isinstance(r[-1], types.WorkDoneProgressEnd)]
        if len(ended) >= spans:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"indexing did not finish in {timeout}s: {client.progress_reports}")


async def find(client: LanguageClient, query: str, **extra):
    return await client.protocol.send_request_async(FIND, {"query": query, **extra})


def path_of(client: LanguageClient, uri: str) -> str:
    for root in client.roots:
        prefix = from_fs_path(str(root)) + "/"
        if uri.startswith(prefix):
            return uri[len(prefix):]
    return uri


async def test_indexing_reports_progress_then_finds_known_files(client: LanguageClient):
    reports = next(iter(indexing_spans(client).values()))
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert "files" in reports[-1].message and "embedded" in reports[-1].message
    expected = {"retry failed uploads with exponential backoff": "src/net/retry.py",
                "limit how many API calls a client can make per second": "web/src/rateLimiter.ts",
                "check that a signed session token has not expired": "crates/auth/src/token.rs",
                "send a welcome email to a newly registered user": "mailer.py"}
    for query, path in expected.items():
        result = await find(client, query)
        assert path_of(client, result.results[0].uri) == path, query
        assert result.index.pending == 0
    result = await find(client, "retry failed uploads with exponential backoff")
    assert len(result.results) == 5  # the limit from initializationOptions
    # the default pair ships a calibration (models/calibration): P(here) and each result's probability
    assert 0.0 <= result.hereProbability <= 1.0
    assert all(0.0 <= hit.probability <= result.hereProbability for hit in result.results)
    assert result.results[0].signals.bm25Rank == 1
    assert result.results[0].signals.role == "source"
    assert {"bm25", "dense", "total"} <= set(result.timings._fields)

    # a second pass (noul.reindex) has a token of its own: LSP 3.17 begins and ends a token once, and
    # VS Code shows nothing for one it saw end; within a span the percentage never goes down
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.reindex"))
    await wait_for_progress_end(client, spans=2)
    spans = indexing_spans(client)
    assert len(spans) >= 2
    for token, span in spans.items():
        kinds = [type(r).__name__ for r in span]
        assert kinds[0] == "WorkDoneProgressBegin" and kinds.count("WorkDoneProgressBegin") == 1, (token, kinds)
        assert kinds.count("WorkDoneProgressEnd") <= 1 and "WorkDoneProgressEnd" not in kinds[:-1], (token, kinds)
        shares = [r.percentage for r in span if getattr(r, "percentage", None) is not None]
        assert shares == sorted(shares), (token, shares)


async def test_hover_inside_a_returned_range_shows_its_score(client: LanguageClient):
    result = await find(client, "token bucket refill")
    top = result.results[0]
    inside = types.Position(line=top.range.start.line + 1, character=2)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(top.uri), position=inside))
    assert hover is not None and "rank 1" in hover.contents.value and "score" in hover.contents.value
    assert re.search(r"(P\(answer\) 0\.\d\d|% of (candidates|top)) .*· P\(here\) ", hover.contents.value), hover.contents.value
    assert "source file" in hover.contents.value
    # the same file spelled with an escape the find did not use (%72 is "r"): the same hits
    head, _, name = top.uri.rpartition("/")
    respelled = f"{head}/%{ord(name[0]):02x}{name[1:]}"
    assert respelled != top.uri
    again = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(respelled), position=inside))
    assert again is not None and again.contents.value == hover.contents.value
    outside = types.Position(line=max(top.range.end.line + 200, 500), character=0)
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(top.uri), position=outside)) is None
    other = from_fs_path(str(client.roots[0] / "native/config.c"))
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(other), position=types.Position(0, 0))) is None


async def test_a_new_file_on_disk_becomes_findable(client: LanguageClient):
    path = client.roots[0] / "src" / "geo.py"
    path.write_text("def haversine_distance(a, b):\n    \"\"\"Great-circle distance between two GPS points.\"\"\"\n"
                    "    return 6371 * central_angle(a, b)\n")
    if client.client_name.startswith("visual-studio-code"):
        # VS Code watches files and tells the server; Neovim's capabilities make the server watch itself.
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(from_fs_path(str(path)), types.FileChangeType.Created)]))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        result = await find(client, "great circle distance between GPS coordinates")
        if result.results and path_of(client, result.results[0].uri) == "src/geo.py":
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("the new file never showed up")


async def test_cancel_stops_a_find(client: LanguageClient):
    issue = "the upload keeps failing and the retry backoff never grows " * 400
    future = client.protocol.send_request(FIND, {"query": issue}, msg_id="to-cancel")
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="to-cancel"))
    with pytest.raises(Exception) as caught:
        await asyncio.wait_for(asyncio.wrap_future(future), 30)
    assert "cancel" in str(caught.value).lower()
    assert (await find(client, "token bucket")).results  # still serving


@pytest.mark.parametrize("params,message", [
    ({"limit": 3}, "required field missing @ query"),
    ({"query": "retry", "limit": "many"}, "@ limit"),
    ({"query": "   "}, "query is empty"),
    ({"query": "retry", "mode": "lines"}, "mode must be"),
])
async def test_malformed_params_get_invalid_params_and_the_server_lives(client: LanguageClient, params, message):
    with pytest.raises(Exception) as caught:
        await asyncio.wait_for(client.protocol.send_request_async(FIND, params), 10)
    assert message in str(caught.value)
    assert "-32602" in str(caught.value) or "InvalidParams" in type(caught.value).__name__ or "invalid" in str(caught.value).lower()
    assert (await find(client, "token bucket")).results


async def test_alias_method_and_status_command(client: LanguageClient):
    result = await client.protocol.send_request_async("noul/semanticFind", {"query": "least recently used cache"})
    assert path_of(client, result.results[0].uri) == "native/lru.cpp"
    status = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
    assert len(status["roots"]) == 2 and all(r["pending"] == 0 for r in status["roots"])
    assert status["roots"][0]["model"] == "all-minilm-l6-v2-int8@128" and status["version"]


async def test_two_workspace_folders_are_searched_together(client: LanguageClient):
    result = await find(client, "send a welcome email to a newly registered user", limit=10)
    roots = {from_fs_path(str(r)) for r in client.roots}
    seen = {root for root in roots for hit in result.results if hit.uri.startswith(root + "/")}
    assert seen == roots
    assert path_of(client, result.results[0].uri) == "mailer.py"


async def found_once_indexed(client: LanguageClient, query: str, timeout: float = 60.0):
    """A find's result once it has any (a settings change without cacheDir reopens the roots elsewhere,
    and that index may be empty until its scan ends)."""
    deadline = time.monotonic() + timeout
    while not (result := await find(client, query)).results and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return result


async def test_settings_change_applies_and_null_keeps_them(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"noul": {"limit": 2}}))
    await asyncio.sleep(0.3)
    assert len((await found_once_indexed(client, "token bucket")).results) == 2
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await asyncio.sleep(0.3)
    assert len((await find(client, "token bucket")).results) == 2
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"noul": {"limit": "x"}}))
    await asyncio.sleep(0.3)
    assert any("search.limit must be an integer" in m.message for m in client.messages)


async def test_an_index_setting_change_reopens_the_roots(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"noul": {"tokenBudget": 64}}))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
        roots = status["roots"]
        if roots and all(r["model"].endswith("@64") and r["pending"] == 0 and r["chunks"] > 0 for r in roots) \
                and not status["indexing"]:
            break
        await asyncio.sleep(0.3)
    else:
        raise AssertionError(f"the roots were not re-embedded at the new budget: {status}")
    result = await find(client, "retry failed uploads with exponential backoff")
    assert path_of(client, result.results[0].uri) == "src/net/retry.py"


@pytest.fixture(scope="module")
def tiny_reranker(tmp_path_factory):
    """A random-weight BERT cross-encoder exported to ONNX (tests/test_rerank.py checks its scores)."""
    pytest.importorskip("torch", reason="the export extra is part of the test install")
    from random_checkpoints import build_checkpoint

    from noul_lsp.models.export import export_model

    base = tmp_path_factory.mktemp("reranker")
    export_model(build_checkpoint(base / "checkpoint"), base / "onnx", optimize=False)
    return base / "onnx"


async def test_a_reranker_setting_reranks_and_says_where(client: LanguageClient, tiny_reranker):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"noul": {"reranker": str(tiny_reranker), "limit": 5}}))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # loaded in the background, before any find asks for it
        status = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
        if status["roots"] and status["roots"][0].get("rerankerDevice") == "cpu":
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError(f"the reranker was not loaded ahead of the first find: {status}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result = await find(client, "retry failed uploads with exponential backoff")
        if result.results and result.signals.rerank != "off":
            break
        await asyncio.sleep(0.3)
    assert result.signals.rerank.startswith("local:") and result.signals.rerankDevice == "cpu"
    assert result.results[0].signals.rerankScore is not None and result.timings.rerank > 0
    status = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
    assert status["roots"][0]["rerankerDevice"] == "cpu" and status["roots"][0]["reranker"] == str(tiny_reranker)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"noul": {"reranker": "cross-encoder/ms-marco-MiniLM-L-6-v2", "limit": 5}}))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result = await find(client, "retry failed uploads with exponential backoff")
        if result.results and result.signals.rerank == "skipped":
            break
        await asyncio.sleep(0.3)
    assert result.signals.rerank == "skipped" and result.results  # answered without it
    assert any("not reranked" in m.message and "noul models pull" in m.message for m in client.messages)


async def test_a_folder_inside_another_is_indexed_with_it_and_alone_once_that_one_goes(client: LanguageClient):
    """A workspace folder inside another (a package of a monorepo added beside it) is served by the outer
    folder's index: its files were scanned and embedded twice before. A folder the outer scan does not
    list (ignored) keeps an index of its own. When the outer folder is removed, the inner one gets an index
    of its own; when it comes back, it takes the inner one's place."""
    first, second = client.roots
    inner = first / "src"

    def folders(added=(), removed=()):
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(from_fs_path(str(f)), f.name) for f in added],
                removed=[types.WorkspaceFolder(from_fs_path(str(f)), f.name) for f in removed])))

    async def status_when(done, what: str, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
            if done(status):
                return status
            await asyncio.sleep(0.2)
        raise AssertionError(f"{what}: {status}")

    ignored = first / "generated"  # in the outer folder's .gitignore: its scan does not list these files
    folders(added=[inner, ignored])
    status = await status_when(lambda s: "nested" in s and len(s["roots"]) == 3 and not s["indexing"]
                               and all(r["chunks"] > 0 and r["pending"] == 0 for r in s["roots"]),
                               "the inner folder is not reported, or the ignored one not indexed")
    assert sorted(r["root"] for r in status["roots"]) == sorted([str(first), str(second), str(ignored)])
    assert status["nested"] == [{"folder": str(inner), "indexedWith": str(first)}]
    found = await find(client, "generated should not be indexed")
    assert found.results[0].uri == from_fs_path(str(ignored / "out.py"))
    folders(removed=[ignored])
    result = await find(client, "retry failed uploads with exponential backoff", limit=10)
    uris = [hit.uri for hit in result.results]
    assert uris[0] == from_fs_path(str(first / "src/net/retry.py")) and len(uris) == len(set(uris))

    folders(removed=[first])
    status = await status_when(lambda s: {r["root"] for r in s["roots"]} == {str(inner), str(second)}
                               and all(r["chunks"] > 0 and r["pending"] == 0 for r in s["roots"])
                               and not s["indexing"], "the inner folder did not get its own index")
    assert "nested" not in status
    result = await find(client, "retry failed uploads with exponential backoff")
    assert result.results[0].uri == from_fs_path(str(inner / "net/retry.py"))

    folders(added=[first])
    status = await status_when(lambda s: "nested" in s and {r["root"] for r in s["roots"]} == {str(first), str(second)},
                               "the outer folder did not take the inner one's place")
    assert status["nested"] == [{"folder": str(inner), "indexedWith": str(first)}]

    # excludes that leave the inner folder out of the outer scan: it needs its own index again, and gets it
    # back into the outer one's when they go
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"noul": {"exclude": ["src/"]}}))
    status = await status_when(lambda s: "nested" not in s and {r["root"] for r in s["roots"]} == {str(first), str(inner), str(second)}
                               and all(r["chunks"] > 0 and r["pending"] == 0 for r in s["roots"]) and not s["indexing"],
                               "an inner folder the outer one's excludes leave out has no index of its own")
    result = await find(client, "retry failed uploads with exponential backoff", limit=10)
    uris = [hit.uri for hit in result.results]
    assert uris[0] == from_fs_path(str(inner / "net/retry.py")) and len(uris) == len(set(uris))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"noul": {}}))
    status = await status_when(lambda s: "nested" in s and {r["root"] for r in s["roots"]} == {str(first), str(second)},
                               "the outer folder did not take the inner one's place once its excludes went")
    assert status["nested"] == [{"folder": str(inner), "indexedWith": str(first)}]
