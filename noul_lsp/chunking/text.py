"""Line windows for files with no grammar (docs, configs, scripts in other languages)."""

from __future__ import annotations

import bisect
import re

from noul_lsp.chunking.chunk import Chunk

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def chunk_lines(path: str, text: str, *, language: str, window_lines: int, overlap: int,
                max_chars: int, first_line: int = 1, symbol: str = "", kind: str = "text") -> list[Chunk]:
    """Overlapping windows of about `window_lines` lines (cut earlier at `max_chars`), blank ones dropped.

    Markdown windows take the nearest heading above them as their symbol and header, so a section is
    found by its title even when the window starts below it.
    """
    lines = text.split("\n")
    is_markdown = language == "markdown"
    headings: list[str] = []
    if is_markdown:
        current = symbol
        for line in lines:
            match = _HEADING.match(line)
            if match:
                current = match.group(2)
            headings.append(current)
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end = min(len(lines), start + window_lines) - 1
        size = 0
        for row in range(start, end + 1):
            size += len(lines[row]) + 1
            if size > max_chars and row > start:
                end = row - 1
                break
        first, last = start, end
        while first <= last and not lines[first].strip():
            first += 1
        while last >= first and not lines[last].strip():
            last -= 1
        if first <= last:
            body = "\n".join(lines[first : last + 1])
            title = headings[first] if is_markdown else symbol
            chunks.append(Chunk(path, first + first_line, last + first_line, body, title, language, kind,
                                header=title if is_markdown and title else ""))
        if end >= len(lines) - 1:
            break
        start = max(start + 1, end + 1 - overlap)
    return chunks


_TEXT_LANGUAGES = {
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".json": "json", ".cfg": "ini", ".ini": "ini", ".sh": "shell", ".bash": "shell",
    ".html": "html", ".css": "css", ".scss": "css", ".sql": "sql", ".kt": "kotlin", ".swift": "swift",
    ".php": "php", ".cs": "csharp", ".scala": "scala", ".lua": "lua", ".vim": "vim", ".xml": "xml",
}


def text_language(path: str) -> str:
    dot = path.rfind(".")
    return _TEXT_LANGUAGES.get(path[dot:].lower(), "text") if dot >= 0 else "text"


def chunk_characters(path: str, text: str, *, language: str, max_chars: int) -> list[Chunk]:
    """Consecutive windows of `max_chars` characters, each with the lines it spans, blank ones dropped: for a
    file whose lines are too long to cut by line (chunking/__init__.py, LONG_LINE_BUDGETS)."""
    line_starts = [0]
    for line in text.split("\n")[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    chunks: list[Chunk] = []
    for offset in range(0, len(text), max_chars):
        piece = text[offset:offset + max_chars]
        if piece.strip():
            chunks.append(Chunk(path, bisect.bisect_right(line_starts, offset),
                                bisect.bisect_right(line_starts, offset + len(piece) - 1), piece, "", language,
                                "text"))
    return chunks
