"""Settings that change what is indexed are part of the index's identity: after a change, the next update
converges to what a fresh build with the new settings holds (no `--rebuild` needed)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from noul_lsp.config import IndexSettings
from noul_lsp.index import Indexer
from noul_lsp.store import ChunkStore

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"


def workspace(folder: Path) -> Path:
    for name in ("src/net/retry.py", "src/store/cookies.py", "docs/deploy.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / name, folder / name)
    return folder


def held(store: ChunkStore) -> dict:
    return {path: (record.chunks, record.skipped) for path, record in store.files().items()}


def fresh_build(root: Path, folder: Path, settings: IndexSettings) -> dict:
    store = ChunkStore(folder)
    Indexer(root, store, settings).update()
    try:
        return held(store)
    finally:
        store.close()


def test_a_file_skipped_for_its_size_is_indexed_once_the_cap_is_raised(tmp_path):
    root = workspace(tmp_path / "ws")
    store = ChunkStore(tmp_path / "idx")
    small = IndexSettings(max_file_bytes=300)
    Indexer(root, store, small).update()
    assert held(store)["src/net/retry.py"][1]  # skipped: too large
    report = Indexer(root, store, IndexSettings()).update()
    assert report.files_indexed == 3
    assert held(store) == fresh_build(root, tmp_path / "fresh", IndexSettings())
    assert not held(store)["src/net/retry.py"][1] and held(store)["src/net/retry.py"][0]
    again = Indexer(root, store, IndexSettings()).update()
    assert again.files_unchanged == 3 and again.files_indexed == 0  # the settings are remembered
    store.close()


def test_new_chunking_settings_recut_unchanged_files(tmp_path):
    root = workspace(tmp_path / "ws")
    store = ChunkStore(tmp_path / "idx")
    Indexer(root, store, IndexSettings()).update()
    narrow = dataclasses.replace(IndexSettings(), window_lines=4, window_overlap=1)
    Indexer(root, store, narrow).update()
    assert held(store) == fresh_build(root, tmp_path / "fresh", narrow)
    assert len(held(store)["docs/deploy.md"][0]) > 1
    store.close()


def test_excluding_then_including_converges_both_ways(tmp_path):
    root = workspace(tmp_path / "ws")
    store = ChunkStore(tmp_path / "idx")
    excluding = dataclasses.replace(IndexSettings(), exclude=("docs/",))
    Indexer(root, store, excluding).update()
    assert "docs/deploy.md" not in held(store)
    Indexer(root, store, IndexSettings()).update()
    assert held(store) == fresh_build(root, tmp_path / "fresh", IndexSettings())
    store.close()


def test_an_index_made_before_a_grammar_was_added_recuts_that_language_once(tmp_path, monkeypatch):
    """An upgrade that adds a grammar: the Kotlin file was a line window, it becomes definitions without
    `--rebuild` (and the next update looks at nothing again)."""
    import noul_lsp.chunking as chunking
    import noul_lsp.chunking.languages as languages
    import noul_lsp.index.indexer as indexer

    root = workspace(tmp_path / "ws")
    shutil.copy(Path(__file__).parent / "fixtures" / "more_languages" / "kotlin" / "RetryPolicy.kt", root)
    store = ChunkStore(tmp_path / "idx")

    def kinds() -> set[str]:
        return {chunk.kind for chunk in store.chunks(held(store)["RetryPolicy.kt"][0])}

    with monkeypatch.context() as previous_version:  # as the version before chunked: no Kotlin grammar
        previous_version.delitem(languages._BY_EXTENSION, ".kt")
        previous_version.setattr(indexer, "CHUNKING_IDENTITY", "1:without-kotlin")
        Indexer(root, store, IndexSettings()).update()
        assert kinds() == {"text"}
    assert indexer.CHUNKING_IDENTITY == chunking.CHUNKING_IDENTITY
    Indexer(root, store, IndexSettings()).update()
    assert held(store) == fresh_build(root, tmp_path / "fresh", IndexSettings())
    assert {"class", "function"} <= kinds()  # the small class is one chunk at the default budget
    assert Indexer(root, store, IndexSettings()).update().files_indexed == 0
    store.close()


def test_new_chunking_rules_rewrite_the_records_of_chunks_whose_text_is_the_same(tmp_path, monkeypatch):
    """A chunk's key is its path, line and text: rules that learn more of the same text (the definitions
    nested in it) must rewrite its record, or an index made before them never learns it."""
    from noul_lsp.index import indexer
    from noul_lsp.store import WriteBatch

    root = workspace(tmp_path / "ws")
    store = ChunkStore(tmp_path / "idx")
    Indexer(root, store, IndexSettings()).update()
    jar = next(c for c in store.chunks() if c.symbol == "CookieJar")
    assert "CookieJar.save" in jar.names
    batch = WriteBatch()  # the record as an index of the rules before held it
    batch.put_chunk(dataclasses.replace(jar, names=()), {})
    store.apply(batch)
    monkeypatch.setattr(indexer, "CHUNKING_IDENTITY", indexer.CHUNKING_IDENTITY + ",next")
    report = Indexer(root, store, IndexSettings()).update()
    assert report.chunks_added == 0  # the same texts: nothing new to embed
    assert next(c for c in store.chunks() if c.key == jar.key).names == jar.names
    store.close()
