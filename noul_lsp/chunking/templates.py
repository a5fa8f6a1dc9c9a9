"""Go templates' named templates: Helm's `_helpers.tpl` cut by its `define` blocks, each named.

A chart's helpers file is a list of `{{- define "chart.fullname" -}} ... {{- end }}` blocks, each with the
`{{/* ... */}}` comment above it that says what it makes; the chart's manifests include them by name
(`include "chart.fullname" .`). As plain line windows a helper was named nowhere (asked by name, it was
"probably not here"), and a window began in one helper and ended in the next. There is no grammar wheel for
Go templates; the actions are few and regular, so the blocks are found by their `{{ }}` actions: a `define`
(or `block`) at depth 0 opens a named template, and `if`, `range`, `with`, `define` and `block` open a level
that an `end` closes. The lines outside any named template are windows, as before.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, chunk_blocks, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk

TEMPLATE_SUFFIXES = (".tpl", ".gotmpl")
LANGUAGE = "gotemplate"
#: one action, `{{- ... -}}` with its trim marks (a quoted string in it may hold braces: `{{ if eq .x "{" }}`),
#: or a comment `{{/* ... */}}` (which may span lines)
_ACTION = re.compile(r"\{\{-?\s*(/\*.*?\*/|(?:\"(?:[^\"\\]|\\.)*\"|`[^`]*`|[^{}\"`])*?)\s*-?\}\}", re.DOTALL)
#: the action's keyword that opens a level, and the quoted name of a `define`/`block`
_OPENS = re.compile(r"(define|block|if|range|with)\b\s*(?:\"([^\"]*)\"|`([^`]*)`)?")
_END = re.compile(r"end\b")


def _named_blocks(text: str) -> list[Block]:
    """Each top-level `define`/`block`, its first row that of the comment ending on the row above it, or on its
    own row; named templates that share a row are one block (`blocks.one_per_row`). An unclosed one is left out
    (its lines go to the windows)."""
    blocks: list[Block] = []
    depth = 0
    opened: tuple[int, str] | None = None  # the row and name of the named template being read
    comment: tuple[int, int] | None = None  # the rows of the last comment at depth 0
    row_at = row_finder(text)

    for action in _ACTION.finditer(text):
        body = action.group(1)
        start_row = row_at(action.start())
        if body.startswith("/*"):
            if depth == 0:  # a comment on the row after another's goes on with it
                end_row = start_row + body.count("\n")
                comment = (comment[0], end_row) if comment is not None and start_row <= comment[1] + 1 \
                    else (start_row, end_row)
            continue
        opens = _OPENS.match(body)
        if opens is not None:
            name = opens.group(2) or opens.group(3)
            if depth == 0 and opens.group(1) in ("define", "block") and name:
                attached = comment is not None and comment[1] >= start_row - 1
                opened = (comment[0] if attached else start_row, name)
            depth += 1
        elif _END.match(body) and depth > 0:
            depth -= 1
            if depth == 0 and opened is not None:
                blocks.append(Block(opened[0], row_at(action.end()), opened[1], "template"))
                opened = None
        if depth == 0 and opens is None:
            comment = None  # an action between a comment and a define parts them
    return one_per_row(blocks)


def chunk_template(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """Each named template a chunk named by its name (`template` kind), cut in windows that carry the name
    when it is over the budget; the other lines in windows (`blocks.chunk_blocks`)."""
    return chunk_blocks(path, text.split("\n"), _named_blocks(text), language=LANGUAGE, window_lines=window_lines,
                        overlap=overlap, max_chars=max_chars)
