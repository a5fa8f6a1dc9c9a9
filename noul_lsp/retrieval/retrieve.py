"""The retrieval stage: each leg's best chunks of one root, with the scores the later stages read.

Three legs: BM25 scores every row (one scatter-add per query term); the transformer ("dense") and the
static model ("static") each score every row that has their vector (one matrix product). The static leg
covers every chunk from the moment it is indexed; the transformer covers what the background pass has
embedded so far. The full score arrays are kept beside the top lists, because the ranking stage looks at
every chunk of a candidate file, not only at the ones that made a leg's top list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from noul_lsp.retrieval.bm25 import bm25_idf
from noul_lsp.retrieval.corpus import CorpusArrays
from noul_lsp.retrieval.dense import dense_scores
from noul_lsp.retrieval.fusion import top_k
from noul_lsp.text.terms import query_terms
from noul_lsp.workspace.discovery import gitignore_spec

Stage = Callable[[str, float], None]


@dataclass
class Candidates:
    """One root's retrieval output: corpus rows and raw scores per leg, and every row's scores."""

    root: object  # the SearchRoot (engine.py) these rows belong to
    arrays: CorpusArrays
    bm25: tuple[np.ndarray, np.ndarray]
    dense: tuple[np.ndarray, np.ndarray]
    #: BM25 score of every row (None without the lexical leg)
    lexical_all: np.ndarray | None = None
    #: cosine of every row, NaN where a row has no vector yet (None without the dense leg)
    dense_all: np.ndarray | None = None
    #: the include/exclude row mask (None: every row)
    allowed: np.ndarray | None = None
    #: the static leg's top rows and cosines, and every row's cosine (as `dense`, `dense_all`)
    static: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
    static_all: np.ndarray | None = None


class RowFilter:
    """Rows whose file passes include/exclude globs. Matching runs in Python over every file, so the mask
    is kept for the corpus state it was made for: an editor repeats the same filter on every keystroke."""

    def __init__(self) -> None:
        self._cached: tuple[CorpusArrays, tuple, np.ndarray] | None = None

    def mask(self, arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> np.ndarray | None:
        if not include and not exclude:
            return None
        cached = self._cached
        if cached is not None and cached[0] is arrays and cached[1] == (tuple(include), tuple(exclude)):
            return cached[2]
        mask = _match_rows(arrays, include, exclude)
        self._cached = (arrays, (tuple(include), tuple(exclude)), mask)
        return mask


def _match_rows(arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> np.ndarray:
    allowed_files = np.ones(len(arrays.files), dtype=bool)
    if include:
        spec = gitignore_spec(include)
        allowed_files &= np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
    if exclude:
        spec = gitignore_spec(exclude)
        allowed_files &= ~np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
    return allowed_files[arrays.row_file] if len(arrays.row_file) else np.zeros(0, dtype=bool)


def retrieve(root, query: str, arrays: CorpusArrays, *, legs: Sequence[str], include: Sequence[str],
             exclude: Sequence[str], query_vectors: dict[str, np.ndarray], stage: Stage, notes: list[str],
             term_idf: dict[str, float] | None = None) -> Candidates:
    """The top chunks of each leg with their raw scores (BM25 score, cosine). `term_idf` overrides this
    root's BM25 idf per query term (multi-root search); `query_vectors` holds one query embedding per model,
    shared by the roots of one find."""
    search = root.settings.search
    allowed = root.row_filter.mask(arrays, include, exclude)
    empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
    bm25 = empty
    lexical = None
    if "bm25" in legs:
        started = time.perf_counter()
        terms = [t for t in query_terms(query) if t in arrays.vocabulary]
        ids = np.array([arrays.vocabulary[t] for t in terms], dtype=np.int64)
        idf = np.array([term_idf[t] for t in terms], dtype=np.float64) if term_idf is not None else None
        lexical = arrays.bm25.scores(ids, idf)
        if allowed is not None:
            lexical = np.where(allowed, lexical, 0.0).astype(np.float32)
        rows = top_k(lexical, search.candidates)
        bm25 = (rows, lexical[rows])
        stage("bm25", started)
    dense, cosines = empty, None
    embedder = root.embedder() if len(arrays.dense_rows) and "dense" in legs else None
    if embedder is not None:
        dense, cosines = _vector_leg(embedder, root.model_key or "", query, arrays.dense_rows, arrays.dense_matrix,
                                     arrays.rows, allowed, query_vectors, search, stage, ("embed_query", "dense"))
    static, static_cosines = empty, None
    static_model = root.static_embedder() if len(arrays.static_rows) and "static" in legs else None
    if static_model is not None:
        static, static_cosines = _vector_leg(static_model, root.static_key or "", query, arrays.static_rows,
                                             arrays.static_matrix, arrays.rows, allowed, query_vectors, search, stage,
                                             ("embed_query_static", "static"))
    elif "static" in legs and root.static_problem:
        notes.append(f"no static leg: {root.static_problem}")
    if embedder is None and "dense" in legs and root.embedder_problem:
        notes.append(f"{'lexical only' if static_cosines is None else 'static leg only'}: {root.embedder_problem}")
    if arrays.rows and cosines is None and static_cosines is None and ({"dense", "static"} & set(legs)):
        notes.append("lexical only: no chunk is embedded yet (run `noul index` or wait for the background pass)")
    return Candidates(root, arrays, bm25, dense, lexical, cosines, allowed, static, static_cosines)


def _vector_leg(embedder, key: str, query: str, rows: np.ndarray, matrix: np.ndarray, total_rows: int,
                allowed: np.ndarray | None, query_vectors: dict[str, np.ndarray], search, stage: Stage,
                stages: tuple[str, str]) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """One vector leg: (its top rows and cosines, every row's cosine with NaN where a row has no vector),
    timed as `stages` (embedding the query, scoring)."""
    if key not in query_vectors:
        started = time.perf_counter()
        query_vectors[key] = embedder.embed_query(query, max_windows=search.query_windows)
        stage(stages[0], started)
    started = time.perf_counter()
    scores = dense_scores(matrix, query_vectors[key])
    cosines = np.full(total_rows, np.nan, dtype=np.float32)
    cosines[rows] = scores
    if allowed is not None:
        scores = np.where(allowed[rows], scores, -np.inf)
        cosines = np.where(allowed, cosines, np.nan).astype(np.float32)
    best = top_k(scores, search.candidates, floor=-np.inf)
    stage(stages[1], started)
    return (rows[best], scores[best]), cosines


def union_idf(query: str, loaded: list[CorpusArrays]) -> dict[str, float]:
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
