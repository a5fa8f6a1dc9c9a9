"""SQL cut at its statements, each named by what it declares: a migration's tables, columns, indexes,
functions, types, triggers and policies are definitions.

As 40-line windows, supabase/auth's 71 migrations were 84 unnamed chunks: "where is the refresh_tokens table
created" found the Go model that names the table, and a table asked for by name was defined nowhere. The
grammar wheel (tree-sitter-sql) reads one dialect and fails on Go template actions in a migration's names
(`{{ index .Options "Namespace" }}.users`) and on half of Postgres' function bodies, so statements are found
here by their ends: a `;` outside quotes, comments and dollar-quoted bodies (`$$ ... $$`) and outside a
`BEGIN ... END` routine body where a dialect writes one (MySQL's and SQLite's triggers); MySQL's `DELIMITER`,
T-SQL's `GO` and Oracle's `/` lines, psql's `\\set` lines and `COPY ... FROM stdin` data are read as such.
Each statement keeps the comments above it (and one after it on its last line); minor statements (an index, a
grant, a column added) are packed with the table or routine before them (`blocks.chunk_blocks`). A query
file's statements named by sqlc's or yesql's `-- name: GetAuthor :one` are named so.

A dbt project's SQL is Jinja around the statements: its macros are blocks named by their names (`jinja.py`),
the SQL outside them is cut at its statements as before, Jinja's tags and comments read as strings (a `;` in them
ends nothing), and a model, one query, is named by its file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from noul_lsp.chunking.blocks import Block, blank, chunk_blocks, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.jinja import jinja_blocks

SQL_SUFFIXES = (".sql",)
LANGUAGE = "sql"

#: a comment: MySQL's `#` only at a line's start (Postgres' `#>` is an operator), not MySQL's conditional code
#: (mysqldump's `/*!50001 CREATE ... VIEW ... */`, which it runs)
_COMMENT = r"--[^\n]*|^[ \t]*\#[^\n]*|/\*(?!!).*?(?:\*/|\Z)"
#: a string, and a Go template's action in a migration (`{{ index .Options "Namespace" }}`): blanked before names
#: are read, as comments are. A backslash before a quote escapes it where the quote cannot end the string
#: (mysqldump's `'O\'Brien'`), not where it can (Postgres' `ESCAPE '\'`, a Windows path `'C:\'`)
_STRING = (r"[EeNnBbXx]?'(?:[^'\\]|''|\\'(?![\s,;)|:=<>+*/-]|\Z)|\\)*(?:'|\Z)|\{\{.*?(?:\}\}|\Z)"
           r"|\{%.*?(?:%\}|\Z)|\{#.*?(?:#\}|\Z)")  # Jinja's tags and comments (dbt) alike
#: the marks around MySQL's conditional code, blanked to read the code inside
_CONDITIONAL_MARKS = r"/\*!\d*|\*/"
_QUOTED_NAME = r"\"(?:[^\"]|\"\")*(?:\"|\Z)|`[^`]*(?:`|\Z)"
_DOLLAR = r"\$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?(?:\$(?P=tag)\$|\Z)"
#: a line that ends a statement whatever its delimiter: T-SQL's `GO`, Oracle's `/`, a psql meta-command (`\set`)
_LINE_END = r"^[ \t]*(?:go(?:[ \t]+\d+)?[ \t]*(?:--[^\n]*)?|/)[ \t\r]*$|^[ \t]*\\[A-Za-z]+[^\n]*"
_DELIMITER_LINE = r"^[ \t]*delimiter[ \t]+(?P<delimiter>\S+)[ \t\r]*$"
#: the words that open and close a routine's body (not a transaction's `BEGIN;`, `BEGIN TRANSACTION`)
_KEYWORD = (r"\b(?P<keyword>begin(?![ \t]*;|\s+(?:transaction|tran|work)\b)|case|end)\b"
            r"(?:[ \t]+(?P<closes>if|loop|while|repeat|for|case)\b)?")
#: a statement that opens a routine whose body may hold `;` between `BEGIN` and `END`
_ROUTINE = re.compile(r"create\s+(?:or\s+(?:replace|alter)\s+)?(?:temp(?:orary)?\s+)?(?:constraint\s+)?"
                      r"(?:definer\s*=\s*\S+\s+)?(?:trigger|procedure|function|event)\b", re.IGNORECASE)
#: a statement's comments and blanks (and a byte order mark) before its code
_LEADING = re.compile(rf"(?:[\s\ufeff]+|{_COMMENT})*", re.DOTALL | re.MULTILINE)
#: what may follow a statement's end on its line and is still its own: blanks, a comment
_TRAILING = re.compile(r"[ \t\r]*(?:--[^\n]*|/\*[^\n]*?\*/[ \t\r]*)?(?=\n|\Z)")
_COPY_FROM_STDIN = re.compile(r"\s*\\?copy\b[^;]*\bfrom\s+stdin\b", re.IGNORECASE)  # psql's `\copy` too
_COPY_DATA_END = re.compile(r"^\\\.[ \t\r]*$", re.MULTILINE)
_NOISE = re.compile(rf"(?P<blanked>{_COMMENT}|{_STRING}|{_CONDITIONAL_MARKS})|{_QUOTED_NAME}|{_DOLLAR}",
                    re.DOTALL | re.MULTILINE)
#: the same inside a dollar-quoted body (a body nested in it is read as its text: nesting is not recursion)
_NOISE_INSIDE = re.compile(rf"(?P<blanked>{_COMMENT}|{_STRING})|{_QUOTED_NAME}", re.DOTALL | re.MULTILINE)

_IDENT = r"(?:\"(?:[^\"]|\"\")+\"|`[^`]+`|\[[^\]]+\]|[A-Za-z_][\w$]*)"
_NAME = rf"(?:\.\s*)?(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT})*)"  # a leading `.`: a blanked template's schema
_CREATE = re.compile(
    r"\s*create\s+(?:or\s+(?:replace|alter)\s+)?(?:(?:global|local)\s+)?(?:temp(?:orary)?\s+|unlogged\s+)?"
    r"(?:unique\s+)?(?:materialized\s+)?(?:recursive\s+)?(?:constraint\s+)?"
    r"(?:(?:algorithm\s*=\s*\w+|definer\s*=\s*\S+|sql\s+security\s+\w+)\s+)*"  # mysqldump's views
    r"(?P<kind>table|view|index|function|procedure|trigger|type|sequence|schema|policy|domain|extension|role"
    r"|aggregate|rule|event\s+trigger|event|publication|collation|cast|operator|server)\s+"
    rf"(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:authorization\s+)?{_NAME}", re.IGNORECASE)
_ALTER_TABLE = re.compile(rf"\s*alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?{_NAME}", re.IGNORECASE)
#: what an `ALTER TABLE` declares: an added column or constraint, a new name
_ALTERED = re.compile(
    r"\badd\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?"
    rf"(?!(?:primary|foreign|unique|check|exclude|constraint|index|key|fulltext|spatial)\b)(?P<column>{_IDENT})"
    rf"|\badd\s+constraint\s+(?:if\s+not\s+exists\s+)?(?P<constraint>{_IDENT})"
    rf"|\brename\s+(?:column\s+|constraint\s+)?{_IDENT}\s+to\s+(?P<renamed>{_IDENT})", re.IGNORECASE)
#: an anonymous code block, and where a statement starts inside it
_DO = re.compile(r"\s*do\b", re.IGNORECASE)
_INNER = re.compile(r"\b(?:create|alter)\b", re.IGNORECASE)
#: a table's element that is no column
_NOT_A_COLUMN = frozenset({"primary", "foreign", "unique", "check", "exclude", "key", "index", "like", "fulltext",
                           "spatial", "period", "constraint"})
#: of those, the words that may name a column too (Postgres' `key text`): an index only as MySQL writes one
_MAYBE_A_COLUMN = frozenset({"key", "index", "period", "fulltext", "spatial"})
_INDEX_ELEMENT = re.compile(rf"\s*(?:key|index|fulltext|spatial|period)\s+(?:{_IDENT}\s*)?\(", re.IGNORECASE)
_FIRST_WORD = re.compile(rf"\s*(?P<word>{_IDENT})(?:\s+(?P<second>{_IDENT}))?")
#: sqlc's and yesql's name of a query (`-- name: GetAuthor :one`), HugSQL's (`-- :name get-user :? :1`)
_QUERY_NAME = re.compile(r"^[ \t]*--[ \t]*(?:name:|:name)[ \t]*(?P<name>[\w-]+)", re.MULTILINE)
#: the kinds that start a chunk of their own when statements are packed
_MAJOR = frozenset({"table", "view", "function", "procedure", "type", "domain", "query", "schema", "aggregate"})


@lru_cache(maxsize=16)
def _tokens(delimiter: str) -> re.Pattern:
    """What the statement scanner stops at while statements end at `delimiter`: comments, strings and quoted
    names (each up to its end, or the text's), dollar-quoted bodies (not while `$$` is the delimiter), the lines
    that end or change the delimiter, the delimiter, and the words of a routine's body."""
    dollar = f"|(?P<dollar>{_DOLLAR})" if "$" not in delimiter else ""
    return re.compile(rf"(?P<skipped>{_COMMENT}|{_STRING}|{_QUOTED_NAME}){dollar}|(?P<line_end>{_LINE_END})"
                      rf"|(?P<set>{_DELIMITER_LINE})|(?P<end>{re.escape(delimiter)})|{_KEYWORD}",
                      re.DOTALL | re.MULTILINE | re.IGNORECASE)


def statement_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each statement, its leading comments and blank lines included, its end and a
    comment after it on its line too; together they cover the text."""
    spans: list[tuple[int, int]] = []
    start, depth, position = 0, 0, 0
    delimiter = ";"
    code = _code_start(text, start)  # where the statement being read starts to be code
    routine = _ROUTINE.match(text, code) is not None  # whether it opens a routine
    while (token := _tokens(delimiter).search(text, position)) is not None:
        position = max(token.end(), token.start() + 1)
        skipped = token.group("skipped") is not None or token.groupdict().get("dollar") is not None
        if skipped:
            continue
        if token.group("keyword") is not None:
            if routine and token.group("keyword").lower() != "end":
                depth += 1
            elif routine and (token.group("closes") or "case").lower() == "case":  # `END IF` closes no `BEGIN`
                depth = max(depth - 1, 0)
            continue
        if token.group("end") is not None and depth > 0:
            continue
        if token.group("set") is not None:  # `DELIMITER $$`: the statement before it ends, the line is one
            if text[start:token.start()].strip():
                spans.append((start, token.start()))
                start, code = token.start(), token.start()
            delimiter = token.group("delimiter")
        end = _line_end(text, token.end())
        if _COPY_FROM_STDIN.match(text, code, token.end()):  # its data rows, up to `\.`
            data_end = _COPY_DATA_END.search(text, end)
            end = _line_end(text, data_end.end()) if data_end else len(text)
        spans.append((start, end))
        start, position, depth = end, max(position, end), 0
        code = _code_start(text, start)
        routine = _ROUTINE.match(text, code) is not None
    if text[start:].strip():
        spans.append((start, len(text)))
    elif spans:  # the blank lines after the last statement are its
        spans[-1] = (spans[-1][0], len(text))
    return spans


def _line_end(text: str, end: int) -> int:
    """A statement's end with what follows it on its line when that is only blanks or a comment."""
    trailing = _TRAILING.match(text, end)
    return trailing.end() if trailing else end


def _code_start(text: str, start: int) -> int:
    """The offset of a statement's first code, past its comments and blanks."""
    return _LEADING.match(text, start).end()


def _blanked(text: str) -> str:
    """The text with its comments, strings and template actions as spaces (a dollar-quoted body's too: a `DO`
    block's statements are read), quoted names kept: names are read from it, at the text's offsets."""
    def blanked_if_noise(found: re.Match) -> str:
        return blank(found) if found.group("blanked") is not None else found.group(0)

    def replaced(found: re.Match) -> str:
        if found.groupdict().get("tag") is not None:  # a dollar-quoted body: its insides blanked alike
            opening = len(found.group("tag")) + 2
            return found.group(0)[:opening] + _NOISE_INSIDE.sub(blanked_if_noise, found.group(0)[opening:])
        return blanked_if_noise(found)
    return _NOISE.sub(replaced, text)


def _clean(name: str) -> str:
    """A name as written without its quotes; a schema kept where it is one (`auth.users`)."""
    parts = [re.sub(r"^[\"`\[]|[\"`\]]$", "", part.strip()) for part in name.split(".")]
    return ".".join(part for part in parts if part)


def _declared(statement: str, offset: int,
              row_at: Callable[[int], int]) -> tuple[str, str, list[tuple[int, str]]]:
    """(name, kind, members) of one statement, blanked (`_blanked`), from its code on, at `offset` in the file."""
    create = _CREATE.match(statement)
    if create is not None:
        kind = create.group("kind").lower().split()[0]
        name = _clean(create.group("name"))
        if kind == "index" and name.lower() == "on":  # `CREATE INDEX ON t (...)`: an index with no name
            return "", "index", []
        members: list[tuple[int, str]] = []
        if kind == "table":
            members = _columns(statement, create.end(), name.rsplit(".", 1)[-1], offset, row_at)
        return name, kind, members
    alter = _ALTER_TABLE.match(statement)
    if alter is not None:
        table = _clean(alter.group("name")).rsplit(".", 1)[-1]
        declared = [(row_at(offset + found.start()), f"{table}.{_clean(next(g for g in found.groups() if g))}")
                    for found in _ALTERED.finditer(statement, alter.end())]
        if declared:
            return declared[0][1], "column", declared[1:]
    elif _DO.match(statement):  # Postgres' `DO $$ BEGIN CREATE TYPE ... EXCEPTION ... END $$`: what it creates
        named = []  # (row, name, kind, members) of each statement in it that declares something
        for piece in re.finditer(r"[^;]+", statement):
            found = _INNER.search(piece.group(0))
            if found is not None:
                at = offset + piece.start() + found.start()
                name, kind, members = _declared(statement[at - offset:piece.end()], at, row_at)
                if name:
                    named.append((row_at(at), name, kind, members))
        if named:
            (_, name, kind, _), others = named[0], named[1:]
            members = [*((row, other) for row, other, _, _ in others),
                       *(member for _, _, _, inner_members in named for member in inner_members)]
            return name, kind, sorted(members, key=lambda member: member[0])
    return "", "statement", []


def _columns(statement: str, after: int, table: str, offset: int,
             row_at: Callable[[int], int]) -> list[tuple[int, str]]:
    """A `CREATE TABLE`'s columns and named constraints as `table.column`, each with its row."""
    opening = statement.find("(", after)
    if opening < 0 or statement[after:opening].strip().lower().startswith("as"):  # `CREATE TABLE t AS SELECT`
        return []
    found: list[tuple[int, str]] = []
    depth, element = 0, opening + 1
    for index in range(opening, len(statement)):
        char = statement[index]
        if char == "(":
            depth += 1
        elif char in ",)":
            if depth == 1:
                first = _FIRST_WORD.match(statement, element)
                if first is not None:
                    word, second = first.group("word"), first.group("second")
                    if word.lower() == "constraint" and second:
                        found.append((row_at(offset + first.start("second")), f"{table}.{_clean(second)}"))
                    elif word.lower() not in _NOT_A_COLUMN or (word.lower() in _MAYBE_A_COLUMN
                                                               and not _INDEX_ELEMENT.match(statement, element)):
                        found.append((row_at(offset + first.start("word")), f"{table}.{_clean(word)}"))
                element = index + 1
            if char == ")":
                depth -= 1
                if depth == 0:
                    break
    return found


def sql_blocks(text: str) -> list[Block]:
    """Each statement a block, named by what it declares (a table also by its columns); a dbt macro one block
    (`jinja.jinja_blocks`), the statements between macros read in the rows between them."""
    macros = jinja_blocks(text)
    if not macros:
        return _statement_blocks(text)
    lines = text.split("\n")
    blocks: list[Block] = []
    next_row = 0
    for macro in [*macros, None]:
        until = macro.first if macro is not None else len(lines)
        between = "\n".join(lines[next_row:until])
        if between.strip():
            blocks.extend(_shifted(block, next_row) for block in _statement_blocks(between))
        if macro is not None:
            blocks.append(macro)
            next_row = macro.last + 1
    return one_per_row(blocks)


def _shifted(block: Block, rows: int) -> Block:
    """A block read in a part of the file, at the file's rows."""
    return replace(block, first=block.first + rows, last=block.last + rows,
                   members=tuple((row + rows, name) for row, name in block.members))


def _statement_blocks(text: str) -> list[Block]:
    """Each statement a block, named by what it declares (a table also by its columns)."""
    row_at = row_finder(text)
    lines = text.split("\n")
    blocks: list[Block] = []
    for start, end in statement_spans(text):
        start += len(text[start:end]) - len(text[start:end].lstrip())  # its first row is its first text's
        code = min(_code_start(text, start), end)
        query = _QUERY_NAME.search(text, start, code) if code > start else None
        if query is not None:
            name, kind, members = query.group("name"), "query", []
        elif code < end:
            name, kind, members = _declared(_blanked(text[code:end]), code, row_at)  # each statement's own quotes
        else:  # comments alone (after the last statement)
            name, kind, members = "", "statement", []
        first, last = row_at(start), row_at(max(end - 1, start))
        while last > first and not lines[last].strip():  # no blank rows at its end
            last -= 1
        blocks.append(Block(first, last, name, kind, tuple(members), major=kind in _MAJOR))
    return one_per_row(blocks)


#: a query's first word, and a statement that writes (after a `WITH`): a dbt model is one query that writes nothing
_QUERY_START = re.compile(r"\s*(?:\(\s*)*(?:select|with)\b", re.IGNORECASE)
_WRITES = re.compile(r"\b(?:insert|update|delete|merge)\b", re.IGNORECASE)
#: the folders of a dbt project's queries, where a model may use no Jinja (`select ... from raw.orders`)
_DBT_MODEL_FOLDERS = frozenset({"models", "analyses", "analysis", "snapshots"})


def chunk_sql(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's statements as chunks, minor ones packed (`blocks.chunk_blocks`). A dbt model (a file of Jinja or
    under a project's `models/` that is one query and declares nothing: `{{ config(...) }}` then `with ... select`)
    is named by the file's stem, what dbt's `ref('fct_daily_trips')` calls it, and each of its chunks carries the
    name as its header: the embedder read a model's `config()` block where its name said what it holds."""
    blocks = sql_blocks(text)
    folder, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0]
    dbt = "{{" in text or not _DBT_MODEL_FOLDERS.isdisjoint(folder.lower().split("/"))
    if stem and dbt and _one_query(text, blocks):
        blocks = [replace(block, name=stem, kind="model") for block in blocks]
    chunks = chunk_blocks(path, text.split("\n"), blocks, language=LANGUAGE, window_lines=window_lines,
                          overlap=overlap, max_chars=max_chars, pack=True)
    return [replace(chunk, header=stem) if chunk.kind == "model" else chunk for chunk in chunks]


def _one_query(text: str, blocks: list[Block]) -> bool:
    """Whether the file's code is one query that declares nothing: its blocks name nothing, and its one statement
    with code (Jinja, comments and strings blanked) opens with `select` or `with` and writes nothing."""
    if not blocks or any(block.name for block in blocks):
        return False
    lines = _blanked(text).split("\n")
    coded = [code for block in blocks
             if (code := "\n".join(lines[block.first:block.last + 1])).replace(";", " ").strip()]
    return len(coded) == 1 and _QUERY_START.match(coded[0]) is not None and _WRITES.search(coded[0]) is None
