"""Jupyter notebooks: code and markdown cells, never outputs, located on the cell's source lines.

A saved notebook is pretty-printed JSON in which every source line of a cell is one string element on its
own line, right after the `"source": [` line. Chunks point at those lines, so a jump lands on the cell in
an editor that opens the raw file, and a notebook editor can map the line to its cell.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from noul_lsp.chunking.chunk import Chunk, shifted
from noul_lsp.chunking.code import CodeChunker
from noul_lsp.chunking.text import chunk_lines, last_heading


def _cells(document) -> list:
    """A notebook's cells: nbformat 4's `cells`, or those of nbformat 3's worksheets (pre-2015 notebooks were
    indexed empty, without a word)."""
    if not isinstance(document, dict):
        return []
    if isinstance(document.get("cells"), list):
        return document["cells"]
    sheets = document.get("worksheets")
    return [cell for sheet in sheets if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list)
            for cell in sheet["cells"]] if isinstance(sheets, list) else []


#: the key of a cell's source on its own line (nbformat 3 keeps a code cell's as `input`): a source line that
#: is the word "source" (`"source"` or `"source",`) is an element, not the key (one moved every hit of its
#: notebook to line 1)
_SOURCE_KEY = re.compile(r'^\s*"(?:source|input)":')


def notebook_cells(raw: str) -> list[tuple[str, str, int, bool]]:
    """(cell type, source text, 1-based line of its first source line in the file, whether each source line
    is a line of the file) for each cell: a cell whose source is saved as one string is on one line."""
    cells = _cells(json.loads(raw))
    raw_lines = raw.split("\n")
    source_rows = [row for row, line in enumerate(raw_lines) if _SOURCE_KEY.match(line)]
    located = len(source_rows) == len(cells)
    found: list[tuple[str, str, int, bool]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", cell.get("input", ""))
        text = "".join(source) if isinstance(source, list) else str(source)
        kind = str(cell.get("cell_type", "code"))
        if kind == "heading":  # nbformat 3's heading cell: a Markdown heading of its level
            level = cell.get("level")
            text, kind = f"{'#' * (level if isinstance(level, int) and 1 <= level <= 6 else 1)} {text}", "markdown"
        if located:
            row = source_rows[index]
            line = row + 2 if raw_lines[row].rstrip().endswith("[") else row + 1
        else:
            line = 1  # minified or unusual layout: the file is still right, the line is not known
        found.append((kind, text, line, located and isinstance(source, list)))
    return found


def chunk_notebook(path: str, raw: str, *, window_lines: int, overlap: int, max_chars: int,
                   code: CodeChunker | None = None) -> list[Chunk]:
    """Each cell's chunks on the file's lines: a code cell cut by the Python grammar (`code`) so that its
    functions and classes are definitions a name finds, as in a .py file (else, and for a cell the grammar
    cannot read, line windows); a markdown cell in line windows. A cell's lines with no name of their own
    are named by the heading above them, in that cell or an earlier one (`Rules of Broadcasting (cell 38)`):
    1,051 of a book's 1,590 prose cells were "cell N", its section's title in no chunk of them."""
    chunks: list[Chunk] = []
    section = ""  # the last heading read so far
    for number, (cell_type, text, first_line, spread) in enumerate(notebook_cells(raw), 1):
        if not text.strip() or cell_type not in ("code", "markdown"):
            continue
        unnamed = f"{section} (cell {number})" if section else f"cell {number}"
        cut = None
        if cell_type == "code" and code is not None:
            try:
                cut = [replace(chunk, symbol=chunk.symbol or unnamed,
                               kind="code-cell" if chunk.kind == "module" else chunk.kind)
                       for chunk in code.chunk(path, text)]
            except Exception:  # a definition reader's slip on one cell: its lines stay findable in windows
                cut = None
        if not cut:
            language = "python" if cell_type == "code" else "markdown"
            cut = chunk_lines(path, text, language=language, window_lines=window_lines, overlap=overlap,
                              max_chars=max_chars, symbol=unnamed, kind=f"{cell_type}-cell")
        if cell_type == "markdown":
            section = last_heading(text) or section
        # on the file's lines: each source line is one (a list of strings), or all of them one (a string)
        chunks.extend(shifted(cut, first_line - 1) if spread else
                      [replace(chunk, start_line=first_line, end_line=first_line) for chunk in cut])
    return chunks
