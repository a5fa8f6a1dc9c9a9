"""A long definition's windows headed by their section comments, where the embedder reads them.

The embedder reads a chunk's header and its first `token_budget` tokens (128 by default, a few hundred
characters of code) and nothing after. A definition too long for one chunk is cut into windows that all carry
its signature: juice-shop's 510-line `configureApp`, every security header, rate limit and guard of the app,
was 16 windows all headed `configureApp (part N of 16)`, and "rate limiting on the forgot password endpoint"
found none of them in either leg (a security review's walkthrough, docs/benchmarks.md). Where the code says
what a step does, in a comment of its own above it (`/* Rate limiting */`), that comment is the step's name:
a window's header names the section comments that lie past what the embedder reads of it anyway, on a line of
its own (`sections: HTTP request logging · Rate limiting`). Only windows: the same titles in the header of
every long chunk kept whole lost on the dev bench's issue texts held out (Verified Acc@5 0.702 -> 0.690) what
they gained on descriptions; in windows alone they move no dev figure.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.boilerplate import is_comment, is_magic_comment

#: what the embedder reads of a chunk anyway: the default token budget's 128 tokens at about three characters
#: of code a token (a constant, not the setting: a chunk's text must not change with the budget)
READ_ANYWAY_CHARS = 384
#: what a header's sections line starts with (aggregate.record_preview reads the line above it)
SECTIONS_PREFIX = "sections: "
#: the sections line is read inside the token budget, before the chunk's text: at most about 40 tokens of it
#: (six titles of 60 characters were 81 of the 128, and the code below them went unread)
_MAX_SECTIONS_CHARS = 150
#: a comment's first line is a title, not a paragraph: cut past this
_MAX_TITLE_CHARS = 60
#: a comment's marks before its words (with a doc comment's `#:`, `//!`, `-- |`) and a block comment's end
_MARKS = re.compile(r"^\s*(?:///?|/\*+|\*+(?!/)|#+|--+|;+)\s*[!:|^]?\s*|\s*\*+/\s*$")
#: a banner's rules around a title (`# ---- Validate input ----`, `// ==== Routes ====`) or alone on a line
_RULES = re.compile(r"^[=\-*#~_+\s]+|[=\-*#~_+\s]+$")
#: comments that instruct a tool, mark a region or a task, not name a step
_INSTRUCTIONS = re.compile(
    r"^(?:eslint|@ts-|noqa|pylint\s*:|nolint|type\s*:\s*ignore|prettier-ignore|istanbul|c8\s|tslint|jshint|"
    r"clang-format|nosec|#?region\b|#?endregion\b|fmt\s*:|isort\s*:|pragma|mypy\s*:|ruff\s*:|biome-ignore|"
    r"deno-lint|shellcheck|go:|\+build|export\s|SAFETY\b|TODO|FIXME|XXX|HACK|@todo|-\s*\[)",
    re.IGNORECASE)
#: code commented out, where its words pass for a sentence (`# import os`, `# return None`, `// const x = 1`)
_CODE_OUT = re.compile(r"^(?:import\s+[\w.]+$|from\s+[\w.]+\s+import\b|return(?:\s+\S+)?$|(?:const|let|var)\s+\w+\s*="
                       r"|(?:def|func|fn)\s+\w+\s*\()")
#: a line that opens a block: a comment just below it heads the block's first step
_OPENS_A_BLOCK = re.compile(r"[{:(\[]\s*$|\b(?:do|then|begin)\s*$")
#: the letters of a title, in any script, with the apostrophes, hyphens and spaces between its words
_WORDY = re.compile(r"[^\W\d_](?:[^\W\d_]|['\- ])*")


def _words(line: str) -> str:
    """A comment line's words, without its marks and a banner's rules ("" for `/**` or a rule alone)."""
    return _RULES.sub("", _MARKS.sub("", line)).strip()


def _title(words: str) -> str:
    """A comment line's words (`_words`) when they read as a step's name: not a tool's instruction, not code
    commented out (mostly letters and spaces), not a lone word."""
    if not words or _INSTRUCTIONS.match(words) or _CODE_OUT.match(words) or " " not in words:
        return ""
    letters = sum(len(match.group(0)) for match in _WORDY.finditer(words))
    if letters < 0.8 * len(words) or words.endswith((";", "{", "}", ")", "=")):
        return ""
    return words if len(words) <= _MAX_TITLE_CHARS else words[: _MAX_TITLE_CHARS - 1].rstrip() + "…"


def section_titles(lines: list[str], language: str) -> list[str]:
    """The titles of the comments that stand on their own above a step (after a blank line or a block's
    opening line) and start past `READ_ANYWAY_CHARS` of the chunk's lines; each comment's first line, once, as
    many as `_MAX_SECTIONS_CHARS` holds."""
    titles: list[str] = []
    read = 0
    opened = False  # the line above opened a heading comment without words (`/**`): this one may name it
    for row, line in enumerate(lines):
        past = read >= READ_ANYWAY_CHARS
        read += len(line) + 1
        heading, opened = opened, False
        if not past or not is_comment(line, language) or is_magic_comment(line):
            continue
        above = lines[row - 1] if row else ""
        if not heading and above.strip() and not _OPENS_A_BLOCK.search(above):
            continue  # a comment's later line, or one on code's line below: no step's heading
        words = _words(line)
        if not words:  # `/**`, or a banner's rule above its title
            opened = True
            continue
        title = _title(words)
        if title and title not in titles:
            if sum(len(t) + 3 for t in titles) + len(title) > _MAX_SECTIONS_CHARS:
                break
            titles.append(title)
    return titles


def with_sections(header: str, lines: list[str], language: str) -> str:
    """The header with the chunk's section titles on a line of their own below it (unchanged without any)."""
    titles = section_titles(lines, language)
    if not titles:
        return header
    sections = SECTIONS_PREFIX + " · ".join(titles)
    return f"{header}\n{sections}" if header else sections
