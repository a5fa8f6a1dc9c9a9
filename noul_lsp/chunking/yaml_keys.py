"""YAML cut by its keys: a values file's, a workflow's or a manifest's sections, each named by its key path.

A Helm chart's `values.yaml` is thousands of lines of settings, each documented by the comment above it; a
workflow is its jobs; a configuration file its sections. As 40-line windows a setting was named nowhere, a
window began in one section and ended in the next, and the embedder (which reads about its first 13 lines)
never saw the key a window was about: kube-prometheus-stack's `prometheus.prometheusSpec.retention` sat on
the 26th line of a window that was in no query's first thirty chunks, and looked like Alertmanager's
`retention`. A document (between `---` lines) that fits one chunk is one; a larger one is cut at the keys of
its outermost mapping, each with the comment lines above it, and a section still too large at its own keys,
down to where no keys remain (a long list or text: windows); adjacent sections are then packed up to the
budget, never two top-level keys' together (cut alone, a CustomResourceDefinition's schema was twice its
windows' chunks, half of them under 400 characters). Each chunk is named by the key path its sections share
(`prometheus.prometheusSpec`), which is also its header, so the embedder reads where the lines sit; the keys
inside a chunk are its names (`prometheus.prometheusSpec.retention`), as a class's members are, but in a
Kubernetes manifest (whose keys are the API's). Indentation is read, not parsed: a file YAML cannot load (a
Helm template's `{{ }}` lines) is cut as well as it reads.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.text import chunk_lines

YAML_SUFFIXES = (".yaml", ".yml")
#: a mapping key opening its line: `  retention: 10d`, `"on":`, `build-and-test:` (not a list item's `- name:`)
_KEY = re.compile(r"( *)([A-Za-z0-9_$][\w.$/-]*|\"[^\"]+\"|'[^']+')\s*:(?:[ \t]|$)")
_DOCUMENT = re.compile(r"---(\s.*)?|\.\.\.\s*")
#: how many key names a chunk lists (a class's members are capped alike, code.MAX_NESTED)
_MAX_NAMES = 64


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


class _YamlCutter:
    def __init__(self, path: str, lines: list[str], *, window_lines: int, overlap: int, max_chars: int) -> None:
        self.path, self.lines, self.max_chars = path, lines, max_chars
        self.windows = dict(language="yaml", window_lines=window_lines, overlap=overlap, max_chars=max_chars)
        self.chunks: list[Chunk] = []
        self.paths = key_paths(lines)
        #: whether the document being read is cut in sections: a small file's keys (a manifest's `spec`,
        #: `metadata`, `name`) are no names anyone looks up; a values file's are
        self.sections = False
        #: whether the document is a Kubernetes manifest (`apiVersion:` and `kind:` at its top): its keys are the
        #: API's schema (`spec.template.spec`), in every manifest alike, no name of the workspace's; its
        #: sections are headed by their key paths, named by nothing
        self.manifest = False

    @property
    def named(self) -> bool:
        """Whether the document's chunks list the keys they hold."""
        return self.sections and not self.manifest

    def keys_at(self, first: int, last: int, indent: int) -> list[tuple[int, str]]:
        """(row, key) of the keys of the mapping at `indent` within the rows, each from the first of the comment
        lines right above it."""
        found = []
        for row in range(first, last + 1):
            match = _KEY.match(self.lines[row])
            if match is not None and len(match.group(1)) == indent:
                start = row
                while start - 1 >= first and _is_comment(self.lines[start - 1]):
                    start -= 1
                found.append((start, match.group(2).strip("\"'")))
        return found

    def child_indent(self, first: int, last: int, indent: int) -> int | None:
        """The indent of the first key deeper than `indent` in the rows."""
        for row in range(first, last + 1):
            match = _KEY.match(self.lines[row])
            if match is not None and len(match.group(1)) > indent:
                return len(match.group(1))
        return None

    def names(self, first: int, last: int, symbol: str) -> tuple[str, ...]:
        """The key paths of the keys in the rows (`key_paths`) but the chunk's own."""
        return tuple(dict.fromkeys(path for path in self.paths[first:last + 1] if path and path != symbol))[:_MAX_NAMES]

    def emit(self, first: int, last: int, name: str, header: str) -> None:
        """One chunk of the rows (blank edges trimmed), or windows named `name` when they are over the budget."""
        if self.manifest:
            name = ""
        while first <= last and not self.lines[first].strip():
            first += 1
        while last >= first and not self.lines[last].strip():
            last -= 1
        if first > last:
            return
        text = "\n".join(self.lines[first:last + 1])
        if len(text) <= self.max_chars:
            self.chunks.append(Chunk(self.path, first + 1, last + 1, text, name, "yaml", "text", header=header,
                                     names=self.names(first, last, name) if self.named else ()))
            return
        for window in chunk_lines(self.path, text, **self.windows, symbol=name):
            start = window.start_line - 1 + first
            self.chunks.append(Chunk(self.path, start + 1, window.end_line + first, window.text, name, "yaml",
                                     "text", header=header,
                                     names=self.names(start, window.end_line - 1 + first, name)
                                     if self.named else ()))

    def size(self, first: int, last: int) -> int:
        return sum(len(line) + 1 for line in self.lines[first:last + 1])

    def sections_of(self, first: int, last: int, prefix: str, indent: int) -> list[tuple[int, int, str]]:
        """The rows of one mapping at `indent` under the key path `prefix`, as (first row, last row, key path)
        sections each within the budget where keys allow: whole when they fit, else one per key (the lines
        above its first key go with that key's section), a section too large cut at its own keys in turn."""
        keys = self.keys_at(first, last, indent) if self.size(first, last) > self.max_chars else []
        if len(keys) == 1:  # one key holds it all: cut at its own keys, if any
            row, key = keys[0]
            deeper = self.child_indent(row + 1, last, indent)
            if deeper is not None:
                return self.sections_of(first, last, f"{prefix}.{key}" if prefix else key, deeper)
            keys = []
        if not keys:
            return [(first, last, prefix)]
        self.sections = True
        found: list[tuple[int, int, str]] = []
        bounds = [first if index == 0 else row for index, (row, _) in enumerate(keys)] + [last + 1]
        for (_, key), start, end in zip(keys, bounds, bounds[1:], strict=False):
            path = f"{prefix}.{key}" if prefix else key
            deeper = self.child_indent(start, end - 1, indent) if self.size(start, end - 1) > self.max_chars else None
            found.extend(self.sections_of(start, end - 1, path, deeper) if deeper is not None
                         else [(start, end - 1, path)])
        return found

    def cut(self, first: int, last: int) -> None:
        """One document: its sections (`sections_of`), adjacent ones packed into chunks up to the budget, each
        named by the key path its sections share (a lone section's own). Two top-level keys' sections are not
        packed together (Alertmanager's last settings and Prometheus' first), but top-level settings of a line
        or a few are."""
        group: list[tuple[int, int, str]] = []
        for section in [*self.sections_of(first, last, "", 0), None]:
            if group and (section is None or self.size(group[0][0], section[1]) > self.max_chars
                          or _top(section[2]) != _top(group[-1][2])):
                shared = _shared_path([path for _, _, path in group])
                self.emit(group[0][0], group[-1][1], shared, shared)
                group = []
            if section is not None:
                group.append(section)


def _top(path: str) -> str:
    """The top-level key a section is under; "" for a top-level setting of its own (`nameOverride`)."""
    return path.split(".", 1)[0] if "." in path else ""


def _shared_path(paths: list[str]) -> str:
    """The key path the paths share (`prometheus.prometheusSpec` of its `.retention` and `.retentionSize`)."""
    split = [path.split(".") if path else [] for path in paths]
    shared: list[str] = []
    for parts in zip(*split, strict=False):
        if any(part != parts[0] for part in parts):
            break
        shared.append(parts[0])
    return ".".join(shared)


_LIST_ITEM = re.compile(r"( *)- ")


def key_paths(lines: list[str]) -> list[str | None]:
    """Per row, the key path of the key the row opens (`prometheus.prometheusSpec.retention`), read by
    indentation; None for a row that opens no key, or a key inside a list's item (a workflow step's `uses`,
    `with`, `run` name nothing anyone looks up)."""
    paths: list[str | None] = []
    stack: list[tuple[int, str | None]] = []  # (indent, key; None: a list's item) the row is under
    for line in lines:
        if _DOCUMENT.fullmatch(line):
            stack = []
        key, item = _KEY.match(line), _LIST_ITEM.match(line)
        if key is None and item is None:
            paths.append(None)
            continue
        indent = len((key or item).group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key.group(2).strip("\"'") if key is not None else None))
        listed = any(name is None for _, name in stack)
        paths.append(None if listed else ".".join(name for _, name in stack if name))
    return paths


def chunk_yaml(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's chunks: each document (between `---` lines) whole when it fits, else cut at its keys."""
    lines = text.split("\n")
    cutter = _YamlCutter(path, lines, window_lines=window_lines, overlap=overlap, max_chars=max_chars)
    start = 0
    for row in range(len(lines) + 1):
        if row == len(lines) or _DOCUMENT.fullmatch(lines[row]):
            if row > start:
                top = {match.group(2) for match in map(_KEY.match, lines[start:row]) if match and not match.group(1)}
                cutter.sections, cutter.manifest = False, {"apiVersion", "kind"} <= top
                cutter.cut(start, row - 1)
            start = row + 1
    return sorted(cutter.chunks, key=lambda chunk: (chunk.start_line, chunk.end_line))
