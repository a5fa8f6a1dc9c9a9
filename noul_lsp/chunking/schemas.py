"""GraphQL's and Prisma's schemas cut at their declarations: each type, input, enum, interface, union, scalar,
directive and operation of a GraphQL document, each model, enum, type, view, datasource and generator of a
Prisma schema, a chunk named by its name and listing its fields (`Mutation.signup`, `User.email`).

Both are source (a service's schema, read by its code: `roles.py`), and as 40-line windows a type asked for
by name was defined nowhere. There is no grammar wheel for either; their declarations start at a line's
start with a keyword and a name, and end at their braces (or their line, for a scalar or a union), so they
are found as protobuf's are (`proto.py`) once comments and strings are blanked. A declaration keeps the
comments and the description (GraphQL's `\"\"\"...\"\"\"`, Prisma's `///`) right above it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from noul_lsp.chunking.blocks import Block, blank, chunk_blocks, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk


@dataclass(frozen=True)
class _Dialect:
    language: str
    #: comments and strings, blanked before braces and names are read
    not_code: re.Pattern
    #: a declaration's keyword and name at a line's start
    declaration: re.Pattern
    #: a member's name at the start of a line of the declaration's body (matched at the line's start)
    member: re.Pattern


_GRAPHQL = _Dialect(
    "graphql",
    re.compile(r"#[^\n]*|\"\"\".*?(?:\"\"\"|\Z)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)", re.DOTALL | re.MULTILINE),
    re.compile(r"^[ \t]*(?:extend[ \t]+)?(?P<kind>type|interface|input|enum|union|scalar|schema|directive|query"
               r"|mutation|subscription|fragment)\b[ \t]*(?P<name>@?[A-Za-z_]\w*)?", re.MULTILINE),
    re.compile(r"[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*(?:[(:]|$)"))
_PRISMA = _Dialect(
    "prisma",
    re.compile(r"//[^\n]*|\"(?:[^\"\\\n]|\\.)*(?:\"|$)", re.MULTILINE),
    re.compile(r"^[ \t]*(?P<kind>model|enum|type|view|datasource|generator)[ \t]+(?P<name>[A-Za-z_]\w*)",
               re.MULTILINE),
    re.compile(r"[ \t]*(?P<name>[A-Za-z_]\w*)(?:[ \t]+\S|[ \t]*$)"))
SCHEMA_SUFFIXES = (".graphql", ".graphqls", ".gql", ".prisma")
_OPENS_BELOW = re.compile(r"\s*\{")
#: what a GraphQL declaration without a name is named by (`schema { query: Query }`, an anonymous `{ ... }` query)
_UNNAMED = {"schema": "schema"}


def schema_blocks(text: str, dialect: _Dialect) -> list[Block]:
    """Each declaration a block (its braces matched on the blanked text), with the comment lines above it."""
    code = dialect.not_code.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks: list[Block] = []
    position = 0
    for found in dialect.declaration.finditer(code):
        if found.start() < position:  # inside the last declaration's braces
            continue
        kind, name = found.group("kind"), found.group("name") or _UNNAMED.get(found.group("kind"), "")
        end = _declaration_end(code, found.end())
        position = end
        first, last = row_at(found.start()), row_at(max(end - 1, found.start()))
        blocks.append(Block(_comment_start(lines, code_lines, first), last, name, kind,
                            tuple(_members(code, code.find("{", found.end(), end), end, name, dialect, row_at))))
    return one_per_row(blocks)


def _declaration_end(code: str, after: int) -> int:
    """Where a declaration ends: after its closing brace when its line (or the first code below it) opens one,
    else at its line's end (`scalar DateTime`, `union Result = A | B`)."""
    line_end = code.find("\n", after)
    line_end = len(code) if line_end < 0 else line_end
    opening = code.find("{", after, line_end)
    if opening < 0:  # on the lines after it, with nothing but blanks between
        below = _OPENS_BELOW.match(code, line_end)
        if below is None:
            return line_end
        opening = below.end() - 1
    depth = 0
    for index in range(opening, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(code)


def _members(code: str, opening: int, end: int, name: str, dialect: _Dialect,
             row_at: Callable[[int], int]) -> list[tuple[int, str]]:
    """The fields (an enum's values) on the lines of a declaration's body, inside its braces and no deeper
    (an operation's nested selections are not its fields), as `Name.field` with their rows."""
    if opening < 0:
        return []
    found: list[tuple[int, str]] = []
    depth, offset = 1, opening + 1
    for line in code[opening + 1:end].split("\n"):
        member = dialect.member.match(line) if depth == 1 else None
        if member is not None:
            found.append((row_at(offset + member.start("name")), f"{name}.{member.group('name')}"))
        depth += line.count("{") - line.count("}")
        offset += len(line) + 1
    return found


def _comment_start(lines: list[str], code_lines: list[str], row: int) -> int:
    """The first row of the comments and description right above `row` (`row` itself when there are none)."""
    while row > 0 and lines[row - 1].strip() and not code_lines[row - 1].strip():
        row -= 1
    return row


def chunk_schema(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's declarations as chunks (`blocks.chunk_blocks`), its other lines in windows."""
    dialect = _PRISMA if path.lower().endswith(".prisma") else _GRAPHQL
    return chunk_blocks(path, text.split("\n"), schema_blocks(text, dialect), language=dialect.language,
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars)
