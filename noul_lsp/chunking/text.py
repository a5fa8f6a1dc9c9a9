"""Line windows for files with no grammar (docs, configs, scripts in other languages)."""

from __future__ import annotations

import re

from noul_lsp.chunking.chunk import Chunk

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
#: a line this many chunk budgets long is cut into pieces of the budget: a minified bundle (not named
#: *.min.js), a data literal, an inline image. As one chunk it was the whole line; in a file of many
#: definitions on one line each definition's chunk was the whole line, quadratic: an 86 KB line took 24 s and
#: an 860 KB one held up its workspace's first index for minutes (docs/benchmarks.md)
LONG_LINE_BUDGETS = 4
#: characters consecutive pieces share, so that a word across a cut is whole in one of them
PIECE_OVERLAP = 64


def is_long(line: str, max_chars: int) -> bool:
    return len(line) > LONG_LINE_BUDGETS * max_chars


def line_pieces(line: str, max_chars: int) -> list[str]:
    """A long line (`is_long`) as pieces of `max_chars` characters, each overlapping the next by
    PIECE_OVERLAP, blank ones dropped."""
    step = max_chars - PIECE_OVERLAP
    pieces = (line[start:start + max_chars] for start in range(0, max(len(line) - PIECE_OVERLAP, 1), step))
    return [piece for piece in pieces if piece.strip()]


#: a Markdown page's YAML front matter (`---` / `title: Window Focus Refetching` / `---`), which static site
#: generators read for its title: the page's first window was a chunk of no name, previewed as `---`
_FRONT_MATTER_TITLE = re.compile(r"^title:(?P<title>.*)$")


def front_matter_end(lines: list[str]) -> int | None:
    """The row of the `---` that closes a Markdown page's front matter (within its first 40 lines), or None
    when the page opens with none."""
    if not lines or lines[0].strip() != "---":
        return None
    return next((row for row, line in enumerate(lines[1:40], 1) if line.strip() == "---"), None)


def _front_matter_title(lines: list[str]) -> str:
    """The `title:` of a page's front matter, if it opens with one."""
    end = front_matter_end(lines)
    for line in lines[1:end] if end is not None else ():
        match = _FRONT_MATTER_TITLE.match(line)
        if match:  # quoted or not; an issue template's `title: ''` is none, nor a block scalar's `>-`
            title = match.group("title").strip().strip("'\"").strip()
            return "" if title[:1] in (">", "|") else title
    return ""


def last_heading(text: str) -> str | None:
    """The title of the last Markdown heading in `text`, None when it has none."""
    titles = [found.group(2) for found in map(_HEADING.match, text.split("\n")) if found]
    return titles[-1] if titles else None


def chunk_lines(path: str, text: str, *, language: str, window_lines: int, overlap: int,
                max_chars: int, symbol: str = "", kind: str = "text") -> list[Chunk]:
    """Overlapping windows of about `window_lines` lines (cut earlier at `max_chars`), blank ones dropped.

    Markdown windows take the nearest heading above them as their symbol and header, so a section is
    found by its title even when the window starts below it.
    """
    lines = text.split("\n")
    is_markdown = language == "markdown"
    headings: list[str] = []
    if is_markdown:
        current = _front_matter_title(lines) or symbol
        for line in lines:
            match = _HEADING.match(line)
            if match:
                current = match.group(2)
            headings.append(current)
    chunks: list[Chunk] = []
    start = 0
    covered = -1  # the last row a window holds so far
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
        if first <= last and last > covered:  # a window inside the last one (its blank edges trimmed) is none
            covered = last
            title = headings[first] if is_markdown else symbol
            # a long line is a window of its own (cut before it, and it is past the budget): its pieces
            bodies = line_pieces(lines[first], max_chars) if first == last and is_long(lines[first], max_chars) \
                else ["\n".join(lines[first : last + 1])]
            chunks.extend(Chunk(path, first + 1, last + 1, body, title, language, kind,
                                header=title if is_markdown and title else "") for body in bodies)
        if end >= len(lines) - 1:
            break
        # the overlap is at most a quarter of the window made: a window that long lines cut to five lines went on
        # a line at a time, and a README's table of inputs was 176 windows of the same rows
        start = max(start + 1, end + 1 - min(overlap, (end - start + 1) // 4))
    return chunks


_TEXT_LANGUAGES = {
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".json": "json", ".cfg": "ini", ".ini": "ini", ".sh": "shell", ".bash": "shell",
    ".html": "html", ".css": "css", ".scss": "css", ".sql": "sql", ".proto": "proto", ".kt": "kotlin",
    ".swift": "swift",
    ".php": "php", ".cs": "csharp", ".scala": "scala", ".lua": "lua", ".vim": "vim", ".xml": "xml",
}


def text_language(path: str) -> str:
    dot = path.rfind(".")
    return _TEXT_LANGUAGES.get(path[dot:].lower(), "text") if dot >= 0 else "text"
