"""Stylesheets (CSS, SCSS, Less) cut at their top-level rules, each named by its selector, listing what it defines.

As 40-line windows a stylesheet was named nothing, and a window began in one rule and ended in the next: elk's
`vars.css` (the dark theme's custom properties) came 104th for "where are the dark theme color css variables
defined", excalidraw's `theme.scss` 39th. There is no grammar wheel for CSS here; its rules are regular (a
selector or an at-rule's prelude, a braced body), found by their braces once comments, strings and SCSS's
`#{}` interpolations are blanked. A rule keeps the comment lines right above it. Adjacent rules are packed up to
the budget, a chunk named by its first rule's selector (`.dark`, `:root`, `@media (prefers-color-scheme:
dark)`), the others its names, with what the rules define: custom properties (`--color-primary`), SCSS's and
Less's variables (`$color-red-1`, `@gap`); a mixin, a function or a keyframes animation is a definition that starts
a chunk of its own, named by its name.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, blank, brace_end, chunk_blocks, comment_start, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk

STYLESHEET_SUFFIXES = (".css", ".scss", ".less", ".pcss")

#: block comments, strings and SCSS's interpolations `#{&}` (whose braces are no rule's), blanked before the
#: braces are read, in one pass from the left (a `/*` inside a string or a line comment opens nothing)
_NOT_CODE = r"/\*.*?(?:\*/|\Z)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)|'(?:[^'\\\n]|\\.)*(?:'|$)|#\{[^{}\n]*\}"
_CSS_NOT_CODE = re.compile(_NOT_CODE, re.DOTALL | re.MULTILINE)
#: and SCSS's and Less's line comments, not a URL's `//` (`url(//cdn)`, `https://`)
_SCSS_NOT_CODE = re.compile(_NOT_CODE + r"|(?<![:(\w])//[^\n]*", re.DOTALL | re.MULTILINE)
_TOKEN = re.compile(r"[{};]")
#: an at-rule that defines a name: a mixin, a function, a keyframes animation (`@-webkit-keyframes spin`)
_DEFINING = re.compile(r"@(mixin|function|(?:-[a-z]+-)?keyframes)\s+([\w-]+)")
#: a variable or a custom property declared: `$color-red-1:`, `--color-primary:`, Less's `@gap:`
_DECLARED = re.compile(r"(?:^|[;{\s])((?:\$|--|@)[A-Za-z_][\w-]*)\s*:", re.MULTILINE)
#: the longest selector a chunk is named by (a list of forty selectors is named by its start)
_NAME_CHARS = 120


def stylesheet_blocks(text: str, line_comments: bool) -> list[Block]:
    """Each top-level rule, at-rule block and statement (`$x: 1;`, `@import`) a block with the comment run
    above it: rules and statements minor (packed), definitions (`_DEFINING`) major."""
    code = (_SCSS_NOT_CODE if line_comments else _CSS_NOT_CODE).sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks: list[Block] = []
    start = 0  # where the next top-level statement's text starts (and the next token is looked for)
    while (token := _TOKEN.search(code, start)) is not None:
        prelude = code[start:token.start()]
        opening = start + len(prelude) - len(prelude.lstrip())
        if token.group() == "}":  # a stray closing brace (a broken file): skipped
            start = token.end()
            continue
        end = brace_end(code, token.start()) if token.group() == "{" else token.end()
        if prelude.strip():
            first, last = row_at(opening), row_at(end - 1)
            name, kind, major = _naming(" ".join(prelude.split()), token.group() == "{")
            members = tuple((row_at(start + found.start(1)), found.group(1))
                            for found in _DECLARED.finditer(code, start, end) if found.group(1) != name)
            blocks.append(Block(comment_start(lines, code_lines, first), last, name, kind, members, major))
        start = end
    return one_per_row(blocks)


def _naming(prelude: str, braced: bool) -> tuple[str, str, bool]:
    """(name, kind, major) of a top-level block by its prelude: a definition by its name, a rule by its selector,
    a statement by the variable it declares (nothing for an `@import`)."""
    defining = _DEFINING.match(prelude)
    if defining:
        return defining.group(2), defining.group(1).rsplit("-", 1)[-1], True
    if not braced:
        declared = _DECLARED.match(prelude)
        return (declared.group(1) if declared else ""), "declaration", False
    return prelude[:_NAME_CHARS], "at-rule" if prelude.startswith("@") else "rule", False


def chunk_stylesheet(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's rules packed into chunks (`blocks.chunk_blocks`), its other lines in windows."""
    language = path[path.rfind(".") + 1:].lower()
    blocks = stylesheet_blocks(text, line_comments=language in ("scss", "less"))
    return chunk_blocks(path, text.split("\n"), blocks, language=language, window_lines=window_lines,
                        overlap=overlap, max_chars=max_chars, pack=True)
