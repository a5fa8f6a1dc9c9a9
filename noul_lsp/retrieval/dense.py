"""The vector legs' data and search: one model's vectors, one slot per distinct content hash, searched
exactly or through an approximate index.

Slots, not rows: a corpus of many versions or vendored copies holds the same text many times, and the
store keys vectors by content hash already. A row reads its vector through `row_slot`.

Exact search is one matrix product over float32 slots: a few ms up to ~50k slots on two cores. Past
APPROXIMATE_FROM vectors the table keeps them as float16 (half the memory) and answers from
an approximate index (ann.py), rescored exactly; the ranking stage then reads cosines only for the rows it
looks at, and the query's mean cosine comes from a sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from noul_lsp.retrieval.fusion import top_k
from noul_lsp.retrieval.segment import expand_ranges
from noul_lsp.retrieval.vocabulary import key_codes

#: candidates the approximate index returns for exact rescoring
CANDIDATES = 400

#: above this many vectors a table answers through its approximate index: an exact product over 128k
#: float32 vectors of 256 dims takes ~17 ms on two cores (memory-bound), the index ~2 ms at recall@50 0.99
APPROXIMATE_FROM = 50_000
#: slots drawn for the query's mean cosine when the table answers approximately
MEAN_SAMPLE = 20_000


class HashSlots:
    """The slot of each distinct content hash of the corpus, shared by every model's table. Append-only:
    a slot never moves while the corpus follows the store (a compaction may start a new numbering)."""

    def __init__(self, codes: np.ndarray | None = None, hashes=None, order: np.ndarray | None = None) -> None:
        self.codes = np.zeros(0, np.uint64) if codes is None else codes.astype(np.uint64, copy=False)
        #: the content hash of each slot (what the store keys vectors by): the slots a snapshot held as
        #: one `Strings` blob, the ones added since as a list
        self._frozen_hashes = hashes if hashes is not None else []
        self._added_hashes: list[str] = []
        self._order = np.argsort(self.codes, kind="stable") if order is None else order
        self._sorted = self.codes[self._order]

    @property
    def order(self) -> np.ndarray:
        """The slots in code order (a snapshot keeps it: sorting a million codes is a tenth of a second)."""
        return self._order

    def hash_of(self, slot: int) -> str:
        frozen = len(self._frozen_hashes)
        return self._frozen_hashes[slot] if slot < frozen else self._added_hashes[slot - frozen]

    def all_hashes(self) -> list[str]:
        frozen = self._frozen_hashes
        return (frozen.tolist() if hasattr(frozen, "tolist") else list(frozen)) + self._added_hashes

    def __len__(self) -> int:
        return len(self.codes)

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """The slot of each code, -1 for codes without one."""
        if not len(self._sorted):
            return np.full(len(codes), -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self._sorted, codes), len(self._sorted) - 1)
        return np.where(self._sorted[position] == codes, self._order[position], -1)

    def lookup_hashes(self, hashes) -> np.ndarray:
        """The slots of these content hashes (those the corpus holds)."""
        slots = self.lookup(key_codes(hashes))
        return slots[slots >= 0]

    def assign(self, codes: np.ndarray, hashes) -> np.ndarray:
        """The slot of each code, appending new slots (with their hash strings) for codes not seen yet."""
        slots = self.lookup(codes)
        new = np.flatnonzero(slots < 0)
        if len(new):
            fresh, first = np.unique(codes[new], return_index=True)
            order = np.argsort(first)  # new slots in the order the rows named them
            fresh, first = fresh[order], first[order]
            start = len(self.codes)
            self.codes = np.concatenate([self.codes, fresh])
            self._added_hashes.extend(hashes[i] for i in new[first].tolist())
            # insert into the sorted view (a copy of it, not a new sort of every code)
            by_code = np.argsort(fresh, kind="stable")
            at = np.searchsorted(self._sorted, fresh[by_code])
            self._sorted = np.insert(self._sorted, at, fresh[by_code])
            self._order = np.insert(self._order, at, start + by_code)
            slots[new] = self.lookup(codes[new])
        return slots.astype(np.int32)


class VectorTable:
    """One model's vectors by slot; `present` says which slots have one yet. Values are kept at float16
    precision (cosines move by ~1e-4); the matrix is float32 for exact search (BLAS), float16 past
    APPROXIMATE_FROM."""

    def __init__(self, model_key: str | None) -> None:
        self.model_key = model_key
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.present = np.zeros(0, dtype=bool)
        #: the approximate index over every slot with a vector, once the table is large (see ann.py)
        self.ann = None
        #: (vectors counted, their sampled mean), see `mean_vector`
        self._mean: tuple[int, np.ndarray] | None = None

    def reset(self) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.present = np.zeros(0, dtype=bool)
        self.ann = None
        self._mean = None

    def grow(self, slots: int) -> None:
        """Room for `slots` slots, and an eighth more (so that the texts of the next saves fit without
        copying the matrix)."""
        if slots <= len(self.present):
            return
        capacity = max(slots + slots // 8, 1024)
        present = np.zeros(capacity, dtype=bool)
        present[:len(self.present)] = self.present
        self.present = present
        if self.matrix.shape[1]:
            matrix = np.zeros((capacity, self.matrix.shape[1]), dtype=self.matrix.dtype)
            matrix[:len(self.matrix)] = self.matrix
            self.matrix = matrix

    def fill(self, slots: np.ndarray, vectors: list[np.ndarray]) -> None:
        if not len(slots):
            return
        # float16 precision everywhere (the snapshot stores float16): a workspace answers the same whether
        # its corpus came from the snapshot or from the store
        stacked = np.stack(vectors).astype(np.float16)
        if not self.matrix.shape[1]:
            self.matrix = np.zeros((len(self.present), stacked.shape[1]), dtype=np.float32)
        if stacked.shape[1] != self.matrix.shape[1]:
            raise ValueError(f"vectors of {stacked.shape[1]} dimensions in a table of {self.matrix.shape[1]}")
        fresh = slots[~self.present[slots]]
        self.matrix[slots] = stacked
        self.present[slots] = True
        if self.ann is not None and len(fresh):
            self.ann.add(fresh, self.matrix[fresh])

    def remember_mean(self, mean: np.ndarray) -> None:
        self._mean = (int(self.present.sum()), mean)

    def mean_vector(self) -> np.ndarray | None:
        """The mean of a fixed sample of the vectors (recomputed when the table has grown by 1%)."""
        count = self.ann.count if self.ann is not None else int(self.present.sum())  # the index holds them all
        cached = self._mean
        if cached is not None and abs(cached[0] - count) <= 0.01 * count:
            return cached[1]
        slots = np.flatnonzero(self.present)
        if not len(slots):
            return None
        if len(slots) > MEAN_SAMPLE:
            slots = slots[np.linspace(0, len(slots) - 1, MEAN_SAMPLE).astype(np.int64)]
        mean = self.matrix[slots].astype(np.float32).mean(axis=0)
        self._mean = (count, mean)
        return mean

    def index_if_large(self) -> bool:
        """Past APPROXIMATE_FROM vectors: keep them as float16 (half the memory; the rescoring reads them)
        and build the approximate index over them. True when it built one."""
        if self.ann is not None or int(self.present.sum()) <= APPROXIMATE_FROM:
            return False
        slots = np.flatnonzero(self.present)
        from noul_lsp.retrieval.ann import ApproximateIndex

        if self.matrix.dtype != np.float16:
            self.matrix = self.matrix.astype(np.float16)
        self.ann = ApproximateIndex.build(self.matrix, slots)
        return True


class SlotRows:
    """The rows that hold given slots, without a pass over every row: the approximate leg turns its few
    hundred slots into rows through this. The base rows' slots never change while the base lives, so
    their sort is made once per base (on first use) and shared by every corpus state built on it; the
    delta's few rows are scanned."""

    def __init__(self, base_slot: np.ndarray) -> None:
        self.base_slot = base_slot
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def rows_of(self, slots: np.ndarray, delta_slot: np.ndarray | None = None) -> np.ndarray:
        """Sorted rows whose slot is among the sorted, distinct `slots` (delta rows follow the base's)."""
        if self._sorted is None:
            order = np.argsort(self.base_slot, kind="stable")
            self._sorted = (order, self.base_slot[order])
        order, sorted_slots = self._sorted
        slots = slots.astype(sorted_slots.dtype, copy=False)  # else numpy converts the sorted column per call
        low = np.searchsorted(sorted_slots, slots, side="left")
        rows = order[expand_ranges(low, np.searchsorted(sorted_slots, slots, side="right") - low)]
        if delta_slot is not None and len(delta_slot):
            position = np.minimum(np.searchsorted(slots, delta_slot), max(len(slots) - 1, 0))
            hit = np.flatnonzero(slots[position] == delta_slot) if len(slots) else np.zeros(0, np.int64)
            rows = np.concatenate([rows, hit + len(self.base_slot)])
        return np.sort(rows)


@dataclass
class LegScores:
    """One vector leg's answer to one query: its top rows and cosines, and the cosine of any row on demand
    (NaN where a row has no vector or is filtered out), with the query's best and mean cosine."""

    rows: np.ndarray
    scores: np.ndarray
    best: float
    mean: float
    #: every row's cosine when the search was exact (then `at` is a gather)
    every_row: np.ndarray | None = None
    table: VectorTable | None = field(default=None, repr=False)
    row_slot: np.ndarray | None = field(default=None, repr=False)
    query: np.ndarray | None = field(default=None, repr=False)
    allowed: np.ndarray | None = field(default=None, repr=False)

    def at(self, rows: np.ndarray) -> np.ndarray:
        if self.every_row is not None:
            return self.every_row[rows]
        slots = self.row_slot[rows]
        # one product per distinct text, gathered in slot order: the rows of a large workspace repeat texts
        # (copies, versions), and sorted slots read the matrix front to back
        distinct, position = np.unique(slots, return_inverse=True)
        cosines = (self.table.matrix[distinct].astype(np.float32) @ self.query).astype(np.float32)[position]
        missing = ~self.table.present[slots]
        if self.allowed is not None:
            missing |= ~self.allowed[rows]
        cosines[missing] = np.nan
        return cosines


def search(table: VectorTable, row_slot: np.ndarray, query: np.ndarray, k: int,
           allowed: np.ndarray | None, slot_rows: SlotRows | None = None) -> LegScores:
    """The k best rows by cosine (rows without a vector or outside `allowed` never answer). `slot_rows`
    finds the rows of the approximate index's slots (rows past its base are scanned; None: a sort of
    `row_slot` made for this call)."""
    query = query.astype(np.float32, copy=False)
    if table.ann is not None:
        return _approximate(table, row_slot, query, k, allowed, slot_rows or SlotRows(row_slot))
    slots = int(row_slot.max()) + 1 if len(row_slot) else 0
    if not table.matrix.shape[1] or not slots:
        empty = np.zeros(0, dtype=np.int32)
        return LegScores(empty, np.zeros(0, np.float32), np.nan, np.nan,
                         every_row=np.full(len(row_slot), np.nan, dtype=np.float32))
    slot_scores = table.matrix[:slots].astype(np.float32, copy=False) @ query
    has = table.present[row_slot]
    if allowed is not None:
        has &= allowed
    cosines = np.where(has, slot_scores[row_slot], np.nan).astype(np.float32)
    best = top_k(np.where(has, cosines, -np.inf), k, floor=-np.inf)
    any_vector = bool(has.any())
    return LegScores(best.astype(np.int32), cosines[best], float(np.nanmax(cosines)) if any_vector else np.nan,
                     float(np.nanmean(cosines)) if any_vector else np.nan, every_row=cosines)


def _approximate(table: VectorTable, row_slot: np.ndarray, query: np.ndarray, k: int,
                 allowed: np.ndarray | None, slot_rows: SlotRows) -> LegScores:
    """Slots from the approximate index (it holds every slot with a vector), rescored exactly; then the
    rows of the best slots. A filter that leaves too few of them scans its rows exactly."""
    candidate_slots = np.unique(table.ann.search(query, max(4 * k, CANDIDATES)))
    rows = slot_rows.rows_of(candidate_slots, row_slot[len(slot_rows.base_slot):])
    if allowed is not None:
        rows = rows[allowed[rows]]
        if len(rows) < k:  # a narrow filter: the index's neighbours lie elsewhere, so scan its rows
            rows = np.flatnonzero(allowed & table.present[row_slot])
    # one product per distinct text among the rows (the candidates', or a narrow filter's)
    distinct, position = np.unique(row_slot[rows], return_inverse=True)
    cosines = (table.matrix[distinct].astype(np.float32) @ query).astype(np.float32)[position]
    best = top_k(cosines, k, floor=-np.inf)
    ordered = rows[best]
    top = float(cosines[best[0]]) if len(best) else np.nan
    return LegScores(ordered.astype(np.int32), cosines[best], top, _sampled_mean(table, query),
                     table=table, row_slot=row_slot, query=query, allowed=allowed)


def _sampled_mean(table: VectorTable, query: np.ndarray) -> float:
    """The query's mean cosine over the table's vectors, as the query's dot product with their mean vector
    (from a fixed sample of MEAN_SAMPLE slots, recomputed when the table has grown by 1%): a neutral value
    for the rows without a vector, it need not be exact, nor follow a filter."""
    mean = table.mean_vector()
    return float(mean @ query) if mean is not None else np.nan
