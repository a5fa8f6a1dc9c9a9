"""The search engine facade: one workspace root's store, indexer and query path.

A query runs BM25 over every chunk and cosine over the chunks embedded so far, fuses the two rankings by
reciprocal rank, lets a cross-encoder re-score a short list when one is configured, and (in file mode)
scores each file from its best chunks. Each stage is timed. The
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
from noul_lsp.models.choice import NO_RERANKER, ModelChoice, workspace_choice
from noul_lsp.models.cross_encoder import CrossEncoder, ScoringStopped, shared_cross_encoder
from noul_lsp.models.embedder import model_key, shared_embedder
from noul_lsp.models.registry import DEFAULT_EMBEDDER, ModelMissing, resolve_embedder, resolve_reranker
from noul_lsp.retrieval.bm25 import bm25_idf
from noul_lsp.retrieval.calibrate import (
    CALIBRATED_LEGS,
    Calibration,
    hit_features,
    load_calibration,
    pair_name,
    query_features,
)
from noul_lsp.retrieval.corpus import Corpus, CorpusArrays
from noul_lsp.retrieval.dense import dense_top
from noul_lsp.retrieval.fusion import reciprocal_rank_fusion, top_k
from noul_lsp.retrieval.rerank import reranked_scores, shortlist
from noul_lsp.retrieval.tokenize import query_terms
from noul_lsp.store import ChunkRecord, ChunkStore, cache_root, index_directory
from noul_lsp.workspace.discovery import gitignore_spec
from noul_lsp.workspace.project import project_names

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
    #: the result-list features P(here) is computed from (the benchmark records them for calibration)
    features: dict[str, float] = field(default_factory=dict)
    #: how the answer was made: which reranker ran and on what device, or why it was skipped
    signals: dict[str, str] = field(default_factory=dict)
    #: the embedder+reranker pair the answer was made with (calibration files are per pair)
    pair: str = ""

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
            "signals": self.signals,
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
        self.choice_problem: str | None = None
        try:
            choice = workspace_choice(self.root, self.cache)
        except ValueError as error:  # an unreadable choices file: keep the defaults, and say why
            choice = ModelChoice()
            self.choice_problem = str(error)
        self.embedder_name = settings.models.embedder or choice.embedder or DEFAULT_EMBEDDER
        reranker_name = settings.models.reranker or choice.reranker
        #: the configured cross-encoder, "" when none
        self.reranker_name = "" if reranker_name == NO_RERANKER else reranker_name
        try:
            self._embedder_spec = resolve_embedder(self.embedder_name, self.cache)
        except ModelMissing as error:
            self._embedder_spec = None
            self.embedder_problem = str(error)
        self._reranker: CrossEncoder | None = None
        self.reranker_problem: str | None = None
        self._reranker_spec = None
        if self.reranker_name:
            try:
                self._reranker_spec = resolve_reranker(self.reranker_name, self.cache)
            except ModelMissing as error:
                self.reranker_problem = str(error)
        self.corpus = Corpus(self.store, self.model_key)
        #: what people call this project (a P(here) feature)
        self.project_names = project_names(self.root)
        self._calibrations: dict[str, Calibration | None] = {}  # per pair, looked up once
        #: (arrays, (include, exclude), row mask) of the last filtered query
        self._allowed_cache: tuple[CorpusArrays, tuple, np.ndarray] | None = None

    @property
    def model_key(self) -> str | None:
        """The key of this workspace's vectors (model id + token budget), known without loading the model;
        None when the embedder is missing (search is then lexical)."""
        if self._embedder_spec is None:
            return None
        return model_key(self._embedder_spec.model_id, self.settings.index.token_budget)

    @property
    def model_pair(self) -> str:
        """The configured embedder+reranker pair (a find that skips the reranker runs as embedder+none)."""
        reranker = self._reranker_spec.model_id if self._reranker_spec is not None else ""
        return pair_name(self.model_key, reranker)

    def calibration(self, pair: str) -> Calibration | None:
        """The calibration fitted for exactly this embedder+reranker pair, if there is one."""
        if pair not in self._calibrations:
            self._calibrations[pair] = load_calibration(pair)
        return self._calibrations[pair]

    def embedder(self):
        """The embedder, loaded on first use; None (with `embedder_problem` set) when it is missing."""
        if self._embedder is None and self._embedder_spec is not None:
            self._embedder = shared_embedder(self._embedder_spec, token_budget=self.settings.index.token_budget,
                                             use_gpu=self.settings.models.use_gpu,
                                             batch_size=self.settings.index.embed_batch)
        return self._embedder

    def reranker(self) -> CrossEncoder | None:
        """The cross-encoder, loaded on first use; None when none is configured or it is missing
        (`reranker_problem` then says why)."""
        if self._reranker is None and self._reranker_spec is not None:
            search = self.settings.search
            try:
                self._reranker = shared_cross_encoder(self._reranker_spec, max_length=search.rerank_max_length,
                                                      batch_size=search.rerank_batch,
                                                      use_gpu=self.settings.models.use_gpu)
            except Exception as error:  # a corrupt or incompatible ONNX file: search goes on without it
                self._reranker_spec = None
                self.reranker_problem = f"{self.reranker_name} failed to load ({type(error).__name__}: {error})"
        return self._reranker

    def close(self) -> None:
        self.store.close()

    @property
    def loaded_reranker(self) -> CrossEncoder | None:
        """The cross-encoder if a find already loaded it (status must not load a model), else None."""
        return self._reranker

    @property
    def loaded_embedder(self):
        """The embedder if something already loaded it (status must not load a model), else None."""
        return self._embedder

    def state(self, *, stale: bool = False, sync: bool = True) -> IndexState:
        """What the index holds; `sync=False` describes the state a query just ran against."""
        if sync:
            self.corpus.sync()
        embedder = self._embedder
        return IndexState(files=self.corpus.file_count, chunks=self.corpus.chunk_count,
                          embedded=self.corpus.embedded_chunks,
                          pending=self.corpus.chunk_count - self.corpus.embedded_chunks, stale=stale,
                          model=self.embedder_name,
                          device=embedder.device if embedder is not None else "not loaded")

    def find(self, query: str, **options) -> FindResult:
        """Ranked files (or chunks) for a description: `find_across` over this root alone."""
        return find_across([self], query, **options)

    def loaded(self) -> CorpusArrays:
        """The corpus arrays, caught up with the store."""
        self.corpus.sync()
        return self.corpus.arrays()

    def retrieve(self, query: str, arrays: CorpusArrays, *, legs: Sequence[str], include: Sequence[str],
                 exclude: Sequence[str], query_vectors: dict[str, np.ndarray], stage: Callable[[str, float], None],
                 notes: list[str], term_idf: dict[str, float] | None = None) -> Candidates:
        """The top chunks of each leg with their raw scores (BM25 score, cosine). `term_idf` overrides
        this root's BM25 idf per query term (multi-root search)."""
        search = self.settings.search
        allowed = self._allowed_rows(arrays, include, exclude)
        empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
        bm25 = dense = empty
        if "bm25" in legs:
            started = time.perf_counter()
            terms = [t for t in query_terms(query) if t in arrays.vocabulary]
            ids = np.array([arrays.vocabulary[t] for t in terms], dtype=np.int64)
            idf = np.array([term_idf[t] for t in terms], dtype=np.float64) if term_idf is not None else None
            lexical = arrays.bm25.scores(ids, idf)
            if allowed is not None:
                lexical = np.where(allowed, lexical, 0.0)
            rows = top_k(lexical, search.candidates)
            bm25 = (rows, lexical[rows])
            stage("bm25", started)
        embedder = self.embedder() if len(arrays.dense_rows) and "dense" in legs else None
        if embedder is not None:
            key = self.model_key or ""
            if key not in query_vectors:
                started = time.perf_counter()
                query_vectors[key] = embedder.embed_query(query, max_windows=search.query_windows)
                stage("embed_query", started)
            started = time.perf_counter()
            dense = dense_top(arrays.dense_matrix, arrays.dense_rows, query_vectors[key], search.candidates, allowed)
            stage("dense", started)
        elif "dense" in legs and self.embedder_problem:
            notes.append(f"lexical only: {self.embedder_problem}")
        elif "dense" in legs and arrays.rows:
            notes.append("lexical only: no chunk is embedded yet (run `noul index` or wait for the background pass)")
        return Candidates(self, arrays, bm25, dense)

    def _allowed_rows(self, arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> np.ndarray | None:
        """Rows whose file passes the globs. Matching runs in Python over every file, so the mask is kept
        for the corpus state it was made for: an editor repeats the same filter on every keystroke."""
        if not include and not exclude:
            return None
        cached = self._allowed_cache
        if cached is not None and cached[0] is arrays and cached[1] == (tuple(include), tuple(exclude)):
            return cached[2]
        mask = self._match_rows(arrays, include, exclude)
        self._allowed_cache = (arrays, (tuple(include), tuple(exclude)), mask)
        return mask

    @staticmethod
    def _match_rows(arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> np.ndarray:
        allowed_files = np.ones(len(arrays.files), dtype=bool)
        if include:
            spec = gitignore_spec(include)
            allowed_files &= np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
        if exclude:
            spec = gitignore_spec(exclude)
            allowed_files &= ~np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
        return allowed_files[arrays.row_file] if len(arrays.row_file) else np.zeros(0, dtype=bool)



@dataclass
class Candidates:
    """One root's retrieval output: corpus rows and raw scores per leg."""

    workspace: Workspace
    arrays: CorpusArrays
    bm25: tuple[np.ndarray, np.ndarray]
    dense: tuple[np.ndarray, np.ndarray]


def _global_ranking(per_root: list[tuple[np.ndarray, np.ndarray]], size: int) -> list[tuple[int, int]]:
    """(root index, row) pairs of every root's list merged by raw score, best first, at most `size`."""
    keys = [(index, int(row), float(score)) for index, (rows, scores) in enumerate(per_root)
            for row, score in zip(rows.tolist(), scores.tolist(), strict=True)]
    keys.sort(key=lambda item: -item[2])
    return [(index, row) for index, row, _ in keys[:size]]


def _union_idf(query: str, loaded: list[CorpusArrays]) -> dict[str, float]:
    """BM25 idf of each query term over all roots together (document frequencies and counts summed)."""
    terms = query_terms(query)
    frequency = np.zeros(len(terms), dtype=np.float64)
    for arrays in loaded:
        for position, term in enumerate(terms):
            term_id = arrays.vocabulary.get(term)
            if term_id is not None and term_id < len(arrays.bm25.document_frequency):
                frequency[position] += arrays.bm25.document_frequency[term_id]
    idf = bm25_idf(sum(a.rows for a in loaded), frequency)
    return dict(zip(terms, idf.tolist(), strict=True))


def _check(query: str, limit, mode, legs: Sequence[str]) -> None:
    unknown = set(legs) - set(LEGS)
    if unknown or not legs:
        raise QueryError(f"legs must be a non-empty subset of {', '.join(LEGS)}, not {list(legs)!r}")
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty: describe the code you are looking for")
    if mode not in ("files", "chunks"):
        raise QueryError(f"mode must be 'files' or 'chunks', not {mode!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise QueryError(f"limit must be a positive integer, not {limit!r}")


def find_across(workspaces: Sequence[Workspace], query: str, *, limit: int | None = None, mode: str | None = None,
                include: Sequence[str] = (), exclude: Sequence[str] = (), stale: bool = False,
                legs: Sequence[str] = LEGS, rerank: bool = True,
                should_stop: Callable[[], bool] = lambda: False) -> FindResult:
    """Ranked files (or chunks) for a description, over one or several workspace roots.

    Each root retrieves its best chunks per leg; the legs' lists are merged across roots by their raw
    scores (cosines share one model; BM25 scores are close enough in scale), and reciprocal rank fusion
    runs once over those global rankings, so a root's top hit is not worth more for being alone in a
    small root. `legs` picks the retrievers ("bm25", "dense"; the benchmark runs each alone as a
    baseline); `rerank=False` skips the cross-encoder even when one is configured (the first root's
    settings decide). Raises QueryError for an unusable request and FindCancelled when `should_stop`
    turns true between stages."""
    search = workspaces[0].settings.search
    limit = search.limit if limit is None else limit
    mode = search.mode if mode is None else mode
    _check(query, limit, mode, legs)
    timings: dict[str, float] = {}
    notes: list[str] = [w.choice_problem for w in workspaces if w.choice_problem]
    signals: dict[str, str] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = timings.get(name, 0.0) + (time.perf_counter() - started) * 1000
        if should_stop():
            raise FindCancelled(name)

    started = time.perf_counter()
    loaded = [w.loaded() for w in workspaces]
    term_idf = _union_idf(query, loaded) if len(loaded) > 1 else None
    stage("load", started)
    query_vectors: dict[str, np.ndarray] = {}  # one embedding of the query per model, shared by roots
    candidates = [w.retrieve(query, arrays, legs=legs, include=include, exclude=exclude, query_vectors=query_vectors,
                             stage=stage, notes=notes, term_idf=term_idf) for w, arrays in zip(workspaces, loaded, strict=True)]

    started = time.perf_counter()
    bm25_ranking = _global_ranking([c.bm25 for c in candidates], search.candidates)
    dense_ranking = _global_ranking([c.dense for c in candidates], search.candidates)
    fused = reciprocal_rank_fusion([r for r in (bm25_ranking, dense_ranking) if r], search.rrf_k)
    bm25_rank = {key: rank for rank, key in enumerate(bm25_ranking, 1)}
    dense_rank = {key: rank for rank, key in enumerate(dense_ranking, 1)}
    order = sorted(fused, key=lambda key: -fused[key])
    stage("fuse", started)

    started = time.perf_counter()
    scored = _aggregate(order, fused, candidates, mode, search.file_chunk_weights)
    features = _features(query, candidates, scored, bm25_ranking, dense_ranking, term_idf, search.rrf_k)
    stage("aggregate", started)

    logits: dict[tuple[int, int], float] = {}
    if rerank:
        logits = _rerank(workspaces[0], query, order, candidates, signals, notes, stage, should_stop)
    if logits:
        started = time.perf_counter()
        chunk_scores = dict(fused)
        chunk_scores.update(zip(logits, reranked_scores(np.array(list(logits.values()))).tolist(), strict=True))
        order = sorted(chunk_scores, key=lambda key: -chunk_scores[key])
        scored = _aggregate(order, chunk_scores, candidates, mode, search.file_chunk_weights)
        ranked = sorted(logits.values(), reverse=True)
        features["rerank_top"] = ranked[0]
        features["rerank_margin_2"] = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0
        stage("aggregate", started)

    started = time.perf_counter()
    hits: list[tuple[tuple[int, int], Hit]] = []
    for rank, (score, keys) in enumerate(scored[:limit], 1):
        index, row = keys[0]
        arrays = candidates[index].arrays
        best = arrays.entries[row]
        ranges = [(arrays.entries[r].start_line, arrays.entries[r].end_line) for _, r in keys[:3]]
        hit = Hit(best.path, best.start_line, best.end_line, rank, score, best.symbol, "", best.kind,
                  bm25_rank=bm25_rank.get(keys[0]), dense_rank=dense_rank.get(keys[0]),
                  rerank_score=logits.get(keys[0]), ranges=ranges, root=str(candidates[index].workspace.root))
        hits.append((keys[0], hit))
    records = _chunk_records(candidates, [key for key, _ in hits])
    for key, hit in hits:
        hit.preview = _preview(records[key].text) if key in records else ""
    stage("aggregate", started)
    # the pair this answer was made with: a configured reranker that did not run is not part of it
    pair = pair_name(workspaces[0].model_key, signals["rerank"] if logits else "")
    here = _calibrate(workspaces[0], pair, legs, features, [hit for _, hit in hits], notes)
    timings["total"] = sum(timings.values())

    states = [c.workspace.state(stale=stale, sync=False) for c in candidates]
    index_state = IndexState(sum(s.files for s in states), sum(s.chunks for s in states),
                             sum(s.embedded for s in states), sum(s.pending for s in states), stale,
                             states[0].model, next((s.device for s in states if s.device != "not loaded"), "not loaded"))
    return FindResult(query, [hit for _, hit in hits], index_state, timings, here, list(dict.fromkeys(notes)), features,
                      signals, pair)


def _aggregate(order: list[tuple[int, int]], chunk_scores: dict[tuple[int, int], float], candidates: list[Candidates],
               mode: str, weights: Sequence[float]) -> list[tuple[float, list[tuple[int, int]]]]:
    """(score, chunk keys best first) per file in file mode (a weighted sum of its best chunks' scores),
    per chunk in chunk mode; best first."""
    if mode != "files":
        return [(chunk_scores[key], [key]) for key in order]
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for key in order:
        index, row = key
        groups.setdefault((index, int(candidates[index].arrays.row_file[row])), []).append(key)
    return sorted(((sum(w * chunk_scores[k] for w, k in zip(weights, keys, strict=False)), keys)
                   for keys in groups.values()), key=lambda item: -item[0])


def _rerank(workspace: Workspace, query: str, order: list[tuple[int, int]], candidates: list[Candidates],
            signals: dict[str, str], notes: list[str], stage: Callable[[str, float], None],
            should_stop: Callable[[], bool]) -> dict[tuple[int, int], float]:
    """The cross-encoder's logit for each chunk of the short list; empty when no reranker runs (and then
    `signals` and `notes` say why, when one was configured)."""
    if not workspace.reranker_name:
        signals["rerank"] = "off"
        return {}
    started = time.perf_counter()
    reranker = workspace.reranker()
    if reranker is None:
        signals["rerank"] = "skipped"
        notes.append(f"rerank skipped: {workspace.reranker_problem}")
        return {}
    search = workspace.settings.search
    keys = shortlist(order, lambda key: (key[0], int(candidates[key[0]].arrays.row_file[key[1]])),
                     search.rerank_shortlist, search.rerank_per_file)
    records = _chunk_records(candidates, keys)
    keys = [key for key in keys if key in records]
    try:
        logits = reranker.score(query, [records[key].embed_text for key in keys], should_stop=should_stop)
    except ScoringStopped:
        raise FindCancelled("rerank") from None
    except Exception as error:  # onnxruntime failing at run time (e.g. out of GPU memory): answer without it
        signals["rerank"] = "skipped"
        notes.append(f"rerank skipped: {reranker.spec.model_id} failed ({type(error).__name__}: {error})")
        return {}
    signals.update(rerank=reranker.spec.model_id, rerankDevice=reranker.device)
    if reranker.fallback_reason and workspace.settings.models.use_gpu:
        signals["rerankFallback"] = reranker.fallback_reason
    stage("rerank", started)
    return dict(zip(keys, logits.tolist(), strict=True))


def _file_order(ranking: list[tuple[int, int]], candidates: list[Candidates]) -> list[str]:
    """Distinct files of a chunk ranking, in order."""
    files = (f"{i}:{candidates[i].arrays.row_file[row]}" for i, row in ranking)
    return list(dict.fromkeys(files))


def _features(query: str, candidates: list[Candidates], scored, bm25_ranking, dense_ranking,
              term_idf: dict[str, float] | None, rrf_k: int) -> dict[str, float]:
    terms = query_terms(query)
    if term_idf is None:
        arrays = candidates[0].arrays
        unknown = float(bm25_idf(arrays.rows, np.zeros(1))[0])
        idf = arrays.bm25.idf
        mass = sum(float(idf[arrays.vocabulary[t]]) if t in arrays.vocabulary and arrays.vocabulary[t] < len(idf)
                   else unknown for t in terms)
    else:
        mass = sum(term_idf.values())
    bm25_top = max((float(c.bm25[1][0]) for c in candidates if len(c.bm25[1])), default=0.0)
    cosines = sorted((float(v) for c in candidates for v in c.dense[1][:5]), reverse=True)
    names = frozenset().union(*(c.workspace.project_names for c in candidates))
    return query_features(file_scores=[score for score, _ in scored[:5]], rrf_k=rrf_k, bm25_top=bm25_top,
                          bm25_idf_mass=mass, dense_cosines=cosines, bm25_files=_file_order(bm25_ranking, candidates),
                          dense_files=_file_order(dense_ranking, candidates), query_terms=len(terms),
                          names_project=not names.isdisjoint(terms))


def _calibrate(workspace: Workspace, pair: str, legs: Sequence[str], features: dict[str, float], hits: list[Hit],
               notes: list[str]) -> float | None:
    """P(here) and each hit's probability when a calibration fits this pair and pipeline, else None."""
    calibration = workspace.calibration(pair)
    if calibration is None:
        notes.append(f"uncalibrated: no calibration for {pair} (run `noul calibrate`)")
        return None
    if set(legs) != set(CALIBRATED_LEGS) or not features.get("dense_top"):
        return None  # fitted on the full hybrid pipeline; a single leg or no embeddings is another model
    here = calibration.here_probability(features)
    top = hits[0].score if hits else 0.0
    rows = [hit_features(features, rank=h.rank, score=h.score, top_score=top, bm25_rank=h.bm25_rank,
                         dense_rank=h.dense_rank) for h in hits]
    for hit, probability in zip(hits, calibration.hit_probabilities(rows, here), strict=True):
        hit.probability = probability
    return here


def _chunk_records(candidates: list[Candidates], keys: list[tuple[int, int]]) -> dict[tuple[int, int], ChunkRecord]:
    """The stored chunks (text and header) of `keys`, read back from each root's store: texts are not kept
    in memory."""
    found: dict[tuple[int, int], ChunkRecord] = {}
    for index, candidate in enumerate(candidates):
        mine = {candidate.arrays.keys[row]: (i, row) for i, row in keys if i == index}
        if mine:
            found.update((mine[record.key], record) for record in candidate.workspace.store.chunks(mine))
    return found
