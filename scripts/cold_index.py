"""Seconds from a cold cache until every chunk of a folder has a dense leg (the static model's vectors).

    python scripts/cold_index.py /path/to/pylint [--static noul-code-static-v2]

In a fresh cache folder: open the workspace, scan and chunk every file (BM25 complete), then give every
chunk its static vector, as `noul index` and the language server do before the transformer starts.
Prints each step's seconds, their sum, and the static pass's chunks per second; then one find, to show
the answer comes from every chunk.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from noul_lsp.config import ModelSettings, Settings
from noul_lsp.session.workspace import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--static", default="")
    parser.add_argument("--query", default="where are the checker's messages registered")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        settings = replace(Settings(cache_dir=cache), models=ModelSettings(static=args.static))
        started = time.perf_counter()
        workspace = Workspace(Path(args.path), settings)
        opened = time.perf_counter()
        update = workspace.indexer.update()
        scanned = time.perf_counter()
        static = workspace.embed_static()
        done = time.perf_counter()
        if static is None:
            raise SystemExit(f"no static leg: {workspace.static_problem or 'turned off'}")
        print(f"open {opened - started:.2f} s, scan + chunk {scanned - opened:.2f} s ({update.files_indexed} files, "
              f"{update.chunks_added} chunks), static vectors {done - scanned:.2f} s ({static.embedded} texts, "
              f"{static.rate:.0f} chunks/s); every chunk dense after {done - started:.2f} s")
        result = workspace.find(args.query, limit=3)
        print(f"find: {result.signals['denseLegs']}; {result.timings['total']:.0f} ms; "
              + ", ".join(h.path for h in result.hits))
        workspace.close()


if __name__ == "__main__":
    main()
