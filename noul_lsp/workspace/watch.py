"""Watching a workspace root for changes when the editor cannot tell us (watchfiles, Rust notify)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchfiles import Change, DefaultFilter, watch

#: changes after which a root is listed whole again, not only at the paths named: an ignore rule decides about
#: files that did not change (a folder newly ignored stayed in results for the session), and a branch switch
#: or a reset may reach a watcher as a few folders' events (files changed and never looked at)
_RESCAN_GIT_FILES = frozenset({".git/HEAD", ".git/ORIG_HEAD", ".git/info/exclude"})
_RESCAN_NAMES = frozenset({".gitignore", ".noulignore"})


def asks_full_scan(relative: str) -> bool:
    """Whether a change at this root-relative path calls for a whole pass (stat-only for what is unchanged)."""
    return relative in _RESCAN_GIT_FILES or relative.rsplit("/", 1)[-1] in _RESCAN_NAMES


def worth_telling(relative: str) -> bool:
    """Whether a change at this path is news to the indexer: git's own files are not, but those that tell of
    a branch switch or an ignore rule."""
    return not relative.startswith(".git/") or relative in _RESCAN_GIT_FILES


class _TellingFilter(DefaultFilter):
    """watchfiles' default filter (no .git/, caches, editors' swap files), but git's files that tell of a
    branch switch or an ignore rule (`asks_full_scan`), which the default drops with the rest of .git/."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self._git_files = {str(root / relative) for relative in _RESCAN_GIT_FILES}

    def __call__(self, change: Change, path: str) -> bool:
        return path in self._git_files or super().__call__(change, path)


class RootWatcher:
    """Calls `on_change(relative paths)` from its own thread for every batch of changes under `root`."""

    def __init__(self, root: Path, on_change: Callable[[set[str]], None]) -> None:
        self.root = Path(root).resolve()
        self._stop = threading.Event()
        self._on_change = on_change
        self._thread = threading.Thread(target=self._run, name=f"noul-watch-{self.root.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for changes in watch(self.root, watch_filter=_TellingFilter(self.root), stop_event=self._stop, debounce=100,
                             step=50, recursive=True, raise_interrupt=False):
            paths = set()
            for _change, absolute in changes:
                try:
                    relative = Path(absolute).relative_to(self.root).as_posix()
                except ValueError:
                    continue
                paths.add(relative)  # (the filter let through only what is worth telling)
            if paths:
                self._on_change(paths)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
