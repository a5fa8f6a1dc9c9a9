"""The in-memory mirror of a store that queries run against, kept in step at the cost of what changed.

Two segments (segment.py): the *base*, built once from every chunk (or reopened from its snapshot beside
the store, snapshot.py, without reading a chunk record), and the *delta*, the current chunks of every
file changed since, rebuilt from those files alone on each change. A changed file's base rows stay where
they are, marked dead: every leg masks them, so a save costs the next query O(what changed). A
compaction folds the delta into a new base (from the columns, reading nothing) when the delta grows past
a quarter of the base; at the end of an indexing pass `checkpoint` folds it and writes the snapshot when
there is none yet or enough changed (a small edit is left to the change log).

The store's change log (`ChunkStore.changes_since`) says what changed since the generation this corpus
has seen: the files, and per model the content hashes that got a vector. Without a log that reaches back
(an old index, a reader far behind) the corpus reads everything again.

Vectors are kept by slot, one per distinct content hash (dense.py), for the transformer (`model_key`,
filled in behind by the background pass) and the static model (`static_key`, filled in at once).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from noul_lsp.chunking.chunk import path_key
from noul_lsp.retrieval.bm25 import BM25Index, BM25Segments
from noul_lsp.retrieval.dense import HashSlots, SlotRows, VectorTable
from noul_lsp.retrieval.roles import with_charts
from noul_lsp.retrieval.segment import ChunkRef, Row, Segment, build_segment, merge
from noul_lsp.retrieval.symbols import SymbolTable, declaration_twins, duplicate_share, join_tables
from noul_lsp.retrieval.vocabulary import Vocabulary
from noul_lsp.store import CHANGE_LOG_KEEP, Changes, ChunkStore

#: chunk keys read from the store per step of a full read (bounds the Python objects alive at once)
READ_BATCH = 20_000
#: the delta is folded into the base when it has more rows than this share of the base's (a fresh
#: workspace's first rows, against an empty base, are folded at once)
COMPACT_SHARE = 0.25
#: `checkpoint` folds and writes once the rows changed since the snapshot pass this share of the base
SNAPSHOT_DELTA_SHARE = 0.05
#: the legs' names and which key of the corpus each one's vectors are stored under
LEG_TABLES = ("dense", "static")


@dataclass(frozen=True)
class CorpusArrays:
    """One corpus state; a query holds one while the corpus moves on. Rows are the base's, then the
    delta's; `live` masks the base rows of files changed since (None: every row is live)."""

    base: Segment
    delta: Segment | None
    live: np.ndarray | None
    files: list[str]
    row_file: np.ndarray  # int32 file index per row
    row_slot: np.ndarray  # int32 vector slot per row
    bm25: BM25Index | BM25Segments
    file_bm25: BM25Index | BM25Segments
    #: "dense" (the transformer) and "static": shared tables that only ever gain vectors
    tables: dict[str, VectorTable]
    #: rows with a vector, per leg
    covered: dict[str, int]
    #: shared and only ever extended; ids past an index's vocabulary size score nothing
    vocabulary: Vocabulary
    #: files indexed, and files skipped (binary, too large)
    file_count: int
    skipped_files: int
    #: the sorted content codes of the live base rows (a delta file's copies count those too)
    live_base_codes: np.ndarray | None = None
    #: the rows of given vector slots (the base's sorted once per base)
    slot_rows: SlotRows | None = None
    #: each file the index holds no chunk of for a reason (binary, over the size cap, a secret), with it
    skipped_reasons: dict[str, str] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return len(self.row_file)

    @cached_property
    def skipped_by_name(self) -> dict[str, list[str]]:
        """The skipped files by their lower-cased names (read once per state, when a query names a file)."""
        named: dict[str, list[str]] = {}
        for path in self.skipped_reasons:
            named.setdefault(path.rsplit("/", 1)[-1].lower(), []).append(path)
        return named

    @cached_property
    def live_rows(self) -> int:
        """Rows not dead (counted once per state: a count over a million rows is a millisecond)."""
        return self.rows if self.live is None else int(self.live.sum())

    def chunk(self, row: int) -> ChunkRef:
        """Where a row's chunk is (path, lines, symbol, kind, key)."""
        if row < self.base.rows:
            return self.base.chunk(row)
        return self.delta.chunk(row - self.base.rows)

    def row_term_pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in `rows`, term id) of every distinct BM25 term of the given rows (base or delta)."""
        rows = np.asarray(rows, dtype=np.int64)
        in_base = rows < self.base.rows
        positions, terms = self.base.row_term_pairs(rows[in_base])
        positions = np.flatnonzero(in_base)[positions]
        if self.delta is not None and not in_base.all():
            delta_positions, delta_terms = self.delta.row_term_pairs(rows[~in_base] - self.base.rows)
            positions = np.concatenate([positions, np.flatnonzero(~in_base)[delta_positions]])
            terms = np.concatenate([terms, delta_terms])
        return positions, terms

    def key(self, row: int) -> str:
        return self.base.keys[row] if row < self.base.rows else self.delta.keys[row - self.base.rows]

    @cached_property
    def symbols(self) -> SymbolTable:
        """Definitions, scopes, paths, roles and whole-file BM25 of this state (built on first use: the ranking
        stage reads them, and the hits their roles; the base's part is built once per base)."""
        if self.delta is None:
            return self.base.symbol_table
        shares = duplicate_share(self.delta.codes, self.delta.row_file, len(self.delta.files),
                                 elsewhere=self.live_base_codes, counted=self.delta.copyable_rows)
        # a file edited since the last index is read with the Helm chart it is in (its Chart.yaml is the base's)
        (base_charts, base_renders), (delta_charts, delta_renders) = self.base.rendering, self.delta.rendering
        delta_roles = with_charts(self.delta.symbol_table.roles, self.delta.files, set(base_charts | delta_charts),
                                  base_renders or delta_renders)
        # a header edited since the last index is paired with the implementation the base holds
        delta_twins = declaration_twins(self.delta.files, self.base.implemented_names)
        return join_tables(self.base.symbol_table, self.delta.symbol_table, base_rows=self.base.rows,
                           file_bm25=self.file_bm25, delta_duplicate_share=shares, delta_roles=delta_roles,
                           delta_twins=delta_twins)


def empty_segment() -> Segment:
    return build_segment([], Vocabulary())


class Corpus:
    def __init__(self, store: ChunkStore, model_key: str | None, static_key: str | None = None) -> None:
        self.store = store
        self.tables = {"dense": VectorTable(model_key), "static": VectorTable(static_key)}
        self._vocabulary = Vocabulary()
        self._slots = HashSlots()
        self._base = empty_segment()
        self._base_slot = np.zeros(0, np.int32)
        self._slot_rows = SlotRows(self._base_slot)
        self._live = np.ones(0, dtype=bool)
        self._dead_frequency = np.zeros(0, np.int64)
        self._dead_file_frequency = np.zeros(0, np.int64)
        self._base_files: dict[str, int] | None = None  # path -> base file id, built on the first change
        #: the current rows of every file changed since the base was built ([] for a file gone)
        self._changed: dict[str, list[Row]] = {}
        self._delta: Segment | None = None
        self._delta_slot = np.zeros(0, np.int32)
        #: files the store holds without rows: path -> why it is not indexed ("" for an empty file)
        self._rowless: dict[str, str] = {}
        self._generation = -1
        self._arrays: CorpusArrays | None = None
        self._lock = threading.Lock()
        #: the generation of the snapshot this corpus was opened from (None: read from the store)
        self.opened_from_snapshot: int | None = None
        self._saved_generation = -1

    @property
    def model_key(self) -> str | None:
        return self.tables["dense"].model_key

    @property
    def static_key(self) -> str | None:
        return self.tables["static"].model_key

    # -- following the store ---------------------------------------------------------------------

    def sync(self) -> bool:
        """Catch up with the store; returns True when anything changed. Reads what the change log says
        changed (files, vectors) when it reaches back to the generation seen, else everything."""
        with self._lock:
            generation = self.store.generation()
            if generation == self._generation:
                return False
            changes = self.store.changes_since(self._generation) if self._generation >= 0 else None
            if changes is None:
                self._read_everything()
            else:
                self._apply(changes)
            for table in self.tables.values():
                table.index_if_large()
            self._generation = generation
            self._arrays = None
            return True

    def _read_everything(self) -> None:
        """The whole corpus from the snapshot (and the change log since it) or from every chunk record."""
        from noul_lsp.retrieval.snapshot import load_snapshot

        opened = load_snapshot(self)
        if opened is not None:
            changes = self.store.changes_since(opened)
            if changes is not None:
                self.opened_from_snapshot = self._saved_generation = opened
                self._apply(changes)
                return
        self.opened_from_snapshot = None
        self._read_store()

    def _apply(self, changes: Changes) -> None:
        """What the change log says changed: the files, then the vectors that arrived, per model."""
        if changes.paths:
            self._apply_files(changes.paths)
        for table in self.tables.values():
            if table.model_key is not None and table.model_key in changes.vectors:
                self._load_vectors(table, self._slots.lookup_hashes(changes.vectors[table.model_key]))

    def _read_store(self) -> None:
        records = self.store.files()
        self._rowless = {path: record.skipped for path, record in records.items() if not record.chunks}
        # path-major, as the chunk keys sort: a file's rows are adjacent, and a step ends at a file boundary
        files = sorted((r for r in records.values() if r.chunks), key=lambda r: path_key(r.path))
        vocabulary = Vocabulary()
        parts: list[Segment] = []
        batch: list[str] = []
        for record in files:
            batch.extend(sorted(record.chunks))
            if len(batch) >= READ_BATCH:
                parts.append(self._segment_of_keys(batch, vocabulary, indexes=False))
                batch = []
        if batch:
            parts.append(self._segment_of_keys(batch, vocabulary, indexes=False))
        self._vocabulary = vocabulary.freeze()
        base = merge([(part, np.ones(part.rows, dtype=bool)) for part in parts], len(vocabulary))
        self._slots = HashSlots()
        self._set_base(base, self._slots.assign(base.codes, base.hashes))
        for table in self.tables.values():
            table.reset()
            table.grow(len(self._slots))
            self._load_vectors(table, np.arange(len(self._slots)))

    def adopt(self, rows: list[Row], vectors: dict[str, dict[str, np.ndarray]]) -> None:
        """Hold exactly these rows and, per leg ("dense", "static"), these vectors by content hash: chunks
        that came from elsewhere (an organisation search's candidates), held in memory, not in the store.
        Built as a full read builds its base; the corpus then follows the store again from its current
        generation (an organisation's scratch root never writes to it)."""
        rows = sorted(rows, key=lambda row: (path_key(row[0].path), row[0].key))
        with self._lock:
            vocabulary = Vocabulary()
            part = build_segment(rows, vocabulary, indexes=False)
            self._vocabulary = vocabulary.freeze()
            self._rowless = {}
            self._slots = HashSlots()
            base = merge([(part, np.ones(part.rows, dtype=bool))], len(vocabulary))
            self._set_base(base, self._slots.assign(base.codes, base.hashes))
            for leg, table in self.tables.items():
                table.reset()
                table.grow(len(self._slots))
                found = vectors.get(leg, {})
                slots = [slot for slot in range(len(self._slots)) if self._slots.hash_of(slot) in found]
                if slots:
                    table.fill(np.asarray(slots, dtype=np.int64), [found[self._slots.hash_of(s)] for s in slots])
            self._generation = self.store.generation()
            self._arrays = None

    def _segment_of_keys(self, keys: list[str], vocabulary: Vocabulary, *, indexes: bool = True) -> Segment:
        records = self.store.chunks(keys)
        rows = list(zip(records, self.store.lexical(r.key for r in records), strict=True))
        return build_segment(rows, vocabulary, indexes=indexes)

    def _set_base(self, base: Segment, base_slot: np.ndarray) -> None:
        self._base = base
        self._base_slot = base_slot.astype(np.int32, copy=False)
        self._slot_rows = SlotRows(self._base_slot)
        self._live = np.ones(base.rows, dtype=bool)
        self._dead_frequency = np.zeros(len(self._vocabulary), np.int64)
        self._dead_file_frequency = np.zeros(len(self._vocabulary), np.int64)
        self._base_files = None
        self._changed = {}
        self._delta = None
        self._delta_slot = np.zeros(0, np.int32)

    def _apply_files(self, paths) -> None:
        """Files changed: their base rows die, their current chunks make the delta."""
        found = self.store.files_at(paths)  # a changed path the store no longer holds is a file gone
        if self._base_files is None:
            self._base_files = {path: index for index, path in enumerate(self._base.files)}
        starts, counts = self._base.file_spans
        for path in sorted(paths):
            record = found.get(path)
            self._kill_base_file(path, starts, counts)
            self._rowless.pop(path, None)
            if record is None or not record.chunks:
                if record is not None:
                    self._rowless[path] = record.skipped
                self._changed[path] = []
                continue
            records_of = self.store.chunks(list(record.chunks))
            terms = self.store.lexical(r.key for r in records_of)
            self._changed[path] = sorted(zip(records_of, terms, strict=True), key=lambda row: row[0].key)
        rows = [row for path in sorted(self._changed) for row in self._changed[path]]
        self._delta = build_segment(rows, self._vocabulary, delta_of=self._base) if self._changed else None
        self._delta_slot = self._slots.assign(self._delta.codes, self._delta.hashes) if self._delta else \
            np.zeros(0, np.int32)
        for vectors in self.tables.values():
            vectors.grow(len(self._slots))
            if vectors.model_key is not None and len(self._delta_slot):
                wanted = np.unique(self._delta_slot)
                self._load_vectors(vectors, wanted[~vectors.present[wanted]])

    def _kill_base_file(self, path: str, starts: np.ndarray, counts: np.ndarray) -> None:
        index = self._base_files.get(path)
        if index is None:
            return
        rows = np.arange(starts[index], starts[index] + counts[index])
        if not self._live[rows].any():
            return
        self._live[rows] = False
        size = len(self._vocabulary)
        for name in ("_dead_frequency", "_dead_file_frequency"):
            frequency = getattr(self, name)
            if len(frequency) < size:
                setattr(self, name, np.concatenate([frequency, np.zeros(size - len(frequency), np.int64)]))
        terms = self._base.row_terms(rows)
        np.add.at(self._dead_frequency, terms, 1)  # the file's terms, not an array of the vocabulary's size
        np.add.at(self._dead_file_frequency, np.unique(terms), 1)

    def _load_vectors(self, table: VectorTable, slots: np.ndarray) -> None:
        """Read the vectors of these slots (those the store has) into the table."""
        if table.model_key is None or not len(slots):
            return
        table.grow(len(self._slots))
        slots = np.asarray(slots, dtype=np.int64)
        for start in range(0, len(slots), READ_BATCH):
            part = slots[start:start + READ_BATCH]
            found = self.store.vectors(table.model_key, [self._slots.hash_of(s) for s in part.tolist()])
            have = [i for i, vector in enumerate(found) if vector is not None]
            if have:
                table.fill(part[have], [found[i] for i in have])

    def compact(self, *, save: bool = True) -> bool:
        """Fold the delta into a new base (from the columns alone) and write the snapshot (`save`) when it
        is not the current state's: the end of an indexing pass calls it. True when it wrote or folded."""
        from noul_lsp.retrieval.snapshot import save_snapshot

        with self._lock:
            folded = self._delta is not None or not self._live.all()
            if folded:
                self._compact()
            if save and self._generation >= 0 and (folded or self._saved_generation != self._generation):
                save_snapshot(self)
                self._saved_generation = self._generation
                return True
            return folded

    def checkpoint(self) -> bool:
        """`compact` and write the snapshot when it is worth it: there is none yet, the delta has grown
        past SNAPSHOT_DELTA_SHARE of the base, or the change log would soon no longer reach back to the
        snapshot. A small edit is left to the log: the next open replays it (a CLI find after one edit
        must not rebuild a large base). True when it wrote."""
        with self._lock:
            changed = (self._delta.rows if self._delta is not None else 0) + int((~self._live).sum())
            log_behind = self._generation - self._saved_generation > CHANGE_LOG_KEEP // 2
            if self._saved_generation >= 0 and not log_behind and changed <= SNAPSHOT_DELTA_SHARE * self._base.rows:
                return False
        return self.compact()

    def _compact(self) -> None:
        parts = [(self._base, self._live)]
        slots = [self._base_slot[self._live]]
        if self._delta is not None:
            parts.append((self._delta, np.ones(self._delta.rows, dtype=bool)))
            slots.append(self._delta_slot)
        self._set_base(merge(parts, len(self._vocabulary)), np.concatenate(slots))
        self._arrays = None

    # -- what a query reads ----------------------------------------------------------------------

    def arrays(self) -> CorpusArrays:
        with self._lock:
            delta_rows = self._delta.rows if self._delta is not None else 0
            if delta_rows > COMPACT_SHARE * self._base.rows:
                self._compact()
            if self._arrays is None:
                self._arrays = self._state()
            return self._arrays

    def _state(self) -> CorpusArrays:
        base, delta = self._base, self._delta
        live = None if delta is None and self._live.all() else np.concatenate(
            [self._live, np.ones(delta.rows if delta is not None else 0, dtype=bool)])
        size = len(self._vocabulary)
        if live is None:
            files, row_file, row_slot = base.files, base.row_file, self._base_slot
            bm25, file_bm25, live_base_codes = base.bm25, base.file_bm25, None
            live_file_count = len(base.files)
        else:
            delta = delta if delta is not None else build_segment([], self._vocabulary, delta_of=base)
            files = base.files + delta.files
            row_file = np.concatenate([base.row_file, delta.row_file + len(base.files)]).astype(np.int32)
            row_slot = np.concatenate([self._base_slot, self._delta_slot]).astype(np.int32)
            bm25 = BM25Segments(base.bm25, delta.bm25, self._live, self._dead_frequency, size)
            live_files = np.zeros(len(base.files), dtype=bool)
            live_files[base.row_file[self._live]] = True
            file_bm25 = BM25Segments(base.file_bm25, delta.file_bm25, live_files, self._dead_file_frequency, size)
            live_file_count = int(np.count_nonzero(live_files)) + len(delta.files)
            order = base.code_order
            # (an edited file's copies are read against the base's live rows that count: not their imports)
            live_base_codes = base.codes[order[(self._live & base.copyable_rows)[order]]]
        covered = {}
        for leg, table in self.tables.items():
            if table.model_key is None or not len(row_slot):
                covered[leg] = 0
                continue
            has = table.present[row_slot]
            covered[leg] = int((has & live).sum()) if live is not None else int(has.sum())
        skipped = {path: why for path, why in self._rowless.items() if why}  # the others are empty files
        return CorpusArrays(base, delta, live, files, row_file, row_slot, bm25, file_bm25, self.tables, covered,
                            self._vocabulary, live_file_count + len(self._rowless) - len(skipped), len(skipped),
                            live_base_codes, self._slot_rows, skipped)

    def pending_keys(self, leg: str) -> list[str]:
        """One chunk key per distinct live text that has no vector of this leg's model yet (caught up with
        the store first)."""
        self.sync()
        arrays = self.arrays()
        if not arrays.rows:
            return []
        missing = ~arrays.tables[leg].present[arrays.row_slot]
        if arrays.live is not None:
            missing &= arrays.live
        rows = np.flatnonzero(missing)
        _, first = np.unique(arrays.row_slot[rows], return_index=True)
        return [arrays.key(int(row)) for row in rows[np.sort(first)]]

    # -- counts ----------------------------------------------------------------------------------

    @property
    def file_count(self) -> int:
        return self.arrays().file_count

    @property
    def skipped_files(self) -> int:
        return self.arrays().skipped_files

    @property
    def chunk_count(self) -> int:
        return self.arrays().live_rows

    @property
    def embedded_chunks(self) -> int:
        """Chunks with a transformer vector."""
        return self.arrays().covered["dense"]

    @property
    def static_chunks(self) -> int:
        """Chunks with a static vector."""
        return self.arrays().covered["static"]
