"""Multi-root search with one shared embedder or one per root (not a test): peak RSS and latency.

    .venv/bin/python scripts/multiroot_probe.py shared|separate TREES_DIR CACHE_DIR [--token-budget 128]

TREES_DIR holds one folder per workspace root already indexed in CACHE_DIR (e.g. a `noul bench` work
folder's trees/ and cache/). Prints peak RSS and the dense/total p50 of three rounds of 60 finds.
"""

import argparse
import resource
import statistics
from pathlib import Path

from noul_lsp.config import IndexSettings, Settings
from noul_lsp.models import embedder
from noul_lsp.retrieval import engine
from noul_lsp.retrieval.engine import find_across
from noul_lsp.session.workspace import Workspace

QUERIES = ["queue a one-time notice for the user", "retry uploads with backoff", "parse the ini config",
           "cookie jar persistence"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("shared", "separate"))
    parser.add_argument("trees")
    parser.add_argument("cache")
    parser.add_argument("--token-budget", type=int, default=128)
    args = parser.parse_args()
    if args.mode == "separate":  # what each root did before embedders were shared
        engine.shared_embedder = lambda spec, **options: embedder.OnnxEmbedder(spec, **options)
    settings = Settings(IndexSettings(token_budget=args.token_budget), cache_dir=args.cache)
    roots = [Workspace(p, settings) for p in sorted(Path(args.trees).iterdir())]
    for root in roots:
        root.embedder().embed_documents(["warm up"] * 32)
    rounds = []
    for _ in range(3):
        timings = [find_across(roots, QUERIES[i % len(QUERIES)]).timings for i in range(60)]
        rounds.append((round(statistics.median(t["dense"] for t in timings), 2),
                       round(statistics.median(t["total"] for t in timings), 2)))
    print({"mode": args.mode, "roots": len(roots), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
           "dense_total_p50_ms_per_round": rounds})


if __name__ == "__main__":
    main()
