"""The corpus seen as code: definitions, scopes, file paths, roles and whole files, for the ranking stage.

Built once per corpus state (after chunks change, not when vectors arrive) from what the chunker already
stored: each chunk's symbol (`Scope.name`) and path, its BM25 terms and content hash. A query then asks
array questions of it: which rows define a name, which files' paths carry a term, how a whole file scores
under BM25, never a Python loop over the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from noul_lsp.retrieval.bm25 import BM25Index
from noul_lsp.retrieval.roles import role_codes
from noul_lsp.retrieval.vocabulary import get_many, key_code
from noul_lsp.text.terms import identifier_terms

_PATH_PART = re.compile(r"[A-Za-z0-9_]+")
_SUFFIX = re.compile(r"\.[A-Za-z0-9]+$")
#: the suffix left out of a path's terms: not one that names the file's kind as its tool reads it, an env file's
#: (`test.env`, `.env`), Bazel's (`BUILD.bazel`), a Dockerfile's (`dev.Dockerfile`), Gradle's (`build.gradle`),
#: Apple's property lists, entitlements and build settings (`Info.plist`), Flutter's translations (`app_en.arb`)
_TERMLESS_SUFFIX = re.compile(r"\.(?!(?:env|bazel|dockerfile|gradle|plist|entitlements|xcconfig|arb|css|scss|less)$)"
                              r"[A-Za-z0-9]+$",
                              re.IGNORECASE)


#: a file that declares what another implements: a C or C++ header, a Python stub, a TypeScript declaration file;
#: and one that stands beside it in a Unity project's editor: a custom inspector (`Editor/PatrolInspector.cs` for
#: `Patrol.cs`, its help text in plain English above the terse component in both legs for seven questions)
_DECLARATION = re.compile(r"\.(?i:h|hh|hpp|hxx|pyi|d\.ts)$"
                          r"|(?:^|/)Editor/(?:[^/]+/)*\w+?(?:Inspector|Editor|Drawer)\.cs$")
#: the files that implement what a declaration file of the same name declares
_IMPLEMENTATION = re.compile(r"\.(?:c|cc|cpp|cxx|m|mm|py|js|mjs|cjs|ts|cs)$", re.IGNORECASE)
#: what a Unity inspector's name adds to its component's (on the lower-cased name)
_INSPECTOR_SUFFIX = re.compile(r"(?:inspector|editor|drawer)$")


#: the prefix of a definition key that keeps one spelling of a name the corpus spells more than one way
EXACT = "="


@dataclass(frozen=True)
class SymbolTable:
    """Definition names, scopes and file facts of one corpus state (rows are the corpus's rows)."""

    #: lower-cased definition name (last part of the symbol) -> rows defining it
    definitions: Mapping[str, np.ndarray]
    #: identifier part (`cookie` of `extract_cookies_to_jar`) -> rows whose definition name carries it
    symbol_terms: Mapping[str, np.ndarray]
    #: lower-cased enclosing scope name (class, impl, module part of the symbol) -> rows inside it
    scopes: Mapping[str, np.ndarray]
    #: lower-cased file stem (`cookies` of src/requests/cookies.py; the folder for __init__/index/mod) -> files
    stems: Mapping[str, np.ndarray]
    #: term -> files whose path carries it (folder and file names, split like code identifiers)
    path_terms: Mapping[str, np.ndarray]
    #: every suffix of a lower-cased file path at a folder boundary (`cookies.py`, `requests/cookies.py`,
    #: `src/requests/cookies.py`) -> the files whose path ends so
    path_suffixes: Mapping[str, np.ndarray]
    #: role code per file (roles.ROLES)
    roles: np.ndarray
    #: first row of each file and its row count (rows of one file are adjacent, path-major)
    file_start: np.ndarray
    file_rows: np.ndarray
    #: share of each file's chunks whose exact text also appears in another file (copies, bundles)
    duplicate_share: np.ndarray
    #: BM25 over whole files (a file's chunks' terms summed)
    file_bm25: BM25Index  # or BM25Segments: the base's and the delta's together
    #: how many parts each file's path has (`src/requests/cookies.py`: 3)
    depths: np.ndarray
    #: per row, the code (vocabulary.key_code) of its definition name as a BM25 term (the whole identifier,
    #: `_format_repr` -> `format_repr`), 0 for a row that defines nothing: compared with the term codes of
    #: other chunks, it tells which definitions the best chunks use (features.py, `referenced`)
    definition_codes: np.ndarray
    #: per file, whether it is a declaration file (a header, a stub) whose implementation the corpus holds under
    #: the same name (`queue.h` beside `queue.c`, `task.h` beside `tasks.c`): `declaration_twins`
    declaration_twin: np.ndarray

    def rows_defining(self, names: Iterable[str], spelled: Iterable[str] = ()) -> np.ndarray:
        """The rows defining any of `names` (lower-cased); a name `spelled` with a capital in the query
        (smart case, as ripgrep's and vim's) takes the rows of that exact spelling where the corpus spells
        the name more than one way (`Token` the struct, not `Lexer.token`)."""
        exact = {name.lower(): f"{EXACT}{name}" for name in spelled if name != name.lower()}
        keys = [exact[n] if n in exact and exact[n] in self.definitions else n for n in names]
        found = [self.definitions[n] for n in keys if n in self.definitions]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int32)

    def rows_in_scopes(self, names: Iterable[str]) -> np.ndarray:
        found = [self.scopes[n] for n in names if n in self.scopes]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int32)

    def files_with_stems(self, stems: Iterable[str]) -> np.ndarray:
        found = [self.stems[s] for s in stems if s in self.stems]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int32)

    def files_ending_with(self, paths: Sequence[str]) -> np.ndarray:
        """Files whose path ends with one of `paths` at a folder boundary (`requests/cookies.py`), or whose
        whole path ends one of them (a traceback's absolute `/venv/.../requests/cookies.py`); failing both,
        the files that share the path's longest ending of a folder and a name: an installed copy's
        `site-packages/_pytest/unittest.py` is the workspace's `src/_pytest/unittest.py`."""
        found: list[np.ndarray] = []
        for path in paths:
            parts = path.lower().split("/")
            matches = [self.path_suffixes.get("/".join(parts), np.zeros(0, dtype=np.int32))]
            longest_shared = None  # the longest ending of a folder and a name that some file has
            for start in range(1, len(parts)):
                matched = self.path_suffixes.get("/".join(parts[start:]))
                if matched is None:
                    continue
                # keep only files whose whole path is this suffix of the query's
                matches.append(matched[self.depths[matched] == len(parts) - start])
                if longest_shared is None and start < len(parts) - 1:
                    longest_shared = matched
            if longest_shared is not None and not any(len(m) for m in matches):
                matches.append(longest_shared)
            found.extend(matches)
        return np.unique(np.concatenate(found)).astype(np.int32) if found else np.zeros(0, dtype=np.int32)

def _stem(path: str) -> str:
    parts = path.lower().split("/")
    stem = _SUFFIX.sub("", parts[-1])
    if stem in ("__init__", "index", "mod", "lib", "main") and len(parts) > 1:
        return parts[-2]  # a package's own file answers to the package's name
    return stem


def _twin_name(path: str) -> str:
    """A file's name without folder, suffix and plural `s`: FreeRTOS declares `tasks.c` in `task.h`."""
    name = path.rsplit("/", 1)[-1].lower()
    name = name[:-5] if name.endswith(".d.ts") else _SUFFIX.sub("", name)
    if path.lower().endswith(".cs") and _DECLARATION.search(path):  # `PatrolInspector.cs` stands beside `Patrol.cs`
        name = _INSPECTOR_SUFFIX.sub("", name)
    return name[:-1] if name.endswith("s") and len(name) > 2 else name


def implemented_names(files: Iterable[str]) -> frozenset[str]:
    """The twin names (`_twin_name`) of the files that implement what a declaration file may declare."""
    return frozenset(_twin_name(path) for path in files
                     if _IMPLEMENTATION.search(path) and not _DECLARATION.search(path))


def declaration_twins(files: Sequence[str], implemented: frozenset[str] = frozenset()) -> np.ndarray:
    """Per file of `files`, whether it declares what a file of `files` (or one named in `implemented`, another
    segment's `implemented_names`) implements under the same name. Asked how something works, the implementation
    answers and its header's prototype and doxygen prose only name it; a header without a twin (`portmacro.h`, a
    header-only library) is the implementation itself, so the flag is per pair, not per suffix. A feature the
    fitted ranker weighs (features.py), not a filter: asked for a declaration, the header still comes."""
    own = implemented_names(files)

    def has_twin(path: str) -> bool:
        if not _DECLARATION.search(path):
            return False
        name = _twin_name(path)
        return name in own or name in implemented  # no union: the base's names are not copied at each save

    return np.fromiter(map(has_twin, files), dtype=bool, count=len(files))


def _group(keys: list[str], values: np.ndarray) -> dict[str, np.ndarray]:
    groups: dict[str, list[int]] = {}
    for key, value in zip(keys, values.tolist(), strict=True):
        if key:
            groups.setdefault(key, []).append(value)
    return {key: np.array(found, dtype=np.int32) for key, found in groups.items()}


def symbol_parts(symbol: str) -> list[str]:
    """A chunk's symbol as its scopes and, last, the name it defines, as written (`Middleware.cors`,
    `Recipe::confirm`, `Display for X`; JS `#parseJson` is typed parseJson); none for a test's title in quotes
    (`describe "Endpoint".it "works"`, chunking/languages.py): it names no code."""
    parts = [p for p in re.split(r"\.|::|:| for ", symbol) if p] if symbol and '"' not in symbol else []
    if parts:
        parts[-1] = parts[-1].strip().lstrip("#")
    return parts


def defined_name(symbol: str) -> str:
    """The name a chunk's symbol defines, lower-cased as the table looks it up (`rows_defining`); "" for none."""
    parts = symbol_parts(symbol)
    return parts[-1].lower() if parts else ""


def build_symbol_table(*, symbols: Sequence[str], files: Sequence[str], row_file: np.ndarray, codes: np.ndarray,
                       file_bm25, file_size: tuple[np.ndarray, np.ndarray] | None = None,
                       tool_written: np.ndarray | None = None, builds_objects: np.ndarray | None = None,
                       counted: np.ndarray | None = None) -> SymbolTable:
    """The table of one segment's rows (`codes`: each row's content-hash code; `file_bm25`: the segment's
    whole-file BM25; `file_size`: each file's BM25 terms and lines, which tell minified code; `tool_written`:
    the files whose head says a tool wrote them; `builds_objects`: the configurations that name the classes
    they build; `counted`: the rows a file's copied share counts)."""
    rows = len(symbols)
    own_keys: list[str] = []  # the chunk's own definition per row
    definition_keys: list[str] = []
    definition_rows: list[int] = []
    spellings: dict[str, dict[str, list[int]]] = {}  # lower-cased name -> each spelling's rows
    scope_rows: dict[str, list[int]] = {}
    for row, entry in enumerate(symbols):
        # the chunk's own symbol, then the definitions nested in it (segment.symbol_lines): each defines its
        # last part here, in the scopes of the others
        for line, symbol in enumerate(entry.split("\n")):
            parts = symbol_parts(symbol)
            spelling = parts[-1] if parts else ""
            key = spelling.lower()
            if line == 0:
                own_keys.append(key)
            definition_keys.append(key)
            definition_rows.append(row)
            if key:
                spellings.setdefault(key, {}).setdefault(spelling, []).append(row)
            if key.rstrip("?!=") != key:  # Ruby's `save!`, `valid?`, `name=`: typed without the mark too
                definition_keys.append(key.rstrip("?!="))
                definition_rows.append(row)
            for scope in parts[:-1]:
                scope_rows.setdefault(scope.strip().lower(), []).append(row)
    definitions = {name: np.unique(found) for name, found in
                   _group(definition_keys, np.array(definition_rows, dtype=np.int32)).items()}
    # a name spelled more than one way (`Token`, `token`) keeps each spelling's rows too, under `EXACT`
    definitions.update({f"{EXACT}{spelling}": np.unique(np.array(found, dtype=np.int32))
                        for spelled in spellings.values() if len(spelled) > 1
                        for spelling, found in spelled.items()})
    # what other chunks' use of a name points to (the `references` features): the chunk's own definition
    definition_codes = np.zeros(rows, dtype=np.uint64)
    for name, found in _group(own_keys, np.arange(rows, dtype=np.int32)).items():  # one code per distinct name
        whole = identifier_terms(name)
        if whole:
            definition_codes[found] = key_code(whole[0])
    symbol_term_rows: dict[str, list[int]] = {}
    for name, found in definitions.items():
        for term in set(identifier_terms(name)):
            symbol_term_rows.setdefault(term, []).extend(found.tolist())
    symbol_terms = {t: np.unique(np.array(v, dtype=np.int32)) for t, v in symbol_term_rows.items()}
    scopes = {k: np.unique(np.array(v, dtype=np.int32)) for k, v in scope_rows.items()}
    file_ids = np.arange(len(files), dtype=np.int32)
    stems = _group([_stem(p) for p in files], file_ids)
    path_term_files: dict[str, set[int]] = {}
    for index, path in enumerate(files):
        for part in _PATH_PART.findall(_TERMLESS_SUFFIX.sub("", path)):
            for term in identifier_terms(part):
                path_term_files.setdefault(term, set()).add(index)
    path_terms = {t: np.array(sorted(f), dtype=np.int32) for t, f in path_term_files.items()}
    suffix_files: dict[str, list[int]] = {}
    for index, path in enumerate(files):
        parts = path.lower().split("/")
        for start in range(len(parts)):
            suffix_files.setdefault("/".join(parts[start:]), []).append(index)
    path_suffixes = {k: np.array(v, dtype=np.int32) for k, v in suffix_files.items()}
    depths = np.fromiter((p.count("/") + 1 for p in files), dtype=np.int32, count=len(files))
    file_rows = np.bincount(row_file, minlength=len(files)).astype(np.int32) if rows else np.zeros(len(files), np.int32)
    file_start = np.zeros(len(files), dtype=np.int32)
    if len(files):
        np.cumsum(file_rows[:-1], out=file_start[1:])
    shares = duplicate_share(codes, row_file, len(files), counted=counted)
    terms, lines = file_size or (None, None)
    roles = role_codes(files, terms=terms, lines=lines, tool_written=tool_written, builds_objects=builds_objects)
    return SymbolTable(definitions, symbol_terms, scopes, stems, path_terms, path_suffixes, roles,
                       file_start, file_rows, shares, file_bm25, depths, definition_codes, declaration_twins(files))


class _Joined(Mapping):
    """Two segments' postings (base ids, then delta ids shifted past the base's) as one read-only map."""

    def __init__(self, base: Mapping[str, np.ndarray], delta: Mapping[str, np.ndarray], shift: int) -> None:
        self._base, self._delta, self._shift = base, delta, shift

    def __getitem__(self, key: str) -> np.ndarray:
        found = [self._base[key]] if key in self._base else []
        if key in self._delta:
            found.append(self._delta[key] + self._shift)
        if not found:
            raise KeyError(key)
        return found[0] if len(found) == 1 else np.concatenate(found).astype(np.int32)

    def __contains__(self, key) -> bool:
        return key in self._base or key in self._delta

    def get_many(self, keys: Sequence[str], codes: np.ndarray | None = None) -> list[np.ndarray | None]:
        """`[self.get(k) for k in keys]`, each segment asked for all of them at once."""
        found = []
        for base, delta in zip(get_many(self._base, keys, codes), get_many(self._delta, keys, codes), strict=True):
            if delta is None:
                found.append(base)
            else:
                delta = delta + self._shift
                found.append(delta if base is None else np.concatenate([base, delta]).astype(np.int32))
        return found

    def __iter__(self):
        raise TypeError("joined postings are looked up, not iterated")

    def __len__(self) -> int:
        raise TypeError("joined postings are looked up, not counted")


def join_tables(base: SymbolTable, delta: SymbolTable, *, base_rows: int, file_bm25,
                delta_duplicate_share: np.ndarray, delta_roles: np.ndarray | None = None,
                delta_twins: np.ndarray | None = None) -> SymbolTable:
    """The table of base rows then delta rows. Base rows of changed files stay in it (their files are
    never candidates: the retrieval masks them), so nothing of the base is rebuilt. `delta_roles`: the delta
    files' roles read with the whole corpus (`roles.with_charts`), for the delta's own; `delta_twins` the same
    of their declaration twins (`declaration_twins` with the base's `implemented_names`)."""
    base_files = len(base.file_rows)
    delta_twins = delta.declaration_twin if delta_twins is None else delta_twins
    rows_of = {name: _Joined(getattr(base, name), getattr(delta, name), base_rows)
               for name in ("definitions", "symbol_terms", "scopes")}
    files_of = {name: _Joined(getattr(base, name), getattr(delta, name), base_files)
                for name in ("stems", "path_terms", "path_suffixes")}
    return SymbolTable(**rows_of, **files_of,
                       roles=np.concatenate([base.roles, delta.roles if delta_roles is None else delta_roles]),
                       file_start=np.concatenate([base.file_start, delta.file_start + base_rows]).astype(np.int32),
                       file_rows=np.concatenate([base.file_rows, delta.file_rows]),
                       duplicate_share=np.concatenate([base.duplicate_share, delta_duplicate_share]).astype(np.float32),
                       file_bm25=file_bm25, depths=np.concatenate([base.depths, delta.depths]),
                       definition_codes=np.concatenate([base.definition_codes, delta.definition_codes]),
                       declaration_twin=np.concatenate([base.declaration_twin, delta_twins]))


def duplicate_share(codes: np.ndarray, row_file: np.ndarray, files: int,
                     elsewhere: np.ndarray | None = None, counted: np.ndarray | None = None) -> np.ndarray:
    """Per file, the share of its rows whose content occurs in some other file too: another file of these
    rows, or (for a delta segment) any of `elsewhere`, the sorted codes of the live base rows. `counted`: the
    rows that count (`Segment.copyable_rows`: not a file's opening imports); None: all."""
    if counted is not None and not counted.all():
        codes, row_file = codes[counted], row_file[counted]
    if not len(codes):
        return np.zeros(files, dtype=np.float32)
    _, inverse = np.unique(codes, return_inverse=True)
    pairs = np.unique(np.stack([inverse.astype(np.int64), row_file.astype(np.int64)]), axis=1)  # (hash, file) once
    files_per_hash = np.bincount(pairs[0], minlength=inverse.max() + 1)
    shared = files_per_hash[inverse] > 1
    if elsewhere is not None and len(elsewhere):
        position = np.minimum(np.searchsorted(elsewhere, codes), len(elsewhere) - 1)
        shared |= elsewhere[position] == codes
    counts = np.bincount(row_file, minlength=files).astype(np.float32)
    return (np.bincount(row_file, weights=shared, minlength=files) / np.maximum(counts, 1)).astype(np.float32)

