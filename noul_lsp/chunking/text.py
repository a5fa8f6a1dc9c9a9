"""Line windows for files with no grammar (docs, configs, scripts in other languages)."""

from __future__ import annotations

import re

from noul_lsp.chunking.chunk import Chunk

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
#: a Markdown code fence's opening or closing line (CommonMark: three or more backticks or tildes, indented at
#: most three spaces): a `# install the dependencies` line inside one is a shell comment, not a section. mkdocs'
#: release notes titled a window by a heading shown in an example's fence
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: a Markdown setext heading's underline (`Title` / `=====` is a first level, `-----` a second)
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)\s*$")
#: a reStructuredText section's adornment: one punctuation character repeated (`=====`, `-----`, `~~~~~`,
#: `^^^^^`), under a title and, in some styles, over it too. Sphinx's pages (requests', flask's, pytest's
#: docs) were windows of no name
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
#: how many titles, and characters, a window's header naming its section's path (`Version 1.6.0 › Local
#: preview`) holds at most, the innermost kept: the embedder reads it before the text, within its token budget
SECTION_PATH_TITLES = 3
SECTION_PATH_CHARS = 120
#: what a section's path is joined by
SECTION_PATH_JOINER = " › "
#: a line this many chunk budgets long is cut into pieces of the budget: a minified bundle (not named
#: *.min.js), a data literal, an inline image. As one chunk it was the whole line; in a file of many
#: definitions on one line each definition's chunk was the whole line, quadratic: an 86 KB line took 24 s and
#: an 860 KB one held up its workspace's first index for minutes (docs/benchmarks.md)
LONG_LINE_BUDGETS = 4
#: characters consecutive pieces share, so that a word across a cut is whole in one of them
PIECE_OVERLAP = 64


def is_long(line: str, max_chars: int) -> bool:
    return len(line) > LONG_LINE_BUDGETS * max_chars


#: a number as code and data files write it: `0x1F`, `-0.25`, `3e-05`, `1.5f`, `200u`
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fFuUlL]*")
_SEPARATORS = re.compile(r"[\s,;:()\[\]{}]+")
#: a piece of text this long or longer that holds numbers and separators alone is data (numeric_payload)
NUMERIC_PAYLOAD_CHARS = 300


def numeric_payload(text: str) -> bool:
    """Whether a chunk's text is a run of numbers, its first line too: an image a Godot scene embeds as
    `PackedByteArray(81, 182, ...)` (a 686 KB scene was 397 chunks of digits, each embedded), a level's tiles
    in a constant, a font or sound compiled into a C header. No description finds them; the chunk whose
    first line declares the array (`static const unsigned char font[] = {`) stays."""
    if len(text) < NUMERIC_PAYLOAD_CHARS or text.count(",") < len(text) / 12:  # code has a comma in 30-50 chars
        return False
    parts = (text[:text.index("\n")], text) if "\n" in text else (text,)
    return all(len(_SEPARATORS.sub("", _NUMBER.sub("", part))) <= 0.02 * len(part) for part in parts)


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
    """The title of the last Markdown heading in `text` (as a page's are read: `_markdown_titles`), None when it
    has none."""
    titles = _markdown_titles(text.split("\n"))
    return titles[-1][2] if titles else None


def _markdown_titles(lines: list[str]) -> list[tuple[int, int, str]]:
    """The (row, level, title) of a Markdown page's headings: `#` lines and setext underlines, none inside a
    code fence or the front matter."""
    titles: list[tuple[int, int, str]] = []
    fence = ""  # the fence that opened the code block the rows are in, "" outside one
    end = front_matter_end(lines)
    for row in range((end + 1) if end is not None else 0, len(lines)):
        line = lines[row]
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            titles.append((row, len(heading.group(1)), heading.group(2)))
            continue
        underline = _SETEXT_UNDERLINE.match(lines[row + 1]) if row + 1 < len(lines) else None
        stripped = line.strip()
        if underline and stripped and not line.startswith("    ") and stripped[0] not in "-*+>|<" \
                and len(underline.group(1)) >= 3:
            titles.append((row, 1 if underline.group(1)[0] == "=" else 2, stripped))
    return titles


def _rst_titles(lines: list[str]) -> list[tuple[int, int, str]]:
    """The (row, level, title) of a reStructuredText page's sections. Its levels are the order in which the
    page first uses each adornment (a character, with or without an overline), as docutils reads them."""
    styles: list[tuple[str, bool]] = []
    titles: list[tuple[int, int, str]] = []
    for row in range(1, len(lines)):
        under = _RST_ADORNMENT.match(lines[row])
        title = lines[row - 1]
        if not under or not title.strip() or _RST_ADORNMENT.match(title):
            continue
        over = row >= 2 and lines[row - 2].rstrip() == lines[row].rstrip()
        if (title[0].isspace() and not over) or len(lines[row].rstrip()) < min(len(title.strip()), 4):
            continue
        style = (under.group(1), over)
        if style not in styles:
            styles.append(style)
        titles.append((row - 1, styles.index(style) + 1, title.strip()))
    return titles


def _section_paths(lines: list[str], language: str, outermost: str) -> list[tuple[str, ...]]:
    """Each row's section path in a Markdown or reStructuredText page (outermost first), `(outermost,)` above
    its first heading (the page's front matter title, or the caller's symbol)."""
    titles = _markdown_titles(lines) if language == "markdown" else _rst_titles(lines)
    heading_at = {row: (level, title) for row, level, title in titles}
    open_sections: list[tuple[int, str]] = [(0, outermost)] if outermost else []
    current = (outermost,) if outermost else ()
    paths: list[tuple[str, ...]] = []
    for row in range(len(lines)):
        if row in heading_at:
            level, title = heading_at[row]
            while open_sections and open_sections[-1][0] >= level:
                open_sections.pop()
            # a `# Title` that repeats the front matter's (or its parent's) title once
            if not open_sections or open_sections[-1][1].casefold() != title.casefold():
                open_sections.append((level, title))
            current = tuple(title for _, title in open_sections)
        paths.append(current)
    return paths


def section_header(path: tuple[str, ...]) -> str:
    """A section's path as a window's header, outermost titles dropped first: a changelog's `### Fixed` under
    `## 0.27.1`, a guide's `## Options` under `# Password prompt`."""
    kept = list(path[-SECTION_PATH_TITLES:])
    while len(kept) > 1 and len(SECTION_PATH_JOINER.join(kept)) > SECTION_PATH_CHARS:
        kept.pop(0)
    return SECTION_PATH_JOINER.join(kept)[:SECTION_PATH_CHARS]


def chunk_lines(path: str, text: str, *, language: str, window_lines: int, overlap: int,
                max_chars: int, symbol: str = "", kind: str = "text") -> list[Chunk]:
    """Overlapping windows of about `window_lines` lines (cut earlier at `max_chars`), blank ones dropped.

    A Markdown or reStructuredText page's windows take the nearest heading above them as their symbol and
    the path of sections down to it as their header, so a section is found by its title even when the window
    starts below it, and a changelog's `### Fixed` by the version it is under.
    """
    lines = text.split("\n")
    is_page = language in ("markdown", "rst")
    paths = _section_paths(lines, language, (_front_matter_title(lines) if language == "markdown" else "")
                           or symbol) if is_page else []
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
            section = paths[first] if is_page else ()
            title = section[-1] if section else ("" if is_page else symbol)
            # a long line is a window of its own (cut before it, and it is past the budget): its pieces
            bodies = line_pieces(lines[first], max_chars) if first == last and is_long(lines[first], max_chars) \
                else ["\n".join(lines[first : last + 1])]
            chunks.extend(Chunk(path, first + 1, last + 1, body, title, language, kind,
                                header=section_header(section)) for body in bodies)
        if end >= len(lines) - 1:
            break
        # the overlap is at most a quarter of the window made: a window that long lines cut to five lines went on
        # a line at a time, and a README's table of inputs was 176 windows of the same rows
        start = max(start + 1, end + 1 - min(overlap, (end - start + 1) // 4))
    return chunks


#: MDX (a docs site's Markdown with components: Next.js, Docusaurus, Nextra) and scdoc's man pages (`# NAME`)
#: have Markdown's headings: their windows are named by their sections, as a Markdown page's are
_TEXT_LANGUAGES = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".scd": "markdown", ".rst": "rst", ".txt": "text",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".cfg": "ini", ".ini": "ini", ".sh": "shell",
    ".bash": "shell", ".html": "html", ".css": "css", ".scss": "css", ".sql": "sql", ".proto": "proto", ".kt": "kotlin",
    ".swift": "swift",
    ".php": "php", ".cs": "csharp", ".scala": "scala", ".lua": "lua", ".vim": "vim", ".xml": "xml",
}


def text_language(path: str) -> str:
    dot = path.rfind(".")
    return _TEXT_LANGUAGES.get(path[dot:].lower(), "text") if dot >= 0 else "text"
