"""BM25 as Lucene >= 8 scores it (idf = ln(1 + (N - df + .5)/(df + .5)), no constant (k1+1) factor;
k1=1.2, b=0.75) over chunks, scored with numpy.

As in bm25s, every posting's BM25 weight is computed once when the index is (re)built, stored in
term-major (CSC-like) arrays; a query is then one slice and one scatter-add per query term, never a
Python loop over documents. Documents are the rows of the engine's corpus; a rebuild after changes costs
one concatenation of the per-row arrays (tens of milliseconds for 50k chunks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BM25Parameters:
    k1: float = 1.2
    b: float = 0.75


class BM25Index:
    """Immutable BM25 weights for rows 0..n-1, built from per-row term ids and counts."""

    def __init__(self, row_term_ids: list[np.ndarray], row_term_counts: list[np.ndarray], vocabulary_size: int,
                 parameters: BM25Parameters = BM25Parameters()) -> None:
        rows = len(row_term_ids)
        docs = np.repeat(np.arange(rows, dtype=np.int32), [len(t) for t in row_term_ids])
        term_ids = np.concatenate(row_term_ids).astype(np.int64, copy=False) if rows else np.zeros(0, np.int64)
        counts = np.concatenate(row_term_counts).astype(np.float32, copy=False) if rows else np.zeros(0, np.float32)
        self._build(rows, docs, term_ids, counts, vocabulary_size, parameters)

    @classmethod
    def from_postings(cls, rows: int, docs: np.ndarray, term_ids: np.ndarray, counts: np.ndarray,
                      vocabulary_size: int, parameters: BM25Parameters = BM25Parameters(),
                      average_length: float | None = None) -> BM25Index:
        """The index of flat (document, term, count) postings; each (document, term) pair at most once.
        `average_length` normalises lengths by another index's average (a delta scored as part of its base)."""
        index = cls.__new__(cls)
        index._build(rows, docs.astype(np.int32, copy=False), term_ids.astype(np.int64, copy=False),
                     counts.astype(np.float32, copy=False), vocabulary_size, parameters, average_length)
        return index

    def _build(self, rows: int, docs: np.ndarray, term_ids: np.ndarray, counts: np.ndarray, vocabulary_size: int,
               parameters: BM25Parameters, average_length: float | None = None) -> None:
        self.rows = rows
        self.vocabulary_size = vocabulary_size
        lengths = np.bincount(docs, weights=counts, minlength=rows).astype(np.float32)
        self.average_length = float(lengths.mean()) if average_length is None and rows else (average_length or 0.0)
        self.document_frequency = np.zeros(vocabulary_size, dtype=np.int64)
        self.idf = np.zeros(vocabulary_size, dtype=np.float32)
        if rows == 0 or not len(term_ids):
            self._indptr = np.zeros(vocabulary_size + 1, dtype=np.int64)
            self._docs = np.zeros(0, dtype=np.int32)
            self._weights = np.zeros(0, dtype=np.float32)
            return
        order = np.argsort(term_ids, kind="stable")
        term_ids, docs, counts = term_ids[order], docs[order], counts[order]
        document_frequency = np.bincount(term_ids, minlength=vocabulary_size).astype(np.float64)
        idf = present_idf(rows, document_frequency)
        self.document_frequency = document_frequency.astype(np.int64)
        self.idf = idf
        average_length = max(self.average_length, 1e-9)
        k1, b = parameters.k1, parameters.b
        norm = k1 * (1.0 - b + b * lengths[docs] / average_length)
        self._weights = (idf[term_ids] * counts / (counts + norm)).astype(np.float32)
        self._docs = docs
        self._indptr = np.zeros(vocabulary_size + 1, dtype=np.int64)
        np.cumsum(document_frequency.astype(np.int64), out=self._indptr[1:])

    #: the arrays that make an index, for a snapshot on disk
    STATE = ("document_frequency", "idf", "_indptr", "_docs", "_weights")

    def state(self) -> dict[str, np.ndarray]:
        return {name.lstrip("_"): getattr(self, name) for name in self.STATE} | {
            "shape": np.array([self.rows, self.vocabulary_size], dtype=np.int64),
            "average_length": np.array([self.average_length], dtype=np.float64)}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> BM25Index:
        index = cls.__new__(cls)
        index.rows, index.vocabulary_size = (int(v) for v in state["shape"])
        index.average_length = float(state["average_length"][0])
        for name in cls.STATE:
            setattr(index, name, state[name.lstrip("_")])
        # a snapshot written before `present_idf` holds the largest idf for the vocabulary's absent terms
        index.idf = np.where(index.document_frequency > 0, index.idf, np.float32(0.0)).astype(np.float32)
        if len(index._indptr) != index.vocabulary_size + 1 or len(index._docs) != len(index._weights):
            raise ValueError("the BM25 arrays do not fit together")
        return index

    def postings(self, term: int) -> np.ndarray:
        """The documents that contain a term id (sorted by document within the term)."""
        if not 0 <= term < self.vocabulary_size:
            return np.zeros(0, dtype=np.int32)
        return self._docs[self._indptr[term]:self._indptr[term + 1]]

    def contains(self, term: int, rows: np.ndarray) -> np.ndarray:
        """Which of the sorted `rows` hold a term id."""
        return members(self.postings(term), rows)

    def scores(self, query_term_ids: np.ndarray, idf: np.ndarray | None = None, *,
               query_weights: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every row for the (unique) query term ids; unknown ids are ignored.

        `idf`, aligned with the term ids, replaces this index's own idf (a multi-root search scores every
        root with the idf of all roots together, so that scores compare across roots). `query_weights`,
        aligned too, multiply each term's part (`query_term_weights`; None: 1 each). `out`: zeroed float32
        room for the scores (a segment's part of the whole corpus's array, which is then not copied)."""
        scores = np.zeros(self.rows, dtype=np.float32) if out is None else out
        for position, term in enumerate(query_term_ids.tolist()):
            if 0 <= term < self.vocabulary_size:
                start, end = self._indptr[term], self._indptr[term + 1]
                if end > start:
                    weights = self._weights[start:end]
                    scale = 1.0
                    if idf is not None and self.idf[term] > 0:
                        scale = idf[position] / self.idf[term]
                    if query_weights is not None:
                        scale *= query_weights[position]
                    if scale != 1.0:  # x * 1 is x: skipped, the sums are the same
                        weights = weights * np.float32(scale)
                    # ufunc.at, not `scores[docs] += weights`: the same sums in the same order, without the
                    # gathered and scattered temporaries (2-3x as fast over an issue text's millions of postings)
                    np.add.at(scores, self._docs[start:end], weights)
        return scores


def members(postings: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which of the sorted `rows` are in the sorted `postings`: the shorter list searched in the longer, so
    a common term's postings (hundreds of thousands in a large corpus) cost a search per row, not per posting."""
    found = np.zeros(len(rows), dtype=bool)
    if not len(postings) or not len(rows):
        return found
    if len(postings) <= len(rows):
        at = np.minimum(np.searchsorted(rows, postings.astype(rows.dtype, copy=False)), len(rows) - 1)
        found[at[rows[at] == postings]] = True
        return found
    at = np.minimum(np.searchsorted(postings, rows.astype(postings.dtype, copy=False)), len(postings) - 1)
    return postings[at] == rows


#: Robertson's k3: how fast a query term's weight saturates with its count in the query
QUERY_TERM_K3 = 8.0


def query_term_weights(counts: np.ndarray, k3: float = QUERY_TERM_K3) -> np.ndarray:
    """Each query term's weight from its count in the query, qtf·(k3+1)/(k3+qtf) (Okapi BM25's query
    side): 1 for a term written once, rising towards k3+1. An issue text repeats the names it is about
    (the failing function, the class in every frame) and mentions the rest once; counted once each, the
    hundred words around them weigh as much. Exactly 1 for a count of 1, so a one-line query scores as
    before."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts * (k3 + 1.0) / (k3 + counts)


def repeated_term_weights(terms: Sequence[str], counts: Mapping[str, int] | None) -> np.ndarray | None:
    """`query_term_weights` of `terms` by their counts, or None where every term occurs once (no weight
    to apply)."""
    if not counts:
        return None
    found = np.array([counts.get(t, 1) for t in terms], dtype=np.float64)
    return query_term_weights(found) if (found > 1).any() else None


def bm25_idf(documents: int, document_frequency: np.ndarray) -> np.ndarray:
    """Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return np.log1p((documents - document_frequency + 0.5) / (document_frequency + 0.5))


def present_idf(documents: int, document_frequency: np.ndarray) -> np.ndarray:
    """float32 idf per term id, 0 for a term no live row holds. The vocabulary keeps the terms of deleted
    files; scored as absent, such a term weighs what a never-seen one does, whether the index was
    compacted since (a base built over live rows) or not (a base with dead rows and a delta): otherwise
    the ranking stage's name-match shares and P(here)'s idf mass followed the index's history."""
    frequency = np.asarray(document_frequency, dtype=np.float64)
    return np.where(frequency > 0, bm25_idf(documents, frequency), 0.0).astype(np.float32)


class LocalBM25:
    """A BM25 index over a few rows whose term ids are mapped to local ones: a delta's index costs its own
    terms, not the size of the whole vocabulary."""

    def __init__(self, terms: np.ndarray, index: BM25Index) -> None:
        self.terms = terms  # sorted global ids of the terms present; local id = position
        self.index = index
        self.rows = index.rows
        self.average_length = index.average_length

    @classmethod
    def from_postings(cls, rows: int, docs: np.ndarray, term_ids: np.ndarray, counts: np.ndarray,
                      average_length: float | None = None) -> LocalBM25:
        terms, local = np.unique(np.asarray(term_ids, dtype=np.int64), return_inverse=True)
        index = BM25Index.from_postings(rows, docs, local, counts, len(terms), average_length=average_length)
        return cls(terms, index)

    def local(self, term_ids: np.ndarray) -> np.ndarray:
        term_ids = np.asarray(term_ids, dtype=np.int64)
        if not len(self.terms):
            return np.full(len(term_ids), -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self.terms, term_ids), len(self.terms) - 1)
        return np.where(self.terms[position] == term_ids, position, -1)

    def postings(self, term: int) -> np.ndarray:
        local = int(self.local(np.array([term]))[0])
        return self.index.postings(local) if local >= 0 else np.zeros(0, dtype=np.int32)

    def contains(self, term: int, rows: np.ndarray) -> np.ndarray:
        return members(self.postings(term), rows)

    def scores(self, query_term_ids: np.ndarray, idf: np.ndarray | None = None, *,
               query_weights: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        return self.index.scores(self.local(query_term_ids), idf, query_weights=query_weights, out=out)

    @property
    def document_frequency(self) -> tuple[np.ndarray, np.ndarray]:
        """(global term ids, their document frequencies)."""
        return self.terms, self.index.document_frequency


class _Idf:
    """The idf of any term id, computed when asked (a full array would cost the vocabulary's size on
    every corpus state)."""

    def __init__(self, documents: int, frequency: np.ndarray) -> None:
        self.documents, self.frequency = documents, frequency

    def __len__(self) -> int:
        return len(self.frequency)

    def __getitem__(self, ids):
        return present_idf(self.documents, self.frequency[ids])


class BM25Segments:
    """A base index whose dead rows are masked, followed by a delta index: the questions of `BM25Index`
    answered over both, with document frequencies (so idf) of the live rows. Rows of the delta are
    numbered after the base's. The delta is built with the base's average length, so its rows score as
    they would inside one index (but for the drift of that average, until the next compaction)."""

    def __init__(self, base: BM25Index, delta: LocalBM25, live: np.ndarray, dead_frequency: np.ndarray,
                 vocabulary_size: int) -> None:
        self.base, self.delta, self.live = base, delta, live
        self.rows = base.rows + delta.rows
        self.vocabulary_size = vocabulary_size
        frequency = np.zeros(vocabulary_size, dtype=np.int64)
        frequency[:len(base.document_frequency)] += base.document_frequency
        frequency[:len(dead_frequency)] -= dead_frequency[:vocabulary_size]
        delta_terms, delta_frequency = delta.document_frequency
        frequency[delta_terms] += delta_frequency
        self.document_frequency = frequency
        self.idf = _Idf(int(live.sum()) + delta.rows, frequency)
        #: the dead base rows, zeroed after scoring (fewer than the live: a multiply by `live` read them all)
        self._dead = np.flatnonzero(~live)

    def contains(self, term: int, rows: np.ndarray) -> np.ndarray:
        """Which of the sorted rows hold a term id (a dead base row holds none)."""
        split = int(np.searchsorted(rows, self.base.rows))
        base_rows = rows[:split]
        in_base = self.base.contains(term, base_rows) & self.live[base_rows]
        return np.concatenate([in_base, self.delta.contains(term, rows[split:] - self.base.rows)])

    def scores(self, query_term_ids: np.ndarray, idf: np.ndarray | None = None, *,
               query_weights: np.ndarray | None = None) -> np.ndarray:
        if idf is None:
            known = (query_term_ids >= 0) & (query_term_ids < self.vocabulary_size)
            idf = np.where(known, self.idf[np.clip(query_term_ids, 0, max(self.vocabulary_size - 1, 0))], 0.0) \
                if self.vocabulary_size else np.zeros(len(query_term_ids))
        scores = np.zeros(self.rows, dtype=np.float32)
        self.base.scores(query_term_ids, idf, query_weights=query_weights, out=scores[:self.base.rows])
        scores[self._dead] = 0.0
        self.delta.scores(query_term_ids, idf, query_weights=query_weights, out=scores[self.base.rows:])
        return scores
