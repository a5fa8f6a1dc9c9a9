"""Incremental indexing: bring the store in line with the files on disk, then embed what has no vector.

`update` is cheap and runs first: a file whose mtime and size are unchanged is not read; a file read again
whose bytes hash the same is not re-chunked; changed files are re-chunked and their BM25 terms stored.
Lexical search is complete when it returns. The settings that decide what is indexed and how it is cut
(size cap, excludes, chunking) are recorded with the index: when they differ, the next full update looks
at every file again (a file skipped for its size is indexed once the cap is raised), so an update always
converges to what a fresh build with these settings would hold. `embed_pending` then computes vectors only for content
hashes that have none for this model, in batches that each commit on their own, so it can stop at any
moment (Ctrl-C, a newer edit, kill -9) and continue later with nothing lost and nothing done twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from noul_lsp.chunking import CHUNKING_IDENTITY, GENERATED_KIND, Chunk, FileChunker
from noul_lsp.config import IndexSettings
from noul_lsp.store import ChunkRecord, ChunkStore, FileRecord, WriteBatch
from noul_lsp.text.terms import term_counts
from noul_lsp.workspace.discovery import DiscoveredFile, SkippedFile, discover, gitignore_spec, read_text_file

#: Files per write transaction while indexing.
FILES_PER_BATCH = 200
#: shared vectors per write transaction (a few MB)
SHARED_PER_BATCH = 4096
#: the store's meta key of `settings_identity`
SETTINGS_KEY = "index_settings"
#: meta key prefix (+ model key): the content hashes whose vectors were computed while the shared store
#: could not take them, as a JSON list ("" once offered)
UNPUBLISHED = "unpublished:"
#: the most content hashes kept unpublished (the newest; ~4 MB of JSON): an outage through a cold index of a
#: very large workspace offers the rest as the next teammate computes them
UNPUBLISHED_MOST = 100_000


def settings_identity(settings: IndexSettings) -> str:
    """A digest of the settings and chunking rules that decide which files are indexed and how they are cut.
    (The token budget is not among them: vectors are stored per model and budget already.)"""
    relevant = {"max_file_bytes": settings.max_file_bytes, "exclude": list(settings.exclude),
                "use_default_excludes": settings.use_default_excludes, "chunk_max_chars": settings.chunk_max_chars,
                "window_lines": settings.window_lines, "window_overlap": settings.window_overlap,
                "chunking": CHUNKING_IDENTITY}
    return hashlib.blake2b(json.dumps(relevant, sort_keys=True).encode(), digest_size=12).hexdigest()


@dataclass
class UpdateReport:
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    skipped: list[str] = field(default_factory=list)
    #: listed paths that are no regular file inside the root (links out, broken links, FIFOs, devices), why
    passed_over: list[str] = field(default_factory=list)
    seconds: float = 0.0


class VectorSource(Protocol):
    """Vectors computed elsewhere (a team's shared store): asked for before embedding, offered after.
    It never raises: when it cannot be used it answers nothing and says why in `problem`."""

    problem: str
    #: whether `problem` may pass (unreachable), so that what is computed meanwhile is offered later
    transient: bool

    def fetch(self, model_key: str, hashes: list[str]) -> dict[str, np.ndarray]: ...
    def publish(self, model_key: str, items: list[tuple[str, np.ndarray]]) -> None: ...


@dataclass
class EmbedReport:
    embedded: int = 0
    pending: int = 0
    seconds: float = 0.0
    stopped: bool = False
    #: vectors taken from the shared store instead of being computed
    fetched: int = 0
    #: why the shared store was not used ("" when it was, or when none is configured)
    share_problem: str = ""
    #: vectors offered to the shared store (those computed now, and those computed while it was unreachable)
    published: int = 0

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0


def lexical_terms(chunk: Chunk | ChunkRecord) -> dict[str, int]:
    """BM25 terms of a chunk: its code, its symbol and its file path (so `cookies` finds cookies.py)."""
    return term_counts(f"{chunk.path}\n{chunk.symbol}\n{chunk.text}")


def _record(chunk: Chunk) -> ChunkRecord:
    return ChunkRecord(chunk.key, chunk.path, chunk.start_line, chunk.end_line, chunk.symbol, chunk.language,
                       chunk.kind, chunk.header, chunk.text, chunk.content_hash, chunk.names)


class Indexer:
    """Keeps one workspace root's store up to date. One indexer per root at a time (see `indexing_lock`)."""

    def __init__(self, root: Path, store: ChunkStore, settings: IndexSettings) -> None:
        self.root = Path(root).resolve()
        self.store = store
        self.settings = settings
        self.chunker = FileChunker(settings)
        self._embed_last = gitignore_spec(settings.embed_last)

    def update(self, *, paths: list[str] | None = None,
               progress: Callable[[int, int, int], None] | None = None) -> UpdateReport:
        """Sync the store with the disk. With `paths`, only those (relative) paths are looked at.

        `progress(files_done, files_total, chunks_so_far)` is called after each batch.
        """
        started = time.perf_counter()
        report = UpdateReport()
        identity = settings_identity(self.settings)
        look_again = self.store.meta(SETTINGS_KEY) != identity  # settings changed: no file is "unchanged"
        known = self.store.files() if paths is None else self.store.files_at(paths)
        passed_over: list[str] = []
        found = discover(self.root, self.settings, passed_over, paths=paths)
        if paths is None:
            report.passed_over = passed_over
        if paths is not None:
            wanted = set(paths)
            folders = tuple(p.rstrip("/") + "/" for p in paths)  # a deleted or moved folder comes as one path

            def concerned(path: str) -> bool:
                return path in wanted or path.startswith(folders)

            found = [f for f in found if concerned(f.path)]
            present = {f.path for f in found}
            gone = [p for p in known if concerned(p) and p not in present]
        else:
            present = {f.path for f in found}
            gone = [p for p in known if p not in present]
        report.files_seen = len(found)
        batch = WriteBatch()
        pending_files = 0
        for number, file in enumerate(found, 1):
            previous = known.get(file.path)
            if file.vendored is None:  # git could not say this time: as the index knew it
                file = replace(file, vendored=previous.vendored if previous is not None else False)
            if (previous is not None and not look_again and previous.mtime_ns == file.mtime_ns
                    and previous.size == file.size and previous.vendored == file.vendored):
                report.files_unchanged += 1
            else:
                self._index_file(file, previous, batch, report, rechunk=look_again)
                pending_files += 1
            if pending_files >= FILES_PER_BATCH:
                self.store.apply(batch)
                batch, pending_files = WriteBatch(), 0
                if progress:
                    progress(number, len(found), report.chunks_added)
        for path in gone:
            self._remove_file(known[path], batch, report)
        if paths is None and look_again:
            batch.put_meta(SETTINGS_KEY, identity)  # last: a kill before this looks at everything again
        self.store.apply(batch)
        if progress:
            progress(len(found), len(found), report.chunks_added)
        report.seconds = time.perf_counter() - started
        return report

    def _index_file(self, file: DiscoveredFile, previous: FileRecord | None, batch: WriteBatch,
                    report: UpdateReport, *, rechunk: bool = False) -> None:
        try:
            data, text = read_text_file(file, self.settings)
        except SkippedFile as skipped:
            report.skipped.append(str(skipped))
            if skipped.transient:
                return  # keep what was indexed before; the next update tries again
            if previous is not None and previous.chunks:
                self._remove_file(previous, batch, report)  # became binary or too large
            # Remembered with its reason, so an unchanged skipped file is not read again.
            batch.put_file(FileRecord(file.path, file.mtime_ns, file.size, "", (), skipped=str(skipped),
                                      vendored=file.vendored))
            return
        file_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
        # a file the ignore rules came to match, or no longer do, is cut again (read as another kind, a chunk of
        # the same text keeps its key: its record is written again)
        rechunk = rechunk or (previous is not None and previous.vendored != file.vendored)
        if previous is not None and previous.hash == file_hash and not rechunk:
            batch.put_file(FileRecord(file.path, file.mtime_ns, file.size, file_hash, previous.chunks,
                                      vendored=file.vendored))
            report.files_unchanged += 1
            return
        chunks = self.chunker.chunk(file.path, text, vendored=file.vendored)
        keys = tuple(c.key for c in chunks)
        old = set(previous.chunks) if previous is not None else set()
        for key in old.difference(keys):
            batch.delete_chunk(key)
            report.chunks_removed += 1
        for chunk in chunks:
            if chunk.key not in old:
                batch.put_chunk(_record(chunk), lexical_terms(chunk))
                report.chunks_added += 1
            elif rechunk:  # the same text, but new rules may know more of it (its nested definitions)
                batch.put_chunk(_record(chunk), lexical_terms(chunk))
        batch.put_file(FileRecord(file.path, file.mtime_ns, file.size, file_hash, keys, vendored=file.vendored))
        report.files_indexed += 1

    def _remove_file(self, record: FileRecord, batch: WriteBatch, report: UpdateReport) -> None:
        for key in record.chunks:
            batch.delete_chunk(key)
        report.chunks_removed += len(record.chunks)
        batch.delete_file(record.path)
        report.files_removed += 1

    # -- embeddings --------------------------------------------------------------------------------

    def pending_embeddings(self, model_key: str, *, include_last: bool = True,
                           keys: list[str] | None = None) -> list[ChunkRecord]:
        """Chunks whose text has no vector for this model, one per distinct text, in embedding order:
        source before tests and docs (`embed_last`, left out entirely without `include_last`), and the
        code a tool wrote (its head says so) after both, by length within each group: grpc-gateway's
        13,117 generated texts of 16,874 (protoc's `.pb.go`) were sorted with its 2,038 texts of source,
        whose last came 3,401st, and its tests' and docs' after all of them (the static leg covers every
        chunk meanwhile).
        `keys` names the candidates (the workspace's corpus knows which texts lack a vector: reading every
        chunk record after each save would cost the whole index)."""
        chunks = self.store.chunks(keys)
        missing = self.store.missing_vectors(model_key, {c.hash for c in chunks})
        unique: dict[str, ChunkRecord] = {}
        for chunk in chunks:
            if chunk.hash in missing and chunk.hash not in unique:
                unique[chunk.hash] = chunk
        last = {c.path: self._embed_last.match_file(c.path) for c in unique.values()}  # one match per file
        ordered = sorted(unique.values(), key=lambda c: (c.kind == GENERATED_KIND, last[c.path], len(c.embed_text)))
        return ordered if include_last else [c for c in ordered if not last[c.path]]

    def embed_pending(self, embedder, *, should_stop: Callable[[], bool] = lambda: False,
                      progress: Callable[[int, int], None] | None = None, limit: int | None = None,
                      include_last: bool = True, batch_size: int | None = None,
                      keys: list[str] | None = None, share: VectorSource | None = None) -> EmbedReport:
        """Embed missing vectors batch by batch, committing each batch. Stops early when asked.
        `batch_size` overrides the setting (a static model embeds thousands a second: a commit per 32
        would cost more than the embedding); `keys` limits the candidates (see `pending_embeddings`).
        With a `share`, the vectors a teammate already computed are taken from it first (committed like
        any batch), and each computed batch is offered to it."""
        started = time.perf_counter()
        model_key = embedder.model_key
        todo = self.pending_embeddings(model_key, include_last=include_last, keys=keys)
        if limit is not None:
            todo = todo[:limit]
        report = EmbedReport(pending=len(todo))
        batch_size = batch_size or self.settings.embed_batch
        unpublished: list[str] = []
        if share is not None:
            self._publish_backlog(share, model_key, report, should_stop)
            if todo:
                todo = self._take_shared(share, embedder, todo, report)
                report.pending = len(todo)
        for start in range(0, len(todo), batch_size):
            if should_stop():
                report.stopped = True
                break
            part = todo[start : start + batch_size]
            vectors = embedder.embed_documents([c.embed_text for c in part])
            batch = WriteBatch()
            for chunk, vector in zip(part, vectors, strict=True):
                batch.put_vector(model_key, chunk.hash, vector)
            self.store.apply(batch)
            if share is not None:
                share.publish(model_key, [(c.hash, v) for c, v in zip(part, vectors, strict=True)])
                if not share.problem:
                    report.published += len(part)
                elif share.transient:
                    unpublished.extend(c.hash for c in part)
            report.embedded += len(part)
            report.pending = len(todo) - report.embedded
            if progress:
                progress(report.embedded, len(todo))
        if share is not None:
            report.share_problem = share.problem
            if unpublished:
                self._remember_unpublished(model_key, unpublished)
        report.seconds = time.perf_counter() - started
        return report

    def _remember_unpublished(self, model_key: str, hashes: list[str]) -> None:
        """Note the texts embedded while the shared store could not take their vectors: they are offered
        at the next pass that reaches it (else the next teammate embedded them again after any outage)."""
        known = json.loads(self.store.meta(UNPUBLISHED + model_key) or "[]")
        batch = WriteBatch()
        batch.put_meta(UNPUBLISHED + model_key, json.dumps(list(dict.fromkeys([*known, *hashes]))[-UNPUBLISHED_MOST:]))
        self.store.apply(batch)

    def _publish_backlog(self, share: VectorSource, model_key: str, report: EmbedReport,
                         should_stop: Callable[[], bool]) -> None:
        """Offer the vectors computed while the shared store was unreachable (`_remember_unpublished`); what
        a stop or a new outage leaves is kept for the next pass, a refusal that stays drops the list."""
        hashes = json.loads(self.store.meta(UNPUBLISHED + model_key) or "[]")
        done = 0
        for start in range(0, len(hashes), SHARED_PER_BATCH):
            if should_stop():
                break
            part = hashes[start:start + SHARED_PER_BATCH]
            items = [(h, v) for h, v in zip(part, self.store.vectors(model_key, part), strict=True) if v is not None]
            share.publish(model_key, items)
            if share.problem and share.transient:
                break  # still unreachable
            if share.problem:  # not a member, no rights: never taken, so not kept
                done = len(hashes)
                break
            done = start + len(part)
            report.published += len(items)
        if done:
            batch = WriteBatch()
            batch.put_meta(UNPUBLISHED + model_key, json.dumps(hashes[done:]) if done < len(hashes) else "")
            self.store.apply(batch)

    def _take_shared(self, share: VectorSource, embedder, todo: list[ChunkRecord],
                     report: EmbedReport) -> list[ChunkRecord]:
        """Store the shared vectors of `todo`'s texts; what is left to compute. A vector of another
        width than this model's, or not finite, is not taken (that text is embedded here)."""
        model_key = embedder.model_key
        found = share.fetch(model_key, [c.hash for c in todo])
        if found:
            width = len(embedder.embed_documents([todo[0].embed_text])[0])
            found = {h: v for h, v in found.items() if v.shape == (width,) and bool(np.isfinite(v).all())}
        hashes = list(found)
        for start in range(0, len(hashes), SHARED_PER_BATCH):
            batch = WriteBatch()
            for content_hash in hashes[start:start + SHARED_PER_BATCH]:
                batch.put_vector(model_key, content_hash, found[content_hash])
            self.store.apply(batch)
        report.fetched = len(found)
        return [c for c in todo if c.hash not in found]
