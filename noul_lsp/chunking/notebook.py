"""Jupyter notebooks: code and markdown cells, never outputs, located on the cell's source lines.

A saved notebook is pretty-printed JSON in which every source line of a cell is one string element on its
own line, right after the `"source": [` line. Chunks point at those lines, so a jump lands on the cell in
an editor that opens the raw file, and a notebook editor can map the line to its cell.
"""

from __future__ import annotations

import json
from dataclasses import replace

from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.code import CodeChunker
from noul_lsp.chunking.text import chunk_lines


def notebook_cells(raw: str) -> list[tuple[str, str, int, bool]]:
    """(cell type, source text, 1-based line of its first source line in the file, whether each source line
    is a line of the file) for each cell: a cell whose source is saved as one string is on one line."""
    document = json.loads(raw)
    cells = document.get("cells", []) if isinstance(document, dict) else []
    raw_lines = raw.split("\n")
    source_rows = [row for row, line in enumerate(raw_lines) if line.lstrip().startswith('"source"')]
    located = len(source_rows) == len(cells)
    found: list[tuple[str, str, int, bool]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if located:
            row = source_rows[index]
            line = row + 2 if raw_lines[row].rstrip().endswith("[") else row + 1
        else:
            line = 1  # minified or unusual layout: the file is still right, the line is not known
        found.append((str(cell.get("cell_type", "code")), text, line, located and isinstance(source, list)))
    return found


def chunk_notebook(path: str, raw: str, *, window_lines: int, overlap: int, max_chars: int,
                   code: CodeChunker | None = None) -> list[Chunk]:
    """Each cell's chunks on the file's lines: a code cell cut by the Python grammar (`code`) so that its
    functions and classes are definitions a name finds, as in a .py file (else, and for a cell the grammar
    cannot read, line windows); a markdown cell in line windows."""
    chunks: list[Chunk] = []
    for number, (cell_type, text, first_line, spread) in enumerate(notebook_cells(raw), 1):
        if not text.strip() or cell_type not in ("code", "markdown"):
            continue
        cut = None
        if cell_type == "code" and code is not None:
            try:
                cut = [replace(chunk, symbol=chunk.symbol or f"cell {number}",
                               kind="code-cell" if chunk.kind == "module" else chunk.kind)
                       for chunk in code.chunk(path, text)]
            except Exception:  # a definition reader's slip on one cell: its lines stay findable in windows
                cut = None
        if not cut:
            language = "python" if cell_type == "code" else "markdown"
            cut = chunk_lines(path, text, language=language, window_lines=window_lines, overlap=overlap,
                              max_chars=max_chars, symbol=f"cell {number}", kind=f"{cell_type}-cell")
        # on the file's lines: each source line is one (a list of strings), or all of them one (a string)
        chunks.extend(replace(chunk, start_line=chunk.start_line + first_line - 1 if spread else first_line,
                              end_line=chunk.end_line + first_line - 1 if spread else first_line) for chunk in cut)
    return chunks
