"""YAML cut by its keys: a values file's, a workflow's or a manifest's sections, each named by its key path.

A Helm chart's `values.yaml` is thousands of lines of settings, each documented by the comment above it; a
workflow is its jobs; a configuration file its sections. As 40-line windows a setting was named nowhere, a
window began in one section and ended in the next, and the embedder (which reads about its first 13 lines)
never saw the key a window was about: kube-prometheus-stack's `prometheus.prometheusSpec.retention` sat on
the 26th line of a window that was in no query's first thirty chunks, and looked like Alertmanager's
`retention`. A document (between `---` lines) that fits one chunk is one; a larger one is cut at the keys of
its outermost mapping, each with the comment lines above it, a section still too large at its own keys, and a
list at its items, down to where nothing is left to cut at (a long text: windows); adjacent sections are then
packed up to the budget, two top-level keys' sections together only where each is a setting of one line (cut
alone, a CustomResourceDefinition's schema was twice its windows' chunks, half of them under 400 characters).
Each chunk is named by the key path its sections share (`prometheus.prometheusSpec`), which is also its header,
so the embedder reads where the lines sit; the keys inside a chunk are its names
(`prometheus.prometheusSpec.retention`), as a class's members are, but a list item's keys (a workflow step's
`uses`, `with`) and a Kubernetes manifest's (the API's schema, `spec.template.spec` in every manifest).
Indentation is read, not parsed: a file YAML cannot load (a Helm template's `{{ }}` lines) is cut as well as it
reads, and the lines of a block scalar (`script: |`) are text, never keys.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from noul_lsp.chunking.boilerplate import is_comment
from noul_lsp.chunking.chunk import MAX_NAMES, OBJECTS_KIND, Chunk, shifted
from noul_lsp.chunking.text import chunk_lines

YAML_SUFFIXES = (".yaml", ".yml")
JSON_SUFFIXES = (".json", ".jsonc")
#: a mapping key opening its line: `  retention: 10d`, `"on":`, `/users/{id}:`, `my key:`; not a list item's
#: `- name:`, a comment, a flow collection, a tag, an anchor's use or a block scalar's indicator
#: (whitespace inside a key is matched one way only: a run of spaces split every way made a padded line quadratic)
_KEY = re.compile(r"( *)(?![-?#:\[{!&*|>%@`<])(\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'"
                  r"|[^\s\"'#](?:[^\s#:]|[ \t]+(?![\s:#])|:(?![ \t]|$))*)[ \t]*:(?:[ \t]|$)")
_ITEM = re.compile(r"( *)-(?:[ \t]|$)")
#: what follows a key (or an item's dash) whose value is a block scalar: its deeper lines are text
_BLOCK_SCALAR = re.compile(r"(?:[&!]\S*\s+)*[|>][-+0-9]*\s*(#.*)?$")  # after a tag or an anchor too (`!Sub |`)
_DOCUMENT = re.compile(r"---(\s.*)?|\.\.\.\s*")
#: a list's item named by its `name:` key, an identifier (dbt's models, sources, tables and columns, each the
#: `- name: fct_trips` of its entry), not a label (a workflow step's `- name: Check out the code`)
_NAMED_ITEM = re.compile(r"[A-Za-z_][\w.-]*")
_LABELLED_LISTS = frozenset({"steps"})
#: dbt's lists of properties: a small file of one entry is named by it
_PROPERTY_LISTS = frozenset({"models", "sources", "seeds", "snapshots", "macros", "exposures", "metrics",
                             "semantic_models", "analyses"})


@dataclass(frozen=True)
class _Row:
    """What a line opens: a key (`name`) or a list's item (`name` None), at `indent`; its key path (None in an
    item), or an item's path when its `name:` names it (`_item_path`), else None; an item's `label`: the value
    of the `name:` it opens with, whatever it is (an Ansible task's `Configure open ports with firewalld.`)."""

    indent: int
    name: str | None
    path: str | None
    label: str | None = None


def _rows(lines: list[str]) -> list[_Row | None]:
    """Per line, the key or item it opens, None for any other line (a comment, a value's continuation, a block
    scalar's text, a template's `{{ }}` line); read by indentation, the key stack reset at each `---`."""
    found: list[_Row | None] = []
    #: (indent, key or None for a list's item, a named item's path) of what the line is under
    stack: list[tuple[int, str | None, str | None]] = []
    scalar_above: int | None = None  # the indent of the key whose block scalar the lines below belong to
    for raw in lines:
        line = raw.rstrip("\r")
        indent = len(line) - len(line.lstrip(" "))
        if scalar_above is not None and (not line.strip() or indent > scalar_above):
            found.append(None)
            continue
        scalar_above = None
        if _DOCUMENT.fullmatch(line):
            stack = []
        key, item = _KEY.match(line), _ITEM.match(line)
        if key is None and item is None:
            found.append(None)
            continue
        # a block scalar's lines are those deeper than its key's column (an item's key's: `- run: |`)
        rest = line[(key or item).end():]
        inner = _KEY.match(rest) if key is None else None
        column = indent if inner is None else len(line) - len(rest) + len(inner.group(1))
        value = (rest if inner is None else rest[inner.end():]).strip()
        if value and _BLOCK_SCALAR.match(value):
            scalar_above = column
        name = key.group(2).strip("\"'") if key is not None else None
        if key is None:  # a list written at its key's indent (`rules:` / `- alert: x`) is the key's, one deeper
            while stack and stack[-1][0] > indent:
                stack.pop()
            if stack and stack[-1][0] == indent and stack[-1][1] is not None:
                indent += 1
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if key is not None:
            stack.append((indent, name, None))
            listed = any(part is None for _, part, _ in stack)
            found.append(_Row(indent, name, None if listed else ".".join(part for _, part, _ in stack if part)))
            continue
        labelled = inner is not None and inner.group(2) == "name"
        named = _NAMED_ITEM.fullmatch(value.strip("\"'")) if labelled else None
        path = _item_path(stack, named.group(0)) if named is not None else None
        stack.append((indent, None, path))
        label = _label(value) if labelled else None
        found.append(_Row(indent, None, path, label or None))
    return found


def _item_path(stack: list[tuple[int, str | None, str | None]], name: str) -> str | None:
    """The path of a list's item named by its `name:` key (a dbt model, a source's table, a column): under the
    nearest named item above it (`models.fct_trips.trip_id`), else under the key path of its list
    (`models.fct_trips`); none for an item of a workflow's steps (`- name: Checkout` labels a step), of a list at
    the document's top (a fixtures file's records, an Ansible play) or in an unnamed item."""
    if not stack or stack[-1][1] in _LABELLED_LISTS:
        return None
    above = next((path for _, _, path in reversed(stack) if path), None)
    if above is not None:
        return f"{above}.{name}"
    if any(part is None for _, part, _ in stack):
        return None
    return ".".join([*(part for _, part, _ in stack), name])


@dataclass(frozen=True)
class _Section:
    """Rows of a document cut at its keys (or items), with the key path they are under; `setting`: a key of one
    line (plus the comments above it), at the document's top, nothing beneath it; `task`: an Ansible task's or
    play's section (`_TASK_LISTS`), a chunk of its own named by its `name:` ("" where it has none)."""

    first: int
    last: int
    path: str
    setting: bool
    task: str | None = None


class _YamlCutter:
    def __init__(self, path: str, lines: list[str], *, window_lines: int, overlap: int, max_chars: int,
                 language: str = "yaml", ansible: bool = False) -> None:
        self.path, self.lines, self.max_chars, self.language = path, lines, max_chars, language
        #: the characters before each row (a section's size is read at every level it is cut at, not summed again)
        self.ends = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
        self.windows = dict(language=language, window_lines=window_lines, overlap=overlap, max_chars=max_chars)
        self.chunks: list[Chunk] = []
        self.rows = _rows(lines)
        #: whether the document being read is cut in sections: a small file's keys (a manifest's `spec`,
        #: `metadata`, `name`) are no names anyone looks up; a values file's are
        self.sections = False
        #: whether the document is a Kubernetes manifest (`apiVersion:` and `kind:` at its top): its keys are the
        #: API's schema (`spec.template.spec`), in every manifest alike, no name of the workspace's; its
        #: sections are headed by their key paths, named by its object alone (`manifest_names`)
        self.manifest = False
        #: a manifest's object, the names of its every chunk: `letsencrypt-prod` and `ClusterIssuer/letsencrypt-prod`
        #: (asked for by name, a ClusterIssuer was first at P(here) 0.16, "probably not here": defined nowhere)
        self.manifest_names: tuple[str, ...] = ()
        #: an Ansible variables file (`variables`)
        self.variables_file = _VARIABLES_FOLDERS.search(path) is not None
        #: an Ansible playbook or a role's tasks (`is_ansible`): cut at its plays and tasks (`_TASK_LISTS`)
        self.ansible = ansible

    def size(self, first: int, last: int) -> int:
        """The characters of rows `first` to `last` (their line breaks counted)."""
        return self.ends[last + 1] - self.ends[first]

    def children(self, first: int, last: int, indent: int) -> list[tuple[int, _Row]]:
        """(first row, row) of the keys or items at `indent` within the rows, each from the first of the comment
        lines right above it."""
        found = []
        for index in range(first, last + 1):
            row = self.rows[index]
            if row is not None and row.indent == indent:
                start = index
                while start - 1 >= first and is_comment(self.lines[start - 1], "yaml"):
                    start -= 1
                found.append((start, row))
        return found

    def child_indent(self, first: int, last: int, indent: int) -> int | None:
        """The indent of the first key or item deeper than `indent` in the rows."""
        return next((row.indent for row in self.rows[first:last + 1] if row is not None and row.indent > indent),
                    None)

    def sections_of(self, first: int, last: int, prefix: str, indent: int, depth: int = 0,
                    listed: bool = False, key: str | None = None) -> list[_Section]:
        """The rows of one mapping or list at `indent` under the key path `prefix`, cut where they are over the
        budget: one section per key (the lines above the first key go with it) or per item (named by the list's
        key), a key's section too large cut at what it holds in turn. `listed`: the rows are a list item's,
        whose keys name no path (a workflow's `steps.run`); `key`: the key whose value the rows are (an
        Ansible play's `tasks`)."""
        children = self.children(first, last, indent) if self.size(first, last) > self.max_chars else []
        if len(children) == 1 and children[0][1].name is not None and depth < _MAX_DEPTH:
            start, row = children[0]  # one key holds it all: cut at what it holds, if anything
            deeper = self.child_indent(start + 1, last, indent)
            if deeper is not None:
                path = prefix if listed else f"{prefix}.{row.name}" if prefix else row.name
                return self.sections_of(first, last, path, deeper, depth + 1, listed, row.name)
            children = []
        if not children:
            return [_Section(first, last, prefix, setting=False)]
        self.sections = True
        found: list[_Section] = []
        bounds = [first if index == 0 else start for index, (start, _) in enumerate(children)] + [last + 1]
        tasks = self.ansible and (depth == 0 or key in _TASK_LISTS)  # a playbook's plays, a list of tasks
        for (_, row), start, end in zip(children, bounds, bounds[1:], strict=False):
            item = listed or row.name is None
            path = row.path if row.name is None and row.path else prefix if item \
                else f"{prefix}.{row.name}" if prefix else row.name
            task = (row.label or "") if tasks and row.name is None else None
            deeper = self.child_indent(start, end - 1, indent) \
                if self.size(start, end - 1) > self.max_chars and depth < _MAX_DEPTH else None
            if deeper is not None:
                found.extend(self.sections_of(start, end - 1, path, deeper, depth + 1, item, row.name))
            else:  # a top-level key of one line (and the comments above it): a setting, packed with its like
                code = sum(1 for line in self.lines[start:end]
                           if line.strip() not in _NO_CODE and not is_comment(line, "yaml"))
                found.append(_Section(start, end - 1, path, setting=not prefix and not item and code == 1, task=task))
        return found

    def cut(self, first: int, last: int) -> None:
        """One document: its sections (`sections_of`), adjacent ones packed into chunks up to the budget, each
        named by the key path its sections share (a lone section's own). Two top-level keys' sections are
        packed together only where both are settings of a line (`nameOverride`, `fullnameOverride`): a chunk
        of Alertmanager's last settings and Prometheus' first would be named by neither. An Ansible task is
        packed with nothing: a role's tasks were 60-line chunks named nothing, the embedder read their first
        few, and a hit on one opened at the chunk's first (`- hosts: all`)."""
        group: list[_Section] = []
        # the outermost mapping's keys: at the margin in YAML, one level in in JSON (inside its `{`)
        outermost = min((row.indent for row in self.rows[first:last + 1] if row is not None), default=0)
        for section in [*self.sections_of(first, last, "", outermost), None]:
            if group and (section is None or self.size(group[0].first, section.last) > self.max_chars
                          or section.task is not None or group[-1].task is not None
                          or not (_top(section.path) == _top(group[-1].path)
                                  or (section.setting and all(member.setting for member in group)))):
                if group[0].task is not None:  # its `name:` opens its text: no header to repeat it
                    self.emit(group[0].first, group[-1].last, group[0].task, "")
                else:
                    shared = _shared_path([member.path for member in group])
                    self.emit(group[0].first, group[-1].last, shared, shared)
                group = []
            if section is not None:
                group.append(section)

    def names(self, first: int, last: int, symbol: str) -> tuple[str, ...]:
        """The key paths of the keys in the rows but the chunk's own (none in a list's item)."""
        paths = (row.path for row in self.rows[first:last + 1] if row is not None and row.path)
        return tuple(dict.fromkeys(path for path in paths if path != symbol))[:MAX_NAMES]

    def variables(self, first: int, last: int) -> tuple[str, ...]:
        """Ansible's variables the rows set, by their own names (they are used bare, `{{ control_plane_endpoint }}`):
        the keys right under a `vars:` (a play's, an inventory group's), a variables file's top-level keys
        (a role's `defaults/` and `vars/`, `group_vars/`, `host_vars/`) and a task's `register:`. Asked for by
        name, an inventory's `control_plane_endpoint` was first at P(here) 0.05, defined nowhere."""
        found = [row.name for row in self.rows[first:last + 1] if row is not None and row.name and row.path
                 and ((self.variables_file and row.indent == 0) or row.path.split(".")[-2:-1] == ["vars"])]
        if self.ansible:  # a task's result kept as a variable (`register: k3s_token`)
            registered = (_SCALAR.match(self.lines[index].rstrip("\r"))
                          for index in range(first, last + 1) if (row := self.rows[index]) is not None
                          and row.name == "register")
            found.extend(value.group(1) for value in registered if value is not None)
        return tuple(dict.fromkeys(found))[:MAX_NAMES]

    def item_names(self, first: int, last: int) -> list[str]:
        """The paths of the items in the rows named by their `name:` (`_item_path`), each once."""
        return list(dict.fromkeys(row.path for row in self.rows[first:last + 1]
                                  if row is not None and row.name is None and row.path))[:MAX_NAMES]

    def emit(self, first: int, last: int, name: str, header: str) -> None:
        """One chunk of the rows (blank edges trimmed), or windows named `name` when they are over the budget."""
        if self.manifest:
            name = ""
        elif not self.sections:  # a dbt properties file that fits: named by the one entry it holds (`models.dim_date`)
            items = self.item_names(first, last)
            if items and items[0].split(".")[0] in _PROPERTY_LISTS and items[0].count(".") == 1 \
                    and all(item == items[0] or item.startswith(f"{items[0]}.") for item in items):
                name = header = name or items[0]
        while first <= last and not self.lines[first].strip():
            first += 1
        while last >= first and not self.lines[last].strip():
            last -= 1
        if first > last:
            return
        named = self.sections and not self.manifest
        text = "\n".join(self.lines[first:last + 1])
        if len(text) <= self.max_chars:
            names = self.names(first, last, name) if named else self.manifest_names if self.manifest else \
                tuple(item for item in self.item_names(first, last) if item != name)
            names = tuple(dict.fromkeys((*names, *self.variables(first, last))))[:MAX_NAMES]
            self.chunks.append(Chunk(self.path, first + 1, last + 1, text, name, self.language, "text", header=header,
                                     names=names))
            return
        for window in shifted(chunk_lines(self.path, text, **self.windows, symbol=name), first):
            self.chunks.append(Chunk(self.path, window.start_line, window.end_line, window.text, name, self.language,
                                     "text", header=header, names=self.names(window.start_line - 1,
                                                                             window.end_line - 1, name)
                                     if named else self.manifest_names if self.manifest else ()))


#: lines that hold no setting: blank, or a JSON object's braces alone (`{` opens a file's first key's section)
_NO_CODE = frozenset({"", "{", "}", "},", "[", "]", "],"})
#: how deep a document is cut at its keys (a file nested a thousand deep is cut at its first levels)
_MAX_DEPTH = 32


#: an Ansible play's lists of tasks (and a block's): each task a chunk of its own
_TASK_LISTS = frozenset({"tasks", "handlers", "pre_tasks", "post_tasks", "block", "rescue", "always"})
#: the longest `name:` a task is named by (a task's name is a line of prose; a longer value is no name)
_MAX_LABEL = 120
#: an Ansible play opening a document that is a list: `- hosts:`, `- import_playbook:`, or `- name:` with
#: `hosts:` under it
_PLAY = re.compile(r"^-[ \t]+(?:(?:ansible\.builtin\.)?import_playbook|hosts)[ \t]*:"
                   r"|^-[ \t]+name[ \t]*:[^\n]*\r?\n(?:[ \t]+[^\n]*\r?\n)*?[ \t]+hosts[ \t]*:", re.MULTILINE)
#: a document whose first line of content opens a list's item, at the margin
_LIST_DOCUMENT = re.compile(r"\A\ufeff?(?:(?:[ \t]*(?:#[^\n]*)?|---[^\n]*)\r?\n)*-(?:[ \t]|\r?$)", re.MULTILINE)
#: where a role keeps its lists of tasks
_TASK_FOLDERS = re.compile(r"(?:^|/)(?:tasks|handlers)/")
#: a task named at the margin (`- name: Build Docker images.`) and a key only a task has, in an item's mapping:
#: a file of tasks a playbook includes from anywhere (`provisioning/docker.yml`)
_NAMED_TASK = re.compile(r"^-[ \t]+name[ \t]*:", re.MULTILINE)
_TASK_KEY = re.compile(r"^[ \t]+(?:ansible\.builtin\.\w+|when|notify|register|with_items|with_dict|loop|become|"
                       r"delegate_to|changed_when|failed_when|until|retries|ignore_errors)[ \t]*:", re.MULTILINE)


def is_ansible(path: str, text: str) -> bool:
    """Whether a YAML file is Ansible's code: a list of plays (a playbook), a list in a role's `tasks/` or
    `handlers/` folder, or a list of named tasks with a key only a task has (`when:`, `notify:`, `register:`).
    Such a file is read as source (`OBJECTS_KIND`: it was config, under a README that described it) and cut at
    its tasks."""
    return _LIST_DOCUMENT.match(text) is not None and (
        _TASK_FOLDERS.search(path) is not None or _PLAY.search(text) is not None
        or (_NAMED_TASK.search(text) is not None and _TASK_KEY.search(text) is not None))


def _label(value: str) -> str:
    """The `name:` of a list's item as written (quotes and a trailing comment off), "" when it is no line of
    prose (a block scalar, a value too long)."""
    value = re.sub(r"\s+#.*$", "", value).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value if len(value) <= _MAX_LABEL and not _BLOCK_SCALAR.match(value) else ""


def _top(path: str) -> str:
    """The top-level key a section is under."""
    return path.split(".", 1)[0]


def _shared_path(paths: list[str]) -> str:
    """The key path the paths share (`prometheus.prometheusSpec` of its `.retention` and `.retentionSize`)."""
    split = [path.split(".") if path else [] for path in paths]
    shared: list[str] = []
    for parts in zip(*split, strict=False):
        if any(part != parts[0] for part in parts):
            break
        shared.append(parts[0])
    return ".".join(shared)


#: a configuration that builds objects: a key naming the class to build (Hydra's `_target_:`, torchtune's
#: `_component_:`, jsonargparse's and LightningCLI's `class_path:`), Hydra's package directive, or its defaults list
#: (`defaults:` then `- _self_`, `- group: option`, `- override ...` or a bare option; Jekyll's `- scope:` items and
#: GitHub's `defaults:` mapping are none)
_BUILDS_OBJECTS = re.compile(
    r"^\ufeff?[ \t-]*[\"']?(?:_target_|_component_|class_path)[\"']?[ \t]*:|^\ufeff?#[ \t]*@package\b"
    r"|^\ufeff?defaults:[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*(?:#[^\n]*)?\r?\n)*+"
    r"[ \t]*-[ \t]+(?:_self_|override[ \t][^\n]*|[\w/@.-]+[ \t]*(?::[ \t]*[\w/@.${}-]+)?)[ \t]*(?:#[^\n]*)?\r?$",
    re.MULTILINE)


#: where Ansible keeps variables files: a role's defaults and vars, an inventory's group and host variables
_VARIABLES_FOLDERS = re.compile(r"(?:^|/)(?:defaults|vars|group_vars|host_vars)/")
_SCALAR = re.compile(r"[^:]*:[ \t]*[\"']?([\w.:/-]+)[\"']?[ \t]*(?:#.*)?$")


def _object_names(lines: list[str], rows: list, start: int, end: int) -> tuple[str, ...]:
    """A Kubernetes manifest's object by its `metadata.name` (and `metadata.namespace`), alone and after its
    `kind`: `letsencrypt-prod`, `ClusterIssuer/letsencrypt-prod`, `cert-manager/letsencrypt-prod`."""
    values: dict[str, str] = {}
    for index in range(start, end):
        row = rows[index]
        if row is not None and row.path in ("kind", "metadata.name", "metadata.namespace") and row.path not in values:
            found = _SCALAR.match(lines[index].rstrip("\r"))
            if found:
                values[row.path] = found.group(1)
    name = values.get("metadata.name")
    if not name or "{{" in name:
        return ()
    qualified = [f"{values['kind']}/{name}"] if "kind" in values else []
    if "metadata.namespace" in values:
        qualified.append(f"{values['metadata.namespace']}/{name}")
    return (name, *qualified)


def chunk_json(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A JSON object written one key a line, cut as YAML is (JSON is YAML, and its keys are read by their
    indentation): an app's translations (`locales/en.json`, 28 windows named nothing, so "English text of the
    sign in button" found `action.sign_in` 96th), a package's manifest. Anything else (a list of records, one
    minified line) in windows, as before."""
    if not text.lstrip("\ufeff \t\r\n").startswith("{") or text.count("\n") < 2:
        return chunk_lines(path, text, language="json", window_lines=window_lines, overlap=overlap,
                           max_chars=max_chars)
    return chunk_yaml(path, text, window_lines=window_lines, overlap=overlap, max_chars=max_chars, language="json")


def chunk_yaml(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int,
               language: str = "yaml") -> list[Chunk]:
    """The file's chunks: each document (between `---` lines) whole when it fits, else cut at its keys; of kind
    `objects` where the file builds objects (`_BUILDS_OBJECTS`: an ML project's Hydra configs and training
    recipes, which its engineers ask for as they ask for code) or is Ansible's code (`is_ansible`)."""
    lines = text.split("\n")
    ansible = language == "yaml" and is_ansible(path, text)
    cutter = _YamlCutter(path, lines, window_lines=window_lines, overlap=overlap, max_chars=max_chars,
                         language=language, ansible=ansible)
    start = 0
    for index in range(len(lines) + 1):
        if index == len(lines) or _DOCUMENT.fullmatch(lines[index].rstrip("\r")):
            if index > start:
                top = {row.name for row in cutter.rows[start:index] if row is not None and row.indent == 0}
                cutter.sections, cutter.manifest = False, {"apiVersion", "kind"} <= top
                cutter.manifest_names = _object_names(lines, cutter.rows, start, index) if cutter.manifest else ()
                cutter.cut(start, index - 1)
            start = index + 1
    chunks = sorted(cutter.chunks, key=lambda chunk: (chunk.start_line, chunk.end_line))
    return [replace(chunk, kind=OBJECTS_KIND) for chunk in chunks] if ansible or _BUILDS_OBJECTS.search(text) \
        else chunks
