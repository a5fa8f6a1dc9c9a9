"""Rerank latency per query: 20 (query, chunk) pairs x 256 tokens through the engine's CrossEncoder, for the
three reranker sizes (MiniLM-L6 as ms-marco-MiniLM-L-6-v2, base 12x768 as bge-reranker-base, large 24x1024
as bge-reranker-v2-m3), fp32 (eager export, fused) and int8 (per channel, fused), random weights.

Random weights time like trained ones: the work depends on the shapes. base and large use the XLM-R graph
with a small vocabulary (the embedding table is a lookup, not compute); the int8 files here are not
agreement-checked (random logits do not agree with anything; `noul models export --int8` checks real ones).

    python scripts/rerank_latency.py --work /tmp/rerank-latency [--sizes minilm-l6,base,large] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from noul_lsp.models.cross_encoder import CrossEncoder
from noul_lsp.models.export import FP32_FILE, INT8_FILE, export_model, quantize_int8
from noul_lsp.models.registry import reranker_from_directory

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from random_checkpoints import build_checkpoint  # noqa: E402  (a test helper: needs the export extra)

ARCHITECTURE = {"minilm-l6": "bert", "base": "xlm-roberta", "large": "xlm-roberta"}


def pairs(count: int = 20) -> tuple[str, list[str]]:
    """A query and `count` chunks long enough that every pair fills the 256-token limit."""
    source = Path(__file__).resolve().parents[1] / "noul_lsp" / "retrieval" / "engine.py"
    text = source.read_text()
    step = len(text) // count
    return "where do we retry failed uploads with backoff", [text[i * step : i * step + 4000] for i in range(count)]


def measure(directory: Path, file: str, runs: int) -> dict:
    spec = reranker_from_directory(directory)
    spec = type(spec)(spec.model_id, directory / file, spec.tokenizer_path, spec.max_tokens)
    encoder = CrossEncoder(spec, max_length=256, batch_size=20, use_gpu=True)
    query, documents = pairs()
    encoder.score(query, documents)  # warm-up: session arenas, thread pool
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        encoder.score(query, documents)
        times.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1), "runs": runs,
            "device": encoder.device, "file_mb": round(os.path.getsize(directory / file) / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="/tmp/rerank-latency")
    parser.add_argument("--sizes", default="minilm-l6,base,large")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(args.work)
    rows = []
    for size in args.sizes.split(","):
        checkpoint = work / f"{size}-checkpoint"
        onnx_dir = work / f"{size}-onnx"
        if not (onnx_dir / INT8_FILE).is_file():
            build_checkpoint(checkpoint, architecture=ARCHITECTURE[size], kind="reranker", shape=size)
            export_model(checkpoint, onnx_dir, optimize=True)
            quantize_int8(onnx_dir / FP32_FILE, onnx_dir / INT8_FILE)
        for precision, file in (("fp32", FP32_FILE), ("int8", INT8_FILE)):
            row = {"size": size, "precision": precision, **measure(onnx_dir, file, args.runs)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(json.dumps({"machine": f"{platform.machine()}, {os.cpu_count()} cores", "pairs": 20, "tokens": 256,
                      "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
