"""The in-memory corpus follows the store at the cost of what changed: vectors arriving must not rebuild
the chunk table or the BM25 postings, a changed file must not rebuild the base, and a workspace reopened
from its snapshot must answer as the corpus that wrote it."""

import numpy as np
import pytest

import noul_lsp.retrieval.dense as dense
import noul_lsp.store.lmdb_store as lmdb_store
from noul_lsp.retrieval.corpus import Corpus
from noul_lsp.retrieval.dense import HashSlots, VectorTable, search
from noul_lsp.retrieval.snapshot import snapshot_folder
from noul_lsp.store import ChunkRecord, ChunkStore, FileRecord, WriteBatch


def _add_file(store: ChunkStore, path: str, texts: list[str]) -> list[ChunkRecord]:
    batch = WriteBatch()
    records = [ChunkRecord(f"{path}\0{i:08d}", path, i + 1, i + 1, "", "python", "function", "", text, f"h-{text}")
               for i, text in enumerate(texts)]
    for record in records:
        batch.put_chunk(record, {word: 1 for word in record.text.split()})
    batch.put_file(FileRecord(path, 1, 1, path, tuple(r.key for r in records)))
    store.apply(batch)
    return records


def _compacted_and_reopened(store: ChunkStore, late_path: str, late_texts: list[str]) -> tuple[Corpus, Corpus]:
    """The store's corpus compacted (its snapshot written), then a file added after it; and a second corpus
    reopened from that snapshot and the change log: both must read the store alike."""
    corpus = Corpus(store, None)
    corpus.sync()
    assert corpus.compact()
    _add_file(store, late_path, late_texts)
    reopened = Corpus(store, None)
    reopened.sync()
    assert reopened.opened_from_snapshot is not None
    return corpus, reopened


def _replace_file(store: ChunkStore, path: str, old: list[ChunkRecord], texts: list[str]) -> list[ChunkRecord]:
    batch = WriteBatch()
    for record in old:
        batch.delete_chunk(record.key)
    store.apply(batch)
    return _add_file(store, path, texts)


def _delete_file(store: ChunkStore, path: str, old: list[ChunkRecord]) -> None:
    batch = WriteBatch()
    for record in old:
        batch.delete_chunk(record.key)
    batch.delete_file(path)
    store.apply(batch)


def _bm25_top(corpus: Corpus, word: str) -> list[tuple[str, int]]:
    arrays = corpus.arrays()
    scores = arrays.bm25.scores(np.array([arrays.vocabulary[word]]))
    rows = [int(r) for r in np.argsort(-scores, kind="stable") if scores[r] > 0]
    return [(arrays.chunk(r).path, arrays.chunk(r).start_line) for r in rows]


def _bm25_scores(corpus: Corpus, word: str) -> dict[tuple[str, int], float]:
    """Every matching chunk's score, by location (equal scores may tie in another order)."""
    arrays = corpus.arrays()
    scores = arrays.bm25.scores(np.array([arrays.vocabulary[word]]))
    return {(arrays.chunk(r).path, arrays.chunk(r).start_line): pytest.approx(float(scores[r]), rel=1e-5)
            for r in np.flatnonzero(scores > 0).tolist()}


def test_vectors_arriving_rebuild_only_the_vector_table(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    others = [f"word{i} filler" for i in range(5)]
    records = _add_file(store, "a.py", ["retry upload", "cookie jar", "retry upload", *others])  # one text twice
    corpus = Corpus(store, "m@128")
    assert corpus.sync()
    before = corpus.arrays()
    assert (corpus.chunk_count, corpus.embedded_chunks, before.covered["dense"]) == (8, 0, 0)
    assert before.row_slot[0] == before.row_slot[2]  # one slot per distinct text

    batch = WriteBatch()
    batch.put_vector("m@128", records[0].hash, np.ones(4, dtype=np.float32))
    store.apply(batch)
    assert corpus.sync()
    after = corpus.arrays()
    assert after.bm25 is before.bm25 and after.base is before.base  # lexical part kept
    assert corpus.embedded_chunks == 2  # both chunks of the shared text
    assert not corpus.sync()  # nothing new

    _add_file(store, "b.py", ["parse ini"])
    assert corpus.sync()
    changed = corpus.arrays()
    assert changed.base is before.base and changed.delta is not None  # the base is not rebuilt
    assert changed.files == ["a.py", "b.py"]
    assert corpus.chunk_count == 9 and corpus.embedded_chunks == 2


def test_a_changed_file_kills_its_base_rows_and_the_delta_answers(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    old = _add_file(store, "a.py", ["retry upload", "cookie jar"])
    _add_file(store, "b.py", ["cookie parser", "ini reader"])
    corpus = Corpus(store, None)
    corpus.sync()
    base = corpus.arrays().base
    _replace_file(store, "a.py", old, ["upload with backoff"])
    corpus.sync()
    arrays = corpus.arrays()
    assert arrays.base is base and arrays.live is not None and arrays.live_rows == 3
    assert _bm25_top(corpus, "cookie") == [("b.py", 1)]  # a.py's old cookie chunk is dead
    assert _bm25_top(corpus, "backoff") == [("a.py", 1)]
    assert arrays.bm25.document_frequency[arrays.vocabulary["cookie"]] == 1
    every_row = np.arange(arrays.rows, dtype=np.int32)
    for word in ("cookie", "upload", "backoff"):  # which rows hold a term: those it scores, dead rows none
        term = arrays.vocabulary[word]
        holding = arrays.bm25.contains(term, every_row)
        assert np.flatnonzero(holding).tolist() == np.flatnonzero(arrays.bm25.scores(np.array([term])) > 0).tolist()
    assert arrays.bm25.contains(arrays.vocabulary["cookie"], every_row).tolist() == [False, False, True, False, False]
    # a query's term weights reach the base and the delta alike
    both = np.array([arrays.vocabulary["cookie"], arrays.vocabulary["backoff"]])
    once = [arrays.bm25.scores(both[i:i + 1]) for i in range(2)]
    np.testing.assert_allclose(arrays.bm25.scores(both, query_weights=np.array([2.0, 3.0])),
                               2.0 * once[0] + 3.0 * once[1], rtol=1e-6)

    fresh = Corpus(store, None)
    fresh.sync()
    assert corpus.compact(save=False)
    assert corpus.arrays().delta is None and corpus.arrays().rows == 3
    for word in ("cookie", "backoff", "upload", "ini"):
        assert _bm25_scores(corpus, word) == _bm25_scores(fresh, word)


def test_a_deleted_file_leaves_no_row(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    _add_file(store, "a.py", ["retry upload"])
    old = _add_file(store, "b.py", ["retry cookie"])
    corpus = Corpus(store, None)
    corpus.sync()
    _delete_file(store, "b.py", old)
    corpus.sync()
    assert _bm25_top(corpus, "retry") == [("a.py", 1)]
    assert corpus.chunk_count == 1 and corpus.file_count == 1


def test_a_term_only_deleted_files_held_has_no_idf_before_or_after_a_compaction(tmp_path):
    """The vocabulary keeps the terms of deleted files. Such a term must weigh as absent (idf 0) whatever
    the index's history: with dead base rows and a delta, after a compaction, and in a snapshot written
    before this rule (the largest idf for an absent term), else the ranking stage's name-match shares and
    P(here)'s idf mass depend on when the index was last compacted."""
    store = ChunkStore(tmp_path / "idx")
    _add_file(store, "a.py", ["upload parser", "upload retry"])
    old = _add_file(store, "b.py", ["cookie jar"])
    corpus = Corpus(store, None)
    corpus.sync()
    _delete_file(store, "b.py", old)
    corpus.sync()
    arrays = corpus.arrays()
    cookie, upload = arrays.vocabulary["cookie"], arrays.vocabulary["upload"]
    segmented = (float(arrays.bm25.idf[cookie]), float(arrays.bm25.idf[upload]))
    assert corpus.compact()  # a base over the live rows, and its snapshot
    arrays = corpus.arrays()
    assert segmented == (0.0, float(arrays.bm25.idf[upload])) and float(arrays.bm25.idf[cookie]) == 0.0

    from noul_lsp.retrieval.bm25 import BM25Index, bm25_idf
    state = arrays.bm25.state() | {"idf": bm25_idf(2, arrays.bm25.document_frequency).astype(np.float32)}
    assert float(BM25Index.from_state(state).idf[cookie]) == 0.0  # an older snapshot's idf, read with the rule


def test_a_vocabulary_remembers_found_terms_and_stays_right_as_it_grows(monkeypatch):
    """`Vocabulary.get` keeps the terms it found among its sorted codes (an id never changes); terms added
    later, frozen later, and a full memory (it starts again) must not change an answer."""
    import noul_lsp.retrieval.vocabulary as vocabulary

    monkeypatch.setattr(vocabulary, "FOUND_TERMS_KEPT", 2)
    words = vocabulary.Vocabulary()
    first = words.assign(["retry", "upload", "cookie"])
    words.freeze()
    assert [words.get(t) for t in ("retry", "upload", "cookie", "retry")] == [first[t] for t in ("retry", "upload", "cookie", "retry")]
    assert words.get("backoff") is None and "backoff" not in words
    later = words.assign(["backoff", "retry"])
    assert later == {"backoff": 3, "retry": first["retry"]} and words.get("backoff") == 3
    words.freeze()
    assert [words.get(t) for t in ("backoff", "cookie", "upload")] == [3, first["cookie"], first["upload"]]
    assert len(words) == 4 and len(words._found) <= 2


def test_the_symbol_tables_maps_answer_many_keys_as_they_answer_each():
    """The ranking stage asks a packed map (and a base joined with a delta) for all of a query's terms at
    once; the answer must be each key's own lookup, absent keys None."""
    from noul_lsp.retrieval.symbols import _Joined
    from noul_lsp.retrieval.vocabulary import PackedMap, get_many

    base = {"retry": np.array([1, 4, 9], np.int32), "upload": np.array([2], np.int32), "cookie": np.array([0, 3], np.int32)}
    delta = {"cookie": np.array([0], np.int32), "backoff": np.array([1, 2], np.int32)}
    keys = ["cookie", "zebra", "retry", "backoff", "", "upload", "cookie"]
    for mapping in (base, PackedMap.of(base), _Joined(PackedMap.of(base), delta, 10),
                    _Joined(PackedMap.of(base), PackedMap.of(delta), 10), PackedMap.of({})):
        many = get_many(mapping, keys)
        for key, found in zip(keys, many, strict=True):
            one = mapping.get(key)
            assert (found is None and one is None) or (found.tolist() == one.tolist() and found.dtype == one.dtype)


def test_reopened_from_its_snapshot_the_corpus_answers_the_same(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    first = _add_file(store, "a.py", ["retry upload", "cookie jar"])
    _add_file(store, "b.py", ["cookie parser"])
    batch = WriteBatch()
    batch.put_vector("m@128", first[0].hash, np.array([1, 0, 0, 0], dtype=np.float32))
    store.apply(batch)
    corpus = Corpus(store, "m@128")
    corpus.sync()
    assert corpus.compact()  # writes the snapshot
    assert snapshot_folder(store.directory).is_dir()
    _add_file(store, "c.py", ["cookie cutter"])  # after the snapshot: replayed from the change log

    reopened = Corpus(store, "m@128")
    reopened.sync()
    assert reopened.opened_from_snapshot is not None
    current = Corpus(store, "m@128")
    current._read_store()  # what reading every record gives
    current._generation = store.generation()
    assert _bm25_scores(reopened, "cookie") == _bm25_scores(current, "cookie")
    assert reopened.chunk_count == current.chunk_count == 4
    assert reopened.embedded_chunks == current.embedded_chunks == 1
    arrays = reopened.arrays()
    assert arrays.chunk(0).path == "a.py" and arrays.key(0) == first[0].key


def test_definition_codes_meet_the_term_codes_of_other_chunks_after_a_snapshot(tmp_path):
    """The ranking stage's `references` compare a row's definition name with other rows' terms by code: the
    codes must agree whether the corpus was read from the store, from a snapshot, or gained a delta."""
    store = ChunkStore(tmp_path / "idx")
    batch = WriteBatch()
    for key, path, symbol, text in (("h\0", "helpers.py", "_quote_value", "def _quote_value(value): pass"),
                                    ("c\0", "cookies.py", "Jar.persist", "def persist(self): _quote_value(1)")):
        record = ChunkRecord(key, path, 1, 1, symbol, "python", "function", "", text, f"h-{key}")
        batch.put_chunk(record, {word: 1 for word in ("quote_value", "quote", "value", "persist")})
        batch.put_file(FileRecord(path, 1, 1, path, (key,)))
    store.apply(batch)
    for current in _compacted_and_reopened(store, "late.py", ["quote_value again"]):  # a delta row after the snapshot
        current.sync()
        arrays = current.arrays()
        rows = {arrays.chunk(r).path: r for r in range(arrays.rows)}
        definition = arrays.symbols.definition_codes
        assert definition[rows["helpers.py"]] != 0 and definition[rows["late.py"]] == 0
        positions, ids = arrays.row_term_pairs(np.array([rows["cookies.py"], rows["late.py"]]))
        codes = arrays.vocabulary.codes_of(ids)
        assert definition[rows["helpers.py"]] in set(codes[positions == 0].tolist())
        assert definition[rows["helpers.py"]] in set(codes[positions == 1].tolist())  # the delta row's terms
        assert definition[rows["cookies.py"]] in set(codes[positions == 0].tolist())  # `persist`
        assert arrays.vocabulary.codes_of(np.array([-1, len(arrays.vocabulary) + 5])).tolist() == [0, 0]


def test_a_checkpoint_leaves_a_small_edit_to_the_change_log(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    for name in "abcdefghijklmnopqrstuvwxyz":
        _add_file(store, f"{name}.py", [f"{name} one", f"{name} two"])
    corpus = Corpus(store, None)
    corpus.sync()
    assert corpus.checkpoint()  # no snapshot yet: written
    _add_file(store, "zz.py", ["one more"])
    corpus.sync()
    assert not corpus.checkpoint()  # 1 row of 52: the next open replays it from the log
    reopened = Corpus(store, None)
    reopened.sync()
    assert reopened.opened_from_snapshot is not None and reopened.chunk_count == 53
    for name in ("y1.py", "y2.py"):
        _add_file(store, name, ["many", "more", "rows"])
    corpus.sync()
    assert corpus.checkpoint() and corpus.arrays().delta is None  # 7 rows of 52: folded and written


def test_a_damaged_snapshot_is_passed_over(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    _add_file(store, "a.py", ["retry upload", "cookie jar"])
    corpus = Corpus(store, None)
    corpus.sync()
    corpus.compact()
    column = snapshot_folder(store.directory) / "term_ids.npy"
    data = bytearray(column.read_bytes())
    data[-1] ^= 0xFF
    column.write_bytes(bytes(data))
    reopened = Corpus(store, None)
    reopened.sync()
    assert reopened.opened_from_snapshot is None  # read from the store instead
    assert _bm25_top(reopened, "cookie") == [("a.py", 2)]


@pytest.mark.parametrize("damage", ["missing", "flipped"])
def test_a_missing_or_damaged_approximate_index_is_built_again(tmp_path, monkeypatch, damage):
    """The snapshot's faiss file is derived data: gone or damaged, the corpus opens from the rest of the
    snapshot and builds the index again, and the leg answers as before."""
    monkeypatch.setattr(dense, "APPROXIMATE_FROM", 100)
    store = ChunkStore(tmp_path / "idx")
    rng = np.random.default_rng(5)
    records = _add_file(store, "a.py", [f"text number {i}" for i in range(300)])
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batch = WriteBatch()
    for record, vector in zip(records, vectors, strict=True):
        batch.put_vector("m@128", record.hash, vector)
    store.apply(batch)
    corpus = Corpus(store, "m@128")
    corpus.sync()
    assert corpus.arrays().tables["dense"].ann is not None and corpus.compact()
    index_file = snapshot_folder(store.directory) / "dense.faiss"
    if damage == "missing":
        index_file.unlink()
    else:
        data = bytearray(index_file.read_bytes())
        data[len(data) // 2] ^= 0xFF
        index_file.write_bytes(bytes(data))
    reopened = Corpus(store, "m@128")
    reopened.sync()
    arrays = reopened.arrays()
    assert reopened.opened_from_snapshot is not None and arrays.tables["dense"].ann is not None
    found = search(arrays.tables["dense"], arrays.row_slot, vectors[42], 5, None, arrays.slot_rows)
    assert arrays.chunk(int(found.rows[0])).start_line == records[42].start_line


def test_the_change_log_says_what_changed_and_when_it_cannot(tmp_path, monkeypatch):
    store = ChunkStore(tmp_path / "idx")
    start = store.generation()
    records = _add_file(store, "a.py", ["retry upload"])
    batch = WriteBatch()
    batch.put_vector("m@128", records[0].hash, np.ones(4, dtype=np.float32))
    store.apply(batch)
    changes = store.changes_since(start)
    assert changes.paths == {"a.py"} and changes.vectors == {"m@128": {records[0].hash}}
    assert store.changes_since(store.generation()).paths == frozenset()
    monkeypatch.setattr(lmdb_store, "CHANGE_LOG_KEEP", 2)
    for name in ("b.py", "c.py", "d.py"):
        _add_file(store, name, ["x"])
    assert store.changes_since(start) is None  # the log no longer reaches back: read everything
    assert store.changes_since(store.generation() - 1).paths == {"d.py"}


def test_the_approximate_index_returns_the_exact_top_hit(monkeypatch):
    """faiss's IVF index over 3,000 slots (the threshold lowered for the test) finds what exact search
    finds first, for queries near stored vectors and for random ones."""
    monkeypatch.setattr(dense, "APPROXIMATE_FROM", 1000)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((3000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    slots = HashSlots()
    row_slot = slots.assign(np.arange(3000, dtype=np.uint64), [str(i) for i in range(3000)])
    exact, approximate = VectorTable("m"), VectorTable("m")
    for table in (exact, approximate):
        table.grow(3000)
        table.fill(np.arange(3000), list(vectors))
    assert approximate.index_if_large() and approximate.ann is not None and exact.ann is None
    assert approximate.matrix.dtype == np.float16
    queries = [vectors[i] + 0.05 * rng.standard_normal(32).astype(np.float32) for i in range(0, 3000, 300)]
    for query in queries:
        query /= np.linalg.norm(query)
        truth = search(exact, row_slot, query, 10, None)
        found = search(approximate, row_slot, query, 10, None)
        assert found.rows[0] == truth.rows[0]
        assert found.at(found.rows[:1])[0] == pytest.approx(truth.scores[0], abs=2e-3)
    allowed = np.zeros(3000, dtype=bool)
    allowed[[5, 17, 2999]] = True  # a narrow filter: scanned exactly
    assert set(search(approximate, row_slot, queries[0], 10, allowed).rows.tolist()) == {5, 17, 2999}
    # rows that repeat slots (copies), the last 500 a delta after its base: the slots' rows found through
    # the base's sort and a scan of the delta are the rows a scan of every row finds
    repeated = np.concatenate([row_slot, row_slot[::7], row_slot[:500]]).astype(np.int32)
    base_rows = len(repeated) - 500
    from_delta = 0
    for query in queries:
        scanned = search(approximate, repeated, query, 40, None)
        through = search(approximate, repeated, query, 40, None, dense.SlotRows(repeated[:base_rows]))
        assert np.array_equal(scanned.rows, through.rows) and np.array_equal(scanned.scores, through.scores)
        from_delta += int((through.rows >= base_rows).sum())
    assert from_delta > 0


def test_a_save_asks_vectors_only_for_the_saved_file(polyglot, tmp_path):
    """After an edit, the texts without a vector are the saved file's new ones: the corpus says so, and
    the static pass embeds just those (not a scan of every chunk record)."""
    from noul_lsp.config import Settings
    from noul_lsp.session.workspace import Workspace

    workspace = Workspace(polyglot, Settings(cache_dir=str(tmp_path / "c")))
    with workspace.store.indexing_lock():
        workspace.indexer.update()
        workspace.embed_static()
    assert workspace.corpus.pending_keys("static") == []
    (polyglot / "src" / "net" / "retry.py").write_text("def ziggurat():\n    return 1\n\n\ndef quaternion():\n    return 2\n")
    with workspace.store.indexing_lock():
        workspace.indexer.update(paths=["src/net/retry.py"])
        workspace.corpus.sync()
        pending = workspace.corpus.pending_keys("static")
        assert pending and all(key.startswith("src/net/retry.py\0") for key in pending)
        report = workspace.embed_static()
    assert report.embedded == len(pending)
    assert workspace.corpus.pending_keys("static") == []
    assert workspace.corpus.arrays().base.rows > 0 and workspace.corpus.arrays().delta is not None
    workspace.close()


def test_a_header_is_paired_with_its_implementation_in_the_base_the_delta_and_a_snapshot(tmp_path):
    """The ranking stage weighs a header whose implementation the workspace holds (`declaration_twin`): the
    pair is found within a segment, across the base and a later delta, and read back from a snapshot. A
    header without an implementation (header-only code) is not paired, and neither is an implementation."""
    store = ChunkStore(tmp_path / "idx")
    for path in ("include/queue.h", "queue.c", "include/task.h", "tasks.c", "include/portmacro.h", "timers.c"):
        _add_file(store, path, [f"{path} body"])
    # a delta header, its implementation in the base
    for current in _compacted_and_reopened(store, "include/timers.h", ["timers declared"]):
        current.sync()
        arrays = current.arrays()
        assert arrays.delta is not None
        twins = dict(zip(arrays.files, arrays.symbols.declaration_twin.tolist(), strict=True))
        assert {path for path, paired in twins.items() if paired} == {
            "include/queue.h", "include/task.h", "include/timers.h"}
