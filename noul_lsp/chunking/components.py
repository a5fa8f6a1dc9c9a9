"""Vue's, Svelte's and Blazor's single-file components: the `<script>` (Blazor's `@code` block) cut by its
grammar, the rest named by the file.

A `.vue` or `.svelte` file is a component named by its file (`QueryClientProvider.svelte`), whose logic is a
`<script>` block of JavaScript or, with `lang="ts"`, TypeScript. As plain line windows its functions were
defined nowhere and the component itself had no name: asked by name, `QueryClientProvider.svelte` came 7th,
below four adapters' `.tsx` copies. The script is cut as a `.ts` or `.js` file is, on the file's lines; its
lines outside any definition and the template are windows named by the component, its styles chunks of rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from noul_lsp.chunking.blocks import blank, brace_end
from noul_lsp.chunking.chunk import MAX_NAMES, Chunk, shifted
from noul_lsp.chunking.code import CodeChunker, module_name
from noul_lsp.chunking.stylesheets import chunk_stylesheet
from noul_lsp.chunking.text import chunk_lines

COMPONENT_SUFFIXES = (".vue", ".svelte", ".razor")
#: a Blazor component's C# block (`@code { ... }`, the older `@functions { ... }`), its keyword opening a line
_RAZOR_CODE = re.compile(r"^[ \t]*@(?:code|functions)\s*\{", re.MULTILINE)
#: what holds no brace of the code's: C#'s strings (verbatim, interpolated, plain), characters and comments
_CSHARP_NOT_CODE = re.compile(r'@"(?:[^"]|"")*"|\$?"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)+\'|//[^\n]*|/\*.*?\*/',
                              re.DOTALL)
#: a component's script block: its tag opens a line (a `<script>` quoted in the template is none)
_SCRIPT = re.compile(r"^[ \t]*<script\b([^>]*)>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE | re.MULTILINE)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
#: a component's style block, its tag opening a line; its `lang` (scss, less) says how it is read
_STYLE = re.compile(r"^[ \t]*<style\b([^>]*)>(.*?)</style\s*>", re.DOTALL | re.IGNORECASE | re.MULTILINE)
_STYLE_LANG = re.compile(r"""\blang\s*=\s*["']?(scss|less)\b""", re.IGNORECASE)
_LANG = re.compile(r"""\blang\s*=\s*["']?(ts|typescript|tsx)\b""", re.IGNORECASE)


def _razor_blocks(text: str, component: str) -> list[tuple[str, int, int, str]]:
    """A Blazor component's `@code { ... }` blocks read as the members of a C# class named by the component
    (`Edit.SaveClick`: asked by name, it was in eShopOnWeb's `Edit.razor` alone, as line windows, and "probably
    not here" at P(here) 0.01), each on its own rows (`@code {` as `class Edit {`)."""
    code = _CSHARP_NOT_CODE.sub(blank, _HTML_COMMENT.sub(blank, text))  # offsets of the blanked text are the file's
    found = []
    for block in _RAZOR_CODE.finditer(code):
        end = brace_end(code, block.end() - 1)
        found.append(("csharp", text.count("\n", 0, block.start()), text.count("\n", 0, end),
                      f"class {component or 'Component'} {{" + text[block.end():end]))
    return found


def _script_blocks(text: str) -> list[tuple[str, int, int, str]]:
    """A Vue or Svelte component's `<script>` blocks, in JavaScript or (`lang="ts"`) TypeScript."""
    found = []
    for script in _SCRIPT.finditer(_HTML_COMMENT.sub(blank, text)):  # offsets of the blanked text are the file's
        lang = _LANG.search(script.group(1))
        grammar = "javascript" if lang is None else "tsx" if lang.group(1).lower() == "tsx" else "typescript"
        first_row = text.count("\n", 0, script.start(2))  # the row the script's text starts on (0-based)
        # the script's rows as they are in the file: its first row keeps the tag's width blank, so columns stay
        indent = script.start(2) - (text.rfind("\n", 0, script.start(2)) + 1)
        body = " " * indent + text[script.start(2):script.end(2)]
        found.append((grammar, first_row, first_row + script.group(2).count("\n"), body))
    return found


def chunk_component(path: str, text: str, *, code_for: Callable[[str], CodeChunker | None], window_lines: int,
                    overlap: int, max_chars: int, warnings: list[str] | None = None) -> list[Chunk]:
    """The component's chunks on the file's lines: each script's definitions as in a `.js`/`.ts`/`.cs` file
    (its other lines named by the component), its styles cut at their rules (`stylesheets.py`; the chunks
    named by the component, listing its selectors: appended to the template's last window, a component's
    styles were found by no name), then the template in windows named by the component.
    A script commented out in the template (`<!-- <script> ... -->`) is no script."""
    component = module_name(path)
    language = {".vue": "vue", ".svelte": "svelte"}.get(path[path.rfind("."):].lower(), "razor")
    lines = text.split("\n")
    chunks: list[Chunk] = []
    scripts = _razor_blocks(text, component) if language == "razor" else _script_blocks(text)
    for grammar, first_row, last_row, body in scripts:  # (grammar, first row, last row, the code on those rows)
        chunker = code_for(grammar)
        cut = None
        if chunker is not None:
            try:
                cut = chunker.chunk(path, body)
            except Exception as error:  # a definition reader's slip: the script's lines stay findable below
                if warnings is not None:
                    warnings.append(f"{path}: {grammar} definitions of its <script> unreadable "
                                    f"({type(error).__name__}: {error}); cut into line windows")
                cut = None
        if not cut:
            continue
        chunks.extend(shifted([replace(chunk, symbol=chunk.symbol or component,
                                       kind="component" if chunk.kind == "module" else chunk.kind) for chunk in cut],
                              first_row))
        lines[first_row : last_row + 1] = [""] * (last_row + 1 - first_row)  # cut already: not the template's
    if language != "razor":  # its styles cut at their rules, named by the component, the selectors its names
        for style in _STYLE.finditer(_HTML_COMMENT.sub(blank, text)):  # (offsets kept: a comment is blanked)
            first_row, last_row = text.count("\n", 0, style.start(2)), text.count("\n", 0, style.end(2))
            lang = _STYLE_LANG.search(style.group(1))
            reader = f"style.{lang.group(1).lower() if lang else 'css'}"  # a path whose suffix says how it is read
            cut = chunk_stylesheet(reader, text[style.start(2):style.end(2)], window_lines=window_lines,
                                   overlap=overlap, max_chars=max_chars)
            chunks.extend(shifted([replace(chunk, path=path, symbol=component, kind="style", language=language,
                                           names=tuple(dict.fromkeys(n for n in (chunk.symbol, *chunk.names)
                                                                     if n))[:MAX_NAMES])
                                   for chunk in cut if chunk.text.strip()], first_row))
            lines[first_row : last_row + 1] = [""] * (last_row + 1 - first_row)
    rest = chunk_lines(path, "\n".join(lines), language=language, window_lines=window_lines, overlap=overlap,
                       max_chars=max_chars, symbol=component, kind="component")
    return sorted([*chunks, *rest], key=lambda chunk: (chunk.start_line, chunk.end_line))
