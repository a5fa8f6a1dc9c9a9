"""Figures for the language server (not a test): round-trip latency of workspace/semanticFind against the
engine's own time, and the time from saving a new file to its first appearance in results.

    .venv/bin/python scripts/lsp_latency.py WORKSPACE_FOLDER [--finds 100]

Starts `python -m noul_lsp` over stdio with a pygls client (Neovim's capabilities: the server watches
files itself), waits for indexing to finish, then measures. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

QUERIES = ["retry failed requests with backoff", "where are cookies persisted between requests",
           "parse the url and its query string", "verify TLS certificates", "stream the response body in chunks",
           "encode form fields as a multipart body", "redirect handling and authentication", "proxy settings from environment"]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--finds", type=int, default=100)
    args = parser.parse_args()
    folder = Path(args.folder).resolve()
    cache = tempfile.mkdtemp(prefix="noul-lsp-latency-")
    client: LanguageClient = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "noul_lsp")
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"), workspace_folders=[types.WorkspaceFolder(from_fs_path(str(folder)), "w")],
        initialization_options={"noul": {"cacheDir": cache}}))
    started = time.monotonic()
    while True:
        reports = client.progress_reports.get("noul/indexing", [])
        if reports and isinstance(reports[-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.2)
    indexing_seconds = time.monotonic() - started
    round_trips, engine = [], []
    for i in range(args.finds + 5):
        query = QUERIES[i % len(QUERIES)]
        sent = time.perf_counter()
        result = await client.protocol.send_request_async("workspace/semanticFind", {"query": query})
        if i >= 5:  # warm-up
            round_trips.append((time.perf_counter() - sent) * 1000)
            engine.append(result.timings.total)
    target = folder / "noul_latency_probe.py"
    target.write_text("def zygomorphic_flux_capacitor_alignment():\n    \"\"\"Align the flux capacitor.\"\"\"\n    return 88\n")
    saved = time.perf_counter()
    while True:
        result = await client.protocol.send_request_async("workspace/semanticFind", {"query": "zygomorphic flux capacitor alignment", "limit": 1})
        if result.results and result.results[0].uri.endswith("noul_latency_probe.py"):
            save_to_found = time.perf_counter() - saved
            break
        await asyncio.sleep(0.02)
    target.unlink()
    await client.shutdown_session()
    print(json.dumps({"folder": str(folder), "finds": len(round_trips), "indexing_seconds": round(indexing_seconds, 1),
                      "round_trip_p50_ms": round(statistics.median(round_trips), 2),
                      "engine_total_p50_ms": round(statistics.median(engine), 2),
                      "overhead_p50_ms": round(statistics.median(r - e for r, e in zip(round_trips, engine, strict=True)), 2),
                      "save_to_first_result_s": round(save_to_found, 3)}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
