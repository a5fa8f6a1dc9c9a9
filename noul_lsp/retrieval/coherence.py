"""Repository coherence: when one query is asked of many repositories at once (an organisation search),
the repository that holds most of the answer's evidence is the likelier home of what was described.

The fitted ranker scores files against each other as if they were one workspace. Across thirty
repositories that is not enough: a description written about one repository ("queue a one-time notice
shown on the next page load") finds look-alike code in others (an HTML tokenizer, a logging queue), one
file each, while the repository it describes places several of its files near the top. So each hit's score
is multiplied by its repository's share of the score mass in the first `depth` hits, raised to `exponent`
(0 leaves the order as it is). The exponent is chosen on the dev labels by leave-one-repository-out
(`noul bench-org` reports both figures); see docs/benchmarks.md, section "Team".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from noul_lsp.retrieval.result import Hit


@dataclass(frozen=True)
class Coherence:
    #: the power of a repository's share of the score mass (0: off)
    exponent: float = 1.0
    #: how many of the best hits the shares are counted over
    depth: int = 20


def repository_of(hit: Hit) -> str:
    """The repository a hit belongs to: its organisation repository, else its workspace root."""
    return hit.repository or hit.root


def by_repository_coherence(hits: list[Hit], coherence: Coherence) -> list[Hit]:
    """New hits, re-ordered by score x (their repository's share of the first `depth` hits' scores) ^
    exponent, ranks renumbered and scores replaced by the product (so the order and the shown relevance
    agree), and no P(answer) above one shown before it (as calibrate.Calibration.hit_probabilities keeps
    them for the order it was given); `hits` are left as they are. One repository (or none) among the
    hits: `hits` themselves."""
    if coherence.exponent == 0 or len({repository_of(hit) for hit in hits}) < 2:
        return hits
    repositories = [repository_of(hit) for hit in hits]
    names, owner = np.unique(np.asarray(repositories, dtype=object), return_inverse=True)
    scores = np.maximum(np.asarray([hit.score for hit in hits], dtype=np.float64), 0.0)
    counted = np.arange(len(hits)) < coherence.depth
    mass = np.bincount(owner[counted], weights=scores[counted], minlength=len(names))
    total = mass.sum()
    if total <= 0:
        return hits
    adjusted = scores * (mass[owner] / total) ** coherence.exponent
    order = np.argsort(-adjusted, kind="stable")
    coherent = [replace(hits[position], rank=rank, score=float(adjusted[position]))
                for rank, position in enumerate(order.tolist(), 1)]
    ceiling = 1.0
    for hit in coherent:
        if hit.probability is not None:
            ceiling = hit.probability = min(hit.probability, ceiling)
    return coherent
