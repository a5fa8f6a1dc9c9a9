"""Watching a workspace root for changes when the editor cannot tell us (watchfiles, Rust notify)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchfiles import watch


class RootWatcher:
    """Calls `on_change(relative paths)` from its own thread for every batch of changes under `root`."""

    def __init__(self, root: Path, on_change: Callable[[set[str]], None]) -> None:
        self.root = Path(root).resolve()
        self._stop = threading.Event()
        self._on_change = on_change
        self._thread = threading.Thread(target=self._run, name=f"noul-watch-{self.root.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for changes in watch(self.root, stop_event=self._stop, debounce=100, step=50, recursive=True,
                             raise_interrupt=False):
            paths = set()
            for _change, absolute in changes:
                try:
                    relative = Path(absolute).relative_to(self.root).as_posix()
                except ValueError:
                    continue
                if not relative.startswith(".git/"):
                    paths.add(relative)
            if paths:
                self._on_change(paths)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
