"""SQL cut at its statements, each named by what it declares: a migration's tables, columns, indexes,
functions, types, triggers and policies are definitions.

As 40-line windows, supabase/auth's 71 migrations were 84 unnamed chunks: "where is the refresh_tokens table
created" found the Go model that names the table, and a table asked for by name was defined nowhere. The
grammar wheel (tree-sitter-sql) reads one dialect and fails on Go template actions in a migration's names
(`{{ index .Options "Namespace" }}.users`) and on half of Postgres' function bodies, so statements are found
here by their ends: a `;` outside quotes, comments and dollar-quoted bodies (`$$ ... $$`), and outside a
`BEGIN ... END` routine body where a dialect writes one (MySQL's and SQLite's triggers). Each statement keeps
the comments above it; small statements are packed with the table or function they follow
(`blocks.chunk_blocks`). A query file's statements named by sqlc's or yesql's `-- name: GetAuthor :one` are
named so.
"""

from __future__ import annotations

import bisect
import re

from noul_lsp.chunking.blocks import Block, chunk_blocks, one_per_row
from noul_lsp.chunking.chunk import Chunk

SQL_SUFFIXES = (".sql",)
LANGUAGE = "sql"

#: what the statement scanner stops at: comments, quoted strings and names, dollar-quoted bodies (each up to its
#: end, or the text's), a statement's end, and the words that open and close a routine's body
_TOKEN = re.compile(
    r"--[^\n]*|/\*.*?(?:\*/|\Z)|'(?:[^']|'')*(?:'|\Z)|\"(?:[^\"]|\"\")*(?:\"|\Z)|`[^`]*(?:`|\Z)"
    r"|\$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?(?:\$(?P=tag)\$|\Z)|;"
    r"|\b(?P<keyword>begin|case|end)\b(?:\s+(?P<closes>if|loop|while|repeat|for|case)\b)?",
    re.DOTALL | re.IGNORECASE)
#: a statement that opens a routine whose body may hold `;` between `BEGIN` and `END` (not `BEGIN;`, a transaction)
_ROUTINE = re.compile(r"\s*create\s+(?:or\s+replace\s+)?(?:definer\s*=\s*\S+\s+)?(?:trigger|procedure|function|event)\b",
                      re.IGNORECASE)
#: a Go template's action in a migration (`{{ index .Options "Namespace" }}`), and the comments: blanked before
#: names are read, so that offsets stay the text's
_BLANKED = re.compile(r"\{\{.*?\}\}|--[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
#: a statement's comments and blanks before its code
_LEADING = re.compile(r"(?:\s+|--[^\n]*|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_IDENT = r"(?:\"(?:[^\"]|\"\")+\"|`[^`]+`|\[[^\]]+\]|[A-Za-z_][\w$]*)"
_NAME = rf"(?:\.\s*)?(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT})*)"  # a leading `.`: a blanked template's schema
_CREATE = re.compile(
    r"\s*create\s+(?:or\s+replace\s+)?(?:(?:global|local)\s+)?(?:temp(?:orary)?\s+|unlogged\s+)?(?:unique\s+)?"
    r"(?:materialized\s+)?(?:recursive\s+)?(?:definer\s*=\s*\S+\s+)?"
    r"(?P<kind>table|view|index|function|procedure|trigger|type|sequence|schema|policy|domain|extension|role"
    r"|aggregate|rule|event\s+trigger|event|publication|collation|cast|operator|server)\s+"
    rf"(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?{_NAME}", re.IGNORECASE)
_ALTER_TABLE = re.compile(rf"\s*alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?{_NAME}", re.IGNORECASE)
#: what an `ALTER TABLE` declares: an added column or constraint, a column's new name
_ALTERED = re.compile(
    rf"\badd\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?(?!(?:primary|foreign|unique|check|exclude|constraint|index|key|fulltext|spatial)\b)"
    rf"(?P<column>{_IDENT})|\badd\s+constraint\s+(?:if\s+not\s+exists\s+)?(?P<constraint>{_IDENT})"
    rf"|\brename\s+(?:column\s+|constraint\s+)?{_IDENT}\s+to\s+(?P<renamed>{_IDENT})", re.IGNORECASE)
#: an anonymous code block, and where a statement starts inside it
_DO = re.compile(r"\s*do\b", re.IGNORECASE)
_INNER = re.compile(r"\b(?:create|alter)\b", re.IGNORECASE)
#: a table's element that is no column
_NOT_A_COLUMN = frozenset({"primary", "foreign", "unique", "check", "exclude", "key", "index", "like", "fulltext",
                           "spatial", "period", "constraint"})
_FIRST_WORD = re.compile(rf"\s*(?P<word>{_IDENT})(?:\s+(?P<second>{_IDENT}))?")
#: sqlc's and yesql's name of a query (`-- name: GetAuthor :one`), HugSQL's (`-- :name get-user :? :1`)
_QUERY_NAME = re.compile(r"^[ \t]*--[ \t]*(?:name:|:name)[ \t]*(?P<name>[\w-]+)", re.MULTILINE)
#: the kinds that head a chunk of their own when statements are packed
_HEADS = frozenset({"table", "view", "function", "procedure", "type", "domain", "query", "schema", "aggregate"})


def statement_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each statement, its leading comments and blank lines included and its `;` too;
    together they cover the text."""
    spans: list[tuple[int, int]] = []
    start, depth = 0, 0
    routine: bool | None = None  # whether the statement being read opens a routine (read at its first token)
    for token in _TOKEN.finditer(text):
        word = token.group(0)
        if routine is None and not word.startswith(("--", "/*")):
            routine = _ROUTINE.match(text, _code_start(text, start)) is not None
        if word == ";":
            if depth == 0:
                spans.append((start, token.end()))
                start, routine = token.end(), None
            continue
        keyword = (token.group("keyword") or "").lower()
        if not routine or not keyword:
            continue
        if keyword in ("begin", "case"):
            depth += 1
        elif (token.group("closes") or "case").lower() == "case":  # `END IF`, `END LOOP` close no `BEGIN`
            depth = max(depth - 1, 0)
    if text[start:].strip():
        spans.append((start, len(text)))
    elif spans:  # the blank lines after the last statement are its
        spans[-1] = (spans[-1][0], len(text))
    return spans


def _code_start(text: str, start: int) -> int:
    """The offset of a statement's first code, past its comments and blanks."""
    return _LEADING.match(text, start).end()


def _clean(name: str) -> str:
    """A name as written without its quotes; a schema kept where it is one (`auth.users`)."""
    parts = [re.sub(r"^[\"`\[]|[\"`\]]$", "", part.strip()) for part in name.split(".")]
    return ".".join(part for part in parts if part)


def _declared(statement: str, offset: int, row_at) -> tuple[str, str, list[tuple[int, str]]]:
    """(name, kind, members) of one statement, `statement` blanked (`_BLANKED`) and starting at `offset`."""
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
        return "", "statement", []
    if _DO.match(statement):  # Postgres' `DO $$ BEGIN CREATE TYPE ... EXCEPTION ... END $$`: its statements' names
        inner = [(offset + piece.start() + found.start(), found.end() - found.start())
                 for piece in re.finditer(r"[^;]+", statement) for found in [_INNER.search(piece.group(0))] if found]
        named = [_declared(statement[start - offset:], start, row_at) for start, _ in inner]
        declared = [(row_at(start), name) for (start, _), (name, _, _) in zip(inner, named, strict=True) if name]
        declared += [member for _, _, members in named for member in members]
        if declared:
            kind = next(kind for name, kind, _ in named if name)
            return declared[0][1], kind, sorted(declared[1:])
    return "", "statement", []


def _columns(statement: str, after: int, table: str, offset: int, row_at) -> list[tuple[int, str]]:
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
                    word = first.group("word")
                    if word.lower() == "constraint" and first.group("second"):
                        found.append((row_at(offset + first.start("second")), f"{table}.{_clean(first.group('second'))}"))
                    elif word.lower() not in _NOT_A_COLUMN:
                        found.append((row_at(offset + first.start("word")), f"{table}.{_clean(word)}"))
                element = index + 1
            if char == ")":
                depth -= 1
                if depth == 0:
                    break
    return found


def sql_blocks(text: str) -> list[Block]:
    """Each statement a block, named by what it declares (a table also by its columns)."""
    blanked = _BLANKED.sub(lambda found: re.sub(r"[^\n]", " ", found.group(0)), text)
    line_starts = [0, *(found.end() for found in re.finditer("\n", text))]

    def row_at(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset) - 1

    blocks: list[Block] = []
    for start, end in statement_spans(text):
        start += len(text[start:end]) - len(text[start:end].lstrip())  # its first row is its first text's
        code = _code_start(blanked, start)
        if code >= end:  # comments alone (after the last statement)
            blocks.append(Block(row_at(start), row_at(max(end - 1, start)), "", "statement", heads=False))
            continue
        query = _QUERY_NAME.search(text, start, code) if code > start else None
        if query is not None:
            name, kind, members = query.group("name"), "query", []
        else:
            name, kind, members = _declared(blanked[code:end], code, row_at)
        blocks.append(Block(row_at(start), row_at(max(end - 1, start)), name, kind, tuple(members),
                            heads=kind in _HEADS))
    return _trimmed(text.split("\n"), blocks)


def _trimmed(lines: list[str], blocks: list[Block]) -> list[Block]:
    """The blocks without their blank rows at either edge, one per row (`blocks.one_per_row`)."""
    trimmed: list[Block] = []
    for block in blocks:
        first, last = block.first, block.last
        while first < last and not lines[first].strip():
            first += 1
        while last > first and not lines[last].strip():
            last -= 1
        trimmed.append(Block(first, last, block.name, block.kind, block.members, block.heads))
    return one_per_row(trimmed)


def chunk_sql(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's statements as chunks, small ones packed (`blocks.chunk_blocks`)."""
    return chunk_blocks(path, text.split("\n"), sql_blocks(text), language=LANGUAGE, window_lines=window_lines,
                        overlap=overlap, max_chars=max_chars, pack=True)
