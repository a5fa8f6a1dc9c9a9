"""One workspace root: its store, indexer, models (loaded on first need), corpus, and fitted files.

It sits above indexing and retrieval: it owns an `Indexer` over its `ChunkStore` and hands itself to the
query pipeline (`retrieval.engine.find_across`) as a `SearchRoot`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from noul_lsp.config import Settings
from noul_lsp.index import EmbedReport, Indexer
from noul_lsp.models.choice import NO_RERANKER, ModelChoice, workspace_choice
from noul_lsp.models.cross_encoder import CrossEncoder, shared_cross_encoder
from noul_lsp.models.embedder import shared_embedder, spec_model_key, token_budget_problem
from noul_lsp.models.registry import (
    DEFAULT_EMBEDDER,
    DEFAULT_STATIC,
    NO_STATIC,
    ModelMissing,
    resolve_embedder,
    resolve_reranker,
)
from noul_lsp.models.runtime import ModelUnreadable
from noul_lsp.models.static import StaticEmbedder, StaticModelError, StaticSpec
from noul_lsp.retrieval.calibrate import Calibration, load_calibration, pair_name
from noul_lsp.retrieval.corpus import Corpus, CorpusArrays
from noul_lsp.retrieval.engine import find_across
from noul_lsp.retrieval.rank import RankModel, load_rank_model
from noul_lsp.retrieval.reference import REFERENCE_QUERIES, WorkspaceLevel
from noul_lsp.retrieval.result import FindResult, IndexState
from noul_lsp.retrieval.retrieve import RowFilter
from noul_lsp.store import ChunkRecord, ChunkStore, cache_root, index_directory
from noul_lsp.workspace.project import project_names

#: chunks per write transaction of the static pass (a few MB of vectors)
STATIC_BATCH = 2048
#: beside the index: each pair's measured level (reference.py), so a reopened workspace does not measure it
LEVELS_FILE = "here-levels.json"


class Workspace:
    """One workspace root: its store, indexer, embedder (loaded on first need) and corpus."""

    #: the corpus holds every file of the root (an organisation search's candidates are a few of its files)
    whole_corpus = True

    def __init__(self, root: Path, settings: Settings, *, index_dir: Path | None = None) -> None:
        """`index_dir` puts the index elsewhere than under the cache (a scratch root's); models are still
        found in the cache."""
        root = Path(root).expanduser()
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such folder")
        if not root.is_dir():
            raise NotADirectoryError(f"{root}: not a folder")
        self.root = root.resolve()
        self.settings = settings
        self.cache = cache_root(settings.cache_dir)
        self.store = ChunkStore(index_dir or index_directory(self.root, settings.cache_dir), root=str(self.root))
        self.indexer = Indexer(self.root, self.store, settings.index)
        #: set by a server's BackgroundIndexer: embedding goes on by itself (the notes of a find then say
        #: so, where a command-line find says to run `noul index`)
        self.indexed_in_background = False
        self._embedder = None
        self.embedder_problem: str | None = None
        #: how the embedder runs when not as configured, though with the same vectors ("" when as configured)
        self.embedder_note = ""
        self.choice_problem: str | None = None
        try:
            choice = workspace_choice(self.root, self.cache)
        except ValueError as error:  # an unreadable choices file: keep the defaults, and say why
            choice = ModelChoice()
            self.choice_problem = str(error)
        self.embedder_name = settings.models.embedder or choice.embedder or DEFAULT_EMBEDDER
        reranker_name = settings.models.reranker or choice.reranker
        #: the configured cross-encoder, "" when none
        self.reranker_name = "" if reranker_name == NO_RERANKER else reranker_name
        try:
            self._embedder_spec = resolve_embedder(self.embedder_name, self.cache)
        except ModelMissing as error:
            self._embedder_spec = None
            self.embedder_problem = str(error)
        over = self._embedder_spec and token_budget_problem(self._embedder_spec, self.embedder_name,
                                                            settings.index.token_budget)
        if over:  # the CLI refuses it before this; the language server's setting searches without the embedder
            self.embedder_problem = over
            self._embedder_spec = None
        self._reranker: CrossEncoder | None = None
        self.reranker_problem: str | None = None
        self._reranker_spec = None
        if self.reranker_name:
            try:
                self._reranker_spec = resolve_reranker(self.reranker_name, self.cache)
            except ModelMissing as error:
                self.reranker_problem = str(error)
        self._static: StaticEmbedder | None = None
        self._static_spec: StaticSpec | None = None
        #: why there is no static leg ("" when there is one, or when it is turned off)
        self.static_problem = ""
        static_name = settings.models.static or DEFAULT_STATIC
        if static_name != NO_STATIC and self.embedder_name != static_name:
            try:
                spec = resolve_embedder(static_name, self.cache)
                if not isinstance(spec, StaticSpec):
                    raise ModelMissing(f"{static_name} is a transformer, not a static model (models.static)")
                self._static_spec = spec
            except ModelMissing as error:
                self.static_problem = str(error)
        self.corpus = Corpus(self.store, self.model_key, self.static_key)
        #: what people call this project (a P(here) feature)
        self.project_names = project_names(self.root)
        self._calibrations: dict[str, Calibration | None] = {}  # per pair, looked up once
        self._rank_models: dict[str, RankModel | None] = {}  # per embedder key, looked up once
        self._levels: dict[str, WorkspaceLevel] | None = None  # per pair and legs (here_level), read on first need
        #: the include/exclude mask of the last filtered query, kept for the corpus state it was made for
        self.row_filter = RowFilter()
        self._share = None  # the team's shared vectors, opened on the first embedding pass that has one

    def vector_share(self):
        """The team's shared vectors when a shared store is configured (setting or $NOUL_SHARED_STORE),
        else None; a changed or cleared setting is followed at the next pass (the old connection closes).
        Only with a store is the team package (and psycopg) imported."""
        from noul_lsp.team.schema import configured_store  # no psycopg at import

        url = configured_store(self.settings.team.shared_store)
        if self._share is not None and self._share.url != url:
            self._share.close()
            self._share = None
        if self._share is None and url:
            from noul_lsp.team.vectors import VectorShare

            self._share = VectorShare(url)
        return self._share

    @property
    def model_key(self) -> str | None:
        """The key of this workspace's vectors (model id + token budget), known without loading the model;
        None when the embedder is missing (search is then lexical)."""
        if self._embedder_spec is None:
            return None
        return spec_model_key(self._embedder_spec, self.settings.index.token_budget)

    @property
    def static_key(self) -> str | None:
        """The key of the static leg's vectors; None without one (turned off, missing, or the static model
        is the embedder itself)."""
        return spec_model_key(self._static_spec, 0) if self._static_spec is not None else None

    @property
    def ranking_key(self) -> str | None:
        """What the ranking and calibration files fitted with the static leg are keyed by: the embedder's
        key joined by the static leg's (the embedder's key alone without a static leg)."""
        return self.ranking_key_for(static=True)

    def ranking_key_for(self, *, static: bool) -> str | None:
        """The key of the files fitted for a find with (or without) the static leg."""
        if not static or self.static_key is None:
            return self.model_key
        return f"{self.model_key}+{self.static_key}" if self.model_key else self.static_key

    def static_embedder(self) -> StaticEmbedder | None:
        """The static model, loaded on first use (a memory map and a tokenizer: milliseconds)."""
        if self._static is None and self._static_spec is not None:
            try:
                self._static = shared_embedder(self._static_spec, token_budget=0, use_gpu=False, batch_size=0)
            except (StaticModelError, OSError) as error:  # a damaged file: search goes on without the leg
                self._static_spec = None
                self.static_problem = f"the static model failed to load ({error})"
        return self._static

    def embed_static(self, **options) -> EmbedReport | None:
        """Give every chunk without one its static vector (seconds for a whole repository); None without a
        static leg. The caller holds the indexing lock, as for any write."""
        model = self.static_embedder()
        if model is None:
            return None
        return self.embed_missing(model, batch_size=STATIC_BATCH, **options)

    def embed_missing(self, model, **options) -> EmbedReport:
        """Embed the texts that have no vector of `model` yet. The corpus says which (after a save: the
        saved file's new texts), so nothing else is read from the store."""
        leg = next((leg for leg, table in self.corpus.tables.items() if table.model_key == model.model_key), None)
        keys = self.corpus.pending_keys(leg) if leg is not None else None
        return self.indexer.embed_pending(model, keys=keys, share=self.vector_share(), **options)

    @property
    def model_pair(self) -> str:
        """The configured embedder+reranker pair (a find that skips the reranker runs as embedder+none)."""
        reranker = self._reranker_spec.model_id if self._reranker_spec is not None else ""
        return pair_name(self.model_key, reranker)  # once the transformer covers every chunk

    def calibration(self, pair: str) -> Calibration | None:
        """The calibration fitted for exactly this embedder+reranker pair, if there is one."""
        if pair not in self._calibrations:
            self._calibrations[pair] = load_calibration(pair)
        return self._calibrations[pair]

    def here_level(self, key: str, chunks: int, measure: Callable[[str], dict[str, float]], *,
                   stale: bool = False) -> WorkspaceLevel:
        """This workspace's level for `key` (a pair and its legs): kept, or read from beside the index,
        while the corpus (now `chunks` chunks) has about as many as when it was measured; else measured
        again by asking each reference query (`measure`: a query's P(here) features) and written back. An
        unreadable or unwritable file costs a measurement, never the find. While the index is `stale` (being
        brought up to date) a kept level stands: after a branch switch the first finds each measured it
        again (1-3 s), and the pass's end measures it once (`prepare_level`)."""
        if self._levels is None:
            self._levels = {}
            try:
                stored = json.loads((self.store.directory / LEVELS_FILE).read_text())
                self._levels = {k: level for k, text in stored.items()
                                if isinstance(text, str) and (level := WorkspaceLevel.from_json(text)) is not None}
            except (OSError, ValueError, AttributeError):
                pass
        level = self._levels.get(key)
        if level is None or not (level.fresh(chunks) or stale):
            level = WorkspaceLevel.measure([measure(text) for text in REFERENCE_QUERIES], chunks)
            self._levels[key] = level
            path = self.store.directory / LEVELS_FILE
            try:
                scratch = path.with_name(f"{LEVELS_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")  # one per writer
                scratch.write_text(json.dumps({k: v.to_json() for k, v in self._levels.items()}))
                os.replace(scratch, path)
            except OSError:
                pass
        return level

    def rank_model(self, key: str | None = None) -> RankModel | None:
        """The ranker fitted for `key` (default: this root's dense legs, the static leg's included), if
        there is one."""
        key = self.ranking_key if key is None else key
        if (key or "") not in self._rank_models:
            self._rank_models[key or ""] = load_rank_model(key)
        return self._rank_models[key or ""]

    def embedder(self):
        """The embedder, loaded on first use; None (with `embedder_problem` set) when it is missing or its
        file does not load. Search then goes on with BM25 and the static leg, and says why; the fused
        default falls back to the wheel's graph, whose vectors are the same."""
        if self._embedder is None and self._embedder_spec is not None and not self.embedder_problem:
            try:
                self._embedder = self._load_embedder(self._embedder_spec)
            except ModelUnreadable as error:
                self._embedder = self._load_same_vectors(error)
        return self._embedder

    def _load_embedder(self, spec):
        return shared_embedder(spec, token_budget=self.settings.index.token_budget,
                               use_gpu=self.settings.models.use_gpu, batch_size=self.settings.index.embed_batch)

    def _load_same_vectors(self, error: ModelUnreadable):
        """The spec's other graph of the same weights after its own did not load (`error`); None, with
        `embedder_problem` set, when it has none or that one fails too."""
        standby = self._embedder_spec.same_vectors_path
        if standby is not None:
            spec = replace(self._embedder_spec, onnx_path=standby, same_vectors_path=None)
            try:
                embedder = self._load_embedder(spec)
            except ModelUnreadable as also:
                error = also
            else:
                self._embedder_spec = spec
                self.embedder_note = f"{error}: running {standby} instead (the same vectors)"
                return embedder
        self.embedder_problem = f"{self.embedder_name} failed to load: {error}"
        return None

    def reranker(self) -> CrossEncoder | None:
        """The cross-encoder, loaded on first use; None when none is configured or it is missing
        (`reranker_problem` then says why)."""
        if self._reranker is None and self._reranker_spec is not None:
            search = self.settings.search
            try:
                self._reranker = shared_cross_encoder(self._reranker_spec, max_length=search.rerank_max_length,
                                                      batch_size=search.rerank_batch,
                                                      use_gpu=self.settings.models.use_gpu)
            except Exception as error:  # a corrupt or incompatible ONNX file: search goes on without it
                self._reranker_spec = None
                self.reranker_problem = f"{self.reranker_name} failed to load ({type(error).__name__}: {error})"
        return self._reranker

    def close(self) -> None:
        if self._share is not None:
            self._share.close()
        self.store.close()

    @property
    def loaded_reranker(self) -> CrossEncoder | None:
        """The cross-encoder if a find already loaded it (status must not load a model), else None."""
        return self._reranker

    @property
    def loaded_embedder(self):
        """The embedder if something already loaded it (status must not load a model), else None."""
        return self._embedder

    def without_embedder(self) -> str:
        """What a find rests on without the embedder, and why it is missing (`embedder_problem`): the static
        leg stays where there is one, and "lexical search only" would say it is gone too."""
        legs = "word matching and the static model only" if self._static_spec is not None else "lexical search only"
        return f"{legs}: {self.embedder_problem}"

    def state(self, *, stale: bool = False, sync: bool = True) -> IndexState:
        """What the index holds; `sync=False` describes the state a query just ran against."""
        if sync:
            self.corpus.sync()
        embedder = self._embedder
        # without an embedder (missing, or its budget refused) nothing waits to be embedded: a count of
        # pending chunks would read as progress that never comes
        will_embed = self._embedder_spec is not None and not self.embedder_problem
        waiting = self.corpus.chunk_count - self.corpus.embedded_chunks if will_embed else 0
        return IndexState(files=self.corpus.file_count, chunks=self.corpus.chunk_count,
                          embedded=self.corpus.embedded_chunks, static=self.corpus.static_chunks,
                          pending=waiting, stale=stale,
                          model=self.embedder_name,
                          device=embedder.device if embedder is not None else "not loaded")

    def find(self, query: str, **options) -> FindResult:
        """Ranked files (or chunks) for a description: `find_across` over this root alone."""
        return find_across([self], query, **options)

    def disk_state(self, path: str) -> str:
        """"gone" when the file is no longer on disk, "changed" when its size or time differ from what was
        indexed, "" when it is as indexed: a hit must not send the user to a file a checkout just removed."""
        try:
            info = (self.root / path).stat()
        except OSError:
            return "gone"
        record = self.store.files_at([path]).get(path)
        if record is None or record.mtime_ns != info.st_mtime_ns or record.size != info.st_size:
            return "changed"
        return ""

    def prepare_level(self) -> None:
        """Measure the default find's level (reference.py) at the end of an indexing pass, so that the first
        description asked does not wait for it: one find, which measures the level where its calibration
        reads one and the kept level is not fresh (here_level), and does nothing more otherwise."""
        self.find(REFERENCE_QUERIES[0])

    def checkpoint(self) -> str | None:
        """Fold what changed into the corpus's base and write its snapshot beside the index when it is
        worth it (Corpus.checkpoint), so the next open reads arrays instead of every chunk record (the end
        of an indexing pass calls it). Returns why it could not (the snapshot is a cache: search works
        without it), or None."""
        try:
            self.corpus.sync()
            self.corpus.checkpoint()
        except OSError as error:
            return f"the corpus snapshot of {self.root} was not written ({error.strerror or error})"
        return None

    def chunk_records(self, keys) -> list[ChunkRecord]:
        """The stored chunks of `keys` (texts for previews and the reranker, read back when asked)."""
        return self.store.chunks(keys)

    def loaded(self) -> CorpusArrays:
        """The corpus arrays, caught up with the store."""
        self.corpus.sync()
        return self.corpus.arrays()
