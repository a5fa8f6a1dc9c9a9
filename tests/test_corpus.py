"""The in-memory corpus follows the store without redoing work: vectors arriving in the background
must not rebuild the chunk table or the BM25 postings."""

import numpy as np

from noul_lsp.retrieval.corpus import Corpus
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


def test_vectors_arriving_rebuild_only_the_dense_matrix(tmp_path):
    store = ChunkStore(tmp_path / "idx")
    records = _add_file(store, "a.py", ["retry upload", "cookie jar", "retry upload"])  # one text twice
    corpus = Corpus(store, "m@128")
    assert corpus.sync()
    before = corpus.arrays()
    assert (corpus.chunk_count, corpus.embedded_chunks, len(before.dense_rows)) == (3, 0, 0)

    batch = WriteBatch()
    batch.put_vector("m@128", records[0].hash, np.ones(4, dtype=np.float32))
    store.apply(batch)
    assert corpus.sync()
    after = corpus.arrays()
    assert after.bm25 is before.bm25 and after.entries is before.entries  # lexical part kept
    assert corpus.embedded_chunks == 2  # both chunks of the shared text
    assert after.dense_rows.tolist() == [0, 2] and after.dense_matrix.shape == (2, 4)
    assert not corpus.sync()  # nothing new

    _add_file(store, "b.py", ["parse ini"])
    assert corpus.sync()
    changed = corpus.arrays()
    assert changed.bm25 is not before.bm25 and changed.files == ["a.py", "b.py"]
    assert corpus.chunk_count == 4 and corpus.embedded_chunks == 2
    assert changed.dense_rows.tolist() == [0, 2]
