"""The roots an MCP server serves: one `Workspace` per root, one background indexer for all of them.

Roots come from the command line (`--path`, repeatable) and, when none was given there, from each
call's `path` (a folder opened on first use). With roots given on the command line they bound what a
call may name: a path outside them is refused, a folder or file inside one narrows the search to it.
Every root is indexed in the background (a full scan at start, then file changes seen by watchfiles); a
find answers from what is indexed, says what is pending, and waits only for a root's very first scan
(BM25 needs the files; embeddings fill in later). Nothing here knows MCP: errors are `CallError`s with
a message for the agent.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from noul_lsp import __version__
from noul_lsp.config import Settings
from noul_lsp.index.indexer import SETTINGS_KEY
from noul_lsp.models.registry import ModelMissing
from noul_lsp.retrieval.answer import DEFAULT_TOKEN_BUDGET, MIN_TOKEN_BUDGET, agent_answer, lines_from_disk
from noul_lsp.retrieval.engine import find_across
from noul_lsp.retrieval.result import FindResult, QueryError
from noul_lsp.retrieval.retrieve import NO_FILE_PASSES, scoped_globs
from noul_lsp.session.background import BackgroundIndexer
from noul_lsp.session.workspace import Workspace
from noul_lsp.store import IndexDamaged, StoreError, set_aside
from noul_lsp.team.schema import SharedStoreError, store_status
from noul_lsp.workspace.discovery import left_out, lists_folder, roots_served_by, serving_root
from noul_lsp.workspace.watch import RootWatcher

MAX_QUERY_CHARS = 65_536
MAX_LIMIT = 100
MAX_TOKEN_BUDGET = 200_000
MAX_GLOBS = 64
#: how long a find waits for the first scan of a root it is about to search
FIRST_SCAN_SECONDS = 30.0


#: what a call's path makes of the engine's note for a filter no indexed file passes (retrieve.NO_FILE_PASSES)
_NOT_INDEXED = ("nothing at {path} is in the index: its root's scan leaves it out (.gitignore, an exclude, "
                "its size or binary content), or has not reached it yet (see `pending`)")


def _too_broad(folder: Path) -> bool:
    """The file system's root, the home folder, or a folder above it: no project to search."""
    if folder == Path(folder.anchor):
        return True
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):  # no home known
        return False
    return home.is_relative_to(folder)


class CallError(Exception):
    """A call that cannot be answered as asked; the message says why and what to do instead."""


class RootSet:
    def __init__(self, settings: Settings, paths: Sequence[str | Path] = (), *, watch: bool = True) -> None:
        self.settings = settings
        self.workspaces: dict[Path, Workspace] = {}
        self.watchers: dict[Path, RootWatcher] = {}
        #: recent problems of the indexer (a busy or damaged index, a missing model), newest last
        self.problems: deque[str] = deque(maxlen=20)
        self._watch = watch
        self._lock = threading.RLock()
        self.indexer = BackgroundIndexer(on_problem=self.problems.append, on_damage=self.recover)
        try:
            for path in paths:
                self.open(Path(path))
        except BaseException:
            self.close()
            raise
        #: the roots from the command line, which bound every call's path (none: calls bring their roots)
        self.given = tuple(dict.fromkeys(Path(path).expanduser().resolve() for path in paths))

    # -- roots -------------------------------------------------------------------------------------

    def open(self, folder: Path) -> Workspace:
        """The workspace of `folder`, opened (and queued for a full scan) on first use. A folder inside an
        open root whose scan lists its files is served by that root (narrowed to it by the calls that name
        it); a folder around open roots takes the place of those it lists: a file is indexed once."""
        root = folder.expanduser().resolve()
        with self._lock:
            if root in self.workspaces:
                return self.workspaces[root]
            if (outer := serving_root(self.workspaces, root, self.settings.index)) is not None:
                return self.workspaces[outer]
            workspace = Workspace(root, self.settings)
            for inner in roots_served_by(root, list(self.workspaces), self.settings.index):
                self._close_root(inner)
            for problem in (workspace.store.rebuilt_reason,
                            workspace.embedder_problem and workspace.without_embedder(),
                            workspace.reranker_problem and f"not reranked: {workspace.reranker_problem}"):
                if problem:
                    self.problems.append(f"{root}: {problem}")
            self.workspaces[root] = workspace
            self.indexer.add(workspace)
            if self._watch:
                self.watchers[root] = RootWatcher(root, lambda paths: self.indexer.changed(root, paths))
            self.indexer.scan(root)
            return workspace

    def recover(self, workspace: Workspace, damage: IndexDamaged) -> None:
        """A root's index failed a check: set it aside (kept), say so once, reopen and rescan it."""
        with self._lock:
            root = workspace.root
            if self.workspaces.get(root) is not workspace:
                return  # already recovered
            self._close_root(root)
            self.problems.append(set_aside(damage.directory, damage.reason))
            self.open(root)

    def _close_root(self, root: Path) -> None:
        workspace = self.workspaces.pop(root, None)
        watcher = self.watchers.pop(root, None)
        if watcher is not None:
            watcher.stop()
        # closed by the indexer once its thread lets go of it (at once when idle), never under a write
        self.indexer.remove(root, workspace.close if workspace is not None else lambda: None)

    def close(self) -> None:
        self.indexer.stop()
        with self._lock:
            for root in list(self.workspaces):
                self._close_root(root)

    def _located(self, path: Path) -> tuple[Path, str] | None:
        for root in sorted(self.workspaces, key=lambda r: -len(r.parts)):
            if path == root or root in path.parents:
                return root, path.relative_to(root).as_posix() if path != root else ""
        return None

    def _repository_inside(self, root: Path, path: Path) -> Path | None:
        """The outermost repository of its own on the way from `root` to `path` (itself, when a folder) whose
        files the root's scan does not list (a clone or submodule inside a git work tree: git lists nothing
        in it); None when there is none, or when the root's excludes or ignore rules leave it out (an
        ignored clone under vendor/ stays out, as any ignored folder). A call naming one was narrowed to
        files the root's index never held, and answered that no file passes."""
        parts = path.relative_to(root).parts
        folders = parts if path.is_dir() else parts[:-1]
        for depth in range(1, len(folders) + 1):
            folder = root.joinpath(*folders[:depth])
            if (folder / ".git").exists() and not lists_folder(root, folder, self.settings.index):
                return None if left_out(root, folder, self.settings.index) else folder
        return None

    def resolve(self, path: str | None) -> tuple[list[Workspace], str, bool]:
        """The workspaces a call searches, the folder or file inside the root it names ("" for all of it),
        and whether that is a file."""
        if not path:
            with self._lock:
                if not self.workspaces:
                    raise CallError("no root to search yet: pass `path` (the project's folder), or start the "
                                    "server with --path")
                return list(self.workspaces.values()), "", False
        if "\0" in path:
            raise CallError("path: contains a NUL character")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            inside = [root / candidate for root in self.workspaces if (root / candidate).exists()]
            if len(inside) > 1:  # searching the first alone answered for one root as if for all
                raise CallError(f"path {path} is in several roots ({', '.join(str(c) for c in inside)}): give the "
                                "one you mean as an absolute path")
            candidate = inside[0] if inside else Path.cwd() / candidate
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            raise CallError(f"path {path}: no such file or folder") from None
        with self._lock:
            located = self._located(resolved)
            if located is not None:
                root, relative = located
                workspace = self.workspaces[root]
                # its files need an index of their own, as a root given for it has (and a repository in it, ...)
                while (repository := self._repository_inside(workspace.root, resolved)) is not None:
                    try:
                        opened = self.open(repository)
                    except (OSError, StoreError) as error:
                        raise CallError(f"cannot index {repository}: {error}") from None
                    if opened.root != repository:  # served by another root after all: nothing more to open
                        break
                    workspace = opened
                relative = resolved.relative_to(workspace.root).as_posix() if resolved != workspace.root else ""
                return [workspace], relative, resolved.is_file()
            if self.given:
                raise CallError(f"path {path} is outside the roots this server was started with "
                                f"({', '.join(str(r) for r in self.given)}); add it with another --path")
        if not resolved.is_dir():
            raise CallError(f"path {path}: not a folder (a new root must be a folder)")
        if _too_broad(resolved):  # one call would queue a scan of the whole disk, and wait 30 s on it
            raise CallError(f"path {path}: {resolved} is too broad to index as a root (the file system's root, "
                            "the home folder or one above it); give the project's folder")
        try:
            return [self.open(resolved)], "", False
        except (OSError, StoreError) as error:
            raise CallError(f"cannot index {resolved}: {error}") from None

    # -- tools -------------------------------------------------------------------------------------

    def find(self, query: str, *, path: str | None = None, limit: int = 10, mode: str = "files",
             include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
             token_budget: int = DEFAULT_TOKEN_BUDGET) -> dict:
        """The agent's answer (retrieval/answer.py) for `query` as a JSON-ready dict."""
        include, exclude = list(include or ()), list(exclude or ())
        _check_find(query, limit, mode, include, exclude, token_budget)
        organisation = self.settings.team.org and not path  # a call's path names what to search: that alone
        if organisation and not self.workspaces:  # no root yet: the organisation alone
            workspaces, relative, is_file = [], "", False
        else:
            workspaces, relative, is_file = self.resolve(path)
        self._wait_for_first_scan(workspaces)
        stale = not self.indexer.idle.is_set()
        with self._lock:
            try:
                search = self._find_with_org if organisation else find_across
                result = search(workspaces, query, limit=limit, mode=mode,
                                include=scoped_globs(include, relative, is_file=is_file), exclude=exclude,
                                stale=stale)
            except QueryError as error:
                raise CallError(str(error)) from None
            except SharedStoreError as error:  # the organisation alone, and it could not answer
                raise CallError(f"the organisation index could not be searched: {error}") from None
            except IndexDamaged as damage:
                for workspace in workspaces:
                    if workspace.store.directory == damage.directory:
                        self.recover(workspace, damage)
                raise CallError(f"{damage}: it was set aside and is being rebuilt; search again in a moment") from None
            except (StoreError, OSError) as error:
                raise CallError(f"the index could not be read: {error}") from None
            except ModelMissing as error:  # a damaged calibration or ranker file: its name and the cure
                raise CallError(str(error)) from None
        if relative and not include and not exclude:  # the filter is the call's path alone: say that
            result.notes[:] = [_NOT_INDEXED.format(path=relative + ("" if is_file else "/"))
                               if note.startswith(NO_FILE_PASSES) else note for note in result.notes]
        extra = {}
        pending = self._pending(result, workspaces)
        if pending:
            extra["pending"] = pending
        if relative:
            extra["scope"] = relative
        return agent_answer(result, token_budget, source=lines_from_disk, extra=extra).body

    def _find_with_org(self, workspaces: list[Workspace], query: str, **options) -> FindResult:
        """The roots and the organisation index together (`--org`): the team package only when asked for."""
        from noul_lsp.team.org import find_with_org

        return find_with_org(workspaces, query, self.settings, **options)

    def status(self) -> dict:
        roots = []
        with self._lock:
            for root, workspace in list(self.workspaces.items()):
                try:
                    state = workspace.state()
                except IndexDamaged as damage:
                    self.recover(workspace, damage)
                    roots.append({"root": str(root), "rebuilding": str(damage)})
                    continue
                except StoreError as error:
                    roots.append({"root": str(root), "unreadable": str(error)})
                    continue
                roots.append({"root": str(root), "files": state.files, "chunks": state.chunks,
                              "embedded": state.embedded, "pending": state.pending,
                              "scanned": self._scanned(workspace), "model": workspace.model_key,
                              "device": state.device, "reranker": workspace.reranker_name or None,
                              "index": str(workspace.store.directory),
                              **({"waitingFor": waiting} if (waiting := self.indexer.waiting.get(root)) else {})})
        return {"version": __version__, "indexing": not self.indexer.idle.is_set(),
                "rootsFrom": "command line" if self.given else "calls", "roots": roots,
                "problems": list(self.problems), **store_status(self.settings.team)}

    def reindex(self, path: str | None = None) -> dict:
        """Queue a full scan (then embedding) of the roots `path` names, or of every root."""
        workspaces, _, _ = self.resolve(path)
        for workspace in workspaces:
            self.indexer.scan(workspace.root)
        return {"queued": [str(w.root) for w in workspaces],
                "note": "scanning in the background; find answers meanwhile from the current index"}

    # -- helpers -----------------------------------------------------------------------------------

    @staticmethod
    def _scanned(workspace: Workspace) -> bool:
        """Whether a full scan of the root has ever finished (the indexer records its settings last)."""
        try:
            return workspace.store.meta(SETTINGS_KEY) is not None
        except StoreError:
            return False

    def _wait_for_first_scan(self, workspaces: list[Workspace]) -> None:
        """Wait (at most FIRST_SCAN_SECONDS) for each root's first pass of this process: an index reopened
        answers as it was when last open, and a file added meanwhile (a pull, a branch switch) was missing
        from the first find, which an agent read as "not here" (a rescan of an unchanged tree is seconds)."""
        deadline = time.monotonic() + FIRST_SCAN_SECONDS
        # (a root another process is updating is not waited for: its pass is that process's, maybe minutes)
        while not all(w.root in self.indexer.rescanned or w.root in self.indexer.waiting for w in workspaces) \
                and not self.indexer.idle.is_set():
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)

    def _pending(self, result: FindResult, workspaces: list[Workspace]) -> str:
        """What the answer could not see yet, in words ("" when nothing)."""
        parts = []
        unscanned = [str(w.root) for w in workspaces if not self._scanned(w)]
        rescanning = [str(w.root) for w in workspaces if self._scanned(w) and w.root not in self.indexer.rescanned]
        if unscanned:
            parts.append(f"still scanning {', '.join(unscanned)}: files not seen yet are missing")
        if rescanning:
            parts.append(f"still looking at {', '.join(rescanning)} again: files changed since it was last "
                         "indexed may be missing or old")
        parts.extend(f"{w.root}: {waiting}" for w in workspaces if (waiting := self.indexer.waiting.get(w.root)))
        index = result.index
        if index.pending:
            parts.append(f"{index.pending} of {index.chunks} chunks not embedded yet (word matching covers them, "
                         "meaning matching does not)")
        elif index.stale and not unscanned and not rescanning:
            parts.append("the index is being updated: files changed in the last seconds may be missing")
        return "; ".join(parts)


def _check_find(query, limit, mode, include, exclude, token_budget) -> None:
    if not isinstance(query, str) or not query.strip():
        raise CallError("query: empty; describe the code you are looking for")
    if len(query) > MAX_QUERY_CHARS:
        raise CallError(f"query: {len(query)} characters, at most {MAX_QUERY_CHARS}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise CallError(f"limit: an integer from 1 to {MAX_LIMIT}, not {limit!r}")
    if mode not in ("files", "chunks"):
        raise CallError(f"mode: 'files' or 'chunks', not {mode!r}")
    if isinstance(token_budget, bool) or not isinstance(token_budget, int) or \
            not MIN_TOKEN_BUDGET <= token_budget <= MAX_TOKEN_BUDGET:
        raise CallError(f"token_budget: an integer from {MIN_TOKEN_BUDGET} to {MAX_TOKEN_BUDGET}, not {token_budget!r}")
    for name, globs in (("include", include), ("exclude", exclude)):
        if len(globs) > MAX_GLOBS or not all(isinstance(g, str) and g.strip() and len(g) < 1000 for g in globs):
            raise CallError(f"{name}: at most {MAX_GLOBS} non-empty glob strings (gitignore syntax, relative to "
                            "the root)")
