"""The search engine facade: one workspace root's store, indexer and query path.

A query runs BM25 over every chunk and cosine over the chunks embedded so far, fuses the two rankings by
reciprocal rank, and (in file mode) scores each file from its best chunks. Each stage is timed. The
engine knows nothing of LSP: the CLI, the benchmark and the language server all call `find`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from noul_lsp.config import Settings
from noul_lsp.index import Indexer
from noul_lsp.models.embedder import model_key
from noul_lsp.models.registry import ModelMissing, resolve_embedder
from noul_lsp.retrieval.corpus import Corpus, CorpusArrays
from noul_lsp.retrieval.dense import dense_top
from noul_lsp.retrieval.fusion import reciprocal_rank_fusion, top_k
from noul_lsp.retrieval.tokenize import query_terms
from noul_lsp.store import ChunkStore, cache_root, index_directory
from noul_lsp.workspace.discovery import gitignore_spec

LEGS = ("bm25", "dense")


class QueryError(ValueError):
    """The request itself is wrong (empty query, bad mode); the message says how."""


class FindCancelled(Exception):
    pass


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    rank: int
    score: float
    symbol: str
    preview: str
    kind: str
    bm25_rank: int | None = None
    dense_rank: int | None = None
    rerank_score: float | None = None
    probability: float | None = None
    #: in file mode, the line ranges of the file's best chunks (best first)
    ranges: list[tuple[int, int]] = field(default_factory=list)
    root: str = ""


@dataclass
class IndexState:
    files: int
    chunks: int
    embedded: int
    pending: int
    stale: bool
    model: str
    device: str


@dataclass
class FindResult:
    query: str
    hits: list[Hit]
    index: IndexState
    timings: dict[str, float]
    here_probability: float | None = None
    notes: list[str] = field(default_factory=list)

    def report(self) -> dict:
        """The agent report printed by `noul find --json`."""
        files: dict[str, list[list[int]]] = {}
        for hit in self.hits:
            files.setdefault(hit.path, []).extend([list(r) for r in (hit.ranges or [(hit.start_line, hit.end_line)])])
        return {
            "query": self.query,
            "hereProbability": self.here_probability,
            "files": files,
            "results": [
                {"path": h.path, "startLine": h.start_line, "endLine": h.end_line, "rank": h.rank,
                 "score": round(h.score, 6), "probability": h.probability, "symbol": h.symbol, "kind": h.kind,
                 "preview": h.preview,
                 "signals": {k: v for k, v in (("bm25Rank", h.bm25_rank), ("denseRank", h.dense_rank),
                                               ("rerankScore", h.rerank_score)) if v is not None}}
                for h in self.hits
            ],
            "index": asdict(self.index),
            "timings": {stage: round(ms, 2) for stage, ms in self.timings.items()},
            "notes": self.notes,
        }


def _preview(text: str) -> str:
    lines = [line.strip()[:160] for line in text.split("\n") if line.strip()]
    return "\n".join(lines[:2])


class Workspace:
    """One workspace root: its store, indexer, embedder (loaded on first need) and corpus."""

    def __init__(self, root: Path, settings: Settings) -> None:
        root = Path(root).expanduser()
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such folder")
        if not root.is_dir():
            raise NotADirectoryError(f"{root}: not a folder")
        self.root = root.resolve()
        self.settings = settings
        self.cache = cache_root(settings.cache_dir)
        self.store = ChunkStore(index_directory(self.root, settings.cache_dir), root=str(self.root))
        self.indexer = Indexer(self.root, self.store, settings.index)
        self._embedder = None
        self.embedder_problem: str | None = None
        try:
            self._embedder_spec = resolve_embedder(settings.models.embedder, self.cache)
        except ModelMissing as error:
            self._embedder_spec = None
            self.embedder_problem = str(error)
        self.corpus = Corpus(self.store, self.model_key)

    @property
    def model_key(self) -> str | None:
        """The key of this workspace's vectors (model id + token budget), known without loading the model;
        None when the embedder is missing (search is then lexical)."""
        if self._embedder_spec is None:
            return None
        return model_key(self._embedder_spec.model_id, self.settings.index.token_budget)

    def embedder(self):
        """The embedder, loaded on first use; None (with `embedder_problem` set) when it is missing."""
        if self._embedder is None and self._embedder_spec is not None:
            from noul_lsp.models.embedder import OnnxEmbedder

            self._embedder = OnnxEmbedder(self._embedder_spec, token_budget=self.settings.index.token_budget,
                                          use_gpu=self.settings.models.use_gpu,
                                          batch_size=self.settings.index.embed_batch)
        return self._embedder

    def close(self) -> None:
        self.store.close()

    def state(self, *, stale: bool = False) -> IndexState:
        self.corpus.sync()
        embedder = self._embedder
        return IndexState(files=self.corpus.file_count, chunks=self.corpus.chunk_count,
                          embedded=self.corpus.embedded_chunks,
                          pending=self.corpus.chunk_count - self.corpus.embedded_chunks, stale=stale,
                          model=self.settings.models.embedder,
                          device=embedder.device if embedder is not None else "not loaded")

    def find(self, query: str, *, limit: int | None = None, mode: str | None = None,
             include: Sequence[str] = (), exclude: Sequence[str] = (), stale: bool = False,
             legs: Sequence[str] = LEGS, query_vector: np.ndarray | None = None,
             should_stop: Callable[[], bool] = lambda: False) -> FindResult:
        """Ranked files (or chunks) for a description. `legs` picks the retrievers fused ("bm25",
        "dense"; the benchmark runs each alone as a baseline). `query_vector` reuses an embedding of the
        query made for another root with the same model. Raises QueryError for an unusable request and
        FindCancelled when `should_stop` turns true between stages."""
        unknown = set(legs) - set(LEGS)
        if unknown or not legs:
            raise QueryError(f"legs must be a non-empty subset of {', '.join(LEGS)}, not {list(legs)!r}")
        if not isinstance(query, str) or not query.strip():
            raise QueryError("the query is empty: describe the code you are looking for")
        search = self.settings.search
        limit = search.limit if limit is None else limit
        mode = search.mode if mode is None else mode
        if mode not in ("files", "chunks"):
            raise QueryError(f"mode must be 'files' or 'chunks', not {mode!r}")
        if not isinstance(limit, int) or limit < 1:
            raise QueryError(f"limit must be a positive integer, not {limit!r}")
        timings: dict[str, float] = {}
        notes: list[str] = []

        def stage(name: str, started: float) -> None:
            timings[name] = (time.perf_counter() - started) * 1000
            if should_stop():
                raise FindCancelled(name)

        started = time.perf_counter()
        self.corpus.sync()
        arrays = self.corpus.arrays()
        allowed = self._allowed_rows(arrays, include, exclude)
        stage("load", started)

        bm25_ranking = np.zeros(0, dtype=np.int32)
        if "bm25" in legs:
            started = time.perf_counter()
            ids = np.array([arrays.vocabulary[t] for t in query_terms(query) if t in arrays.vocabulary], dtype=np.int64)
            lexical = arrays.bm25.scores(ids)
            if allowed is not None:
                lexical = np.where(allowed, lexical, 0.0)
            bm25_ranking = top_k(lexical, search.candidates)
            stage("bm25", started)

        dense_ranking = np.zeros(0, dtype=np.int32)
        embedder = self.embedder() if len(arrays.dense_rows) and "dense" in legs else None
        if embedder is not None:
            if query_vector is None:
                started = time.perf_counter()
                query_vector = embedder.embed_query(query, max_windows=search.query_windows)
                stage("embed_query", started)
            started = time.perf_counter()
            dense_ranking, _ = dense_top(arrays.dense_matrix, arrays.dense_rows, query_vector, search.candidates, allowed)
            stage("dense", started)
        elif "dense" not in legs:
            pass
        elif self.embedder_problem:
            notes.append(f"lexical only: {self.embedder_problem}")
        elif not len(arrays.dense_rows) and arrays.rows:
            notes.append("lexical only: no chunk is embedded yet (run `noul index` or wait for the background pass)")

        started = time.perf_counter()
        fused = reciprocal_rank_fusion([r for r in (bm25_ranking, dense_ranking) if len(r)], search.rrf_k)
        bm25_rank = {row: rank for rank, row in enumerate(bm25_ranking.tolist(), 1)}
        dense_rank = {row: rank for rank, row in enumerate(dense_ranking.tolist(), 1)}
        chunk_order = sorted(fused, key=lambda row: -fused[row])
        stage("fuse", started)

        started = time.perf_counter()
        hits = (self._file_hits if mode == "files" else self._chunk_hits)(arrays, chunk_order, fused, limit)
        for hit_rows, hit in hits:
            hit.bm25_rank = bm25_rank.get(hit_rows[0])
            hit.dense_rank = dense_rank.get(hit_rows[0])
        self._attach_previews(arrays, hits)
        stage("aggregate", started)
        timings["total"] = sum(timings.values())
        return FindResult(query, [hit for _, hit in hits], self.state(stale=stale), timings, None, notes)

    def _allowed_rows(self, arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> np.ndarray | None:
        if not include and not exclude:
            return None
        allowed_files = np.ones(len(arrays.files), dtype=bool)
        if include:
            spec = gitignore_spec(include)
            allowed_files &= np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
        if exclude:
            spec = gitignore_spec(exclude)
            allowed_files &= ~np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
        return allowed_files[arrays.row_file] if len(arrays.row_file) else np.zeros(0, dtype=bool)

    def _file_hits(self, arrays: CorpusArrays, order: list[int], fused: dict[int, float], limit: int):
        weights = self.settings.search.file_chunk_weights
        by_file: dict[int, list[int]] = {}
        for row in order:
            by_file.setdefault(int(arrays.row_file[row]), []).append(row)
        scored = []
        for file_id, rows in by_file.items():
            score = sum(w * fused[r] for w, r in zip(weights, rows, strict=False))
            scored.append((score, file_id, rows))
        scored.sort(key=lambda item: -item[0])
        hits = []
        for rank, (score, file_id, rows) in enumerate(scored[:limit], 1):
            best = arrays.entries[rows[0]]
            ranges = [(arrays.entries[r].start_line, arrays.entries[r].end_line) for r in rows[:3]]
            hit = Hit(arrays.files[file_id], best.start_line, best.end_line, rank, score, best.symbol, "", best.kind,
                      ranges=ranges, root=str(self.root))
            hits.append((rows, hit))
        return hits

    def _chunk_hits(self, arrays: CorpusArrays, order: list[int], fused: dict[int, float], limit: int):
        hits = []
        for rank, row in enumerate(order[:limit], 1):
            entry = arrays.entries[row]
            hits.append(([row], Hit(entry.path, entry.start_line, entry.end_line, rank, fused[row], entry.symbol, "",
                                    entry.kind, ranges=[(entry.start_line, entry.end_line)], root=str(self.root))))
        return hits

    def _attach_previews(self, arrays: CorpusArrays, hits) -> None:
        keys = [arrays.keys[rows[0]] for rows, _ in hits]
        texts = {record.key: record.text for record in self.store.chunks(keys)}
        for (_rows, hit), key in zip(hits, keys, strict=True):
            hit.preview = _preview(texts.get(key, ""))


def find_across(workspaces: Sequence[Workspace], query: str, *, limit: int | None = None, **options) -> FindResult:
    """One ranking over several workspace roots (a multi-root editor window).

    Each root is searched on its own and the hits are merged by score: fused scores are sums of
    reciprocal ranks, so they are on the same scale in every root. Timings add up per stage; the index
    state adds up too."""
    if len(workspaces) == 1:
        return workspaces[0].find(query, limit=limit, **options)
    vectors: dict[str, np.ndarray] = {}  # one query embedding per model, shared by the roots using it
    embed_ms = 0.0
    results = []
    for workspace in workspaces:
        key = workspace.model_key
        if key is not None and key not in vectors and "dense" in options.get("legs", LEGS) and workspace.embedder():
            started = time.perf_counter()
            vectors[key] = workspace.embedder().embed_query(query, max_windows=workspace.settings.search.query_windows)
            embed_ms += (time.perf_counter() - started) * 1000
        results.append(workspace.find(query, limit=limit, query_vector=vectors.get(key), **options))
    limit = limit if limit is not None else workspaces[0].settings.search.limit
    hits = sorted((h for r in results for h in r.hits), key=lambda h: -h.score)[:limit]
    for rank, hit in enumerate(hits, 1):
        hit.rank = rank
    timings: dict[str, float] = {"embed_query": embed_ms} if vectors else {}
    for result in results:
        for stage, ms in result.timings.items():
            timings[stage] = timings.get(stage, 0.0) + ms
    if "total" in timings:
        timings["total"] += embed_ms
    states = [r.index for r in results]
    index = IndexState(sum(s.files for s in states), sum(s.chunks for s in states), sum(s.embedded for s in states),
                       sum(s.pending for s in states), any(s.stale for s in states), states[0].model, states[0].device)
    notes = list(dict.fromkeys(n for r in results for n in r.notes))
    return FindResult(query, hits, index, timings, None, notes)
