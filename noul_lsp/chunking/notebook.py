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


def notebook_cells(raw: str) -> list[tuple[str, str, int]]:
    """(cell type, source text, 1-based line of its first source line in the file) for each cell."""
    document = json.loads(raw)
    cells = document.get("cells", []) if isinstance(document, dict) else []
    raw_lines = raw.split("\n")
    source_rows = [row for row, line in enumerate(raw_lines) if line.lstrip().startswith('"source"')]
    located = len(source_rows) == len(cells)
    found: list[tuple[str, str, int]] = []
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
        found.append((str(cell.get("cell_type", "code")), text, line))
    return found


def chunk_notebook(path: str, raw: str, *, window_lines: int, overlap: int, max_chars: int,
                   code: CodeChunker | None = None) -> list[Chunk]:
    """Each cell's chunks on the file's lines: a code cell cut by the Python grammar (`code`) so that its
    functions and classes are definitions a name finds, as in a .py file (else, and for a cell the grammar
    cannot read, line windows); a markdown cell in line windows."""
    chunks: list[Chunk] = []
    for number, (cell_type, text, first_line) in enumerate(notebook_cells(raw), 1):
        if not text.strip() or cell_type not in ("code", "markdown"):
            continue
        if cell_type == "code" and code is not None:
            try:
                cut = code.chunk(path, text)
            except Exception:  # a definition reader's slip on one cell: its lines stay findable in windows
                cut = None
            if cut:
                chunks.extend(replace(chunk, start_line=chunk.start_line + first_line - 1,
                                      end_line=chunk.end_line + first_line - 1,
                                      symbol=chunk.symbol or f"cell {number}",
                                      kind="code-cell" if chunk.kind == "module" else chunk.kind) for chunk in cut)
                continue
        language = "python" if cell_type == "code" else "markdown"
        chunks.extend(chunk_lines(path, text, language=language, window_lines=window_lines, overlap=overlap,
                                  max_chars=max_chars, first_line=first_line, symbol=f"cell {number}",
                                  kind=f"{cell_type}-cell"))
    return chunks
