"""dbt's Jinja blocks: a project's macros, generic tests, materializations and snapshots in its SQL, and its doc
blocks in Markdown, each a block named by its name.

A dbt macro holds SQL with no `;` to cut at (`{% macro name(args) %} ... {% endmacro %}`) and is called by its
name: a file of macros was one unnamed chunk, a macro past the embedder's first lines was 6th for what it does,
and one asked by name was "probably not here" (cal-itp's `ranged_incremental_min_date`, first at P(here) 0.27).
The blocks are found by their tags, not parsed: a tag inside a comment, a SQL string or a Markdown code span
opens nothing, a block nested in one of its own tag is the outer one's (listed in its names), and an unclosed one
is left to the reader of the rest of the file.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, blank, chunk_blocks, comment_start, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.text import chunk_lines, text_language

#: the tags that open a named block, and the kind of its chunk
_KINDS = {"macro": "macro", "test": "macro", "materialization": "macro", "snapshot": "snapshot", "docs": "docs"}
#: a block's opening tag with its name (`{%- macro pivot(column, values) -%}`, `{% test not_null_where(model) %}`,
#: `{% materialization view, adapter='x' %}`), or its end (`{% endmacro %}`); a tag reads at most 2,000 characters
_TAG = re.compile(rf"\{{%-?\s*(?:(?P<tag>{'|'.join(_KINDS)})\s+(?P<name>\w+)|end(?P<end>{'|'.join(_KINDS)})\b)"
                  r"(?:(?!%\}).){0,2000}?%\}", re.DOTALL)
#: a Jinja comment (closed, within 2,000 characters: Pandoc's `{#anchor}` is none)
_JINJA_COMMENT = r"\{#(?:(?!#\}).){0,2000}#\}"
#: what opens no block: in SQL its comments and one-line strings, in Markdown its code
_NOISE = {False: re.compile(rf"{_JINJA_COMMENT}|--[^\n]*|'(?:[^'\\\n]|\\.)*'", re.DOTALL),
          True: re.compile(rf"{_JINJA_COMMENT}|^[ \t]*(?P<fence>```|~~~).*?(?:^[ \t]*(?P=fence)|\Z)|`[^`\n]*`",
                           re.DOTALL | re.MULTILINE)}
#: a block's documentation: the comments alone on their rows right above it (in SQL `--` lines too)
_DOCUMENTATION = {False: re.compile(rf"{_JINJA_COMMENT}|--[^\n]*", re.DOTALL),
                  True: re.compile(_JINJA_COMMENT, re.DOTALL)}
DOC_BLOCK_SUFFIXES = (".md", ".markdown")


def jinja_blocks(text: str, *, markdown: bool = False) -> list[Block]:
    """The file's top-level named blocks, each with the comment ending on the row above it. An adapter's
    implementation of a macro (`default__pivot`, `bigquery__pivot`) is minor: packed with the macro that
    dispatches to it, as dbt calls it by that one's name (a dispatcher alone is one line)."""
    tags = list(_TAG.finditer(_NOISE[markdown].sub(blank, text)))
    if not any(tag.group("tag") for tag in tags):
        return []
    row_at = row_finder(text)
    # a comment's rows filled, its blank rows too (a docstring's paragraphs), for `comment_start`'s run of them
    documentation = _DOCUMENTATION[markdown]
    lines = documentation.sub(lambda found: "\n".join("#" for _ in found.group(0).split("\n")), text).split("\n")
    code_lines = documentation.sub(blank, text).split("\n")
    blocks: list[Block] = []
    index = 0
    while index < len(tags):
        opening = tags[index]
        kind, depth, end = opening.group("tag"), 1, index + 1
        while kind and end < len(tags) and depth:
            depth += 1 if tags[end].group("tag") == kind else -1 if tags[end].group("end") == kind else 0
            end += 1
        if not kind or depth:  # an end alone, or an unclosed block: the next tag may open one
            index += 1
            continue
        first, name = row_at(opening.start()), opening.group("name")
        nested = tuple((row_at(tag.start()), tag.group("name")) for tag in tags[index + 1:end - 1] if tag.group("tag"))
        blocks.append(Block(comment_start(lines, code_lines, first), row_at(tags[end - 1].end() - 1), name,
                            _KINDS[kind], nested, major="__" not in name))
        index = end
    return one_per_row(blocks)


def chunk_doc_blocks(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A dbt project's documentation: its `{% docs name %} ... {% enddocs %}` blocks, each a chunk named by the
    block (a model's or a column's `{{ doc("name") }}` shows it: as heading-less windows dbt_artifacts' block of
    `command_invocation_id` was 58th, first by its meaning); a file without them is cut as Markdown is."""
    language = text_language(path)
    blocks = jinja_blocks(text, markdown=True) if "enddocs" in text else []
    if not blocks:
        return chunk_lines(path, text, language=language, window_lines=window_lines, overlap=overlap,
                           max_chars=max_chars)
    return chunk_blocks(path, text.split("\n"), blocks, language=language, window_lines=window_lines,
                        overlap=overlap, max_chars=max_chars)
