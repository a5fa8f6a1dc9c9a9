"""`noul-lsp`: the engine behind the Language Server Protocol (pygls 2, stdio or TCP).

A thin layer: every workspace folder gets a `Workspace` (store + index + engine), a background thread
keeps them indexed, and requests are translated to and from the engine's types. CPU work never runs on
the event loop: a find runs in an executor and checks between stages whether its request was cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

from noul_lsp import __version__
from noul_lsp.config import Settings
from noul_lsp.labels import hover_markdown, score_is_share
from noul_lsp.lsp.convert import FileLines, line_range, path_of, to_find_result
from noul_lsp.lsp.protocol import FIND_METHODS, NoulProtocol, SemanticFindParams, SemanticFindResult, serve
from noul_lsp.lsp.settings import settings_from_client
from noul_lsp.models.registry import ModelMissing
from noul_lsp.retrieval.engine import find_across
from noul_lsp.retrieval.result import FindCancelled, Hit, QueryError
from noul_lsp.session.background import BackgroundIndexer, Progress
from noul_lsp.session.workspace import Workspace
from noul_lsp.store import IndexDamaged, StoreError, set_aside
from noul_lsp.team.schema import store_status, without_passwords
from noul_lsp.workspace.discovery import serving_root
from noul_lsp.workspace.watch import RootWatcher, worth_telling

logger = logging.getLogger(__name__)
PROGRESS_TOKEN = "noul/indexing"
COMMAND_REINDEX = "noul.reindex"
COMMAND_STATUS = "noul.status"
#: the text of an organisation hit's file (`noul-org://` uri), as the configured role may see it
COMMAND_ORG_DOCUMENT = "noul.orgDocument"
#: LSP's RequestFailed: the request was valid, the server could not answer it now
REQUEST_FAILED = -32803


#: how long the server waits for the client to answer a request of its own (the file-watch registration)
HANDSHAKE_SECONDS = 10.0


class IndexingProgress:
    """Indexing as LSP work-done progress. Each span (from the first change the indexer takes up to idle) has
    a token of its own, created when the span starts: LSP 3.17 begins a token once and ends it once, and
    VS Code shows nothing for a token it saw end. Until the client has answered the creation, reports are
    folded into the begin; a client that never answers sees no progress, and indexing does not wait for it.
    The percentage never goes down within a span (with two roots, the second one's share started at 0)."""

    def __init__(self, server: NoulServer) -> None:
        self.server = server
        self.supported = False
        self._serial = 0
        self._token: str | None = None
        self._begun = False
        self._latest: Progress | None = None
        self._highest = 0

    def update(self, progress: Progress) -> None:
        if not self.supported:
            return
        work = self.server.work_done_progress
        if progress.phase == "idle":
            if self._token is not None and self._begun:
                work.end(self._token, types.WorkDoneProgressEnd(message=self.server.status_line()))
            self._token, self._begun, self._latest, self._highest = None, False, None, 0
            return
        self._latest, self._highest = progress, max(self._highest, progress.percentage)
        if self._token is None:
            self._serial += 1
            self._token = f"{PROGRESS_TOKEN}/{self._serial}"
            answered = work.create(self._token)
            answered.add_done_callback(lambda future, token=self._token: self.server._call_soon(
                self._created, token, future))
        elif self._begun:
            work.report(self._token, types.WorkDoneProgressReport(message=progress.message, percentage=self._highest))

    def _created(self, token: str, answered) -> None:
        if token != self._token:  # the span ended before the client answered: nothing to show
            return
        if answered.cancelled() or answered.exception() is not None:  # refused: index silently from now on
            logger.info("work done progress refused: %r", None if answered.cancelled() else answered.exception())
            self.supported = False
            return
        self._begun = True
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="noul: indexing", message=self._latest.message if self._latest else "", percentage=self._highest,
            cancellable=False))


@dataclass
class _Shown:
    """The last find's hits in one document, for hover."""

    query: str
    here_probability: float | None
    hits: list[tuple[types.Range, Hit]]
    #: how the hover labels the scores: shares of the candidates' probability, or relative to the top score
    share: bool = False
    top: float = 0.0
    #: why the find gave no P(here) (a narrowed search), else ""
    here_why: str = ""


class NoulServer(LanguageServer):
    def __init__(self) -> None:
        # no text sync: the index is what is on disk (a save is found through file watching); clients need not
        # stream every keystroke of buffers nothing reads (README, "The language server")
        super().__init__("noul-lsp", __version__, protocol_cls=NoulProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.None_)
        self.settings = Settings()
        #: what the client sent at start: every configuration change is laid over it
        self.initialization_options: Any = None
        #: the client's workspace folders (resolved)
        self.folders: set[Path] = set()
        #: an index per folder but those an open folder around them serves
        self.roots: dict[Path, Workspace] = {}
        #: folder -> the root whose index serves it (it lists the folder's files)
        self.nested: dict[Path, Path] = {}
        #: folders whose index could not be opened, with why (said once; tried again at each reconcile)
        self.unopened: dict[Path, str] = {}
        self.watchers: dict[Path, RootWatcher] = {}
        self.shown: dict[str, _Shown] = {}
        self.find_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="noul-find")
        self.indexer = BackgroundIndexer(on_progress=self._progress_from_thread, on_problem=self._problem_from_thread,
                                         on_damage=lambda workspace, damage: self._call_soon(self.recover, workspace, damage))
        self.loop: asyncio.AbstractEventLoop | None = None
        self.progress = IndexingProgress(self)
        self.client_watches = True
        #: the process's exit status: LSP's `exit` without `shutdown` before it is 1
        self.exit_code = 0

    # -- transport: pygls' stdio and TCP servers, reading with `protocol.serve` ----------------------

    def start_io(self, stdin=None, stdout=None) -> None:
        self._stop_event = threading.Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(_ClientWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve(reader, self.protocol, self._stop_event))
        except BrokenPipeError:
            logger.error("the connection to the client is lost; shutting down")
        except SystemExit as leaving:  # pygls' `exit`: 1 when no `shutdown` came first
            self.exit_code = leaving.code if isinstance(leaving.code, int) else 0
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        self._stop_event = stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await serve(reader, self.protocol, stop_event)
            self.shutdown()

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(listen())
        except (asyncio.CancelledError, KeyboardInterrupt):
            pass

    # -- messages from background threads ----------------------------------------------------------

    def _call_soon(self, callback, *args) -> None:
        """Run `callback` on the server's event loop: only that thread writes to the client."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(callback, *args)

    def _problem_from_thread(self, message: str) -> None:
        self._call_soon(self.show, message, types.MessageType.Warning)

    def _progress_from_thread(self, progress: Progress) -> None:
        self._call_soon(self._report_progress, progress)

    def report_server_error(self, error: Exception, source) -> None:
        """pygls shows "Error in server: KeyError: 'file:///…'" for a notification it could not apply (a change
        to a document the client never opened): the client's slip, which nobody reading it can act on, and
        a request's error is in its answer already. Never shown; logged in one line, with the traceback
        pygls kept (`data`) at debug level (an error of ours in a notification handler is in it)."""
        logger.warning("%s: %s", getattr(source, "__name__", source), error)
        traceback = getattr(error, "data", None)
        if isinstance(traceback, dict) and traceback.get("traceback"):
            logger.debug("".join(traceback["traceback"]))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"noul: {message}"))

    def _report_progress(self, progress: Progress) -> None:
        self.progress.update(progress)

    # -- workspace roots ---------------------------------------------------------------------------

    def change_folders(self, added: list[Path] = (), removed: list[Path] = ()) -> list[Path]:
        """Serve these workspace folders and stop serving those (`reconcile`, once for them all: each
        decision may ask git, and an inner folder opened first would be closed again by its outer one); the
        roots newly opened (to scan and watch). A removed folder's index closes, and the folders it served
        get their own (or that of the next folder around them that lists them)."""
        self.folders.difference_update(folder.resolve() for folder in removed)
        self.folders.update(folder.resolve() for folder in added)
        return self.reconcile()

    def reconcile(self) -> list[Path]:
        """Make the open indexes the ones the folders need, whatever changed (a folder added or removed,
        the excludes): a folder whose files an open folder around it lists is served by that folder's index
        (a second index of them cost a second scan and embedding of every file), any other folder has its
        own. Folders are taken outer ones first, so a folder around open ones takes their place. The roots
        newly opened (to scan and watch)."""
        opened, nested = [], {}
        for root in [root for root in self.roots if root not in self.folders]:
            self._close_workspace(root)
        for folder in sorted(self.folders, key=lambda path: (len(path.parts), path)):
            # (a root opened later in this loop is no folder around this one: outer folders come first)
            outer = serving_root([root for root in self.roots if root != folder], folder, self.settings.index)
            if outer is not None:
                nested[folder] = outer
                if folder in self.roots:
                    logger.info("%s is inside %s: served by its index now", folder, outer)
                    self._close_workspace(folder)
            elif folder not in self.roots and self._open_workspace(folder):
                opened.append(folder)
        self.nested = nested
        self.unopened = {folder: why for folder, why in self.unopened.items()
                         if folder in self.folders and folder not in self.roots and folder not in self.nested}
        return opened

    def _open_workspace(self, folder: Path) -> bool:
        if folder in self.roots:
            return False
        try:
            workspace = Workspace(folder, self.settings)
        except (OSError, StoreError) as error:
            if self.unopened.get(folder) != str(error):  # once, not again at each reconcile
                self.show(f"cannot index {folder}: {error}", types.MessageType.Error)
            self.unopened[folder] = str(error)
            return False
        self.unopened.pop(folder, None)
        if workspace.store.rebuilt_reason:
            self.show(workspace.store.rebuilt_reason, types.MessageType.Warning)
        if workspace.embedder_problem:
            self.show(workspace.without_embedder(), types.MessageType.Warning)
        if workspace.reranker_problem:
            self.show(f"results are not reranked: {workspace.reranker_problem}", types.MessageType.Warning)
        elif workspace.reranker_name:  # load it now (seconds for a large model), not on the first find
            self.find_executor.submit(workspace.reranker)
        self.roots[folder] = workspace
        self.indexer.add(workspace)
        return True

    def recover(self, workspace: Workspace, damage: IndexDamaged) -> None:
        """A root's index failed a check: set it aside (kept), tell the user once, reopen and rescan."""
        root = workspace.root
        if self.roots.get(root) is not workspace:
            return  # already recovered (the indexer and a find may both have seen it)
        self._close_workspace(root)
        self.show(set_aside(damage.directory, damage.reason), types.MessageType.Warning)
        if self._open_workspace(root):
            self.start_serving(root)

    def _recover_from(self, damage: IndexDamaged) -> list[Path]:
        """Recover the root whose index `damage` is about; its root, if it is one of ours."""
        for workspace in list(self.roots.values()):
            if workspace.store.directory == damage.directory:
                self.recover(workspace, damage)
                return [workspace.root]
        return []

    def _close_workspace(self, folder: Path) -> None:
        workspace = self.roots.pop(folder, None)
        watcher = self.watchers.pop(folder, None)
        if watcher is not None:
            watcher.stop()
        # closed by the indexer once its thread lets go of it (at once when idle), never under a write
        self.indexer.remove(folder, workspace.close if workspace is not None else lambda: None)

    def start_serving(self, root: Path) -> None:
        """A root just opened: watch it ourselves where the client cannot (once `initialized` has said
        which), and queue its full scan."""
        if self.loop is not None and self.needs_own_watcher and root not in self.watchers:
            self.watch(root)
        self.indexer.scan(root)

    @property
    def needs_own_watcher(self) -> bool:
        """True when the client cannot register file watching for us (then watchfiles does it)."""
        workspace = self.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        return not (self.client_watches and watched and watched.dynamic_registration)

    def client_watches_late(self, registration: asyncio.Future) -> None:
        """The client accepted the watch registration after the server had started watching itself: its
        events come now, and ours would report every change twice."""
        if registration.cancelled() or registration.exception() is not None:
            return
        self.client_watches = True
        for root in list(self.watchers):
            self.watchers.pop(root).stop()

    def watch(self, root: Path) -> None:
        self.watchers[root] = RootWatcher(root, lambda paths: self.indexer.changed(root, paths))

    def root_of(self, path: Path) -> tuple[Path, str] | None:
        """(root, path relative to it) for a file inside one of the roots; None outside all of them."""
        for root in sorted(self.roots, key=lambda r: -len(r.parts)):
            try:
                return root, path.resolve().relative_to(root).as_posix()
            except (ValueError, OSError):
                continue
        return None

    def status_line(self) -> str:
        try:
            states = [w.state() for w in self.roots.values()]
        except StoreError as error:  # damage is recovered from by whoever meets it next
            return f"index unreadable: {error}"
        chunks = sum(s.chunks for s in states)
        embedded = sum(s.embedded for s in states)
        device = next((s.device for s in states if s.device != "not loaded"), "cpu")
        return (f"{sum(s.files for s in states)} files, {chunks} chunks, "
                f"{embedded / chunks if chunks else 0:.0%} embedded on {device}")

    def status(self) -> dict[str, Any]:
        roots = []
        for root, workspace in list(self.roots.items()):
            try:
                state = workspace.state()
            except IndexDamaged as damage:
                self._recover_from(damage)
                roots.append({"root": str(root), "rebuilding": str(damage), "index": str(workspace.store.directory)})
                continue
            embedder = workspace.loaded_embedder
            reranker = workspace.loaded_reranker
            roots.append({"root": str(root), "files": state.files, "chunks": state.chunks,
                          "embedded": state.embedded, "pending": state.pending, "model": workspace.model_key,
                          "static": state.static, "staticModel": workspace.static_key,
                          "staticProblem": workspace.static_problem or None,
                          "device": state.device, "fallback": embedder.fallback_reason if embedder else "",
                          "embedderProblem": workspace.embedder_problem,
                          "reranker": workspace.reranker_name or None,
                          "rerankerProblem": workspace.reranker_problem,
                          "rerankerDevice": reranker.device if reranker else "not loaded",
                          "rerankerFallback": reranker.fallback_reason if reranker else "",
                          "index": str(workspace.store.directory),
                          # another process updating this index (a second editor, `noul index`): this one waits
                          **({"waitingFor": waiting} if (waiting := self.indexer.waiting.get(root)) else {})})
        nested = [{"folder": str(folder), "indexedWith": str(root)} for folder, root in sorted(self.nested.items())]
        unopened = [{"folder": str(folder), "problem": why} for folder, why in sorted(self.unopened.items())]
        return {"version": __version__, "indexing": not self.indexer.idle.is_set(), "roots": roots,
                **({"nested": nested} if nested else {}), **({"unopened": unopened} if unopened else {}),
                **store_status(self.settings.team)}

    def apply_settings(self, raw: Any, base: Any = None) -> None:
        """Adopt the client's settings, laid over `base` (the initialization options). `null` (some clients
        send it on every change) keeps the current ones."""
        if raw is None and self.loop is not None:
            return
        settings, problems = settings_from_client(raw, base)
        if problems:  # one message for them all (a popup each was one too many)
            self.show("settings: " + "; ".join(problems), types.MessageType.Warning)
        previous, self.settings = self.settings, settings
        if (settings.index, settings.models, settings.cache_dir) != (previous.index, previous.models, previous.cache_dir):
            # index or model changed: reopen and rescan (vectors are reused); the excludes may also have
            # changed which folders an index around them lists
            for folder in list(self.roots):
                self._close_workspace(folder)
            for folder in self.reconcile():
                self.start_serving(folder)
        else:
            for workspace in self.roots.values():
                workspace.settings = settings

    def shutdown_all(self) -> None:
        self.indexer.stop()
        for folder in list(self.roots):
            self._close_workspace(folder)
        self.find_executor.shutdown(wait=False, cancel_futures=True)


server = NoulServer()


@server.feature(types.INITIALIZE)
def initialize(ls: NoulServer, params: types.InitializeParams) -> None:
    ls.initialization_options = params.initialization_options
    ls.apply_settings(params.initialization_options)
    folders = [path_of(f.uri) for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [path_of(params.root_uri)]
    ls.change_folders(added=[folder for folder in folders if folder is not None])
    window = params.capabilities.window
    ls.progress.supported = bool(window and window.work_done_progress)


@server.feature(types.INITIALIZED)
async def initialized(ls: NoulServer, params: types.InitializedParams) -> None:
    ls.loop = asyncio.get_running_loop()
    # The first scans start at once: the registration below waits for the client, which may answer late or
    # never (indexing waited for it, and for a progress token, before; a find meanwhile reads as stale).
    for root in ls.roots:
        ls.indexer.scan(root)
    if not ls.needs_own_watcher:
        asked = asyncio.ensure_future(ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(id="noul-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                               register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                   watchers=[types.FileSystemWatcher(glob_pattern="**/*")]))])))
        # not wait_for: it cancels pygls' future, and the client's late answer then failed in pygls
        await asyncio.wait({asked}, timeout=HANDSHAKE_SECONDS)
        if not asked.done():  # no answer in time: watch ourselves, until the client says it watches after all
            logger.info("file watching registration unanswered after %ss: using watchfiles", HANDSHAKE_SECONDS)
            ls.client_watches = False
            asked.add_done_callback(ls.client_watches_late)
        elif asked.exception() is not None:  # refused: watch ourselves
            logger.info("file watching registration refused (%r): using watchfiles", asked.exception())
            ls.client_watches = False
    if ls.needs_own_watcher:
        for root in ls.roots:
            ls.watch(root)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: NoulServer, params: types.DidChangeWatchedFilesParams) -> None:
    by_root: dict[Path, set[str]] = {}
    for change in params.changes:
        path = path_of(change.uri)
        located = ls.root_of(path) if path is not None else None
        if located is not None and worth_telling(located[1]):
            by_root.setdefault(located[0], set()).add(located[1])
    for root, paths in by_root.items():
        ls.indexer.changed(root, paths)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: NoulServer, params: types.DidChangeConfigurationParams) -> None:
    ls.apply_settings(params.settings, base=ls.initialization_options)


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_folders(ls: NoulServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    opened = ls.change_folders(added=[f for a in params.event.added if (f := path_of(a.uri)) is not None],
                               removed=[f for r in params.event.removed if (f := path_of(r.uri)) is not None])
    for root in opened:
        ls.start_serving(root)


async def semantic_find(ls: NoulServer, params: SemanticFindParams) -> SemanticFindResult:
    if not ls.roots:
        raise JsonRpcInvalidParams("no workspace folder is open: open a folder to search it")
    cancelled = threading.Event()
    workspaces = list(ls.roots.values())
    stale = not ls.indexer.idle.is_set()
    checking = stale and ls.indexer.checking

    def run():
        options = {"limit": params.limit, "mode": params.mode, "include": params.include, "exclude": params.exclude,
                   "stale": stale, "should_stop": cancelled.is_set}
        if ls.settings.team.org:  # the organisation index is one more root (imported only when asked for)
            from noul_lsp.team.org import find_with_org

            return find_with_org(workspaces, params.query, ls.settings, **options)
        return find_across(workspaces, params.query, **options)

    try:
        result = await asyncio.get_running_loop().run_in_executor(ls.find_executor, run)
    except asyncio.CancelledError:
        cancelled.set()  # the worker stops at its next stage boundary
        raise
    except QueryError as error:
        raise JsonRpcInvalidParams(str(error)) from error
    except IndexDamaged as damage:
        ls._recover_from(damage)
        raise JsonRpcException(f"{damage}: it was set aside and is being rebuilt; search again in a moment",
                               REQUEST_FAILED) from None
    except FindCancelled:
        raise asyncio.CancelledError() from None
    except ModelMissing as error:  # a damaged calibration or ranker file: its name and the cure, no traceback
        raise JsonRpcException(str(error), REQUEST_FAILED) from None
    encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
    lines_of = FileLines()
    converted = to_find_result(result, encoding, lines_of)
    converted.index.checking = checking
    ls.shown.clear()
    for hit, lsp_hit in zip(result.hits, converted.results, strict=True):
        shown = ls.shown.setdefault(_document_key(lsp_hit.uri), _Shown(result.query, result.here_probability, [], score_is_share(result),
                                                        max(h.score for h in result.hits), result.signals.get("here", "")))
        lines = [] if hit.repository else lines_of(hit.root, hit.path)
        for start, end in hit.ranges or [(hit.start_line, hit.end_line)]:
            shown.hits.append((line_range(lines, start, end, encoding), hit))
    return converted


for _method in FIND_METHODS:
    server.feature(_method)(semantic_find)


def _document_key(uri: str) -> str:
    """A document's key among the last find's hits: its path, so that spellings of one file's uri that differ
    (`%C3%A9` and `%c3%a9`, a drive letter's case) find the same hits; the uri itself when it is no file."""
    path = path_of(uri) if uri.startswith("file:") else None
    return str(path) if path is not None else uri


def _inside(position: types.Position, span: types.Range) -> bool:
    after_start = (position.line, position.character) >= (span.start.line, span.start.character)
    before_end = (position.line, position.character) <= (span.end.line, span.end.character)
    return after_start and before_end


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: NoulServer, params: types.HoverParams) -> types.Hover | None:
    shown = ls.shown.get(_document_key(params.text_document.uri))
    if shown is None:
        return None  # not ours: other servers' hovers stay alone
    for span, hit in shown.hits:
        if _inside(params.position, span):
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                            value=hover_markdown(hit, shown.here_probability, shown.query,
                                                                                 share=shown.share, top=shown.top,
                                                                                 here_why=shown.here_why)),
                               range=span)
    return None


@server.command(COMMAND_REINDEX)
def reindex(ls: NoulServer, *args) -> dict:
    for root in ls.roots:
        ls.indexer.scan(root)
    return {"queued": [str(r) for r in ls.roots]}


@server.command(COMMAND_STATUS)
def status(ls: NoulServer, *args) -> dict:
    return ls.status()


@server.command(COMMAND_ORG_DOCUMENT)
async def org_document(ls: NoulServer, *args) -> dict:
    """`{text}` of an organisation file, rebuilt from its chunks under the store's row-level security. A file
    that does not exist and one the role may not see get the same answer, so neither leaks."""
    from noul_lsp.lsp.convert import org_location
    from noul_lsp.team.schema import ENVIRONMENT, SharedStoreError, configured_store

    if len(args) == 2 and all(isinstance(a, str) and a for a in args):
        location = (args[0], args[1])  # (repository, path): VS Code's uris case-fold an authority
    else:
        location = org_location(args[0]) if len(args) == 1 and isinstance(args[0], str) else None
    if location is None:
        raise JsonRpcInvalidParams(f"{COMMAND_ORG_DOCUMENT} takes a noul-org:// uri, or a repository and a path")
    url = configured_store(ls.settings.team.shared_store)
    if not url:
        raise JsonRpcInvalidParams(f"no shared store is configured (sharedStore or ${ENVIRONMENT})")
    from noul_lsp.team.org import org_document_text

    try:
        text = await asyncio.get_running_loop().run_in_executor(ls.find_executor, org_document_text, url, *location)
    except SharedStoreError as error:
        raise JsonRpcException(str(error), REQUEST_FAILED) from None
    if text is None:
        raise JsonRpcInvalidParams(f"{args[0]}: no such file in the organisation index that you may see")
    return {"text": text}


@server.feature(types.SHUTDOWN)
def shutdown(ls: NoulServer, *args) -> None:
    ls.shutdown_all()


def _connect(parser: argparse.ArgumentParser, pipe: str | None, port: str | None) -> socket.socket:
    """The stream a client opened for us: with `--pipe` / `--socket` the client listens (a named pipe is a
    Unix socket on Linux and macOS) and the server connects, as vscode-languageclient expects."""
    try:
        if pipe is not None:
            if not hasattr(socket, "AF_UNIX"):
                parser.error("--pipe needs Unix sockets; use --stdio on this system")
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(pipe)
            return connection
        if port is None or not port.isdigit() or not 0 < int(port) < 65536:
            parser.error(f"--socket takes a port number, not {port!r}")
        return socket.create_connection(("127.0.0.1", int(port)))
    except OSError as error:
        parser.exit(1, f"noul-lsp: error: cannot connect to the client's {'pipe' if pipe else 'socket'}: {error}\n")


class _ClientWriter(StdoutWriter):
    """pygls' stdout writer, for an editor that may quit while requests are in flight: its closed pipe is said
    once in the log and nothing more is written (pygls logged each answer it could not send, and the error
    answer it tried instead, with a BrokenPipeError's traceback)."""

    def __init__(self, stdout) -> None:
        super().__init__(stdout)
        self.gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            super().write(data)
        except (BrokenPipeError, ConnectionResetError, ValueError):  # ValueError: the stream is closed
            self.gone = True
            logger.info("the client closed the connection: answers still in flight are dropped")


class _WithoutPasswords(logging.Formatter):
    """pygls logs the client's settings whole (the initialisation options, every message in verbose mode),
    and `sharedStore` may hold a database password: it is taken out of each formatted record, its
    traceback included."""

    def format(self, record: logging.LogRecord) -> str:
        return without_passwords(super().format(record))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="noul-lsp", description="The noul language server (stdio by default).")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    transport.add_argument("--pipe", metavar="NAME", help="connect to the client's named pipe (Unix socket path)")
    transport.add_argument("--socket", metavar="PORT", help="connect to the client's socket on 127.0.0.1:PORT")
    parser.add_argument("--clientProcessId", "--client-process-id", dest="client_process_id", metavar="PID",
                        help="the editor's process id (accepted for vscode-languageclient; unused)")
    parser.add_argument("--log-file", help="write logs here (stdout belongs to the protocol)")
    parser.add_argument("--version", action="version", version=f"noul-lsp {__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(filename=args.log_file, level=logging.INFO if args.log_file else logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_WithoutPasswords("%(asctime)s %(name)s %(levelname)s %(message)s"))
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp takes HOST:PORT")
        server.start_tcp(host or "127.0.0.1", int(port))
    elif args.pipe is not None or args.socket is not None:
        connection = _connect(parser, args.pipe, args.socket)
        with connection, connection.makefile("rb") as reader, connection.makefile("wb", buffering=0) as writer:
            server.start_io(reader, writer)
    else:
        server.start_io()
    return server.exit_code
