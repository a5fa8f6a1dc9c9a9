"""Vue's and Svelte's single-file components: the `<script>` cut by its grammar, the rest named by the file.

A `.vue` or `.svelte` file is a component named by its file (`QueryClientProvider.svelte`), whose logic is a
`<script>` block of JavaScript or, with `lang="ts"`, TypeScript. As plain line windows its functions were
defined nowhere and the component itself had no name: asked by name, `QueryClientProvider.svelte` came 7th,
below four adapters' `.tsx` copies. The script is cut as a `.ts` or `.js` file is, on the file's lines; its
lines outside any definition, the template and the styles are windows named by the component.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePosixPath

from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.code import CodeChunker
from noul_lsp.chunking.text import chunk_lines

COMPONENT_SUFFIXES = (".vue", ".svelte")
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)
_TYPESCRIPT = re.compile(r"""\blang\s*=\s*["']?ts\b""", re.IGNORECASE)


def chunk_component(path: str, text: str, *, code_for: Callable[[str], CodeChunker | None], window_lines: int,
                    overlap: int, max_chars: int) -> list[Chunk]:
    """The component's chunks on the file's lines: each script's definitions as in a `.js`/`.ts` file (its
    other lines named by the component), then the template and styles in windows named by the component."""
    component = PurePosixPath(path).name.split(".")[0]
    language = "vue" if path.lower().endswith(".vue") else "svelte"
    lines = text.split("\n")
    chunks: list[Chunk] = []
    for script in _SCRIPT.finditer(text):
        grammar = "typescript" if _TYPESCRIPT.search(script.group(1)) else "javascript"
        first_row = text.count("\n", 0, script.start(2))  # the row the script's text starts on (0-based)
        # the script's rows as they are in the file: its first row keeps the tag's width blank, so columns stay
        body = " " * (script.start(2) - (text.rfind("\n", 0, script.start(2)) + 1)) + script.group(2)
        chunker = code_for(grammar)
        cut = None
        if chunker is not None:
            try:
                cut = chunker.chunk(path, body)
            except Exception:  # a definition reader's slip: the script's lines stay findable in windows below
                cut = None
        if not cut:
            continue
        chunks.extend(replace(chunk, start_line=chunk.start_line + first_row, end_line=chunk.end_line + first_row,
                              symbol=chunk.symbol or component,
                              kind="component" if chunk.kind == "module" else chunk.kind) for chunk in cut)
        for row in range(first_row, first_row + script.group(2).count("\n") + 1):
            lines[row] = ""  # cut already: the windows below hold the template and the styles
    rest = chunk_lines(path, "\n".join(lines), language=language, window_lines=window_lines, overlap=overlap,
                       max_chars=max_chars, symbol=component, kind="component")
    return sorted([*chunks, *rest], key=lambda chunk: (chunk.start_line, chunk.end_line))
