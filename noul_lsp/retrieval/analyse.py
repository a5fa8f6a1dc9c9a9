"""What a query is and what it names, before any retrieval runs.

A bare symbol (`HTTPException`), a one-line description, and an issue text of several KB with a traceback
are different questions: the shape decides how much the lexical leg, the dense leg and exact name matches
are worth (the ranker learns one weight per shape). Code entities are the strongest evidence a query
carries: an identifier written in code style, a `dotted.path`, a `file/path.py`, a traceback frame, an
error class, inline code. Entities are matched against what the chunker already knows (definition names,
their enclosing class, file paths), so a chunk that *defines* a named symbol can outrank one that only
mentions it. Plain English words are not entities: they are BM25's and the embedder's business.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from noul_lsp.chunking.languages import LANGUAGES
from noul_lsp.text.terms import STOP_WORDS, identifier_terms, term_counts

SHAPES = ("symbol", "description", "long")
#: more distinct terms than this: an issue text or an agent's prompt, not a one-line description
LONG_QUERY_TERMS = 30

_FRAME = re.compile(r'File "([^"\n]+)", line (\d+), in ([A-Za-z_][A-Za-z0-9_<>]*)')
#: IPython's frames (what a notebook user pastes): `File ~/code/pkg/scales.py:351, in ContinuousBase._setup(self)`
_IPYTHON_FRAME = re.compile(r'File ([^\s"]+):(\d+), in (<?[A-Za-z_][\w.<>]*)')
#: pytest's frames (its long report, and `--tb=short`): `src/_pytest/runner.py:341: in from_call`
_PYTEST_FRAME = re.compile(r'^[ \t]*([^\s:"]+\.py):(\d+): in (<?[A-Za-z_][\w.<>]*)', re.M)
#: a file path in the query: any extension a grammar chunks (the chunker's list, so a new grammar's files
#: are named as soon as they are cut), and notebooks
_CODE_EXTENSIONS = {ext[1:] for spec in LANGUAGES.values() for ext in spec.extensions} | {"ipynb"}
#: and, in a short query, the kinds of file a service keeps beside its code (its schema, settings, build and
#: docs: "docker-compose-dev.yml", "buf.yaml", "stream.proto" were words, and a query naming the file "probably
#: not here"). Not in an issue text: it names its reproducer's files (`docs/index.rst`, `conf.py`) and links to
#: pages (`.html`), and read as paths they moved a Verified issue's answer out of the first five
_KIND_EXTENSIONS = {"sql", "proto", "thrift", "graphql", "graphqls", "gql", "prisma", "bzl", "bazel", "star", "yml",
                    "yaml", "toml", "json", "jsonc", "xml", "ini", "cfg", "conf", "env", "properties", "gradle",
                    "mk", "cmake", "lock", "md", "rst", "txt", "adoc", "html", "css", "scss", "vue", "svelte",
                    "tpl", "gotmpl", "dockerfile", "plist", "entitlements", "xcconfig", "arb", "pbxproj",
                    "storyboard", "xib"} - _CODE_EXTENSIONS
#: a build's or a deployment's file named by its convention, with no extension ("the Makefile", "Dockerfile"),
#: in a short query
_CONVENTIONAL_FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/+)*(?:gnu)?(?:makefile|dockerfile|containerfile"
                                r"|jenkinsfile|vagrantfile|justfile|rakefile|gemfile|procfile|tiltfile|podfile"
                                r"|fastfile|appfile|brewfile)"
                                r"(?:\.[\w-]+)?)(?![\w-]|\.\w)", re.IGNORECASE)


def _path_pattern(extensions: set[str]) -> re.Pattern:
    """A relative, absolute (`/usr/lib/.../requests/sessions.py`), home (`~/code/...`) or a link's path
    (`https://github.com/o/r/blob/<sha>/src/pkg/mod.py#L12`) with one of the extensions (a name may hold dots:
    `buf.gen.yaml`): a path starts after a space, a quote, a colon, never inside another path (a start at
    every slash of a long listing made the search quadratic)."""
    alternatives = "|".join(map(re.escape, sorted(extensions, key=lambda ext: (-len(ext), ext))))
    return re.compile(rf"(?<![\w./~-])((?:~?/+)?(?:[\w.-]+/+)*[\w-]+(?:\.[\w-]+)*?\.(?:{alternatives}))(?![\w])")


_PATH = _path_pattern(_CODE_EXTENSIONS)
#: a JVM frame: `at com.example.NiaAppKt.NiaApp(NiaApp.kt:227)`
_JVM_FRAME = re.compile(r"\bat\s+([\w$.<>]+)\(([\w.-]+\.(?:kt|kts|java|scala|groovy)):(\d+)\)")
_KIND_PATH = _path_pattern(_KIND_EXTENSIONS)
#: a dotted name; its parts may be hyphenated, as a Helm chart's named templates are (`kube-prometheus-stack.fullname`:
#: read as `stack.fullname`, its scope was no chart's). It starts after no word's hyphen (a start after each `-`
#: of a long chain of them made the search quadratic), but after a minus (`len(a)-self.offset`)
_DOTTED = re.compile(r"(?<![\w.])(?<!\w-)([A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"
                     r"(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)+)(?![\w(])?")
#: a C++ template's arguments before a scope's `::` (`SkipList<Key, Comparator>::Insert` is SkipList's Insert: read
#: whole, the name was `skiplist` and `Insert` was lost, `rotating_file_sink<Mutex>::rotate_` named `mutex`)
_TEMPLATE_ARGUMENTS = re.compile(r"(?<=\w)<[\w\s,:*&]*(?:<[\w\s,:*&]*>[\w\s,:*&]*)*>(?=::)")
_INLINE_CODE = re.compile(r"`{1,3}([^`\n]{1,200})`{1,3}")
_QUOTED = re.compile(r"(?<![\w])['\"]([^'\"\n]{2,80})['\"]")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HYPHENATED = re.compile(r"(?<![\w-])[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)+(?![\w-])")
_ERROR_CLASS = re.compile(r"^[A-Z][A-Za-z0-9]*(Error|Exception|Warning|Exit|Interrupt)$")
_PATH_SUFFIX = re.compile(r"\.[a-z]+$")


def _code_styled(word: str) -> bool:
    """An identifier no prose writer would type: snake_case, camelCase / PascalCase with an inner capital,
    a dunder, or all-caps with an underscore."""
    core = word.strip("_")
    if len(core) < 3:
        return False
    if "_" in core:
        return True
    if word.startswith("__"):
        return True
    return any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)


@dataclass(frozen=True)
class QueryAnalysis:
    """The query's terms, shape and named entities (all lower-cased names)."""

    text: str
    terms: tuple[str, ...]
    shape: str
    #: how often each of `terms` occurs in the query (BM25's query-term weight reads it)
    term_counts: tuple[int, ...]
    #: definition names the query names (the last part of a dotted path, a frame's function, a code-style word)
    names: frozenset[str]
    #: class or module parts of dotted names (`Session` of `Session.send`), matched against a symbol's scope
    scopes: frozenset[str]
    #: file paths the query names (as written, lower-cased, no leading ./), from text and traceback frames
    paths: tuple[str, ...]
    #: module-like stems (`cookies` of `requests.cookies` or `cookies.py`), matched against file stems
    modules: frozenset[str]
    #: how many traceback frames the query carries
    frames: int
    #: the lines a pasted trace's frames name, with their files (as written, lower-cased, no leading ./) and
    #: functions (lower-cased): a Python frame's `line 227, in f`, a JVM frame's `NiaAppKt.NiaApp(NiaApp.kt:227)`
    frame_lines: tuple[tuple[str, int, str], ...] = ()
    #: a description's words written in one piece with inner capitals (`GraphQL`, `GitHub`, `WriteBatch`), each
    #: lower-cased with the camel parts BM25 would also read for it (`graph`, `ql`)
    joined: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def spelled(self) -> tuple[str, ...]:
        """A bare name as the query spells it (`Token`; the last part of `Lexer.token`), for a lookup in
        smart case (`symbols.SymbolTable.rows_defining`); nothing for another shape."""
        return tuple(_WORD.findall(self.text)[-1:]) if self.shape == "symbol" else ()

    @property
    def counts(self) -> dict[str, int]:
        """Each term's count in the query."""
        return dict(zip(self.terms, self.term_counts, strict=True))

    def lexical_counts(self, vocabulary: Mapping[str, int]) -> dict[str, int]:
        """`counts` as BM25 reads them in a corpus of `vocabulary`: a word written in one piece that the code
        writes whole too is read whole, without its camel parts. "GraphQL type for the Checkout object" read
        `graph` and `ql`, rare in saleor but in the few files that call graphql-core's `GraphQLObjectType`, and
        those came first; `checkout/types.py` was not in the first ten (typed "graphql", first). A word the code
        never writes whole (`ConnectionPool` for `connection_pool`) keeps its parts, and so does a part the query
        also writes on its own."""
        counts = self.counts
        if not self.joined:
            return counts
        own = {word.lower() for word in _WORD.findall(self.text)}
        parts = {part for whole, split in self.joined if whole in vocabulary for part in split if part not in own}
        return {term: count for term, count in counts.items() if term not in parts}

    @property
    def entity_count(self) -> int:
        return len(self.names) + len(self.paths)


def _shown_path(path: str) -> str:
    """A path the query names as it is matched: slashes, lower case, no leading `~`, `.` or `/`."""
    return re.sub(r"/{2,}", "/", path.strip().replace("\\", "/")).lstrip("~./").lower()


def _shape(text: str, terms: tuple[str, ...], frames: int) -> str:
    """"long" for an issue text or an agent's prompt: many distinct terms, a traceback, or several lines."""
    stripped = text.strip()
    lines = sum(1 for line in stripped.splitlines() if line.strip())
    if len(terms) > LONG_QUERY_TERMS or frames or lines >= 3:
        return "long"
    if len(stripped.split()) == 1 and _WORD.search(stripped):
        return "symbol"
    return "description"


def analyse(text: str) -> QueryAnalysis:
    """Terms, shape and entities of a query (pure; a few regular expressions over the text)."""
    counts = term_counts(text)
    terms = tuple(counts)  # first occurrence order, as query_terms gives them
    names: set[str] = set()
    scopes: set[str] = set()
    modules: set[str] = set()
    paths: list[str] = []

    def add_path(path: str) -> None:
        path = _shown_path(path)
        if path and path not in paths:
            paths.append(path)
            stem = _PATH_SUFFIX.sub("", path.rsplit("/", 1)[-1])
            if stem and stem != "__init__":
                modules.add(stem)

    # Python's, IPython's and pytest's frames: (file, function or Class.method); a Windows path's
    # backslashes are slashes to add_path
    frame_matches = [m for pattern in (_FRAME, _IPYTHON_FRAME, _PYTEST_FRAME) for m in pattern.finditer(text)]
    frames = [(m.group(1), m.group(3)) for m in frame_matches]
    frame_lines = tuple(dict.fromkeys(
        (_shown_path(file), int(line), re.split(r"[.$]", function)[-1].lower())
        for file, line, function in [*((m.group(1), m.group(2), m.group(3)) for m in frame_matches),
                                     *((m.group(2), m.group(3), m.group(1)) for m in _JVM_FRAME.finditer(text))]
        if len(line) <= 7))
    for file, qualified in frames:
        add_path(file)
        if not qualified.startswith("<"):
            *owners, function = qualified.split(".")
            names.add(function.lower())
            scopes.update(owner.lower() for owner in owners)
    shape = _shape(text, terms, len(frames))
    for path in _PATH.findall(text):
        add_path(path)
    code_paths = " ".join(paths)  # a dotted name that is one of them names no code (`cookies.py`)
    if shape != "long":  # `package.json`, or `Response.json` the method: both are read
        for path in [*_KIND_PATH.findall(text), *_CONVENTIONAL_FILE.findall(text)]:
            add_path(path)
    snippets = [text] + _INLINE_CODE.findall(text) + _QUOTED.findall(text)
    dotted_names = _DOTTED.findall(_TEMPLATE_ARGUMENTS.sub("", text) if "<" in text else text)
    for dotted in dotted_names:
        parts = [p for p in re.split(r"\.|::", dotted) if p]
        if len(parts) < 2 or _PATH_SUFFIX.search(dotted) and dotted.lower() in code_paths:
            continue
        if all(p.islower() and len(p) <= 3 for p in parts):  # "e.g", "i.e"
            continue
        names.add(parts[-1].lower())
        for part in parts[:-1]:
            scopes.add(part.lower())
            modules.add(part.lower())
    for snippet in snippets[1:]:  # inline code and quoted strings: every identifier in them is named
        for word in _WORD.findall(snippet):
            if len(word) > 2 and word.lower() not in STOP_WORDS:
                names.add(word.lower())
    for word in _CALL.findall(text):
        if len(word) > 2 and word.lower() not in STOP_WORDS:
            names.add(word.lower())
    for word in _WORD.findall(text):
        if _code_styled(word) or _ERROR_CLASS.match(word):
            names.add(word.lower())
    if shape == "symbol" and not dotted_names:  # a lone word typed into a code search is a name
        # (`Session.request` is not: its class is a scope, or `def session()` would define what it names)
        names.update(w.lower() for w in _WORD.findall(text) if len(w) > 2)
        # and a hyphenated one whole, as settings and targets are named (`aps-environment`, `post-install`): its
        # parts alone define nothing, and an entitlement asked for by its key was P(here) 0.01, its file first
        names.update(w.lower() for w in _HYPHENATED.findall(text))
    joined = tuple(dict.fromkeys(
        (split[0], tuple(split[1:])) for word in _WORD.findall(text)
        if "_" not in word and not any(c.isdigit() for c in word) and len(split := identifier_terms(word)) > 2
    )) if shape == "description" else ()
    return QueryAnalysis(text=text, terms=terms, shape=shape, term_counts=tuple(counts.values()),
                         names=frozenset(names),
                         scopes=frozenset(scopes - names), paths=tuple(paths), modules=frozenset(modules),
                         frames=len(frames), frame_lines=frame_lines, joined=joined)
