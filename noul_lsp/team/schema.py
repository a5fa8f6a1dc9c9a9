"""The shared store's connection, tables and access rules.

Who may see what is PostgreSQL's business, not the client's: every table that holds chunk text (or says
which repositories exist) has row-level security, and a row is visible only to a role granted its
repository in `noul.grants` (directly or through a group role). The vectors table has no SELECT grant at
all: a member asks for the vectors of content hashes it already has (`noul.fetch_vectors`), so nobody can
list the organisation's vectors, and a hash is only known to whoever holds the text it was made from.
The owner (whoever ran `noul team init`) bypasses the policies, as PostgreSQL's owners do; members do not.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

#: the setting's environment variable (a libpq URL or keyword string)
ENVIRONMENT = "NOUL_SHARED_STORE"
#: the group role whose members may use the store (fetch and publish vectors, search what they are granted)
MEMBER_ROLE = "noul_member"
#: what a shared store needs installed
INSTALL_HINT = 'a shared store needs psycopg and pgvector: pip install "noul-lsp[team]"'
#: seconds to wait for the server before working locally
CONNECT_TIMEOUT = 3
#: a statement that takes longer is cancelled (an indexing pass or a find must not hang on the store)
STATEMENT_TIMEOUT_MS = 60_000

SCHEMA_SQL = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS noul;
DO $$ BEGIN CREATE ROLE {MEMBER_ROLE} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS noul.vectors (
    model text NOT NULL, hash text NOT NULL, embedding vector NOT NULL,
    -- who published it: members trust each other's vectors (the first one published wins), and this says
    -- whose a vector is if one ever needs taking back
    published_by name NOT NULL DEFAULT current_user, PRIMARY KEY (model, hash));
ALTER TABLE noul.vectors ADD COLUMN IF NOT EXISTS published_by name NOT NULL DEFAULT current_user;

CREATE TABLE IF NOT EXISTS noul.repos (
    repo text PRIMARY KEY, commit text NOT NULL, model text NOT NULL, dimensions integer NOT NULL,
    chunks integer NOT NULL, length bigint NOT NULL, indexed_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS noul.grants (
    repo text NOT NULL, grantee name NOT NULL, PRIMARY KEY (repo, grantee));  -- may precede the repository
CREATE TABLE IF NOT EXISTS noul.chunks (
    repo text NOT NULL REFERENCES noul.repos ON DELETE CASCADE, key text NOT NULL, path text NOT NULL,
    start_line integer NOT NULL, end_line integer NOT NULL, symbol text NOT NULL, language text NOT NULL,
    kind text NOT NULL, header text NOT NULL, text text NOT NULL, hash text NOT NULL,
    length integer NOT NULL, terms jsonb NOT NULL, lexemes tsvector NOT NULL, embedding vector,
    PRIMARY KEY (repo, key));
CREATE INDEX IF NOT EXISTS chunks_lexemes ON noul.chunks USING gin (lexemes);
CREATE INDEX IF NOT EXISTS chunks_file ON noul.chunks (repo, path);
-- per repository and term, how many chunks hold it: BM25's idf over exactly the repositories one may see
CREATE TABLE IF NOT EXISTS noul.documents (
    repo text NOT NULL REFERENCES noul.repos ON DELETE CASCADE, term text NOT NULL, documents integer NOT NULL,
    PRIMARY KEY (term, repo));

-- a grant is visible to the roles it names (so a policy's subquery sees exactly the caller's grants);
-- pg_roles by oid, because pg_has_role on a dropped role's name would raise instead of saying no
ALTER TABLE noul.grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE noul.repos ENABLE ROW LEVEL SECURITY;
ALTER TABLE noul.chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE noul.documents ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS own_grants ON noul.grants;
CREATE POLICY own_grants ON noul.grants FOR SELECT
    USING (EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = grantee AND pg_has_role(r.oid, 'MEMBER')));
DROP POLICY IF EXISTS granted ON noul.repos;
CREATE POLICY granted ON noul.repos FOR SELECT USING (repo IN (SELECT repo FROM noul.grants));
DROP POLICY IF EXISTS granted ON noul.chunks;
CREATE POLICY granted ON noul.chunks FOR SELECT USING (repo IN (SELECT repo FROM noul.grants));
DROP POLICY IF EXISTS granted ON noul.documents;
CREATE POLICY granted ON noul.documents FOR SELECT USING (repo IN (SELECT repo FROM noul.grants));

CREATE OR REPLACE FUNCTION noul.fetch_vectors(p_model text, p_hashes text[])
    RETURNS TABLE (hash text, embedding vector) LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT v.hash, v.embedding FROM noul.vectors v WHERE v.model = p_model AND v.hash = ANY (p_hashes) $$;
REVOKE ALL ON FUNCTION noul.fetch_vectors(text, text[]) FROM PUBLIC;

REVOKE ALL ON ALL TABLES IN SCHEMA noul FROM PUBLIC;
GRANT USAGE ON SCHEMA noul TO {MEMBER_ROLE};
GRANT EXECUTE ON FUNCTION noul.fetch_vectors(text, text[]) TO {MEMBER_ROLE};
-- the publisher column is not theirs to set: it is always the role that inserted the row (a store made
-- before this column granted the whole table: that grant goes)
REVOKE INSERT ON noul.vectors FROM {MEMBER_ROLE};
GRANT INSERT (model, hash, embedding) ON noul.vectors TO {MEMBER_ROLE};
GRANT SELECT ON noul.grants, noul.repos, noul.chunks, noul.documents TO {MEMBER_ROLE};
"""


class SharedStoreError(RuntimeError):
    """The shared store cannot be used: unreachable, not initialised, no permission, psycopg missing.
    The message never carries a password or any chunk text."""


class StoreUnreachable(SharedStoreError):
    """No connection to the shared store (down, a wrong host or port): it may answer again later."""


#: a store that could not be reached is asked again after this long (finds and indexing passes alike; a
#: server runs for days, an outage does not)
RETRY_SECONDS = 60.0


def configured_store(setting: str = "") -> str:
    """The connection the user asked for: the setting, else $NOUL_SHARED_STORE, else "" (no shared store)."""
    return setting or os.environ.get(ENVIRONMENT, "")


def _conninfo(url: str) -> dict[str, str] | None:
    """The connection setting's parts (None when libpq cannot read it)."""
    try:
        from psycopg import conninfo

        return conninfo.conninfo_to_dict(url)
    except Exception:  # psycopg missing, or a malformed setting: say nothing of its contents
        return None


def store_status(team) -> dict:
    """What a status says of the team settings (`config.TeamSettings`): where vectors are fetched from and
    offered to (user@host:port/database, never the password; None without a store), and whether finds
    search the organisation index too."""
    url = configured_store(team.shared_store)
    return {"sharedStore": redacted(url) if url else None, "org": team.org}


def setting_problem(url: str) -> str | None:
    """Why a connection setting cannot be used as written (libpq cannot read it), or None; never its text."""
    if _conninfo(url) is None:
        return "the shared store's connection setting is not a libpq URL or keyword string"
    return None


def redacted(url: str) -> str:
    """Where the connection goes, for messages: user@host:port/database, never the password (nor any
    other part of a setting libpq cannot read)."""
    parts = _conninfo(url)
    if parts is None:
        return "(a connection setting libpq cannot read)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"{user}{host}{port}/{parts.get('dbname') or parts.get('user') or ''}"


#: a password in a connection setting however it is written: a URL's `user:PASSWORD@` (up to the last `@`
#: before the next blank: a quote may be part of it; more is taken out rather than less), a URL
#: parameter's `password=PASSWORD` (up to `&`), a keyword string's `password=PASSWORD` (quoted, or up to a
#: blank, with backslash escapes, doubled in a repr: `&` and quotes may be part of it)
_PASSWORDS = re.compile(r"""(?P<lead>postgres(?:ql)?://[^:/@\s'"]*:)\S*(?=@[^@\s]*)"""
                        r"""|(?P<param>[?&]password=)[^&\s'"#]*"""
                        r"""|(?P<key>\bpassword\s*=\s*)(?:'(?:[^'\\]|\\+.)*'|(?:[^\s\\]|\\+.)+)""",
                        re.IGNORECASE)


def without_passwords(text: str) -> str:
    """`text` with every connection setting's password replaced by ***: for text that may quote settings
    whole, as the language server's log does (pygls logs the client's initialisation options)."""
    return _PASSWORDS.sub(lambda m: (m.group("lead") or m.group("param") or m.group("key")) + "***", text)


def scrubbed(message: str, url: str) -> str:
    """A driver message with the password taken out (libpq quotes parts of a setting it cannot read)."""
    parts = _conninfo(url)
    password = (parts or {}).get("password")
    if parts is None:
        return "the connection setting is not a libpq URL or keyword string"
    return message.replace(password, "***") if password else message


def database_module():
    """psycopg, or the one-line reason it cannot be used."""
    try:
        import psycopg
    except ImportError as error:
        raise SharedStoreError(f"{INSTALL_HINT} ({error})") from None
    # psycopg logs what it ignores while closing a pipeline a refused statement aborted ("error ignored
    # terminating <psycopg.Pipeline ...>") to stderr; the refusal itself reaches the user as one line
    logging.getLogger("psycopg").setLevel(logging.ERROR)
    return psycopg


#: what to do about a server message, by a part of it (the first that matches)
_HINTS = (
    ("permission denied for schema noul", "this role is not a member of the team: the store's owner runs "
                                          "`noul team grant ROLE`"),
    ("permission denied to create extension", "creating the vector extension takes a superuser: one runs "
                                              "`noul team init` once (or CREATE EXTENSION vector)"),
    ("permission denied for table", "only the store's owner publishes to the organisation index or changes grants"),
    ("permission denied for database", "`noul team init` is run by the store's owner (a role that may create "
                                       "schemas in the database)"),
    ('relation "noul.', "the shared store is not initialised: its owner runs `noul team init`"),
    ('schema "noul" does not exist', "the shared store is not initialised: its owner runs `noul team init`"),
)


def described(error: Exception, url: str) -> str:
    """A driver message for people: its first line, the password taken out, and what to do when known."""
    message = scrubbed(first_line(error), url) if url else first_line(error)
    hint = next((hint for part, hint in _HINTS if part in message), "")
    return f"{message}; {hint}" if hint else message


@contextmanager
def database_errors(what: str, url: str) -> Iterator[None]:
    """Any database error inside as a SharedStoreError saying `what` failed (its first line, scrubbed)."""
    psycopg = database_module()
    try:
        yield
    except psycopg.Error as error:
        raise SharedStoreError(f"{what} failed ({described(error, url)})") from None


def connect(url: str, *, autocommit: bool = True, vectors: bool = True):
    """A psycopg connection with pgvector's types registered (vectors travel as binary float32), whose
    statements give up after STATEMENT_TIMEOUT_MS; `vectors=False` before the extension exists."""
    psycopg = database_module()
    try:
        from pgvector.psycopg import register_vector
    except ImportError as error:
        raise SharedStoreError(f"{INSTALL_HINT} ({error})") from None
    try:
        connection = psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except (psycopg.Error, ValueError) as error:
        message = scrubbed(first_line(error), url)
        if "authentication failed" in message or ("role" in message and "does not exist" in message):
            raise SharedStoreError(f"the shared store {redacted(url)} refused the login ({message}): check the "
                                   "user and password of the connection setting") from None
        raise StoreUnreachable(f"the shared store {redacted(url)} is unreachable ({message})") from None
    try:
        connection.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        if not autocommit:
            connection.commit()
    except psycopg.Error as error:
        connection.close()
        raise StoreUnreachable(f"the shared store {redacted(url)} did not answer ({scrubbed(first_line(error), url)})") \
            from None
    if not vectors:
        return connection
    try:
        register_vector(connection)
    except psycopg.Error as error:
        connection.close()
        raise SharedStoreError(f"the shared store {redacted(url)} has no pgvector extension; run `noul team init` "
                               f"({scrubbed(first_line(error), url)})") from None
    return connection


def initialise(url: str) -> None:
    """Create the extension, tables, policies and the member role (idempotent; the owner runs it)."""
    with connect(url, vectors=False) as connection:
        _run(connection, SCHEMA_SQL, "initialising the shared store")


#: a repository's name in the organisation index
REPOSITORY_NAME = re.compile(r"[^/\s]+/[^/\s]+")


def _initialised(connection, url: str) -> None:
    if _run(connection, "SELECT to_regclass('noul.grants')", "looking up the store's tables").fetchone()[0] is None:
        raise SharedStoreError(f"the shared store {redacted(url)} is not initialised: its owner runs `noul team init`")


def grant(url: str, role: str, repos: list[str]) -> list[str]:
    """Make `role` a member (it may fetch and publish vectors) and let it see these repositories (OWNER/NAME,
    checked before anything is granted). The ones not (yet) in the organisation index: a grant of a
    misspelt name would silently let it see nothing."""
    repos = repository_names(repos)
    with connect(url, vectors=False) as connection:
        from psycopg import sql

        _initialised(connection, url)
        _run(connection, sql.SQL("GRANT {} TO {}").format(sql.Identifier(MEMBER_ROLE), sql.Identifier(role)),
             f"granting {MEMBER_ROLE} to {role}")
        for repo in repos:
            _run(connection, "INSERT INTO noul.grants (repo, grantee) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                 f"granting {repo} to {role}", (repo, role))
        published = {r for (r,) in _run(connection, "SELECT repo FROM noul.repos WHERE repo = ANY (%s)",
                                        "looking up the repositories", (repos,)).fetchall()}
    return [repo for repo in repos if repo not in published]


def repository_names(repos: list[str]) -> list[str]:
    """Repository names as given to grant or revoke, trimmed; SharedStoreError naming any that is no OWNER/NAME."""
    repos = [repo.strip() for repo in repos]
    if malformed := [repo for repo in repos if not REPOSITORY_NAME.fullmatch(repo)]:
        raise SharedStoreError(f"not a repository name (OWNER/NAME): {', '.join(repr(r) for r in malformed)}")
    return repos


def revoke(url: str, role: str, repos: list[str]) -> tuple[list[str], bool]:
    """Take these repositories from `role`; with none named, take all of them and its membership (it can
    then neither search nor fetch or publish vectors; a role dropped since loses its grants alone). The
    repositories it was granted and is no longer, and whether the role exists."""
    repos = repository_names(repos)
    with connect(url, vectors=False) as connection:
        from psycopg import sql

        _initialised(connection, url)
        exists = bool(_run(connection, "SELECT 1 FROM pg_roles WHERE rolname = %s", "looking up the role",
                           (role,)).fetchone())
        if repos:
            return sorted(r for (r,) in _run(connection, "DELETE FROM noul.grants WHERE grantee = %s AND repo = ANY (%s) "
                                                         "RETURNING repo", f"revoking from {role}", (role, repos))), exists
        taken = sorted(r for (r,) in _run(connection, "DELETE FROM noul.grants WHERE grantee = %s RETURNING repo",
                                          f"revoking from {role}", (role,)))
        if exists:
            _run(connection, sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(MEMBER_ROLE), sql.Identifier(role)),
                 f"revoking {MEMBER_ROLE} from {role}")
        return taken, exists


def listing(url: str) -> dict:
    """The team's members and each role's grants ({"members": [...], "grants": {role: [repo, ...]}}). A role
    that may not change grants reads its own grants alone (row-level security) and, so that the others do
    not read as granted nothing, itself alone among the members (the role catalogs are public anyway)."""
    with connect(url, vectors=False) as connection:
        _initialised(connection, url)
        owner, me = _run(connection, "SELECT has_table_privilege('noul.grants', 'INSERT'), current_user",
                         "looking up the role").fetchone()
        members = [r for (r,) in _run(connection, "SELECT m.rolname FROM pg_auth_members a JOIN pg_roles g ON "
                                                  "g.oid = a.roleid JOIN pg_roles m ON m.oid = a.member WHERE "
                                                  "g.rolname = %s ORDER BY 1", "listing the members", (MEMBER_ROLE,))]
        if not owner:  # a member reads its own grants alone: the others' would read as none
            members = [role for role in members if role == me]
        grants: dict[str, list[str]] = {}
        for grantee, repo in _run(connection, "SELECT grantee, repo FROM noul.grants ORDER BY 1, 2",
                                  "listing the grants").fetchall():
            grants.setdefault(grantee, []).append(repo)
    return {"members": members, "grants": grants}


def _run(connection, statement, what: str, params=None):
    import psycopg

    try:
        return connection.execute(statement, params)
    except psycopg.Error as error:
        raise SharedStoreError(f"{what}: {described(error, '')}") from None


def first_line(error: Exception) -> str:
    """A server message's first line: psycopg adds the statement and context below it."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def as_array(value) -> np.ndarray:
    """A vector column's value as float32 (pgvector's loader gives numpy arrays or its Vector class)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
