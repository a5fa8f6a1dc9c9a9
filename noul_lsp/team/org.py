"""Searching the organisation index (published by `org_index.py`) with noul's own stages.

A search (`find_org`) runs in two steps:
1. *Retrieval in PostgreSQL*, under the reader's row-level security: BM25 over the chunks that hold one of
   the query's rarer terms (the GIN index on `lexemes` finds them; the score is computed from each chunk's
   term counts with the org-wide idf), and pgvector's HNSW index for the query's vector.
2. *Ranking on this machine*: every chunk of the candidate files is held in memory as the corpus of a
   scratch root (`CandidateRoot`), and the local pipeline runs over it (the fitted ranker, the reranker
   when one is configured, calibration) with the org-wide idf, as a multi-root find does.
Nothing the database did not return to this reader is ever seen by step 2, so no result, preview, hover
or message can carry text of a repository the reader is not granted.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noul_lsp.config import Settings
from noul_lsp.retrieval.analyse import analyse
from noul_lsp.retrieval.bm25 import BM25Parameters, repeated_term_weights
from noul_lsp.retrieval.coherence import Coherence, by_repository_coherence
from noul_lsp.retrieval.result import FindResult, IndexState, QueryError
from noul_lsp.retrieval.retrieve import RowFilter, glob_escaped, glob_within, union_idf
from noul_lsp.retrieval.segment import split_symbol_lines
from noul_lsp.session.workspace import Workspace
from noul_lsp.store import ChunkRecord
from noul_lsp.team.schema import RETRY_SECONDS, SharedStoreError, StoreUnreachable, as_array, connect, database_errors
from noul_lsp.text.terms import query_terms

#: chunks each leg brings from the database
CANDIDATES = 200
#: files whose chunks the local stages rank (by reciprocal rank fusion of their best chunk in each leg)
CANDIDATE_FILES = 100
#: query terms that score BM25 in the database (the rarest; an issue text has hundreds)
SCORED_TERMS = 48
#: a term held by more than this share of the chunks does not select candidates (it still scores them)
SELECTING_SHARE = 0.05
#: the fewest terms that select candidates, however common
SELECTING_LEAST = 3
#: how the repositories' shares of the evidence re-order an organisation answer (retrieval/coherence.py)
COHERENCE = Coherence()
#: reciprocal rank fusion's constant for choosing the candidate files (the local fusion's default)
RRF_K = 60
#: an organisation search's statements give up after this long (the store's default, a minute, is for
#: publishing): a find that waits longer answers from the roots alone
ORG_STATEMENT_TIMEOUT_MS = 10_000
#: HNSW's search breadth (pgvector's default is 40; row-level security filters after the index scan)
EF_SEARCH = 400


def _repository_glob(pattern: str) -> tuple[str | None, str]:
    """(`OWNER/NAME`, the glob within it) of an `OWNER/NAME:GLOB` pattern; (None, pattern) for any other."""
    repository, colon, glob = pattern.partition(":")
    if colon and repository.count("/") == 1 and not any(c in repository for c in "*?[]!\\ "):
        return repository, glob
    return None, pattern


def repository_globs(patterns: Sequence[str]) -> list[str]:
    """An organisation search's include/exclude globs as globs over its scratch root's `OWNER/NAME/PATH`
    paths: a glob as written for one repository (gitignore syntax: with a slash it starts at the
    repository's top, without one it matches at any depth) applies within every repository, and
    `OWNER/NAME:GLOB` within that repository only (`OWNER/NAME:` all of it), as hits are written."""
    scoped = []
    for pattern in patterns:
        repository, glob = _repository_glob(pattern)
        # (a glob without a slash: at any depth within the repository, never its OWNER or NAME folder)
        base = "/*/*" if repository is None else "/" + glob_escaped(repository)
        scoped.append(glob_within(base, glob.strip()) if glob.strip() else base + "/")
    return scoped


def repositories_named(include: Sequence[str]) -> list[str] | None:
    """The repositories every include glob names (`OWNER/NAME:GLOB`), which retrieval in the database can
    keep to; None when some glob applies to every repository (or there is none)."""
    named = [_repository_glob(pattern)[0] for pattern in include]
    return sorted(set(named)) if named and None not in named else None  # type: ignore[arg-type]


class RepositoryRowFilter(RowFilter):
    """The scratch root's include/exclude filter: globs as written for a repository (`repository_globs`)."""

    PATTERNS_ARE = ("patterns are globs within each repository, as in .gitignore, or OWNER/NAME:GLOB within one "
                    "(OWNER/NAME: for all of it)")

    def masks(self, arrays, include: Sequence[str], exclude: Sequence[str]):
        return super().masks(arrays, repository_globs(include), repository_globs(exclude))


@dataclass
class _Visible:
    """What the reader may see of the organisation index."""

    repos: int
    chunks: int
    length: int
    model: str
    dimensions: int


def _visible(connection) -> _Visible:
    row = connection.execute("SELECT count(*), coalesce(sum(chunks), 0), coalesce(sum(length), 0), "
                             "min(model), max(dimensions) FROM noul.repos").fetchone()
    return _Visible(int(row[0]), int(row[1]), int(row[2]), row[3] or "", int(row[4] or 0))


def _org_frequencies(connection, terms: list[str]) -> dict[str, int]:
    """How many chunks hold each query term, over the repositories the reader may see (absent: none)."""
    rows = connection.execute("SELECT term, sum(documents) FROM noul.documents WHERE term = ANY (%s) GROUP BY term",
                              (terms,)).fetchall()
    return {term: int(count) for term, count in rows if count}


def _bm25_candidates(connection, idf: dict[str, float], visible: _Visible, frequency: dict[str, int],
                     counts: dict[str, int] | None = None, repos: list[str] | None = None) -> list[tuple]:
    """The top chunks by BM25 (Lucene's, with the query-term weight of `counts`, as the local index scores
    it) among those holding a rarer query term. Returns (repo, path) per chunk, best first."""
    if not idf:
        return []
    scored = sorted(idf, key=lambda term: (-idf[term], term))[:SCORED_TERMS]
    rare = [t for t in scored if frequency[t] <= SELECTING_SHARE * visible.chunks]
    selecting = rare if len(rare) >= SELECTING_LEAST else scored[:SELECTING_LEAST]
    parameters = BM25Parameters()
    average = max(visible.length / max(visible.chunks, 1), 1e-9)
    parts, params = [], []
    weights = repeated_term_weights(scored, counts)
    for position, term in enumerate(scored):
        parts.append("%s * coalesce((terms->>%s)::float8, 0) / (coalesce((terms->>%s)::float8, 0) + norm)")
        params += [idf[term] * (1.0 if weights is None else float(weights[position])), term, term]
    tsquery = " | ".join("'" + t.replace("\\", "\\\\").replace("'", "\\'") + "'" for t in selecting)
    statement = (f"SELECT repo, path FROM (SELECT repo, key, path, terms, "
                 f"{parameters.k1} * (1 - {parameters.b} + {parameters.b} * length / {average!r}) AS norm "
                 f"FROM noul.chunks WHERE lexemes @@ %s::tsquery{_IN_REPOS if repos else ''}) c "
                 f"ORDER BY {' + '.join(parts)} DESC, repo, key LIMIT {CANDIDATES}")
    return connection.execute(statement, [tsquery, *([repos] if repos else []), *params]).fetchall()


#: the condition that keeps retrieval to the repositories a search names (`repositories_named`)
_IN_REPOS = " AND repo = ANY (%s::text[])"


def _dense_candidates(connection, query_vector: np.ndarray, visible: _Visible,
                      repos: list[str] | None = None) -> list[tuple]:
    """The nearest chunks by pgvector's HNSW index. Row-level security filters what the index scan found
    (pgvector 0.6 has no iterative scan), so a reader granted a small share of the organisation can get
    fewer than asked for: then the visible rows are scanned exactly instead."""
    dimensions = visible.dimensions
    statement = (f"SELECT repo, path FROM noul.chunks WHERE embedding IS NOT NULL{_IN_REPOS if repos else ''} "
                 f"ORDER BY embedding::vector({dimensions}) <=> %s::vector({dimensions}) LIMIT {CANDIDATES}")
    vector = (*([repos] if repos else []), np.asarray(query_vector, dtype=np.float32))
    connection.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
    # kept to named repositories, the index scan (filtered after it) would fall short of them nearly always
    found = connection.execute(statement, vector).fetchall() if not repos else []
    if len(found) < min(CANDIDATES, visible.chunks):
        connection.execute("SET enable_indexscan = off")
        try:
            found = connection.execute(statement, vector).fetchall()
        finally:
            connection.execute("RESET enable_indexscan")
    return found


def _candidate_files(*lists: list[tuple]) -> list[tuple[str, str]]:
    """The files whose chunks rank best over both legs: reciprocal rank fusion of each file's best chunk
    per leg (as the local legs are fused), so a file both legs place fairly high is not crowded out by
    one leg's long tail."""
    fused: dict[tuple[str, str], float] = {}
    for found in lists:
        best: dict[tuple[str, str], int] = {}
        for position, (repo, path) in enumerate(found):
            best.setdefault((repo, path), position)
        for file, position in best.items():
            fused[file] = fused.get(file, 0.0) + 1.0 / (RRF_K + position + 1)
    return sorted(fused, key=lambda file: (-fused[file], file))[:CANDIDATE_FILES]


@dataclass
class OrgRoot:
    """The organisation's candidates for one query, as a scratch workspace root the pipeline can rank
    alone (`find_org`) or beside the editor's own roots (the language server's `team.org` setting)."""

    workspace: CandidateRoot
    #: the legs the organisation's vectors serve: ("bm25", "static") or ("bm25", "dense")
    legs: tuple[str, ...]
    #: each scratch path's (repository, path)
    where: dict[str, tuple[str, str]]
    timings: dict[str, float]
    signal: str = ""
    note: str = ""
    #: chunks the reader may see, and how many of them hold each query term: BM25's idf over the whole
    #: organisation (alone or with other roots), not over the few candidates the scratch root holds
    documents: int = 0
    frequency: dict[str, int] = dataclasses.field(default_factory=dict)

    def label(self, result: FindResult) -> FindResult:
        """Give the scratch root's hits their repository and path (and the result their files, rebuilt from
        the chunks the search fetched), and the result the retrieval's timings."""
        root = str(self.workspace.root)
        hit_files = set()
        for hit in result.hits:
            if hit.root == root and hit.path in self.where:
                hit_files.add(hit.path)
                hit.repository, hit.path = self.where[hit.path]
                hit.root = ""
        for local, lines in self.workspace.file_lines(hit_files).items():
            result.organisation_files[self.where[local]] = lines
        result.timings = self.timings | result.timings
        result.timings["total"] = sum(v for k, v in result.timings.items() if k != "total")
        if self.signal:
            result.signals["org"] = self.signal
        if self.note:
            result.notes.append(self.note)
        return result


@contextmanager
def org_root(url: str, query: str, settings: Settings, include: Sequence[str] = ()) -> Iterator[OrgRoot]:
    """Retrieve the query's candidates from the organisation index (as the reader of `url` may see it)
    into a scratch root, removed on exit; kept to the repositories `include` names, when it names them
    all (`repositories_named`). Raises SharedStoreError when the store cannot answer."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty: describe the code you are looking for")
    timings: dict[str, float] = {}
    scratch = Path(tempfile.mkdtemp(prefix="noul-org-"))
    workspace = None
    try:
        started = time.perf_counter()
        root = scratch / "org"
        root.mkdir()
        workspace = CandidateRoot(root, settings, scratch / "index")
        with database_errors("the organisation search", url), connect(url) as connection:
            connection.execute(f"SET statement_timeout = {ORG_STATEMENT_TIMEOUT_MS}")  # a person is waiting
            found = _retrieve(connection, workspace, query, settings, timings, started,
                              repositories_named(include))
        if found is None:
            yield OrgRoot(workspace, ("bm25",), {}, timings, signal="no repository you are granted",
                          note="the organisation index has no repository you are granted")
            return
        visible, leg, frequency, files, rows = found
        started = time.perf_counter()
        where = workspace.hold(rows, leg)
        timings["org_hold"] = (time.perf_counter() - started) * 1000
        yield OrgRoot(workspace, ("bm25", leg), where, timings,
                      signal=f"{visible.repos} repositor{'y' if visible.repos == 1 else 'ies'}, "
                             f"{visible.chunks} chunks; {len(files)} candidate files",
                      documents=visible.chunks, frequency=frequency)
    finally:
        if workspace is not None:
            workspace.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _retrieve(connection, workspace, query: str, settings: Settings, timings: dict[str, float], started: float,
              repos: list[str] | None = None):
    """Both legs' candidates in the database; None when the reader may see no repository."""
    visible = _visible(connection)
    if not visible.repos:
        return None
    leg = "static" if visible.model == workspace.static_key else "dense" if visible.model == workspace.model_key else ""
    if not leg:
        raise SharedStoreError(f"the organisation index holds {visible.model} vectors; this noul has "
                               f"{workspace.model_key} and {workspace.static_key}")
    model = workspace.static_embedder() if leg == "static" else workspace.embedder()
    if model is None:
        raise SharedStoreError(f"the organisation index's model {visible.model} did not load")
    frequency = _org_frequencies(connection, query_terms(query))
    # the terms as a root's BM25 reads them (a description's word in one piece read whole where the code has it)
    counts = analyse(query).lexical_counts(frequency)
    idf = {term: value for term, value in union_idf(query, [], other_documents=visible.chunks,
                                                   other_frequency=frequency).items()
           if term in frequency and term in counts}
    timings["org_setup"] = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    lexical = _bm25_candidates(connection, idf, visible, frequency, counts, repos)
    timings["org_bm25"] = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    query_vector = model.embed_query(query, max_windows=settings.search.query_windows)
    dense = _dense_candidates(connection, query_vector, visible, repos) if visible.dimensions else []
    timings["org_dense"] = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    files = _candidate_files(lexical, dense)
    rows = _chunks_of(connection, files)
    timings["org_fetch"] = (time.perf_counter() - started) * 1000
    return visible, leg, frequency, files, rows


def find_org(url: str, query: str, settings: Settings, coherence: Coherence | None = None, **options) -> FindResult:
    """Ranked files (or chunks) of the organisation index for a description, as the reader of `url` may
    see them, re-ordered by repository coherence (`COHERENCE` unless `coherence` is given; the bench asks
    with the exponent 0 to score others itself). `options` are those of `find_across` (limit, mode,
    rerank, ...). Hits carry their repository; their path is inside it."""
    from noul_lsp.retrieval.engine import find_across

    with org_root(url, query, settings, options.get("include") or ()) as org:
        idf = union_idf(query, [], other_documents=org.documents, other_frequency=org.frequency)
        coherence = coherence or COHERENCE
        limit, deeper = _deeper(options, settings, coherence)
        return _coherent(org.label(find_across([org.workspace], query, legs=org.legs, term_idf=idf, **deeper)),
                         limit, coherence)


def _deeper(options: dict, settings: Settings, coherence: Coherence = COHERENCE) -> tuple[int, dict]:
    """The limit asked for, and the options of a find deep enough for repository coherence to count."""
    limit = options.get("limit")
    limit = settings.search.limit if limit is None else limit
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return limit, options  # find_across says what is wrong with it
    return limit, options | {"limit": max(limit, coherence.depth)}


def _coherent(result: FindResult, limit, coherence: Coherence = COHERENCE) -> FindResult:
    """The result's hits re-ordered by their repository's share of the evidence, cut to `limit`."""
    result.hits = by_repository_coherence(result.hits, coherence)[:limit]
    result.signals["repositoryCoherence"] = f"share^{coherence.exponent:g} over the first {coherence.depth}"
    return result


def _chunks_of(connection, files: list[tuple[str, str]]) -> list[tuple]:
    if not files:
        return []
    # binary: pgvector's and jsonb's binary forms decode 3x faster than their text (measured, 2,511 rows)
    return connection.cursor(binary=True).execute(
        "SELECT c.repo, c.key, c.path, c.start_line, c.end_line, c.symbol, c.language, c.kind, c.header, c.text, "
        "c.hash, c.terms, c.embedding FROM noul.chunks c JOIN unnest(%s::text[], %s::text[]) AS f(repo, path) "
        "ON c.repo = f.repo AND c.path = f.path",
        ([r for r, _ in files], [p for _, p in files])).fetchall()


class CandidateRoot(Workspace):
    """A scratch workspace root whose corpus holds one query's candidates from the organisation index, in
    memory (`Corpus.adopt`): nothing is written to its store, and the chunk texts the pipeline reads back
    (previews, the reranker) come from the rows the database returned."""

    whole_corpus = False

    def __init__(self, root: Path, settings: Settings, index_dir: Path) -> None:
        super().__init__(root, settings, index_dir=index_dir)  # the user's cache: its pulled models load
        self.row_filter = RepositoryRowFilter()
        self._records: dict[str, ChunkRecord] = {}

    def disk_state(self, path: str) -> str:
        """"" always: the candidates are the organisation index's, at their published commit, not files here."""
        return ""

    def hold(self, rows: list[tuple], leg: str) -> dict[str, tuple[str, str]]:
        """Take the database's rows (paths become `repo/path`); returns each local path's (repo, path)."""
        where: dict[str, tuple[str, str]] = {}
        held, vectors = [], {}
        for repo, key, path, start, end, symbol, language, kind, header, text, content_hash, terms, vector in rows:
            local = f"{repo}/{path}"
            where[local] = (repo, path)
            # the symbol column holds `segment.symbol_lines` (org_index.py): the chunk's symbol and its nested
            # definitions, which the candidates' symbol table knows as a workspace's does
            own, nested = split_symbol_lines(symbol)
            record = ChunkRecord(f"{repo}/{key}", local, start, end, own, language, kind, header, text, content_hash,
                                 nested)
            held.append((record, terms if isinstance(terms, dict) else json.loads(terms)))  # jsonb: {term: count}
            if vector is not None:
                vectors[content_hash] = as_array(vector)
        self._records = {record.key: record for record, _ in held}
        self.corpus.adopt(held, {leg: vectors})
        return where

    def chunk_records(self, keys) -> list[ChunkRecord]:
        return [self._records[key] for key in keys if key in self._records]

    def file_lines(self, paths: set[str]) -> dict[str, list[str]]:
        """These held files' lines, rebuilt from the chunks the search fetched (every chunk of a candidate
        file: `_chunks_of`)."""
        chunks: dict[str, list[tuple[int, str, str]]] = {path: [] for path in paths}
        for record in self._records.values():
            if record.path in chunks:
                chunks[record.path].append((record.start_line, record.key, record.text))
        return {path: _rebuilt((start, text) for start, _, text in sorted(found)) for path, found in chunks.items()}

    def state(self, *, stale: bool = False, sync: bool = True) -> IndexState:
        """Nothing of a local index: the candidates are a query's, embedded in the organisation index (whose
        size the result's `org` signal gives). Counted as chunks, they read as never embedded ("0/581 chunks
        embedded", and a pending count no pass ever lowers)."""
        return IndexState(0, 0, 0, 0, stale, self.embedder_name, "not loaded")


#: (when, why) a store could not be reached for an organisation search, by connection setting: finds leave
#: it out for RETRY_SECONDS (an unreachable store cost every find its connect timeout)
_UNANSWERED: dict[str, tuple[float, str]] = {}


def find_with_org(roots: list, query: str, settings: Settings, **options) -> FindResult:
    """A find over the editor's roots and the organisation index together (the `team.org` setting). When
    the shared store cannot answer, the roots answer alone and a note says why; for RETRY_SECONDS
    after that, the store is not asked again."""
    from noul_lsp.retrieval.engine import find_across
    from noul_lsp.team.schema import ENVIRONMENT, configured_store

    url = configured_store(settings.team.shared_store)
    # why the organisation was not searched, and the note saying so beside the roots' answer
    reason = note = f"team.org is on, but no shared store is configured (team.sharedStore or ${ENVIRONMENT})"
    failed = _UNANSWERED.get(url)
    if url and failed is not None and time.monotonic() - failed[0] < RETRY_SECONDS:
        reason = f"{failed[1]} ({time.monotonic() - failed[0]:.0f} s ago; asked again {RETRY_SECONDS:.0f} s after)"
        note = f"the organisation was not searched: {reason}"
    elif url:
        try:
            with org_root(url, query, settings, options.get("include") or ()) as org:
                if org.where:
                    # idf over the roots and every organisation chunk the reader may see, not over the few
                    # candidates (chosen for holding the query's terms) the scratch root holds
                    idf = union_idf(query, [r.loaded() for r in roots], other_documents=org.documents,
                                    other_frequency=org.frequency)
                    limit, deeper = _deeper(options, settings)
                    # each root with its own legs: over 72 dev descriptions the organisation's legs (BM25 +
                    # static) in every root put the right file first 0.47 of the time when it was the
                    # workspace's (0.71 with the roots' own legs), 0.32 when it was another repository's (0.18):
                    # docs/benchmarks.md. The organisation alone is asked with its legs, as `find_org` asks it
                    legs = {} if roots else {"legs": org.legs}
                    result = org.label(find_across([*roots, org.workspace], query, term_idf=idf, **legs, **deeper))
                    return _coherent(result, limit)
                # nothing granted, or nothing published: the roots alone, with their legs
                reason, note = org.note or "the organisation index has no candidates", org.note
        except SharedStoreError as error:
            if isinstance(error, StoreUnreachable):  # (not a slow statement, nor another model's index)
                _UNANSWERED[url] = (time.monotonic(), str(error))
            reason, note = str(error), f"the organisation was not searched: {error}"
    if not roots:  # the organisation alone was asked (`noul mcp --org` before any root)
        raise SharedStoreError(reason)
    result = find_across(roots, query, **options)
    if note:
        result.notes.append(note)
    return result


def org_document_text(url: str, repo: str, path: str) -> str | None:
    """A file of the organisation index rebuilt from its chunks, as the reader of `url` may see it (None
    when there is no such file or it is not granted). Lines no chunk holds are left blank."""
    with database_errors(f"reading {repo}:{path}", url), connect(url) as connection:
        rows = connection.execute("SELECT start_line, text FROM noul.chunks WHERE repo = %s AND path = %s "
                                  "ORDER BY start_line, key", (repo, path)).fetchall()
    return "\n".join(_rebuilt(rows)) if rows else None


def _rebuilt(chunks) -> list[str]:
    """A file's lines from its chunks' (start line, text), in order; lines no chunk holds are blank."""
    lines: list[str] = []
    for start, text in chunks:
        chunk_lines = text.split("\n")
        if len(lines) < start - 1 + len(chunk_lines):
            lines.extend([""] * (start - 1 + len(chunk_lines) - len(lines)))
        lines[start - 1:start - 1 + len(chunk_lines)] = chunk_lines
    return lines
