"""Publishing repositories to the organisation index of the shared store.

`index_organisation` takes git mirrors (or clones), writes each one's tree at the asked commit, indexes it
locally as any workspace (chunks, BM25 terms, one model's vectors, fetched from the team's shared vectors
where a teammate computed them), and `publish_repository` copies that local index into `noul.chunks`,
replacing what the repository had. A repository already published at the same commit and model is skipped,
so a run over many mirrors costs what changed. Per-term chunk counts go with it, so BM25's idf can be
computed over exactly the repositories a reader is granted.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from noul_lsp.config import Settings
from noul_lsp.retrieval.segment import symbol_lines
from noul_lsp.team.schema import (
    SharedStoreError,
    connect,
    database_errors,
    database_module,
    described,
    repository_names,
)

#: beside each tree folder (not in it: it would be indexed), the commit written into it
TREE_MARK = ".commit"


@dataclass
class PublishReport:
    repo: str
    commit: str
    chunks: int = 0
    vectors: int = 0
    embedded: int = 0
    fetched: int = 0
    seconds: float = 0.0
    skipped: str = ""


def published_commit(url: str, repo: str) -> tuple[str, str] | None:
    """(commit, model) of `repo` in the organisation index, or None."""
    with database_errors(f"looking up {repo}", url), connect(url) as connection:
        row = connection.execute("SELECT commit, model FROM noul.repos WHERE repo = %s", (repo,)).fetchone()
    return (row[0], row[1]) if row else None


def may_publish(url: str) -> None:
    """SharedStoreError unless this role may write the organisation index (asked before any work)."""
    with database_errors("looking up the organisation index", url), connect(url) as connection:
        if not connection.execute("SELECT has_table_privilege('noul.repos', 'INSERT')").fetchone()[0]:
            raise SharedStoreError("this role may not publish to the organisation index: only the store's owner "
                                   "runs `noul org index`")


def other_model(connection, model_key: str) -> str | None:
    """Why `model_key`'s vectors cannot join the organisation index (it holds another model's), or None."""
    row = connection.execute("SELECT repo, model FROM noul.repos WHERE model <> %s LIMIT 1", (model_key,)).fetchone()
    if row is None:
        return None
    return (f"the organisation index holds {row[1]} vectors ({row[0]}), not {model_key}: one model per "
            "organisation index")


def remove_repositories(url: str, repos: list[str]) -> list[str]:
    """Take repositories out of the organisation index (their chunks, terms and vectors; grants naming them
    stay, for a repository published again under its name). The names removed; the store's owner only."""
    with database_errors("removing repositories", url), connect(url) as connection:
        rows = connection.execute("DELETE FROM noul.repos WHERE repo = ANY (%s) RETURNING repo", (repos,)).fetchall()
    return sorted(repo for (repo,) in rows)


def publish_repository(url: str, workspace, repo: str, commit: str, *, leg: str = "static") -> PublishReport:
    """Replace `repo`'s rows with the chunks of `workspace`'s local index and their `leg` vectors
    ("static" or "dense"). One transaction: a reader sees the old rows or the new ones, never a mix."""
    psycopg = database_module()
    from psycopg.types.json import Jsonb

    started = time.perf_counter()
    model_key = workspace.static_key if leg == "static" else workspace.model_key
    if not model_key:
        raise SharedStoreError(f"{workspace.root} has no {leg} model to publish vectors of")
    chunks = workspace.store.chunks()
    terms = workspace.store.lexical([c.key for c in chunks])
    vectors = workspace.store.vectors(model_key, [c.hash for c in chunks])
    widths = {len(v) for v in vectors if v is not None}
    if len(widths) > 1:
        raise SharedStoreError(f"{repo}: vectors of {model_key} have several widths {sorted(widths)}")
    dimensions = widths.pop() if widths else 0
    documents = Counter(term for counts in terms for term in counts)
    length = sum(sum(counts.values()) for counts in terms)
    report = PublishReport(repo, commit, len(chunks), sum(v is not None for v in vectors))
    with connect(url, autocommit=False) as connection:
        try:
            if refused := other_model(connection, model_key):  # again in the transaction: another may be first
                raise SharedStoreError(refused)
            connection.execute("DELETE FROM noul.repos WHERE repo = %s", (repo,))  # cascades to its rows
            connection.execute("INSERT INTO noul.repos (repo, commit, model, dimensions, chunks, length) "
                               "VALUES (%s, %s, %s, %s, %s, %s)",
                               (repo, commit, model_key, dimensions, len(chunks), length))
            with connection.cursor() as cursor:
                cursor.execute("CREATE TEMP TABLE staging (LIKE noul.chunks INCLUDING DEFAULTS) ON COMMIT DROP")
                cursor.execute("ALTER TABLE staging ALTER lexemes DROP NOT NULL")
                columns = "repo, key, path, start_line, end_line, symbol, language, kind, header, text, hash, " \
                          "length, terms, embedding"
                with cursor.copy(f"COPY staging ({columns}) FROM STDIN") as copy:
                    for chunk, counts, vector in zip(chunks, terms, vectors, strict=True):
                        copy.write_row((repo, _clean(chunk.key), _clean(chunk.path), chunk.start_line,
                                        chunk.end_line, _clean(symbol_lines(chunk)), chunk.language, chunk.kind,
                                        _clean(chunk.header), _clean(chunk.text), chunk.hash,
                                        sum(counts.values()), Jsonb({_clean(t): n for t, n in counts.items()}),
                                        vector))
                cursor.execute("INSERT INTO noul.chunks SELECT repo, key, path, start_line, end_line, symbol, "
                               "language, kind, header, text, hash, length, terms, "
                               "array_to_tsvector(ARRAY(SELECT jsonb_object_keys(terms))), embedding FROM staging")
                with cursor.copy("COPY noul.documents (repo, term, documents) FROM STDIN") as copy:
                    for term, count in documents.items():
                        if "\x00" not in term:
                            copy.write_row((repo, term, count))
            connection.commit()
        except psycopg.Error as error:
            connection.rollback()
            raise SharedStoreError(f"publishing {repo}: {described(error, url)}") from None
    report.seconds = time.perf_counter() - started
    return report


def ensure_vector_index(url: str) -> str:
    """The HNSW index over the chunks' vectors, built once the width is known (a bulk load before it is
    faster than inserting into it); returns what was done."""
    with database_errors("building the vector index", url), connect(url) as connection:
        widths = [row[0] for row in connection.execute("SELECT DISTINCT dimensions FROM noul.repos "
                                                       "WHERE dimensions > 0")]
        if len(widths) != 1:
            return "no vectors yet" if not widths else f"vectors of several widths {widths}: no vector index"
        name = f"chunks_embedding_{widths[0]}"
        exists = connection.execute("SELECT 1 FROM pg_indexes WHERE schemaname = 'noul' AND indexname = %s",
                                    (name,)).fetchone()
        if exists:
            return f"the vector index (HNSW over {widths[0]} dimensions) kept up to date"
        connection.execute("SET maintenance_work_mem = '1GB'")
        connection.execute(f"CREATE INDEX {name} ON noul.chunks USING hnsw "
                           f"((embedding::vector({widths[0]})) vector_cosine_ops)")
        return f"the vector index (HNSW over {widths[0]} dimensions) built"


def _clean(text: str) -> str:
    """PostgreSQL text holds no NUL (a chunk of a file with one keeps the rest). A path with bytes that
    are not UTF-8 (kept by the local index as surrogates) is written with their escapes."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text


def index_organisation(url: str, mirrors: list[str], work: Path, settings: Settings, *, leg: str = "static",
                       log: Callable[[str], None] | None = None, name: str | None = None) -> list[PublishReport]:
    """Publish each `MIRROR[@COMMIT]` (default HEAD) whose commit is not the published one, then make
    sure the vector index exists. `name` (OWNER/NAME) names a single mirror instead of its folder or
    origin (a clone of a clone has neither)."""
    if name is not None:
        if len(mirrors) != 1:
            raise SharedStoreError(f"--name names one repository; {len(mirrors)} mirrors were given")
        name = repository_names([name])[0]
    from noul_lsp.bench.trees import write_tree
    from noul_lsp.session.workspace import Workspace
    from noul_lsp.train.git import Repository

    may_publish(url)
    say = log or (lambda message: None)
    reports = []
    seen: dict[str, Path] = {}
    for spec in mirrors:
        path, at, revision = spec.rpartition("@")
        if not at or "/" in revision:  # no @COMMIT (an @ inside a folder name is the path's)
            path, revision = spec, ""
        mirror = Path(path).expanduser()
        if (mirror / "repo" / "HEAD").is_file():  # the layout `fetch` writes: owner+name/repo
            mirror = mirror / "repo"
        with Repository(mirror) as repository:  # GitError (a RuntimeError) when it is none
            git_dir, repo, commit = repository.git_dir, name or repository.name(), repository.resolve(revision or "HEAD")
        if repo in seen and seen[repo] != mirror:
            raise SharedStoreError(f"{mirror} and {seen[repo]} are both named {repo}: one repository, one name")
        seen[repo] = mirror
        tree = work / "trees" / repo.replace("/", "+")
        started = time.perf_counter()
        mark = tree.with_name(tree.name + TREE_MARK)
        if not (mark.is_file() and mark.read_text().strip() == commit):
            write_tree(git_dir, commit, tree)
            mark.write_text(commit)
        workspace = Workspace(tree, _with_cache(settings, work))
        try:
            key = workspace.static_key if leg == "static" else workspace.model_key
            if key:  # before the work, not after it
                with database_errors("looking up the organisation index's model", url), connect(url) as connection:
                    refused = other_model(connection, key)
                if refused:
                    raise SharedStoreError(refused)
            if published_commit(url, repo) == (commit, key):
                reports.append(PublishReport(repo, commit, skipped="published at this commit"))
                say(f"{repo}: already published at {commit[:12]}")
                continue
            model = workspace.static_embedder() if leg == "static" else workspace.embedder()
            if model is None:
                raise SharedStoreError(f"no {leg} model to index {repo} with: "
                                       f"{workspace.static_problem if leg == 'static' else workspace.embedder_problem}")
            with workspace.store.indexing_lock():
                workspace.indexer.update()
                embedded = workspace.embed_static() if leg == "static" else workspace.embed_missing(model)
            report = publish_repository(url, workspace, repo, commit, leg=leg)
        finally:
            workspace.close()
        report.embedded = embedded.embedded if embedded is not None else 0
        report.fetched = embedded.fetched if embedded is not None else 0
        report.seconds = time.perf_counter() - started
        reports.append(report)
        say(f"{repo}: {report.chunks} chunks at {commit[:12]} in {report.seconds:.1f}s "
            f"({report.embedded} embedded, {report.fetched} from the shared store)")
    say(ensure_vector_index(url))
    return reports


def _with_cache(settings: Settings, work: Path) -> Settings:
    import dataclasses

    return settings if settings.cache_dir else dataclasses.replace(settings, cache_dir=str(work / "cache"))
