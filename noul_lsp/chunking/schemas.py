"""GraphQL's and Prisma's schemas cut at their declarations: each type, input, enum, interface, union, scalar,
directive and operation of a GraphQL document, each model, enum, type, view, datasource and generator of a
Prisma schema, a chunk named by its name and listing its fields (`Mutation.signup`, `User.email`).

A service's schemas are source (`roles.py`), and as 40-line windows a type asked for by name was defined
nowhere. There is no grammar wheel for either; their declarations start at a line's start with a keyword and
a name, go on over the lines of their header (open parentheses, `implements`, `&`, `|`, `@` directives) and
end at their braces, or at their header's end (a scalar, a union), so they are found as protobuf's are
(`proto.py`) once comments and strings are blanked. A declaration keeps the comment lines and the description
(GraphQL's `\"\"\"...\"\"\"` without a blank line in it, Prisma's `///`) right above it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from noul_lsp.chunking.blocks import Block, blank, brace_end, chunk_blocks, comment_start, one_per_row, row_finder
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
    re.compile(r"#[^\n]*|\"\"\"(?:\\\"\"\"|.)*?(?:\"\"\"|\Z)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)",
               re.DOTALL | re.MULTILINE),
    re.compile(r"^[ \t]*(?:extend[ \t]+)?(?P<kind>type|interface|input|enum|union|scalar|schema|directive|query"
               r"|mutation|subscription|fragment)\b[ \t]*(?P<name>@?[A-Za-z_]\w*)?", re.MULTILINE),
    re.compile(r"[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*(?:[(:{@]|\r?$)"))
_PRISMA = _Dialect(
    "prisma",
    re.compile(r"//[^\n]*|\"(?:[^\"\\\n]|\\.)*(?:\"|$)", re.MULTILINE),
    re.compile(r"^[ \t]*(?P<kind>model|enum|type|view|datasource|generator)[ \t]+(?P<name>[A-Za-z_]\w*)",
               re.MULTILINE),
    re.compile(r"[ \t]*(?P<name>[A-Za-z_]\w*)(?:[ \t]+\S|[ \t\r]*$)"))
SCHEMA_SUFFIXES = (".graphql", ".graphqls", ".gql", ".prisma")
#: a line below a header that goes on with it (`& B`, `@key(fields: "id")`, `{`), and a header's line that goes
#: on below (`implements A &`, `union R =`)
_CONTINUES = re.compile(r"[ \t]*(?:[@&|=({]|(?:implements|on|repeatable)\b)")
_ENDS_OPEN = re.compile(r"(?:[&|=,]|\b(?:implements|on))[ \t\r]*$")
#: what a GraphQL declaration without a name is named by (`schema { query: Query }`, `schema @link(...) {`); an
#: anonymous operation (`query ($id: ID) {`) is named by nothing, its fields by their own names
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
        kind, name = found.group("kind"), found.group("name") or ""
        if not name or (name.startswith("@") and kind != "directive"):  # `schema @link(...)`: a directive on it
            name = _UNNAMED.get(kind, "")
        end = _declaration_end(code, found.end())
        position = end
        first, last = row_at(found.start()), row_at(max(end - 1, found.start()))
        blocks.append(Block(comment_start(lines, code_lines, first), last, name, kind,
                            tuple(_members(code, code.find("{", found.end(), end), end, name, dialect, row_at))))
    return one_per_row(blocks)


def _declaration_end(code: str, after: int) -> int:
    """Where a declaration ends: after its closing brace when its header (which goes on below while its
    parentheses are open, or its next line goes on with `@`, `&`, `|`, `=`, `(`, `{`, `implements`, `on`)
    opens one, else at its header's last line's end."""
    parens, index, length = 0, after, len(code)
    while index < length:
        char = code[index]
        if char == "(":
            parens += 1
        elif char == ")":
            parens = max(parens - 1, 0)
        elif char == "{" and not parens:
            break
        elif char == "}" and not parens:
            return index
        elif char == "\n" and not parens:
            line_start = code.rfind("\n", 0, index) + 1
            if _ENDS_OPEN.search(code, line_start, index) is None:
                below = index + 1
                while below < length and code[below] in " \t\r\n":  # blanked comments, descriptions
                    below += 1
                if below >= length or _CONTINUES.match(code, code.rfind("\n", 0, below) + 1) is None:
                    return index
        index += 1
    else:
        return length
    return brace_end(code, index)


def _members(code: str, opening: int, end: int, name: str, dialect: _Dialect,
             row_at: Callable[[int], int]) -> list[tuple[int, str]]:
    """The fields (an enum's values) that open the lines of a declaration's body, inside its braces and no
    deeper (an operation's nested selections are not its fields), outside parentheses (a field's arguments on
    lines of their own), as `Name.field` with their rows."""
    if opening < 0:
        return []
    found: list[tuple[int, str]] = []
    depth, parens, offset = 1, 0, opening + 1
    for line in code[opening + 1:end].split("\n"):
        member = dialect.member.match(line) if depth == 1 and parens <= 0 else None
        if member is not None:
            field = member.group("name")
            found.append((row_at(offset + member.start("name")), f"{name}.{field}" if name else field))
        depth += line.count("{") - line.count("}")
        parens += line.count("(") - line.count(")")
        offset += len(line) + 1
    return found


def chunk_schema(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's declarations as chunks (`blocks.chunk_blocks`), its other lines in windows."""
    dialect = _PRISMA if path.lower().endswith(".prisma") else _GRAPHQL
    return chunk_blocks(path, text.split("\n"), schema_blocks(text, dialect), language=dialect.language,
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars)
