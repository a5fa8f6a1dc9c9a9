"""The corpus's base segment on disk beside the store, so that opening a workspace reads arrays, not every
chunk record: columns, BM25 postings, vocabulary, vector slots and tables (float16), approximate indexes.

A snapshot is a cache of what the store holds at one generation; the change log replays what came after
(corpus.py). It is written whole into a new folder and renamed into place, and every file's CRC-32 is
checked before it is mapped: a damaged, partial or foreign snapshot is passed over (the corpus then reads
the store), never trusted.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import zlib
from pathlib import Path

import numpy as np

from noul_lsp.retrieval.ann import ApproximateIndex
from noul_lsp.retrieval.bm25 import BM25Index
from noul_lsp.retrieval.dense import APPROXIMATE_FROM, HashSlots
from noul_lsp.retrieval.segment import Segment, Strings, assemble
from noul_lsp.retrieval.symbols import SymbolTable
from noul_lsp.retrieval.vocabulary import PackedMap, Vocabulary

#: 2: the slots' code order and each table's mean vector; 3: the definitions' term codes; 4: a Go file under a
#: docs folder is source (roles.py): the stored roles are computed again; 5: the symbols column holds the
#: definitions nested in each chunk (segment.symbol_lines), and the symbol table knows them; 6: a symbol
#: spread over lines is one line of that column, and Ruby's `save!` is defined as `save` too; 7: a source file
#: as dense as minified code is generated, and roles.py reads more paths (the stored roles are computed again); 8: the
#: table knows each header's implementation (symbols.declaration_twins); 9: a copied C++ library's `.c++`, `.h++` and
#: `.mpp` files are generated too (roles.py reads the chunker's C and C++ suffixes: the stored roles are computed
#: again); 10: a module named for examples or benchmarks, a benchmark's file, a project's samples below its own
#: source set and a package below a main source set named like a generated folder, MDX and scdoc pages (roles.py:
#: the stored roles are computed again)
FORMAT = 10
FOLDER = "corpus-snapshot"
#: the symbol table's maps (stored packed) and arrays
_TABLE_MAPS = ("definitions", "symbol_terms", "scopes", "stems", "path_terms", "path_suffixes")
_TABLE_ARRAYS = ("roles", "file_start", "file_rows", "duplicate_share", "depths", "definition_codes",
                 "declaration_twin")
_STRING_COLUMNS = ("keys", "symbols", "hashes")
_NUMBER_COLUMNS = ("row_file", "start_line", "end_line", "kind_codes", "codes", "term_offsets", "term_ids",
                   "term_counts")


def snapshot_folder(store_directory: Path) -> Path:
    return Path(store_directory) / FOLDER


def save_snapshot(corpus, folder: Path | None = None) -> Path:
    """Write the corpus's base and its tables (after a compaction: a delta would be lost)."""
    if corpus._delta is not None or not corpus._live.all():
        raise ValueError("a snapshot is of a compacted corpus: compact it first")
    folder = folder or snapshot_folder(corpus.store.directory)
    base: Segment = corpus._base
    arrays: dict[str, np.ndarray] = {}
    for name in _STRING_COLUMNS:
        strings: Strings = getattr(base, name)
        arrays[f"{name}.blob"], arrays[f"{name}.offsets"] = strings.blob, strings.offsets
    for name in _NUMBER_COLUMNS:
        arrays[name] = getattr(base, name)
    _put_strings(arrays, "files", base.files)
    _put_strings(arrays, "kinds", base.kinds)
    arrays["vocabulary.codes"], arrays["vocabulary.ids"] = corpus._vocabulary.state()
    for prefix, index in (("bm25", base.bm25), ("file_bm25", base.file_bm25)):
        arrays.update({f"{prefix}.{k}": v for k, v in index.state().items()})
    arrays["slots.codes"] = corpus._slots.codes
    arrays["slots.order"] = corpus._slots.order
    _put_strings(arrays, "slots.hashes", corpus._slots.all_hashes())
    arrays["base_slot"] = corpus._base_slot
    rowless = sorted(corpus._rowless.items())
    _put_strings(arrays, "rowless.paths", [p for p, _ in rowless])
    _put_strings(arrays, "rowless.reasons", [r for _, r in rowless])
    table = base.symbol_table  # built here, at the end of an indexing pass, not on the first query
    for name in _TABLE_MAPS:
        mapping = getattr(table, name)
        packed = mapping if isinstance(mapping, PackedMap) else PackedMap.of(mapping)
        arrays[f"symbols.{name}.codes"], arrays[f"symbols.{name}.offsets"] = packed.codes, packed.offsets
        arrays[f"symbols.{name}.values"] = packed.values
    for name in _TABLE_ARRAYS:
        arrays[f"symbols.{name}"] = getattr(table, name)
    tables = {}
    for stale in [*folder.parent.glob(f"{folder.name}.new-*"), *folder.parent.glob(f"{folder.name}.old-*")]:
        shutil.rmtree(stale, ignore_errors=True)  # left by a writer killed mid-way
    temporary = folder.with_name(f"{folder.name}.new-{os.getpid()}")
    temporary.mkdir(parents=True)
    checksums = {}
    for leg, vectors in corpus.tables.items():
        if vectors.model_key is None:
            continue
        slots = len(corpus._slots)
        vectors.grow(slots)
        arrays[f"{leg}.present"] = vectors.present[:slots]
        arrays[f"{leg}.matrix"] = vectors.matrix[:slots].astype(np.float16)
        mean = vectors.mean_vector()
        if mean is not None:
            arrays[f"{leg}.mean"] = mean
        tables[leg] = vectors.model_key
        if vectors.ann is not None:
            path = temporary / f"{leg}.faiss"
            vectors.ann.save(path)
            checksums[f"{leg}.faiss"] = _crc_of(path)
    for name, value in arrays.items():
        path = temporary / f"{name}.npy"
        np.save(path, np.ascontiguousarray(value), allow_pickle=False)
        checksums[name] = _crc_of(path)
    meta = {"format": FORMAT, "generation": corpus._generation, "vocabulary_size": len(corpus._vocabulary),
            "tables": tables, "checksums": checksums}
    (temporary / "meta.json").write_text(json.dumps(meta))
    old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    temporary.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def load_snapshot(corpus) -> int | None:
    """Open the snapshot into `corpus` (base, slots, tables, file statuses); its generation, or None when
    there is none usable (then nothing in `corpus` changed)."""
    folder = snapshot_folder(corpus.store.directory)
    try:
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            return None
        arrays = {name: _checked(folder / f"{name}.npy", crc) for name, crc in meta["checksums"].items()
                  if not name.endswith(".faiss")}
        vocabulary_size = int(meta["vocabulary_size"])
        columns = {name: Strings(arrays[f"{name}.blob"], arrays[f"{name}.offsets"]) for name in _STRING_COLUMNS}
        columns.update({name: arrays[name] for name in _NUMBER_COLUMNS})
        base = assemble(files=_strings(arrays, "files"), kinds=_strings(arrays, "kinds"),
                        vocabulary_size=vocabulary_size,
                        bm25=BM25Index.from_state(_prefixed(arrays, "bm25")),
                        file_bm25=BM25Index.from_state(_prefixed(arrays, "file_bm25")), **columns)
        vocabulary = Vocabulary(np.asarray(arrays["vocabulary.codes"]), np.asarray(arrays["vocabulary.ids"]))
        slot_hashes = _packed_strings(arrays, "slots.hashes")
        slots = HashSlots(np.asarray(arrays["slots.codes"]), slot_hashes, order=np.asarray(arrays["slots.order"]))
        base_slot = np.asarray(arrays["base_slot"])
        if (len(vocabulary) != vocabulary_size or len(base_slot) != base.rows or len(base.codes) != base.rows
                or len(slot_hashes) != len(slots) or (len(base_slot) and int(base_slot.max()) >= len(slots))):
            return None
        rowless = dict(zip(_strings(arrays, "rowless.paths"), _strings(arrays, "rowless.reasons"), strict=True))
        maps = {name: PackedMap(arrays[f"symbols.{name}.codes"], arrays[f"symbols.{name}.offsets"],
                                arrays[f"symbols.{name}.values"]) for name in _TABLE_MAPS}
        table = SymbolTable(**maps, **{name: arrays[f"symbols.{name}"] for name in _TABLE_ARRAYS},
                            file_bm25=base.file_bm25)
    except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):  # JSONDecodeError: ValueError
        return None
    base.__dict__["symbol_table"] = table  # the segment's cached table, as built when the snapshot was written
    corpus._vocabulary = vocabulary
    corpus._slots = slots
    corpus._set_base(base, base_slot)
    corpus._rowless = rowless
    for leg, table in corpus.tables.items():
        table.reset()
        table.grow(len(slots))
        if table.model_key is None:
            continue
        if meta["tables"].get(leg) == table.model_key:
            present = np.asarray(arrays[f"{leg}.present"], dtype=bool)
            matrix = np.asarray(arrays[f"{leg}.matrix"])
            large = int(present.sum()) > APPROXIMATE_FROM  # float16 then, as `index_if_large` keeps it
            table.matrix = np.zeros((len(table.present), matrix.shape[1]), dtype=np.float16 if large else np.float32)
            table.matrix[:len(matrix)] = matrix
            table.present[:len(present)] = present
            if f"{leg}.mean" in arrays:
                table.remember_mean(np.asarray(arrays[f"{leg}.mean"], dtype=np.float32))
            table.ann = _approximate_index(folder / f"{leg}.faiss", meta["checksums"].get(f"{leg}.faiss"))
        else:  # another model than the snapshot's: its vectors come from the store
            corpus._load_vectors(table, np.arange(len(slots)))
    return int(meta["generation"])


def _approximate_index(path: Path, crc: int | None) -> ApproximateIndex | None:
    """The snapshot's approximate index of one table; None when it has none, or its file is missing or
    damaged (the corpus then builds one again on its next sync: an index is derived data)."""
    try:
        if crc is None or _crc_of(path) != crc:
            return None
        return ApproximateIndex.load(path)
    except (OSError, RuntimeError):  # faiss raises RuntimeError on a file it cannot read
        return None


def _crc_of(path: Path) -> int:
    """CRC-32 of a file, read through a map (no copy of it into Python bytes)."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return zlib.crc32(mapped)


def _checked(path: Path, crc: int) -> np.ndarray:
    if _crc_of(path) != crc:
        raise ValueError(f"{path.name} fails its checksum")
    # a plain array over the mapped file: numpy's memmap subclass costs a Python call per indexing
    return np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)


def _put_strings(arrays: dict[str, np.ndarray], name: str, values) -> None:
    strings = Strings.of(values)
    arrays[f"{name}.blob"], arrays[f"{name}.offsets"] = strings.blob, strings.offsets


def _packed_strings(arrays: dict[str, np.ndarray], name: str) -> Strings:
    return Strings(np.asarray(arrays[f"{name}.blob"]), np.asarray(arrays[f"{name}.offsets"]))


def _strings(arrays: dict[str, np.ndarray], name: str) -> list[str]:
    return _packed_strings(arrays, name).tolist()


def _prefixed(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {name[len(prefix) + 1:]: value for name, value in arrays.items() if name.startswith(prefix + ".")}
