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
from dataclasses import replace

from noul_lsp.chunking.chunk import Chunk, shifted
from noul_lsp.chunking.text import chunk_lines

TEMPLATE_SUFFIXES = (".tpl", ".gotmpl")
LANGUAGE = "gotemplate"
#: one action, `{{- ... -}}` with its trim marks (a quoted string in it may hold braces: `{{ if eq .x "{" }}`),
#: or a comment `{{/* ... */}}` (which may span lines)
_ACTION = re.compile(r"\{\{-?\s*(/\*.*?\*/|(?:\"(?:[^\"\\]|\\.)*\"|`[^`]*`|[^{}\"`])*?)\s*-?\}\}", re.DOTALL)
#: the action's keyword that opens a level, and the quoted name of a `define`/`block`
_OPENS = re.compile(r"(define|block|if|range|with)\b\s*(?:\"([^\"]*)\"|`([^`]*)`)?")
_END = re.compile(r"end\b")


def _named_blocks(text: str) -> list[tuple[int, int, list[str]]]:
    """(first row, last row, names) of each top-level `define`/`block`, 0-based and inclusive; its first row is
    that of the comment ending on the row above it, or on its own row. Named templates that share a row are one
    block (their chunks would be one text at one line: one key in the store). An unclosed one is left out (its
    lines go to the windows)."""
    blocks: list[tuple[int, int, list[str]]] = []
    depth = 0
    opened: tuple[int, str] | None = None  # the row and name of the named template being read
    comment: tuple[int, int] | None = None  # the rows of the last comment at depth 0
    row, counted = 0, 0  # the row at offset `counted`, counted on as the actions go (not from the start each time)

    def row_at(offset: int) -> int:
        nonlocal row, counted
        row += text.count("\n", counted, offset)
        counted = offset
        return row

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
                end_row = row_at(action.end())
                if blocks and opened[0] <= blocks[-1][1]:  # on the row the last one ends on
                    blocks[-1] = (blocks[-1][0], end_row, [*blocks[-1][2], opened[1]])
                else:
                    blocks.append((opened[0], end_row, [opened[1]]))
                opened = None
        if depth == 0 and opens is None:
            comment = None  # an action between a comment and a define parts them
    return blocks


def chunk_template(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """Each named template a chunk named by its name (`template` kind), cut in windows that carry the name
    when it is over the budget; the other lines in windows."""
    lines = text.split("\n")
    windows = dict(language=LANGUAGE, window_lines=window_lines, overlap=overlap, max_chars=max_chars)
    chunks: list[Chunk] = []
    next_row = 0  # the first row no named template holds yet
    for first, last, names in [*_named_blocks(text), (len(lines), len(lines), [])]:
        if first > next_row:  # the lines between two named templates, in windows of their own
            chunks.extend(shifted(chunk_lines(path, "\n".join(lines[next_row:first]), **windows), next_row))
        next_row = last + 1
        body = "\n".join(lines[first:last + 1])
        if not names:
            continue
        name, others = names[0], tuple(names[1:])
        if len(body) <= max_chars:
            chunks.append(Chunk(path, first + 1, last + 1, body, name, LANGUAGE, "template", names=others))
        else:
            chunks.extend(replace(window, names=others) for window in
                          shifted(chunk_lines(path, body, **windows, symbol=name, kind="template"), first))
    return chunks

