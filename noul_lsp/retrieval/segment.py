"""A segment: the chunk table of a run of corpus rows as columns, and the lexical indexes over it.

The corpus is one large *base* segment (built once, persisted beside the store, reopened without reading a
chunk record) and one small *delta* segment holding the files changed since (rebuilt on every change from
those files alone). Neither holds one Python object per chunk: strings live in one UTF-8 blob with offsets,
numbers in numpy arrays, and the BM25 terms of every row in flat row-major arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from noul_lsp.chunking.chunk import GENERATED_KIND, OBJECTS_KIND
from noul_lsp.retrieval.bm25 import BM25Index, LocalBM25
from noul_lsp.retrieval.roles import chart_folders, renders_go_templates
from noul_lsp.retrieval.symbols import SymbolTable, build_symbol_table, implemented_names
from noul_lsp.retrieval.vocabulary import Vocabulary, key_codes
from noul_lsp.store import ChunkRecord

_NO_INDEX = BM25Index([], [], 0)


def symbol_lines(record: ChunkRecord) -> str:
    """A row's entry of the symbols column: its chunk's symbol, then each nested definition on a line (a
    name the grammar spreads over lines, a C function pointer's or a Rust impl's, on one)."""
    return "\n".join(" ".join(name.split()) if "\n" in name else name for name in (record.symbol, *record.names))


def split_symbol_lines(entry: str) -> tuple[str, tuple[str, ...]]:
    """(the chunk's symbol, its nested definitions) of a `symbol_lines` entry."""
    own, *nested = entry.split("\n")
    return own, tuple(nested)


class Strings:
    """Many strings in one UTF-8 blob: a Python string exists only for the entries read."""

    __slots__ = ("blob", "offsets")

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob = blob  # uint8
        self.offsets = offsets  # int64 [n + 1]

    @classmethod
    def of(cls, values: Iterable[str]) -> Strings:
        encoded = [value.encode("utf-8", "surrogatepass") for value in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.blob[start:end].tobytes().decode("utf-8", "surrogatepass")

    def tolist(self) -> list[str]:
        whole = self.blob.tobytes()
        bounds = self.offsets.tolist()
        return [whole[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds, bounds[1:], strict=False)]


@dataclass(frozen=True)
class ChunkRef:
    """Where one row's chunk is (its text stays in the store)."""

    key: str
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    hash: str


@dataclass(frozen=True)
class Segment:
    """Rows 0..n-1 of one segment; file ids are the segment's own (rows of one file are adjacent)."""

    keys: Strings
    files: list[str]
    row_file: np.ndarray  # int32
    start_line: np.ndarray  # int32
    end_line: np.ndarray  # int32
    #: each row's symbol, then the definitions nested in its chunk, one a line (`symbol_lines`)
    symbols: Strings
    kind_codes: np.ndarray  # uint8 into `kinds`
    kinds: list[str]
    hashes: Strings
    codes: np.ndarray  # uint64 key_codes(hashes): the slot key of the vector tables
    term_offsets: np.ndarray  # int64 [n + 1]: row i's terms are term_ids[term_offsets[i]:term_offsets[i + 1]]
    term_ids: np.ndarray  # int32
    term_counts: np.ndarray  # float32
    bm25: BM25Index | LocalBM25  # a delta's over its own terms
    #: BM25 over whole files (a file's chunks' terms summed)
    file_bm25: BM25Index | LocalBM25

    @property
    def rows(self) -> int:
        return len(self.row_file)

    def chunk(self, row: int) -> ChunkRef:
        return ChunkRef(self.keys[row], self.files[int(self.row_file[row])], int(self.start_line[row]),
                        int(self.end_line[row]), split_symbol_lines(self.symbols[row])[0],
                        self.kinds[int(self.kind_codes[row])],
                        self.hashes[row])

    def row_terms(self, rows: np.ndarray) -> np.ndarray:
        """The term ids of the given rows (one entry per row and distinct term)."""
        return self.term_ids[_ragged_positions(self.term_offsets, rows)[1]]

    def row_term_pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in `rows`, term id) of every distinct term of the given rows."""
        lengths, positions = _ragged_positions(self.term_offsets, rows)
        return np.repeat(np.arange(len(rows)), lengths), self.term_ids[positions]

    @cached_property
    def file_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """(first row, row count) of each file."""
        counts = np.bincount(self.row_file, minlength=len(self.files))
        starts = np.zeros(len(counts), dtype=np.int64)
        if len(counts):
            np.cumsum(counts[:-1], out=starts[1:])
        return starts, counts

    @cached_property
    def code_order(self) -> np.ndarray:
        """The rows ordered by content code (so the sorted codes of any subset of rows is one filter)."""
        return np.argsort(self.codes, kind="stable")

    @cached_property
    def symbol_table(self) -> SymbolTable:
        """Definitions, scopes, paths and roles of this segment (built on first use: the ranking stage reads
        them, and the hits their roles; persisted with the base, so built at the end of an indexing pass)."""
        return build_symbol_table(symbols=self.symbols.tolist(), files=self.files, row_file=self.row_file,
                                  codes=self.codes, file_bm25=self.file_bm25, file_size=self.file_size(),
                                  tool_written=self.files_of_kind(GENERATED_KIND),
                                  builds_objects=self.files_of_kind(OBJECTS_KIND), counted=self.copyable_rows)

    @cached_property
    def rendering(self) -> tuple[frozenset[str], bool]:
        """The folders of this segment's Helm charts, and whether it holds Terraform or a chart (what
        `roles.with_charts` reads a delta's files with): the base's is read once, not at every save."""
        return frozenset(chart_folders(self.files)), renders_go_templates(self.files)

    @cached_property
    def implemented_names(self) -> frozenset[str]:
        """The names of this segment's implementation files, which a delta's headers are paired with
        (`symbols.declaration_twins`): the base's are read once, not at every save."""
        return implemented_names(self.files)

    @cached_property
    def copyable_rows(self) -> np.ndarray:
        """Per row, whether its content counts toward its file's `duplicate_share`: not the unnamed `module` chunk
        that opens a file of several chunks, its imports and namespace line, the same in every file of a C#
        folder or a PHP namespace (eShopOnWeb's and koel's files that shared only these were half copies, and a
        migration or a middleware asked for came 46th to 162nd in the instant pipeline)."""
        counted = np.ones(self.rows, dtype=bool)
        if not self.rows:
            return counted
        starts, counts = self.file_spans
        opening = starts[counts > 1]
        module = np.array([kind == "module" for kind in self.kinds], dtype=bool)
        unnamed = self.symbols.offsets[opening + 1] == self.symbols.offsets[opening]
        counted[opening[module[self.kind_codes[opening]] & unnamed]] = False
        return counted

    def files_of_kind(self, marking: str) -> np.ndarray:
        """Per file, whether the chunker marked its chunks with a kind that says what the file is: a tool's
        (`GENERATED_KIND`), a configuration that builds objects (`OBJECTS_KIND`)."""
        marked = np.array([kind == marking for kind in self.kinds], dtype=bool)
        if not self.rows or not marked.any():
            return np.zeros(len(self.files), dtype=bool)
        return np.logical_or.reduceat(marked[self.kind_codes], self.file_spans[0])

    def file_size(self) -> tuple[np.ndarray, np.ndarray]:
        """Each file's BM25 terms (its chunks' counts summed) and its last chunked line: how dense its
        lines are (one pass over the term counts and one over the rows, by `file_spans`)."""
        if not self.rows:
            return np.zeros(len(self.files)), np.zeros(len(self.files))
        running = np.concatenate([[0.0], np.cumsum(self.term_counts, dtype=np.float64)])
        row_terms = running[self.term_offsets[1:]] - running[self.term_offsets[:-1]]
        starts = self.file_spans[0]
        return np.add.reduceat(row_terms, starts), np.maximum.reduceat(self.end_line, starts).astype(np.float64)

#: one chunk as the store gives it, with its BM25 terms, before it becomes a segment row
Row = tuple[ChunkRecord, dict[str, int]]


def term_arrays(rows: Sequence[Row], vocabulary: Vocabulary) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, term ids, counts) of the rows' BM25 terms; new terms extend `vocabulary`."""
    lengths = np.fromiter((len(terms) for _, terms in rows), dtype=np.int64, count=len(rows))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    term_id = vocabulary.assign(t for _, terms in rows for t in terms)
    ids = np.fromiter((term_id[t] for _, terms in rows for t in terms), dtype=np.int32, count=total)
    counts = np.fromiter((c for _, terms in rows for c in terms.values()), dtype=np.float32, count=total)
    return offsets, ids, counts


def build_segment(rows: Sequence[Row], vocabulary: Vocabulary, *, indexes: bool = True,
                  delta_of: Segment | None = None) -> Segment:
    """The segment of `rows` (grouped by file, in the order given); `indexes=False` leaves its BM25
    indexes empty (a part that `merge` joins with others builds them once). `delta_of` makes a delta of
    that base: BM25 over its own terms, lengths normalised by the base's averages (when it has rows)."""
    file_index: dict[str, int] = {}
    row_file = np.fromiter((file_index.setdefault(r.path, len(file_index)) for r, _ in rows), dtype=np.int32,
                           count=len(rows))
    kind_index: dict[str, int] = {}
    kind_codes = np.fromiter((kind_index.setdefault(r.kind, len(kind_index)) for r, _ in rows), dtype=np.uint8,
                             count=len(rows))
    offsets, ids, counts = term_arrays(rows, vocabulary)
    return assemble(keys=Strings.of(r.key for r, _ in rows), files=list(file_index), row_file=row_file,
                    start_line=np.fromiter((r.start_line for r, _ in rows), dtype=np.int32, count=len(rows)),
                    end_line=np.fromiter((r.end_line for r, _ in rows), dtype=np.int32, count=len(rows)),
                    symbols=Strings.of(symbol_lines(r) for r, _ in rows), kind_codes=kind_codes, kinds=list(kind_index),
                    hashes=Strings.of(r.hash for r, _ in rows), codes=key_codes(r.hash for r, _ in rows),
                    term_offsets=offsets, term_ids=ids, term_counts=counts, vocabulary_size=len(vocabulary),
                    **({} if indexes else {"bm25": _NO_INDEX, "file_bm25": _NO_INDEX}),
                    local=delta_of is not None,
                    average_lengths=(delta_of.bm25.average_length, delta_of.file_bm25.average_length)
                    if delta_of is not None and delta_of.rows else None)


def assemble(*, vocabulary_size: int, bm25: BM25Index | None = None, file_bm25: BM25Index | None = None,
             average_lengths: tuple[float, float] | None = None, local: bool = False, **columns) -> Segment:
    """A segment of these columns, with its BM25 indexes built unless given (a persisted segment has them);
    `average_lengths` (chunks, files) normalise their lengths."""
    rows = len(columns["row_file"])
    chunk_average, file_average = average_lengths or (None, None)
    if bm25 is None:
        docs = np.repeat(np.arange(rows, dtype=np.int32), np.diff(columns["term_offsets"]))
        bm25 = (LocalBM25.from_postings(rows, docs, columns["term_ids"], columns["term_counts"], chunk_average)
                if local else BM25Index.from_postings(rows, docs, columns["term_ids"], columns["term_counts"],
                                                      vocabulary_size))
    if file_bm25 is None:
        file_bm25 = _file_bm25(columns["row_file"], columns["term_offsets"], columns["term_ids"],
                               columns["term_counts"], len(columns["files"]), vocabulary_size, file_average,
                               local=local)
    return Segment(bm25=bm25, file_bm25=file_bm25, **columns)


def _file_bm25(row_file: np.ndarray, offsets: np.ndarray, term_ids: np.ndarray, counts: np.ndarray, files: int,
               vocabulary_size: int, average_length: float | None = None, *, local: bool = False):
    """Whole-file BM25: every (file, term) count summed over the file's chunks (`local`: a LocalBM25)."""
    if not len(term_ids) or not files:
        docs, terms, summed = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.float32)
    else:
        size = max(vocabulary_size, int(term_ids.max()) + 1)
        file_of = np.repeat(row_file.astype(np.int64), np.diff(offsets))
        keys, inverse = np.unique(file_of * size + term_ids.astype(np.int64), return_inverse=True)
        summed = np.bincount(inverse, weights=counts)
        docs, terms = keys // size, keys % size
    if local:
        return LocalBM25.from_postings(files, docs, terms, summed, average_length)
    return BM25Index.from_postings(files, docs, terms, summed, vocabulary_size)


def merge(parts: Sequence[tuple[Segment, np.ndarray]], vocabulary_size: int) -> Segment:
    """One segment of the kept rows of several (a compaction: base rows still live, then the delta's),
    from their columns alone: nothing is read from the store or tokenised again."""
    keys, symbols, hashes, files = [], [], [], []
    row_files, starts, ends, kind_codes, codes, lengths, ids, counts = [], [], [], [], [], [], [], []
    kind_index: dict[str, int] = {}
    for segment, keep in parts:
        rows = np.flatnonzero(keep)
        if not len(rows):
            continue
        kept_files, local = np.unique(segment.row_file[rows], return_inverse=True)
        row_files.append(local.astype(np.int32) + len(files))
        files.extend(segment.files[f] for f in kept_files.tolist())
        keys.append(_take_strings(segment.keys, rows))
        symbols.append(_take_strings(segment.symbols, rows))
        hashes.append(_take_strings(segment.hashes, rows))
        starts.append(segment.start_line[rows])
        ends.append(segment.end_line[rows])
        remap = np.array([kind_index.setdefault(k, len(kind_index)) for k in segment.kinds] or [0], dtype=np.uint8)
        kind_codes.append(remap[segment.kind_codes[rows]])
        codes.append(segment.codes[rows])
        row_lengths, positions = _ragged_positions(segment.term_offsets, rows)
        lengths.append(row_lengths)
        ids.append(segment.term_ids[positions])
        counts.append(segment.term_counts[positions])

    def joined(arrays: list[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype)

    length = joined(lengths, np.int64)
    offsets = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    return assemble(keys=_join_strings(keys), files=files, row_file=joined(row_files, np.int32),
                    start_line=joined(starts, np.int32), end_line=joined(ends, np.int32),
                    symbols=_join_strings(symbols), kind_codes=joined(kind_codes, np.uint8), kinds=list(kind_index),
                    hashes=_join_strings(hashes), codes=joined(codes, np.uint64), term_offsets=offsets,
                    term_ids=joined(ids, np.int32), term_counts=joined(counts, np.float32),
                    vocabulary_size=vocabulary_size)


def expand_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Every position of the ranges [start, start + length), range after range, without a Python loop."""
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + within


def _ragged_positions(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(length of each row, positions of the rows' entries) in a ragged array given by `offsets`."""
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    return lengths, expand_ranges(starts, lengths)


def _take_strings(strings: Strings, rows: np.ndarray) -> Strings:
    lengths, positions = _ragged_positions(strings.offsets, rows)
    blob = strings.blob[positions]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Strings(blob, offsets)


def _join_strings(parts: list[Strings]) -> Strings:
    if not parts:
        return Strings(np.zeros(0, np.uint8), np.zeros(1, np.int64))
    blob = np.concatenate([p.blob for p in parts])
    shifts = np.cumsum([0] + [len(p.blob) for p in parts[:-1]])
    offsets = np.concatenate([parts[0].offsets[:1]] + [p.offsets[1:] + s for p, s in zip(parts, shifts, strict=True)])
    return Strings(blob, offsets.astype(np.int64))
