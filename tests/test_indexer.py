"""Incremental indexing with the real store, chunker and embedder: the embedder's own call counter says
how many texts went through the model."""

import os
import shutil
import time
from dataclasses import replace

import pytest

from noul_lsp.config import IndexSettings, Settings
from noul_lsp.session.workspace import Workspace


@pytest.fixture
def small_settings(settings) -> Settings:
    """Methods as their own chunks, so an edit to one method is visible as one re-embedded chunk."""
    return replace(settings, index=IndexSettings(chunk_max_chars=400))


def _index(workspace: Workspace):
    update = workspace.indexer.update()
    embedder = workspace.embedder()
    before = embedder.texts_embedded
    embedded = workspace.indexer.embed_pending(embedder)
    assert embedder.texts_embedded - before == embedded.embedded
    return update, embedded


def test_second_run_on_an_unchanged_tree_embeds_nothing(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    first, embedded = _index(workspace)
    assert first.files_indexed >= 14 and first.chunks_added > 40
    assert embedded.embedded > 0 and embedded.pending == 0
    assert any("binary" in s for s in first.skipped) and any("byte cap" in s for s in first.skipped)
    second, again = _index(workspace)
    assert second.files_indexed == 0 and second.files_unchanged == second.files_seen
    assert again.embedded == 0
    state = workspace.state()
    assert state.pending == 0 and state.embedded == state.chunks


def test_editing_one_method_re_embeds_only_that_method(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    path = polyglot / "src/store/cookies.py"
    text = path.read_text()
    # One more line in set_from_response shifts every later method down a line: they get new keys
    # (start line) but keep their content hash, so only the edited method is embedded again.
    path.write_text(text.replace("    def set_from_response(self, headers: dict) -> None:\n",
                                 "    def set_from_response(self, headers: dict) -> None:\n"
                                 "        # tolerate malformed values\n"))
    update, embedded = _index(workspace)
    assert update.files_indexed == 1
    assert update.chunks_added == 4  # set_from_response + the three methods below it, moved a line
    assert embedded.embedded == 1
    # the new line's words are the edited method's alone: the find reads the index after the edit
    hits = workspace.find("tolerate malformed values", mode="chunks").hits
    assert (hits[0].path, hits[0].symbol, hits[0].start_line) == ("src/store/cookies.py", "CookieJar.set_from_response", 13)


def test_touching_without_changes_rechunks_nothing(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    path = polyglot / "src/net/retry.py"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    update, embedded = _index(workspace)
    assert update.files_indexed == 0 and update.chunks_added == 0 and embedded.embedded == 0


def test_deleting_a_file_removes_its_chunks(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    (polyglot / "native/lru.cpp").unlink()
    update, _ = _index(workspace)
    assert update.files_removed == 1
    assert "native/lru.cpp" not in workspace.store.files()
    assert all(c.path != "native/lru.cpp" for c in workspace.store.chunks())
    hits = workspace.find("least recently used cache evicts entries").hits
    assert all(h.path != "native/lru.cpp" for h in hits)


def test_renaming_a_file_reuses_every_vector(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    shutil.move(polyglot / "src/net/retry.py", polyglot / "src/net/backoff.py")
    update, embedded = _index(workspace)
    assert update.files_indexed == 1 and update.files_removed == 1
    assert embedded.embedded == 0
    assert workspace.find("retry failed uploads with exponential backoff").hits[0].path == "src/net/backoff.py"


def test_a_file_that_turns_binary_is_dropped(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    (polyglot / "scripts/markdown.rb").write_bytes(b"\x00\x01binary now")
    update, _ = _index(workspace)
    assert update.files_removed == 1 and any("markdown.rb: binary" in s for s in update.skipped)
    record = workspace.store.files()["scripts/markdown.rb"]
    assert record.chunks == () and "binary" in record.skipped
    assert all(c.path != "scripts/markdown.rb" for c in workspace.store.chunks())
    again, _ = _index(workspace)
    assert again.skipped == []  # remembered: an unchanged skipped file is not read again


def test_vectors_of_another_model_budget_are_kept_apart(polyglot, small_settings):
    workspace = Workspace(polyglot, small_settings)
    _index(workspace)
    other = replace(small_settings, index=IndexSettings(chunk_max_chars=400, token_budget=64))
    narrow = Workspace(polyglot, other)
    assert narrow.model_key != workspace.model_key
    assert narrow.state().embedded == 0  # the 256-token vectors are not used for the 64-token model
    _, embedded = _index(narrow)
    assert embedded.embedded > 0


def test_an_index_another_process_updates_is_waited_for_quietly_then_caught_up(polyglot, small_settings):
    """A second editor's server on the same folder showed "being updated by pid N" on every save and dropped
    the change; it now waits for the other process and then does what is left."""
    import threading
    import time

    from conftest import hold_index_lock

    from noul_lsp.session.background import BackgroundIndexer

    workspace = Workspace(polyglot, small_settings)
    holder = hold_index_lock(workspace.store.directory / "indexer.lock")
    problems: list[str] = []
    indexer = BackgroundIndexer(on_problem=problems.append)
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)
        deadline = time.monotonic() + 30
        while workspace.root not in indexer.waiting:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert indexer.waiting[workspace.root].endswith(f"being updated by pid {holder.pid}; wait for it to finish")
        threads = threading.active_count()
        (polyglot / "src" / "geo.py").write_text('def haversine_distance(a, b):\n    """Great-circle distance '
                                                 'between two latitude/longitude points."""\n')
        for _ in range(6):  # saves meanwhile: merged into the one pending retry, not a timer each
            indexer.changed(workspace.root, {"src/geo.py"})
            time.sleep(0.5)
        assert not indexer.idle.is_set() and workspace.root in indexer.waiting and problems == []
        assert threading.active_count() <= threads + 1
        holder.communicate("", timeout=30)  # the other process is done
        assert indexer.idle.wait(120) and not indexer.waiting and problems == []
        assert workspace.find("retry failed uploads with exponential backoff").hits[0].path == "src/net/retry.py"
        assert workspace.find("great-circle distance between two points").hits[0].path == "src/geo.py"
    finally:
        holder.kill()
        indexer.stop()
        workspace.close()


def test_an_ignore_rule_or_a_branch_switch_asks_for_a_whole_pass(polyglot_git, small_settings):
    """A folder newly written to .noulignore stayed in results for the whole editor session: only the
    changed paths were looked at, and the rule decides about files that did not change. A branch switch
    reported as a few folders' events (or as .git/HEAD) left the files under them unread."""
    from noul_lsp.session.background import BackgroundIndexer
    from noul_lsp.workspace.watch import asks_full_scan, worth_telling

    assert asks_full_scan(".noulignore") and asks_full_scan("web/.gitignore") and asks_full_scan(".git/HEAD")
    assert worth_telling(".git/HEAD") and not worth_telling(".git/objects/ab/cdef") and worth_telling("src/a.py")
    assert not asks_full_scan("src/net/retry.py") and not asks_full_scan(".git/index")

    workspace = Workspace(polyglot_git, small_settings)
    indexer = BackgroundIndexer()
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)
        assert indexer.idle.wait(120)
        assert "docs/deploy.md" in workspace.store.files()
        (polyglot_git / ".noulignore").write_text((polyglot_git / ".noulignore").read_text() + "\ndocs/\n")
        indexer.changed(workspace.root, {".noulignore"})
        assert indexer.idle.wait(120)
        assert not any(path.startswith("docs/") for path in workspace.store.files())
        # files changed behind a watcher's back are read again when git's HEAD moves
        (polyglot_git / "src" / "net" / "retry.py").write_text("def geodesic_span(a, b):\n    return 0\n")
        indexer.changed(workspace.root, {".git/HEAD"})
        assert indexer.idle.wait(120)
        assert workspace.find("geodesic_span").hits[0].path == "src/net/retry.py"
        # an ignore file in a folder the scan leaves out (a virtualenv's own .gitignore) is no rule of the root
        indexer.rescanned.clear()
        indexer.changed(workspace.root, {".venv/.gitignore", "node_modules/left-pad/.gitignore"})
        time.sleep(0.5)
        assert indexer.idle.wait(120) and workspace.root not in indexer.rescanned
    finally:
        indexer.stop()
        workspace.close()


def test_a_damaged_fitted_file_is_a_problem_said_and_indexing_goes_on(polyglot, small_settings, tmp_path,
                                                                       monkeypatch):
    """The end of a pass measures the P(here) level with a find, which read a damaged calibration file and
    ended the indexer's thread without a word: nothing was indexed for the rest of the session."""
    from noul_lsp.session.background import BackgroundIndexer

    damaged = tmp_path / "cal"
    damaged.mkdir()
    workspace = Workspace(polyglot, small_settings)
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(damaged))
    (damaged / f"{workspace.model_pair}.json").write_text("{broken")
    problems: list[str] = []
    indexer = BackgroundIndexer(on_problem=problems.append)
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)
        assert indexer.idle.wait(120)
        deadline = time.monotonic() + 30
        while not problems and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("not a readable calibration file" in problem for problem in problems), problems
        (polyglot / "src" / "geo.py").write_text("def haversine_distance(a, b):\n    return 0\n")
        indexer.changed(workspace.root, {"src/geo.py"})
        time.sleep(0.5)
        assert indexer.idle.wait(120)
        assert "src/geo.py" in workspace.store.files()
    finally:
        indexer.stop()
        workspace.close()


def test_the_watcher_tells_of_a_branch_switch_and_an_ignore_rule(polyglot_git):
    """watchfiles' default filter drops all of .git/: a checkout reached the indexer as its files' events
    alone, never as git's HEAD (what asks for a whole pass)."""
    import subprocess

    from noul_lsp.workspace.watch import RootWatcher

    seen: list[set[str]] = []
    watcher = RootWatcher(polyglot_git, seen.append)
    try:
        time.sleep(0.5)  # the watch is set up
        subprocess.run(["git", "checkout", "-q", "-b", "feature"], cwd=polyglot_git, check=True)
        (polyglot_git / "web" / ".gitignore").write_text("*.tmp\n")
        deadline = time.monotonic() + 20
        while not ({".git/HEAD", "web/.gitignore"} <= set().union(*seen, set())) and time.monotonic() < deadline:
            time.sleep(0.05)
        told = set().union(*seen, set())
        assert {".git/HEAD", "web/.gitignore"} <= told, told
        assert not any(path.startswith(".git/") and path != ".git/HEAD" for path in told), told
    finally:
        watcher.stop()


def test_source_is_embedded_before_tests_and_docs_and_what_a_tool_wrote_last(tmp_path, settings):
    """grpc-gateway's generated `.pb.go` (13,117 of its 16,874 texts) were embedded among its source, and its
    tests and docs after them. The order is source, then tests and docs, then what a tool wrote."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "api").mkdir()
    (tmp_path / "tests/test_api.py").write_text("def test_echo():\n    assert echo('a') == 'a'\n")
    (tmp_path / "api/echo.pb.go").write_text(
        "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n\nfunc (x *Echo) GetText() string {\n"
        "\treturn x.Text\n}\n")
    (tmp_path / "api/echo.py").write_text("def echo(text):\n    return text\n")
    workspace = Workspace(tmp_path, settings)
    workspace.indexer.update()
    pending = workspace.indexer.pending_embeddings(workspace.embedder().model_key)
    paths = list(dict.fromkeys(chunk.path for chunk in pending))
    assert paths == ["api/echo.py", "tests/test_api.py", "api/echo.pb.go"]
    assert {chunk.kind for chunk in pending if chunk.path == "api/echo.pb.go"} == {"generated"}


def test_a_tracked_file_the_ignore_rules_match_is_read_as_vendored(tmp_path, settings, monkeypatch):
    """juice-shop commits three.js although its own .gitignore names it: git lists it (it ignores nothing it
    tracks), a walk of an export of the same commit does not, and in a checkout it came in the first ten for
    4 of 38 questions as source. It is cut as a tool's output (role `generated`), and read as code again once
    the rule goes, the file unchanged."""
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    root = tmp_path / "repo"
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "three.js").write_text("function WebGLRenderer(parameters) {\n  this.domElement = canvas;\n}\n")
    (root / "render.js").write_text("function renderScene(scene) {\n  return new WebGLRenderer({}).render(scene);\n}\n")
    (root / "assets" / "libthree.so").write_bytes(b"\x7fELF\0\0")  # vendored and binary: skipped, read once
    (root / ".gitignore").write_text("assets/three.js\nassets/*.so\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "add", "-f", "assets/three.js", "assets/libthree.so"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    workspace = Workspace(root, settings)
    try:
        workspace.indexer.update()
        files = workspace.store.files()
        assert files["assets/three.js"].vendored and not files["render.js"].vendored
        kinds = {chunk.path: chunk.kind for chunk in workspace.store.chunks()}
        assert kinds["assets/three.js"] == "generated" and kinds["render.js"] == "function"
        again = workspace.indexer.update()
        assert again.files_unchanged == again.files_seen and not again.skipped
        # git failing to say which files are vendored changes nothing the index knew
        import noul_lsp.workspace.discovery as discovery
        with monkeypatch.context() as patched:
            patched.setattr(discovery, "_git_ignored_but_tracked", lambda root, paths=None: None)
            failed = workspace.indexer.update()
        assert failed.files_unchanged == failed.files_seen and workspace.store.files()["assets/three.js"].vendored
        (root / ".gitignore").write_text("")
        workspace.indexer.update()
        assert not workspace.store.files()["assets/three.js"].vendored
        assert {chunk.kind for chunk in workspace.store.chunks() if chunk.path == "assets/three.js"} == {"function"}
    finally:
        workspace.close()


def test_a_whole_pass_over_an_index_that_holds_files_is_checking_not_building(polyglot, small_settings):
    """The server's opening pass over a workspace indexed before said "still indexing: 2998 files so far" in
    both editors while it found nothing changed: it is `checking` (the editors say "checking for changes"),
    the first pass and a save's look are not."""
    from noul_lsp.session.background import BackgroundIndexer

    seen: list[tuple[str, bool]] = []
    indexer = BackgroundIndexer(on_progress=lambda progress: seen.append((progress.phase, indexer.checking)))
    workspace = Workspace(polyglot, small_settings)
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)  # the first pass: building
        assert indexer.idle.wait(120)
        first = list(seen)
        indexer.scan(workspace.root)  # opened again: looking over what is there
        assert indexer.idle.wait(120)
        again = seen[len(first):]
        (polyglot / "src" / "geo.py").write_text("def haversine_distance(a, b):\n    return 0\n")
        indexer.changed(workspace.root, {"src/geo.py"})  # a save
        assert indexer.idle.wait(120)
        saved = seen[len(first) + len(again):]
    finally:
        indexer.stop()
        workspace.close()
    assert ("scanning", False) in first and ("scanning", True) not in first
    assert ("scanning", True) in again
    assert ("scanning", False) in saved and ("scanning", True) not in saved
    assert not indexer.checking
