"""Memory of a cold index, step by step: which step sets the peak, and how much of it is the index's
mapped pages rather than allocations.

    python scripts/index_memory.py /path/to/folder [--cache DIR]

In a fresh cache folder (or DIR): the files' update, the corpus's first full read, the static pass and
the checkpoint, as `noul index` runs them. After each step, and as a peak sampled every 50 ms during it,
it prints `/proc/self/status`: anonymous memory (RssAnon: allocations) and file-backed memory (RssFile:
mostly LMDB pages, which the kernel can drop). `ru_maxrss`, which counts both, is printed too. Linux only.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import threading
import time
from pathlib import Path

from noul_lsp.config import Settings
from noul_lsp.session.workspace import Workspace

FIELDS = ("RssAnon", "RssFile")


def _status() -> dict[str, int]:
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in FIELDS:
                found[name] = int(value.split()[0]) // 1024
    return found


class _Peak:
    """The highest RssAnon and RssFile seen while a step runs."""

    def __init__(self) -> None:
        self.peak = dict.fromkeys(FIELDS, 0)
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while self._running:
            for name, value in _status().items():
                self.peak[name] = max(self.peak[name], value)
            time.sleep(0.05)

    def stop(self) -> dict[str, int]:
        self._running = False
        self._thread.join()
        return self.peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--cache", help="a cache folder to index into (default: a fresh temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace(Path(args.path), Settings(cache_dir=args.cache or scratch))
        steps = {"update": workspace.indexer.update, "corpus_read": workspace.corpus.sync,
                 "static": workspace.embed_static, "checkpoint": workspace.checkpoint}
        with workspace.store.indexing_lock():
            for name, step in steps.items():
                started, peak = time.perf_counter(), _Peak()
                step()
                during = peak.stop()
                print(json.dumps({"step": name, "seconds": round(time.perf_counter() - started, 1),
                                  "peak_anon_mb": during["RssAnon"], "peak_file_mb": during["RssFile"],
                                  "after": _status(),
                                  "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
        print(json.dumps({"chunks": workspace.corpus.chunk_count}))
        workspace.close()


if __name__ == "__main__":
    main()
