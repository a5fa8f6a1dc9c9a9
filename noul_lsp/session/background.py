"""The server's indexing thread: one queue of work for every workspace root.

Jobs are full scans (at start, on `noul.reindex`) and batches of changed paths (from the client's
`workspace/didChangeWatchedFiles` or from watchfiles). Changes are debounced, applied with an
incremental update (BM25 sees them at once), then embeddings are filled batch by batch; a new job
interrupts the embedding between batches, so a saved file becomes searchable without waiting for a
long cold embedding to finish. Nothing here knows LSP: progress goes through a callback.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from noul_lsp.models.registry import ModelMissing
from noul_lsp.session.workspace import Workspace
from noul_lsp.store import IndexDamaged, IndexLocked, StoreError
from noul_lsp.workspace.discovery import exclusion_spec
from noul_lsp.workspace.watch import asks_full_scan

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.15
#: how often a job whose index another process is updating is tried again (a second editor's server, a
#: `noul index` in a terminal): that process's pass serves both, and this one picks up what is left
LOCKED_RETRY_SECONDS = 2.0


@dataclass
class Progress:
    """What the indexer is doing, for `$/progress` and status."""

    phase: str  # "scanning", "embedding", "idle"
    root: str = ""
    files: int = 0
    chunks: int = 0
    embedded: int = 0
    pending: int = 0

    @property
    def message(self) -> str:
        share = f"{self.embedded / self.chunks:.0%}" if self.chunks else "0%"
        where = f"{Path(self.root).name or self.root}: " if self.root else ""  # with several roots, which one
        return f"{where}{self.phase}: {self.files} files, {self.chunks} chunks, {share} embedded"

    @property
    def percentage(self) -> int:
        return int(100 * self.embedded / self.chunks) if self.chunks else 0


@dataclass
class _Job:
    root: Path
    paths: set[str] | None = None  # None: a full scan

    def merge(self, other: _Job) -> None:
        """Take in a later job of the same root: its paths, or a full scan."""
        if self.paths is not None:
            self.paths = None if other.paths is None else self.paths | other.paths


class BackgroundIndexer:
    def __init__(self, *, on_progress: Callable[[Progress], None] = lambda p: None,
                 on_problem: Callable[[str], None] = lambda m: None,
                 on_damage: Callable[[Workspace, IndexDamaged], None] | None = None) -> None:
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        #: roots a whole pass has looked at in this process: before, an index reopened is as it was when it
        #: was last open, whatever changed on disk meanwhile (a pull, a branch switch)
        self.rescanned: set[Path] = set()
        #: the thread is looking over an index that holds files for what changed since it was written (a whole
        #: pass, as on opening a workspace indexed before), not building one: a find meanwhile reads an index
        #: that may well be current, and an editor says "checking for changes", not "still indexing"
        self.checking = False
        self._workspaces: dict[Path, Workspace] = {}
        self._lock = threading.Lock()
        #: held while the thread works on a workspace: a root removed meanwhile is closed when it is let go
        #: (never under a write; the work stops at its next batch once the root is gone)
        self._working = threading.Lock()
        self._closing: list[Callable[[], None]] = []
        self.on_progress = on_progress
        self.on_problem = on_problem
        #: told when a root's index fails a check (the owner sets it aside and rescans)
        self.on_damage = on_damage or (lambda workspace, damage: on_problem(str(damage)))
        #: roots whose index another process is updating, with who: their jobs are tried again
        #: every LOCKED_RETRY_SECONDS, and `idle` waits for them
        self.waiting: dict[Path, str] = {}
        self._retries: dict[Path, _Job] = {}  # the one retry pending per waiting root
        self.idle = threading.Event()
        self.idle.set()
        self._thread = threading.Thread(target=self._run, name="noul-indexer", daemon=True)
        self._stopping = False
        self._thread.start()

    def add(self, workspace: Workspace) -> None:
        workspace.indexed_in_background = True
        with self._lock:
            self._workspaces[workspace.root] = workspace

    def remove(self, root: Path, close: Callable[[], None] = lambda: None) -> None:
        """Forget `root`, and call `close` once the thread no longer uses it: at once when it is idle, else
        right after its current piece of work (which stops at its next batch). Never waits: a scan of a
        large root in progress must not freeze the caller (the editor's event loop)."""
        with self._lock:
            self._workspaces.pop(root, None)
            self.waiting.pop(root, None)
            self.rescanned.discard(root)  # a root opened again waits for its own first pass again
            self._closing.append(close)
        if threading.current_thread() is not self._thread and self._working.acquire(blocking=False):
            try:
                self._close_pending()
            finally:
                self._working.release()

    def _close_pending(self) -> None:
        with self._lock:
            closing, self._closing = self._closing, []
        for close in closing:
            try:
                close()
            except Exception as error:  # a close must not kill the indexing thread
                logger.warning("closing a removed root failed: %s", error)

    @contextmanager
    def _busy(self) -> Iterator[None]:
        """Held while the thread works on a workspace; the roots removed meanwhile are closed after it."""
        with self._working:
            yield
            self._close_pending()

    def _gone(self, workspace: Workspace) -> bool:
        return self._stopping or self._workspace(workspace.root) is not workspace

    def scan(self, root: Path) -> None:
        """Queue a full scan of `root`; `idle` is set again once it and its embedding are done."""
        self.idle.clear()
        self._queue.put(_Job(root))

    def changed(self, root: Path, paths: set[str]) -> None:
        """Queue a look at these root-relative paths; a whole pass when one of them is an ignore rule or
        tells of a branch switch (`asks_full_scan`)."""
        asking = [path for path in paths if asks_full_scan(path)]
        if asking and (workspace := self._workspace(root)) is not None:
            # not an ignore file in a folder the scan leaves out (.venv/.gitignore, node_modules/*/.gitignore)
            excluded = exclusion_spec(root, workspace.settings.index)
            asking = [path for path in asking if path.startswith(".git/") or not excluded.match_file(path)]
        if asking:
            self.scan(root)
            return
        self.idle.clear()
        self._queue.put(_Job(root, set(paths)))

    def stop(self) -> None:
        self._stopping = True
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _next_batch(self, first: _Job) -> list[_Job]:
        """The first job plus all arriving within the debounce window, merged per root."""
        jobs = [first]
        deadline = time.monotonic() + DEBOUNCE_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:
                job = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if job is None:
                self._stopping = True
                break
            jobs.append(job)
        merged: dict[Path, _Job] = {}
        for job in jobs:
            merged.setdefault(job.root, _Job(job.root, set())).merge(job)
        return list(merged.values())

    def _run(self) -> None:
        while not self._stopping:
            first = self._queue.get()
            if first is None:
                break
            try:
                self._work(first)
            except Exception as error:  # a slip of ours must not end indexing for the session: said, logged, on
                logger.exception("the background indexer failed")
                self.on_problem(f"background indexing failed ({type(error).__name__}: {error}); it goes on with "
                                "the next change")
                if self._queue.empty():
                    self.idle.set()

    def _work(self, first: _Job) -> None:
        for job in self._next_batch(first):
            with self._busy():
                self._update(job)
        self._prepare_levels(filling_in=True)
        finished = self._embed()
        if finished and self._queue.empty() and not self.waiting:
            self.idle.set()
            self.on_progress(Progress("idle"))
            self._prepare_levels()

    def _workspace(self, root: Path) -> Workspace | None:
        with self._lock:
            return self._workspaces.get(root)

    def _update(self, job: _Job) -> None:
        workspace = self._workspace(job.root)
        if workspace is None:
            self.waiting.pop(job.root, None)
            return
        try:
            with workspace.store.indexing_lock():
                self.waiting.pop(job.root, None)
                paths = sorted(job.paths) if job.paths is not None else None
                # a whole pass over an index that holds files: what a server does on opening a workspace
                # indexed before, which finds nothing changed as often as not (`checking`)
                self.checking = paths is None and workspace.corpus.file_count > 0
                self.on_progress(Progress("scanning", str(job.root)))
                try:
                    report = workspace.indexer.update(paths=paths)
                finally:
                    self.checking = False
                if paths is None:
                    self.rescanned.add(job.root)
                if self._gone(workspace):
                    return
                workspace.embed_static(should_stop=lambda: self._gone(workspace))  # every chunk dense at once
                if paths is None:  # a whole pass (opening, a rescan): the next open starts from here
                    problem = workspace.checkpoint()
                    if problem:
                        self.on_problem(problem)
                if report.skipped and paths is None:
                    logger.info("%s: %d files skipped (binary, too large or unreadable)", job.root, len(report.skipped))
        except IndexLocked as busy:
            self._wait_for_other(job, busy)
        except IndexDamaged as damage:
            self.on_damage(workspace, damage)
        except (StoreError, OSError) as error:
            self.on_problem(f"indexing {job.root} failed: {error}")

    def _wait_for_other(self, job: _Job, busy: IndexLocked) -> None:
        """Another process holds the root's index (a second editor's server on the same folder, `noul index`
        in a terminal): not a problem to show on every save. Its pass serves this process too (a find reads
        what it wrote); the job is tried again every LOCKED_RETRY_SECONDS for what it leaves. One retry per
        root is pending at a time: later jobs (saves meanwhile) are merged into it."""
        with self._lock:
            if job.root not in self.waiting:
                logger.info("%s: trying again every %gs", busy, LOCKED_RETRY_SECONDS)
            self.waiting[job.root] = str(busy)
            pending = self._retries.get(job.root)
            if pending is not None:
                pending.merge(job)
                return
            self._retries[job.root] = _Job(job.root, set())
            self._retries[job.root].merge(job)

        def again() -> None:  # (a root removed meanwhile: `_update` forgets it waited)
            with self._lock:
                retry = self._retries.pop(job.root, None)
            if retry is not None and not self._stopping:
                self._queue.put(retry)

        timer = threading.Timer(LOCKED_RETRY_SECONDS, again)
        timer.daemon = True
        timer.start()

    def _embed(self) -> bool:
        """Fill embeddings for every root until done or until new work arrives; True when all done."""
        with self._lock:
            workspaces = list(self._workspaces.values())
        for workspace in workspaces:
            with self._busy():  # a root removed meanwhile is closed after this, not under a write
                if self._gone(workspace):
                    continue
                done = self._embed_one(workspace)
            if not done:
                return False
        return True

    def _prepare_levels(self, *, filling_in: bool = False) -> None:
        """Measure each root's level (reference.py) once its index is complete, so that the first description
        asked need not (an index built before levels were kept is measured here, once). After `idle` is set:
        the index is not being updated meanwhile, and a find then does not say it is; newer work comes first.
        `filling_in`: only the roots whose transformer has chunks to embed, before it starts: their finds read
        the static leg's evidence until it is done (minutes on a large repository), against a level of its own."""
        with self._lock:
            workspaces = list(self._workspaces.values())
        for workspace in workspaces:
            if not self._queue.empty():
                return
            with self._busy():  # a root removed meanwhile is closed after this
                if self._gone(workspace) or (filling_in and not workspace.state().pending):
                    continue
                try:
                    workspace.prepare_level()
                except IndexDamaged as damage:
                    self.on_damage(workspace, damage)
                except (StoreError, OSError, ModelMissing) as error:  # ModelMissing: a damaged fitted file
                    self.on_problem(f"measuring the level of {workspace.root} failed: {error}")

    def _embed_one(self, workspace: Workspace) -> bool:
        """Embed one root's missing vectors; False when stopped for newer work."""
        embedder = workspace.embedder()
        if embedder is None:
            return True
        state = workspace.state()

        def report(done: int, total: int) -> None:
            self.on_progress(Progress("embedding", str(workspace.root), state.files, state.chunks,
                                      state.embedded + done, total - done))

        try:
            with workspace.store.indexing_lock():
                result = workspace.embed_missing(
                    embedder, progress=report, should_stop=lambda: not self._queue.empty() or self._gone(workspace))
        except IndexLocked as busy:
            self._wait_for_other(_Job(workspace.root, set()), busy)  # an empty batch: then the embedding
            return True
        except IndexDamaged as damage:
            self.on_damage(workspace, damage)
            return True
        except (StoreError, OSError) as error:
            self.on_problem(f"embedding {workspace.root} failed: {error}")
            return True
        return not result.stopped
