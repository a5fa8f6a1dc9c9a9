"""The rerank stage: a cross-encoder re-scores a short list of the fused chunks.

Which chunks it sees matters as much as the model: a reranker can only promote what reaches it. The plain
short list is the top `size` chunks of the fused ranking; a file-diverse one takes at most `per_file`
chunks of any file, so one file's many near-identical methods cannot fill the list and push a second gold
file out (what multi-file SWE-bench issues need). docs/benchmarks.md measures both by the share of gold
files that reach the list.

Reranked entries score 1 + sigmoid(s): above every entry the reranker did not see (probabilities and
fused RRF scores stay below 1). Without a fitted weight s is the cross-encoder's logit alone; with one
(`noul rank-fit --rerank`, kept in the ranking file) s = log p + w * logit, where p is the entry's
probability under the ranking stage: a small cross-encoder then corrects the ranker's order instead of
replacing it, by exactly as much as held-out queries say it should.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np

from noul_lsp.models.cross_encoder import ScoringStopped
from noul_lsp.retrieval.aggregate import chunk_records
from noul_lsp.retrieval.result import FindCancelled

Key = TypeVar("Key")

#: the floor of a reranked chunk's score: above any fused score, so a reranked chunk outranks the rest
RERANKED_FLOOR = 1.0


def shortlist(ranking: Sequence[Key], file_of: Callable[[Key], Hashable], size: int, per_file: int = 0) -> list[Key]:
    """The first `size` keys of `ranking`; with `per_file` > 0, at most that many of any one file (the
    skipped chunks do not take a place, so the list reaches further down the ranking)."""
    if per_file <= 0:
        return list(ranking[:size])
    taken: dict[Hashable, int] = {}
    chosen: list[Key] = []
    for key in ranking:
        file = file_of(key)
        if taken.get(file, 0) >= per_file:
            continue
        taken[file] = taken.get(file, 0) + 1
        chosen.append(key)
        if len(chosen) == size:
            break
    return chosen


def reranked_scores(logits: np.ndarray) -> np.ndarray:
    """Chunk scores of reranked chunks from the cross-encoder's logits (see the module docstring)."""
    return RERANKED_FLOOR + 1.0 / (1.0 + np.exp(-np.clip(logits.astype(np.float64), -30, 30)))


def rerank_stage(root, query: str, order: list, candidates: list, signals: dict[str, str], notes: list[str],
                 stage: Callable[[str, float], None], should_stop: Callable[[], bool]) -> dict:
    """The cross-encoder's logit for each chunk of the short list cut from `order`; empty when no reranker
    runs (then `signals` and `notes` say why, when one was configured)."""
    if not root.reranker_name:
        signals["rerank"] = "off"
        return {}
    started = time.perf_counter()
    reranker = root.reranker()
    if reranker is None:
        signals["rerank"] = "skipped"
        notes.append(f"rerank skipped: {root.reranker_problem}")
        return {}
    search = root.settings.search
    keys = shortlist(order, lambda key: (key[0], int(candidates[key[0]].arrays.row_file[key[1]])),
                     search.rerank_shortlist, search.rerank_per_file)
    records = chunk_records(candidates, keys)
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
    if reranker.fallback_reason and root.settings.models.use_gpu:
        signals["rerankFallback"] = reranker.fallback_reason
    stage("rerank", started)
    return dict(zip(keys, logits.tolist(), strict=True))


def combined_logit(probability, logit, weight: float | None):
    """What a reranked entry is ordered by (see the module docstring): numbers or arrays of them
    (`noul rank-fit --rerank` scores whole short lists with it)."""
    if weight is None:
        return logit
    return np.log(np.maximum(probability, 1e-12)) + weight * logit


def with_reranked(scored: list, logits: dict, weight: float | None = None) -> list:
    """`scored` (files or chunks, best first) with the reranked entries above the rest: an entry holding a
    reranked chunk scores 1 + sigmoid(combined_logit of its best logit) and lists its reranked chunks first;
    others keep their scores (all below 1: probabilities or fused scores)."""
    if not logits:
        return scored
    rescored = []
    for score, keys in scored:
        mine = sorted((k for k in keys if k in logits), key=lambda k: -logits[k])
        if mine:
            value = combined_logit(score, logits[mine[0]], weight)
            best = float(reranked_scores(np.array([value]))[0])
            rescored.append((best, mine + [k for k in keys if k not in logits]))
        else:
            rescored.append((score, keys))
    return sorted(rescored, key=lambda item: -item[0])
