"""Chunks from the blocks a reader of one file kind found: SQL's statements, protobuf's messages and services,
Go templates' named templates.

These kinds have no grammar wheel that reads them as people write them (dialects, Go template actions inside
SQL), and their declarations are regular enough to find without one; each reader (`sql.py`, `proto.py`,
`templates.py`) says where its blocks are and what each declares, and this module makes the chunks alike
for all: a block that fits is a chunk named by what it declares, listing the names declared inside it (a
table's columns, a message's fields, a service's rpcs); a block over the budget is cut in windows that all
carry its name, each listing the names on its rows; minor blocks may be packed with the major block before
them (a migration's index, grant and comment lines with its table); the lines no block holds are windows.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from noul_lsp.chunking.chunk import MAX_NAMES, Chunk, shifted
from noul_lsp.chunking.text import chunk_lines

_BRACE = re.compile(r"[{}]")


@dataclass(frozen=True, slots=True)
class Block:
    """A declaration's rows, 0-based and inclusive, with the comments a reader gives it."""

    first: int
    last: int
    #: what it declares (`auth.users`, `Swagger`, `EchoService`); "" for a statement that declares nothing
    name: str
    kind: str
    #: the names declared inside it, each with its row: a table's columns, a message's fields, a service's rpcs
    members: tuple[tuple[int, str], ...] = ()
    #: a table, a function (not an index, a grant, a column added): packed, it starts a chunk of its own
    major: bool = True


def row_finder(text: str) -> Callable[[int], int]:
    """The 0-based row of an offset of `text`."""
    line_starts = [0, *(found.end() for found in re.finditer("\n", text))]
    return lambda offset: bisect.bisect_right(line_starts, offset) - 1


def blank(found: re.Match) -> str:
    """A match's text as spaces, its line ends kept: what a reader skips keeps the offsets and rows of the rest."""
    return re.sub(r"[^\n]", " ", found.group(0))


def brace_end(code: str, opening: int) -> int:
    """Where the braces opened at `opening` close (the offset after the closing brace), in a text whose strings and
    comments are blanked; the text's end where they never close."""
    depth = 0
    for brace in _BRACE.finditer(code, opening):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return brace.end()
    return len(code)


def comment_start(lines: Sequence[str], code_lines: Sequence[str], row: int) -> int:
    """The first row of the run of comment lines right above `row` (`row` itself when there is none), given the
    file's lines and the same with comments and strings blanked: a declaration's documentation."""
    while row > 0 and lines[row - 1].strip() and not code_lines[row - 1].strip():
        row -= 1
    return row


def chunk_blocks(path: str, lines: Sequence[str], blocks: Sequence[Block], *, language: str, window_lines: int,
                 overlap: int, max_chars: int, pack: bool = False) -> list[Chunk]:
    """The chunks of a file's blocks (in row order, no two sharing a row: `one_per_row`), and windows of the
    rows between them. With `pack`, minor blocks share the chunk of the block before them while it fits."""
    window_settings = dict(language=language, window_lines=window_lines, overlap=overlap, max_chars=max_chars)
    chunks: list[Chunk] = []
    next_row = 0  # the first row no chunk holds yet
    for group in [*_groups(lines, blocks, max_chars if pack else 0), []]:
        first = group[0].first if group else len(lines)
        if first > next_row:  # the rows between two blocks, in windows of their own
            chunks.extend(shifted(chunk_lines(path, "\n".join(lines[next_row:first]), **window_settings), next_row))
        if not group:
            break
        last = group[-1].last
        next_row = last + 1
        own = _naming(group)
        declared = [(block.first, block.name) for block in group if block is not own and block.name]
        members = sorted([*declared, *(member for block in group for member in block.members)], key=lambda m: m[0])
        body = "\n".join(lines[first:last + 1])
        if not body.strip():
            continue
        if len(body) <= max_chars:
            chunks.append(Chunk(path, first + 1, last + 1, body, own.name, language, own.kind,
                                names=_names(members, own.name)))
            continue
        member_rows = [row for row, _ in members]
        named_rows: dict[tuple[int, int], tuple[str, ...]] = {}  # the windows of one long line share its names
        for window in shifted(chunk_lines(path, body, **window_settings, symbol=own.name, kind=own.kind), first):
            rows = (window.start_line - 1, window.end_line - 1)
            if rows not in named_rows:
                named_rows[rows] = _names(members[bisect.bisect_left(member_rows, rows[0]):
                                                  bisect.bisect_right(member_rows, rows[1])], own.name)
            chunks.append(replace(window, names=named_rows[rows]))
    return chunks


def _naming(group: Sequence[Block]) -> Block:
    """The block that names a group's chunk: its first major block with a name, else its first with a name."""
    return next((block for block in group if block.major and block.name), None) \
        or next((block for block in group if block.name), group[0])


def one_per_row(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with no two on one row: one that starts on the row the last one ends on goes with it (`BEGIN;
    CREATE TABLE ...` on one line, `message A {} message B {}`), named as a packed chunk is (`_naming`): their
    chunks would be one text at one line, one key in the store."""
    runs: list[list[Block]] = []
    last_row = -1
    for block in blocks:
        if runs and block.first <= last_row:
            runs[-1].append(block)
        else:
            runs.append([block])
        last_row = max(last_row, block.last) if len(runs[-1]) > 1 else block.last
    merged: list[Block] = []
    for run in runs:
        if len(run) == 1:
            merged.append(run[0])
            continue
        own = _naming(run)
        members = [*own.members]
        for block in run:
            if block is not own:
                members.extend([(block.first, block.name)] if block.name else [])
                members.extend(block.members)
        merged.append(Block(run[0].first, max(block.last for block in run), own.name, own.kind, tuple(members),
                            any(block.major for block in run)))
    return merged


def _groups(lines: Sequence[str], blocks: Sequence[Block], budget: int) -> list[list[Block]]:
    """Blocks in chunks: each alone (no budget), or packed: a minor block joins the chunk before it while the
    rows fit `budget` characters; a major block starts a chunk, but for the minor blocks that open the file
    (`BEGIN;`, `SET search_path ...`), which go with it."""
    groups: list[list[Block]] = []
    size = 0
    for block in blocks:
        block_size = sum(len(line) + 1 for line in lines[block.first:block.last + 1])
        opening = len(groups) == 1 and not any(member.major for member in groups[0])
        if groups and budget and size + block_size <= budget and (not block.major or opening):
            groups[-1].append(block)
            size += block_size
        else:
            groups.append([block])
            size = block_size
    return groups


def _names(members: Sequence[tuple[int, str]], own: str) -> tuple[str, ...]:
    """The names of the members, each once, not the chunk's own, at most MAX_NAMES (read no further)."""
    names: dict[str, None] = {}
    for _, name in members:
        if name and name != own:
            names[name] = None
            if len(names) == MAX_NAMES:
                break
    return tuple(names)
