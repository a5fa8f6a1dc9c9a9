"""Retrieval and calibration metrics, as defined in shared/bench/README.md.

All take plain lists so that they can be checked by hand on small made-up rankings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def accuracy_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """LocAgent/SweRank Acc@k: 1 when min(k, |gold|) gold files are in the top k, else 0."""
    if not gold:
        return 0.0
    found = len(set(ranked[:k]) & set(gold))
    return float(found >= min(k, len(set(gold))))


def precision_at_1(ranked: Sequence[str], gold: Sequence[str]) -> float:
    return float(bool(ranked) and ranked[0] in set(gold))


def recall_any_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """R@k as the README uses it: any gold file in the top k."""
    return float(bool(set(ranked[:k]) & set(gold)))


def complete_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Every gold file in the top k (the strict multi-file rule)."""
    return float(bool(gold) and set(gold) <= set(ranked[:k]))


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    gold_set = set(gold)
    for rank, path in enumerate(ranked, 1):
        if path in gold_set:
            return 1.0 / rank
    return 0.0


def f_beta(returned: Sequence[str], gold: Sequence[str], beta: float) -> float:
    """F-beta of a returned file set against the gold set (0 when either is empty)."""
    returned_set, gold_set = set(returned), set(gold)
    hits = len(returned_set & gold_set)
    if not hits:
        return 0.0
    precision, recall = hits / len(returned_set), hits / len(gold_set)
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def line_hit(returned: Mapping[str, Sequence[Sequence[int]]], gold_lines: Mapping[str, Sequence[Sequence[int]]]) -> float:
    """1 when any returned line range overlaps any gold line range of the same file."""
    for path, ranges in returned.items():
        for start, end in ranges:
            for gold_start, gold_end in gold_lines.get(path, ()):
                if start <= gold_end and gold_start <= end:
                    return 1.0
    return 0.0


def located(ranked: Sequence[str], returned: Mapping[str, Sequence[Sequence[int]]],
            gold_lines: Mapping[str, Sequence[Sequence[int]]], k: int = 5) -> float | None:
    """Of the gold files with labeled lines among the first `k` files, the share whose hit opens on them (its
    first range, where a client jumps, overlaps a gold range); None when no such file is there. What
    `line_hit` does not tell: the right file opened at the wrong place."""
    found = [path for path in ranked[:k] if gold_lines.get(path) and returned.get(path)]
    if not found:
        return None
    return sum(any(start <= gold_end and gold_start <= end for gold_start, gold_end in gold_lines[path])
               for path in found for start, end in returned[path][:1]) / len(found)


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve (ties count half); None without both classes."""
    scores_array = np.asarray(scores, dtype=np.float64)
    labels_array = np.asarray(labels, dtype=bool)
    positives, negatives = scores_array[labels_array], scores_array[~labels_array]
    if not len(positives) or not len(negatives):
        return None
    greater = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(positives) * len(negatives)))


def expected_calibration_error(probabilities: Sequence[float], labels: Sequence[int], bins: int = 10) -> float | None:
    """ECE with equal-width bins: Σ (n_b / n) |mean(p) − mean(y)| over non-empty bins."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if not len(p):
        return None
    index = np.minimum((p * bins).astype(int), bins - 1)
    error = 0.0
    for b in range(bins):
        members = index == b
        if members.any():
            error += members.sum() / len(p) * abs(p[members].mean() - y[members].mean())
    return float(error)


def brier(probabilities: Sequence[float], labels: Sequence[int]) -> float | None:
    p = np.asarray(probabilities, dtype=np.float64)
    if not len(p):
        return None
    return float(np.mean((p - np.asarray(labels, dtype=np.float64)) ** 2))


def percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else None
