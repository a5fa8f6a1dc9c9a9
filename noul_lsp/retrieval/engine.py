"""The query pipeline, one stage per module, wired here and nowhere else:

    analyse (analyse.py)   what the query is and names
    retrieve (retrieve.py) each root's BM25, transformer and static top lists, and every row's scores
    fuse (fusion.py)       the legs' global rankings and reciprocal rank fusion
    rank (rank.py)         a fitted model over features.py's candidate features; without a fitted file,
                           files score from their fused chunks (aggregate.py)
    rerank (rerank.py)     a cross-encoder over a short list, when one is configured
    aggregate (aggregate.py) hits: locations, ranges, roles, previews
    calibrate (calibrate.py) P(here) and each hit's probability; a one-line description's read against
                           the workspace's own level (reference.py), measured once

Each stage is timed, and a cancelled find stops between stages. The engine knows nothing of LSP and
nothing of where a root's index lives: a root is anything with the `SearchRoot` attributes (the
session layer's `Workspace`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from noul_lsp.config import Settings
from noul_lsp.models.registry import override_folder_notes
from noul_lsp.retrieval import reference
from noul_lsp.retrieval.aggregate import aggregate, build_hits, moved_note
from noul_lsp.retrieval.analyse import analyse
from noul_lsp.retrieval.calibrate import Calibration, apply_calibration, pair_name, query_shape, result_features
from noul_lsp.retrieval.corpus import CorpusArrays
from noul_lsp.retrieval.fusion import fuse
from noul_lsp.retrieval.locales import asked_locales, fold_translations
from noul_lsp.retrieval.rank import RankModel, rank_candidates, untrained_model
from noul_lsp.retrieval.reference import WorkspaceLevel
from noul_lsp.retrieval.rerank import rerank_stage, with_reranked
from noul_lsp.retrieval.result import FindCancelled, FindResult, IndexState, QueryError
from noul_lsp.retrieval.retrieve import RowFilter, filter_note, no_tests_note, retrieve, union_idf, unindexed_note
from noul_lsp.retrieval.roles import asks_for_tests
from noul_lsp.store import ChunkRecord

LEGS = ("bm25", "dense", "static")


class SearchRoot(Protocol):
    """What the pipeline needs of one workspace root."""

    root: object
    settings: Settings
    row_filter: RowFilter
    model_key: str | None
    static_key: str | None
    ranking_key: str | None
    embedder_problem: str | None
    static_problem: str
    reranker_name: str
    reranker_problem: str | None
    choice_problem: str | None
    project_names: frozenset[str]
    whole_corpus: bool

    def loaded(self) -> CorpusArrays: ...
    def chunk_records(self, keys) -> list[ChunkRecord]: ...
    def embedder(self): ...
    def static_embedder(self): ...
    def reranker(self): ...
    def calibration(self, pair: str) -> Calibration | None: ...
    def rank_model(self, key: str | None = None) -> RankModel | None: ...
    def ranking_key_for(self, *, static: bool) -> str | None: ...
    def state(self, *, stale: bool = False, sync: bool = True) -> IndexState: ...
    def here_level(self, key: str, chunks: int, measure: Callable[[str], dict[str, float]], *,
                   stale: bool = False) -> WorkspaceLevel: ...
    def disk_state(self, path: str) -> str: ...


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


def _transformer_covers(root: SearchRoot, arrays: CorpusArrays) -> bool:
    """Whether every chunk of the root has a transformer vector."""
    return root.model_key is not None and arrays.live_rows > 0 and arrays.covered["dense"] == arrays.live_rows


def _legs_of(root: SearchRoot, arrays: CorpusArrays, legs: Sequence[str], static_aside: bool) -> tuple[str, ...]:
    """The legs one root runs. The static leg answers while the transformer fills in; once every chunk of
    the root has a transformer vector it steps aside (with `static_aside`), and the find is the
    transformer's pipeline with its own ranker and calibration: with both legs the full pipeline put the
    right file first 0.03 less often, held out (docs/benchmarks.md, "The static leg")."""
    if static_aside and "dense" in legs and _transformer_covers(root, arrays):
        return tuple(leg for leg in legs if leg != "static")
    return tuple(legs)


def _coverage(roots: Sequence[SearchRoot], loaded: list[CorpusArrays], legs: Sequence[str]) -> str:
    """How many chunks each vector leg of this find covered, e.g. "static 11858/11858, transformer
    3020/11858" (the static leg answers for every chunk while the transformer fills in)."""
    rows = sum(a.live_rows for a in loaded)
    parts = []
    for leg, name, key in (("static", "static", "static_key"), ("dense", "transformer", "model_key")):
        if leg in legs and any(getattr(r, key) for r in roots):
            parts.append(f"{name} {sum(a.covered[leg] for a in loaded)}/{rows}")
    return ", ".join(parts) or "none"


def _static_evidence(roots: Sequence[SearchRoot], loaded: list[CorpusArrays], root_legs: list[tuple[str, ...]]) -> bool:
    """Whether P(here) reads the static leg's cosines: it ran, and the transformer did not cover every chunk
    of the roots it ran in (or did not run). A transformer filling in would read a file it has not reached
    as a weak match (its best cosine among the few files it has embedded), where the static leg has covered
    every chunk since the first second."""
    ran = [(root, arrays, chosen) for root, arrays, chosen in zip(roots, loaded, root_legs, strict=True)
           if "static" in chosen]
    return any(not ("dense" in chosen and _transformer_covers(root, arrays)) for root, arrays, chosen in ran)


#: why a narrowed find (an include or exclude filter, a folder of the workspace) gives no P(here)
NARROWED = "not measured for a narrowed search"


def find_across(roots: Sequence[SearchRoot], query: str, *, limit: int | None = None, mode: str | None = None,
                include: Sequence[str] = (), exclude: Sequence[str] = (), stale: bool = False,
                legs: Sequence[str] = LEGS, rerank: bool = True, rank: bool = True, record_candidates: bool = False,
                static_aside: bool = True, should_stop: Callable[[], bool] = lambda: False,
                term_idf: dict[str, float] | None = None, level: bool | None = None) -> FindResult:
    """Ranked files (or chunks) for a description, over one or several workspace roots.

    `legs` picks the retrievers ("bm25", "dense" for the transformer, "static"; the benchmark runs each
    alone as a baseline); the fitted ranker runs when BM25 and a vector leg do (it was fitted on their
    evidence, with and without the transformer), and `rank=False` skips it; `static_aside=False` keeps the
    static leg in once the transformer covers every chunk (the benchmark measures both); `rerank=False`
    skips the cross-encoder even when one is configured (the first root's settings decide); `term_idf`
    gives BM25 the idf of the query's terms over a larger collection than the roots (an organisation
    search ranks a few candidate files with the idf of every repository the reader may see). `record_candidates` keeps the ranking stage's feature rows in the result (the
    benchmark records them for `noul rank-fit`). Raises QueryError for an unusable request and
    FindCancelled when `should_stop` turns true between stages."""
    search = roots[0].settings.search
    limit = search.limit if limit is None else limit
    mode = search.mode if mode is None else mode
    _check(query, limit, mode, legs)
    timings: dict[str, float] = {}
    notes: list[str] = [r.choice_problem for r in roots if r.choice_problem] + override_folder_notes()
    signals: dict[str, str] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = timings.get(name, 0.0) + (time.perf_counter() - started) * 1000
        if should_stop():
            raise FindCancelled(name)

    started = time.perf_counter()
    loaded = [r.loaded() for r in roots]
    if term_idf is None and len(loaded) > 1:
        term_idf = union_idf(query, loaded)
    analysis = analyse(query)
    if not analysis.terms:  # "!!!", "the of a": nothing for BM25, and the embedders answer anything
        notes.append("no word of the query is searchable (only punctuation or common words): the results "
                     "come from the embedders alone")
    stage("load", started)
    root_legs = [_legs_of(r, arrays, legs, static_aside) for r, arrays in zip(roots, loaded, strict=True)]
    with_static = any("static" in chosen for chosen in root_legs)
    ranking_key = roots[0].ranking_key_for(static=with_static)
    query_vectors: dict[str, np.ndarray] = {}  # one embedding of the query per model, shared by roots
    candidates = [retrieve(r, analysis, arrays, legs=chosen, include=include, exclude=exclude,
                           query_vectors=query_vectors, stage=stage, notes=notes, term_idf=term_idf)
                  for r, arrays, chosen in zip(roots, loaded, root_legs, strict=True)]
    if (unfiltered := filter_note(candidates, include, exclude)) is not None:
        notes.append(unfiltered)

    started = time.perf_counter()
    fused = fuse([c.bm25 for c in candidates], [c.dense for c in candidates], [c.static for c in candidates],
                 size=search.candidates, rrf_k=search.rrf_k)
    stage("fuse", started)

    started = time.perf_counter()
    fused_scored = aggregate(fused.order, fused.scores, candidates, mode, search.file_chunk_weights)
    rankable = rank and "bm25" in legs and bool({"dense", "static"} & set(legs))
    model = roots[0].rank_model(ranking_key) if rankable else None
    ranking = None
    if model is not None:
        ranking = rank_candidates(model, candidates, fused, analysis, mode=mode, rrf_k=search.rrf_k,
                                  record=record_candidates)
        scored, order = ranking.scored, ranking.chunk_order
        signals["ranking"] = f"fitted ({ranking_key})"
    else:
        scored, order = fused_scored, fused.order
        signals["ranking"] = "fusion"
        if rankable:
            notes.append(f"ranking: reciprocal rank fusion only, no fitted ranker for {ranking_key} "
                         "(run `noul rank-fit`)")
            if record_candidates:  # the features a ranker would be fitted on; the answer stays the fusion's
                ranking = rank_candidates(untrained_model(ranking_key or ""), candidates, fused, analysis,
                                          mode="files", rrf_k=search.rrf_k, record=True)
    stage("rank", started)
    static_evidence = _static_evidence(roots, loaded, root_legs)
    if static_evidence and not any(len(c.dense[0]) for c in candidates) and any(len(c.static[0]) for c in candidates):
        notes.append("the static leg answers alone until the transformer has embedded some chunks")
    features = result_features(list(analysis.terms), candidates, fused_scored if mode == "files" else
                               aggregate(fused.order, fused.scores, candidates, "files", search.file_chunk_weights),
                               fused, term_idf, search.rrf_k, frozenset().union(*(r.project_names for r in roots)),
                               ranking=ranking if model is not None else None, multi_line="\n" in query.strip(),
                               symbol=analysis.shape == "symbol", static_evidence=static_evidence)

    logits: dict = {}
    if rerank:
        logits = rerank_stage(roots[0], query, order, candidates, signals, notes, stage, should_stop)
    before_rerank: dict = {}
    if logits:
        started = time.perf_counter()
        before_rerank = {key: score for score, keys in scored for key in keys}
        # a fitted weight applies only on top of the ranker it was fitted with (its scores are probabilities)
        weight = model.rerank_weight(signals["rerank"]) if model is not None else None
        signals["rerankCombination"] = f"log p + {weight:g} x logit" if weight is not None else "logit alone"
        scored = with_reranked(scored, logits, weight)
        ranked = sorted(logits.values(), reverse=True)
        features["rerank_top"] = ranked[0]
        features["rerank_margin_2"] = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0
        stage("aggregate", started)

    started = time.perf_counter()
    wants_tests = asks_for_tests(analysis.terms, analysis.shape, analysis.text)
    # files gone or changed on disk since indexed; not looked at by a reference find measuring the level
    # (level False), whose hits nobody sees
    moved: dict[str, list[str]] = {"gone": [], "changed": []}
    if mode == "files":  # a file's translations once, as the best copy or the language asked (locales.py)
        scored = fold_translations(scored, candidates, asked_locales(analysis.terms))
    hits = build_hits(scored, candidates, limit=limit, bm25_rank=fused.bm25_rank, dense_rank=fused.dense_rank,
                      logits=logits, before_rerank=before_rerank, static_rank=fused.static_rank,
                      per_file=mode == "files", moved=moved if level is not False else None,
                      at_definition=analysis.shape == "symbol", names=analysis.names,
                      wants_tests=wants_tests, frame_lines=analysis.frame_lines)
    if (unindexed := unindexed_note(candidates, analysis, [hit.path for hit in hits])) is not None:
        notes.append(unindexed)
    if (no_tests := no_tests_note(candidates, wants_tests)) is not None:
        notes.append(no_tests)
    stage("aggregate", started)
    if (catching_up := moved_note(moved)) is not None:  # a checkout the index has not caught up with
        stale = True
        notes.append(catching_up)
    # the pair this answer was made with: a configured reranker that did not run is not part of it
    pair = pair_name(ranking_key, signals["rerank"] if logits else "")
    calibration = roots[0].calibration(pair)
    # one root of some size searched with its own idf: its level (reference.py) is its own, measured once;
    # `level` None: where the calibration reads it, True: for every one-line query (the bench's records)
    narrowed = bool(include or exclude)  # P(here) reads the whole workspace: a narrowed find is not measured
    wanted = calibration is not None and calibration.reads_level(features) if level is None else level
    wanted = wanted and not narrowed
    if wanted and query_shape(features) != "long" and len(roots) == 1 and term_idf is None \
            and features.get("dense_top") and loaded[0].live_rows >= reference.MIN_CHUNKS:
        started = time.perf_counter()
        # the static leg's evidence (a find while the transformer fills in) has a level of its own: its lead is
        # the static pair's ranker's, and its reference finds read the static leg as it does; a ranker refitted
        # since (a new release) measures it again
        evidence = " static evidence" if static_evidence else ""
        ranker = f" {model.fingerprint()}" if model is not None else ""
        measured = roots[0].here_level(
            f"{pair} {'+'.join(legs)} {static_aside} {rank}{evidence}{ranker}", loaded[0].live_rows,
            lambda text: find_across(
                roots, text, legs=legs, rerank=False, rank=rank, static_aside=static_aside, level=False).features,
            stale=stale)
        features.update(measured.levelled(features))
        stage("level", started)
    if not narrowed:
        here = apply_calibration(calibration, pair, legs, features, hits, notes)
    else:  # fitted on finds over the whole workspace and read against its level: narrowed to a folder it said
        here = None  # 0.07 with the asked-for example first, and 0.90 for React code in a folder that has none
        if calibration is not None and hits:
            signals["here"] = NARROWED
            notes.append(f"P(here) {NARROWED}: it measures the whole workspace")
    timings["total"] = sum(timings.values())

    signals["denseLegs"] = _coverage(roots, loaded, [leg for chosen in root_legs for leg in chosen])
    states = [r.state(stale=stale, sync=False) for r in roots]
    index_state = IndexState(sum(s.files for s in states), sum(s.chunks for s in states),
                             sum(s.embedded for s in states), sum(s.pending for s in states), stale,
                             states[0].model, next((s.device for s in states if s.device != "not loaded"), "not loaded"),
                             sum(s.static for s in states))
    return FindResult(query, hits, index_state, timings, here, list(dict.fromkeys(notes)), features, signals, pair,
                      ranking.record if ranking is not None else {})
