"""Chunks from the blocks a reader of one file kind found: SQL's statements, protobuf's messages and services,
Go templates' named templates.

These kinds have no grammar wheel that reads them as people write them (dialects, Go template actions inside
SQL), and their declarations are regular enough to find without one; each reader (`sql.py`, `proto.py`,
`templates.py`) says where its blocks are and what each declares, and this module makes the chunks alike
for all: a block that fits is a chunk named by what it declares, listing the names declared inside it (a
table's columns, a message's fields, a service's rpcs); a block over the budget is cut in windows that all
carry its name, each listing the names on its rows; small blocks may be packed into one chunk (a migration's
index, grant and comment lines with the table they are about); the lines no block holds are windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from noul_lsp.chunking.chunk import MAX_NAMES, Chunk, shifted
from noul_lsp.chunking.text import chunk_lines


@dataclass(frozen=True, slots=True)
class Block:
    """A declaration's rows, 0-based and inclusive, the comments above it included."""

    first: int
    last: int
    #: what it declares (`auth.users`, `Swagger`, `EchoService`); "" for a statement that declares nothing
    name: str
    kind: str
    #: the names declared inside it, each with its row: a table's columns, a message's fields, a service's rpcs
    members: tuple[tuple[int, str], ...] = ()
    #: whether it heads a chunk of its own when packed (a table, a function; not an index or a grant)
    heads: bool = True


def chunk_blocks(path: str, lines: Sequence[str], blocks: Sequence[Block], *, language: str, window_lines: int,
                 overlap: int, max_chars: int, pack: bool = False) -> list[Chunk]:
    """The chunks of a file's blocks (in row order, not overlapping), and windows of the rows between them.
    With `pack`, adjacent blocks share a chunk while it fits the budget and holds one heading block at most."""
    windows = dict(language=language, window_lines=window_lines, overlap=overlap, max_chars=max_chars)
    chunks: list[Chunk] = []
    next_row = 0  # the first row no chunk holds yet
    for group in [*_groups(lines, blocks, max_chars if pack else 0), []]:
        first = group[0].first if group else len(lines)
        if first > next_row:  # the rows between two blocks, in windows of their own
            chunks.extend(shifted(chunk_lines(path, "\n".join(lines[next_row:first]), **windows), next_row))
        if not group:
            break
        last = group[-1].last
        next_row = last + 1
        own = next((block for block in group if block.heads and block.name), None) \
            or next((block for block in group if block.name), group[0])
        declared = [(block.first, block.name) for block in group if block is not own and block.name]
        members = sorted([*declared, *(member for block in group for member in block.members)], key=lambda m: m[0])
        body = "\n".join(lines[first:last + 1])
        if not body.strip():
            continue
        if len(body) <= max_chars:
            chunks.append(Chunk(path, first + 1, last + 1, body, own.name, language, own.kind,
                                names=_names(members, own.name)))
            continue
        for window in shifted(chunk_lines(path, body, **windows, symbol=own.name, kind=own.kind), first):
            on_rows = [member for member in members if window.start_line - 1 <= member[0] <= window.end_line - 1]
            chunks.append(replace(window, names=_names(on_rows, own.name)))
    return chunks


def one_per_row(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with no two on one row: one that starts on the row the last one ends on goes with it (`BEGIN;
    CREATE TABLE ...` on one line, `message A {} message B {}`), named by the first of them that names anything
    (their chunks would be one text at one line: one key in the store)."""
    kept: list[Block] = []
    for block in blocks:
        if kept and block.first <= kept[-1].last:
            previous = kept[-1]
            own, other = (block, previous) if not previous.name and block.name else (previous, block)
            declared = ((other.first, other.name),) if other.name else ()
            kept[-1] = Block(previous.first, max(block.last, previous.last), own.name, own.kind,
                             (*own.members, *declared, *other.members), own.heads or other.heads)
        else:
            kept.append(block)
    return kept


def _groups(lines: Sequence[str], blocks: Sequence[Block], budget: int) -> list[list[Block]]:
    """Blocks in chunks: each alone (no budget), or packed while the rows fit `budget` characters and hold one
    heading block at most (a minor block before the first heading one goes with it)."""
    groups: list[list[Block]] = []
    size = 0
    for block in blocks:
        block_size = sum(len(line) + 1 for line in lines[block.first:block.last + 1])
        if groups and budget and size + block_size <= budget \
                and not (block.heads and any(member.heads for member in groups[-1])):
            groups[-1].append(block)
            size += block_size
        else:
            groups.append([block])
            size = block_size
    return groups


def _names(members: Sequence[tuple[int, str]], own: str) -> tuple[str, ...]:
    """The names of the members, each once, not the chunk's own, at most MAX_NAMES."""
    return tuple(dict.fromkeys(name for _, name in members if name and name != own))[:MAX_NAMES]
