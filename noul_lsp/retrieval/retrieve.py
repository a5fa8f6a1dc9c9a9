"""The retrieval stage: each leg's best chunks of one root, with the scores the later stages read.

Three legs: BM25 scores every row (one scatter-add per query term); the transformer ("dense") and the
static model ("static") each search the rows that have their vector (dense.py: exact, or through an
approximate index on a large corpus). The static leg covers every chunk from the moment it is indexed;
the transformer covers what the background pass has embedded so far. Beside the top lists each leg keeps
a way to score any row (BM25's full array, a vector leg's `LegScores`), because the ranking stage looks
at every chunk of a candidate file, not only at the ones that made a leg's top list. Base rows of files
changed since the last compaction are dead (corpus.py): they are masked like rows a filter excludes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noul_lsp.config import IndexSettings
from noul_lsp.retrieval.analyse import QueryAnalysis
from noul_lsp.retrieval.bm25 import bm25_idf, repeated_term_weights
from noul_lsp.retrieval.corpus import CorpusArrays
from noul_lsp.retrieval.dense import LegScores
from noul_lsp.retrieval.dense import search as vector_search
from noul_lsp.retrieval.fusion import top_k
from noul_lsp.retrieval.roles import ROLE_INDEX
from noul_lsp.text.terms import query_terms
from noul_lsp.workspace.discovery import exclusion_spec, gitignore_spec

Stage = Callable[[str, float], None]


@dataclass
class Candidates:
    """One root's retrieval output: corpus rows and raw scores per leg, and every row's scores."""

    root: object  # the SearchRoot (engine.py) these rows belong to
    arrays: CorpusArrays
    bm25: tuple[np.ndarray, np.ndarray]
    dense: tuple[np.ndarray, np.ndarray]
    #: BM25 score of every row (None without the lexical leg)
    lexical_all: np.ndarray | None = None
    #: the cosine of any row, NaN where a row has no vector yet (None without the dense leg)
    dense_all: LegScores | None = None
    #: the rows a query may answer with: live and through the include/exclude filter (None: every row)
    allowed: np.ndarray | None = None
    #: the static leg's top rows and cosines, and any row's cosine (as `dense`, `dense_all`)
    static: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
    static_all: LegScores | None = None
    #: the files the include/exclude filter lets through (None without a filter: whole-file BM25 scores the
    #: files of dead rows 0 itself, as the lexical leg does their rows)
    allowed_files: np.ndarray | None = None


class RowFilter:
    """Rows a query may answer with: live ones whose file passes include/exclude globs. Matching runs in
    Python over every file, so the masks are kept for the corpus state they were made for: an editor
    repeats the same filter on every keystroke."""

    #: how the patterns are read, for the note when none passes
    PATTERNS_ARE = "patterns are globs relative to the workspace, as in .gitignore"

    def __init__(self) -> None:
        self._cached: tuple[CorpusArrays, tuple, np.ndarray, np.ndarray] | None = None

    def masks(self, arrays: CorpusArrays, include: Sequence[str],
              exclude: Sequence[str]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(the live rows the filter lets through, the files it lets through); without a filter, (the live
        rows, None). None: every row."""
        if not include and not exclude:
            return arrays.live, None
        cached = self._cached
        if cached is not None and cached[0] is arrays and cached[1] == (tuple(include), tuple(exclude)):
            return cached[2], cached[3]
        rows, files = _match(arrays, include, exclude)
        self._cached = (arrays, (tuple(include), tuple(exclude)), rows, files)
        return rows, files


def workspace_pattern(pattern: str) -> str:
    """A glob as people write one relative to the workspace: `./lib/*.js` is `lib/*.js` (in gitignore
    syntax the first never matches)."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern


def glob_escaped(path: str) -> str:
    """A path as a literal in a gitignore pattern (`src[old]` is not a character class)."""
    return "".join(f"\\{c}" if c in "[]*?\\!#" else c for c in path)


def glob_within(base: str, pattern: str) -> str:
    """A glob written for a folder (gitignore syntax: with a slash it starts at the folder's top, without
    one it matches at any depth) as one over the whole root; `base` is the folder as a pattern (`/` and its
    `glob_escaped` path, or `/*/*` for each of an organisation's repositories)."""
    pattern = workspace_pattern(pattern)
    return f"{base}/{pattern.lstrip('/')}" if "/" in pattern.rstrip("/") else f"{base}/**/{pattern}"


def with_literal_brackets(patterns: Sequence[str]) -> list[str]:
    """The patterns, and each one holding a bracket once more with its brackets literal: a file-routed app's
    folders are named in brackets (`app/pages/[[server]]/**`, `routes/[slug]/+page.svelte`), which gitignore
    syntax reads as a character class, so a filter naming one matched nothing. Each copy follows its pattern:
    the last pattern that matches decides (`!app/**/keep.ts` after `app/[locale]/**` still keeps the file)."""
    return [variant for p in patterns
            for variant in (p, *([re.sub(r"([\[\]])", r"\\\1", p)] if "[" in p and "\\" not in p else []))]


def _match(arrays: CorpusArrays, include: Sequence[str], exclude: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    include = with_literal_brackets([workspace_pattern(p) for p in include])
    exclude = with_literal_brackets([workspace_pattern(p) for p in exclude])
    allowed_files = np.ones(len(arrays.files), dtype=bool)
    if include:
        spec = gitignore_spec(include)
        allowed_files &= np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
    if exclude:
        spec = gitignore_spec(exclude)
        allowed_files &= ~np.fromiter((spec.match_file(p) for p in arrays.files), dtype=bool, count=len(arrays.files))
    allowed = allowed_files[arrays.row_file] if len(arrays.row_file) else np.zeros(0, dtype=bool)
    return (allowed if arrays.live is None else allowed & arrays.live), allowed_files


#: how the note for a filter that no indexed file passes begins (noul mcp words it for a call's path)
def scoped_globs(include: Sequence[str], relative: str, *, is_file: bool) -> list[str]:
    """Include globs (gitignore syntax, relative to the root) narrowed to `relative`, a folder or file
    inside the root ("" for the whole root)."""
    if not relative:
        return list(include)
    base = "/" + glob_escaped(relative)
    if is_file:
        return [base]
    if not include:
        return [base + "/**"]
    return [glob_within(base, g) for g in include]


NO_FILE_PASSES = "no indexed file passes the filter"
#: what the excludes did with a file, and what takes it back
LEFT_OUT = ("left out of the index by the excludes (the defaults, .noulignore or the settings; a `!pattern` line in "
            ".noulignore takes a default back)")


def filter_note(candidates: Sequence[Candidates], include: Sequence[str], exclude: Sequence[str]) -> str | None:
    """The note for an include/exclude filter that no indexed file of any root passes (None when one does,
    or without a filter): said once for the find, in the words of each kind of root's patterns."""
    if not (include or exclude) or not any(c.arrays.rows for c in candidates):
        return None
    if any(c.allowed is None or c.allowed.any() for c in candidates if c.arrays.rows):
        return None
    readings = "; ".join(dict.fromkeys(c.root.row_filter.PATTERNS_ARE for c in candidates if c.arrays.rows))
    left_out = list(dict.fromkeys(pattern for c in candidates if c.arrays.rows
                                  for pattern in left_out_by_scan(c.root.root, c.root.settings.index, include)))
    why = f"; {', '.join(left_out)}: {LEFT_OUT}" if left_out else ""
    return f"{NO_FILE_PASSES} (include {list(include)}, exclude {list(exclude)}; {readings}){why}"


def left_out_by_scan(root: Path, settings: IndexSettings, include: Sequence[str]) -> list[str]:
    """The include patterns whose literal start names what the scan leaves out (`dist/**`, `go.sum`):
    no filter can find those files, and a note that only says none passes sends the user looking."""
    spec = exclusion_spec(root, settings)
    found = []
    for pattern in include:
        literal = re.split(r"[*?\[]", workspace_pattern(pattern), maxsplit=1)[0].lstrip("/")
        if literal and spec.match_file(literal + ("x" if literal.endswith("/") else "")):
            found.append(pattern)
    return found


#: a file the query may name: a name with a suffix (`Localizable.xcstrings`, `ios/Runner.xcodeproj/project.pbxproj`),
#: on a word's boundaries
_NAMED_FILE = re.compile(r"(?<![\w./~-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][\w-]{0,15})(?![\w/])")
#: the named files a note lists at most
NAMED_UNINDEXED = 3
#: what lets a file over the size cap in
_RAISE_CAP = " (the `maxFileBytes` setting, `noul index --max-file-bytes`, raises it)"


def unindexed_note(candidates: Sequence[Candidates], analysis: QueryAnalysis, hit_paths: Sequence[str]) -> str | None:
    """The files a short query names that no hit is and the index holds no chunk of, with why: skipped
    (binary, over the size cap, a secret) or left out by the excludes. A mobile developer's find for the
    2 MB `Localizable.xcstrings` answered with other files and a low P(here), as if no such file were there;
    the reason says what to change (the size cap, a `!pattern` line). An issue text is not read: it names its
    reproducer's files."""
    if analysis.shape == "long":
        return None
    shown = [path.lower() for path in hit_paths]
    named = [name for name in dict.fromkeys(n.lstrip("./") for n in _NAMED_FILE.findall(analysis.text))
             if name and not any(path == name.lower() or path.endswith("/" + name.lower()) for path in shown)]
    reasons: list[str] = []
    for name in named:
        lowered = name.lower()
        for c in candidates:
            found = [path for path in c.arrays.skipped_by_name.get(lowered.rsplit("/", 1)[-1], ())
                     if path.lower() == lowered or path.lower().endswith("/" + lowered)]
            for why in (c.arrays.skipped_reasons[path] for path in found):
                reasons.append(why + (_RAISE_CAP if why.endswith("-byte cap") else ""))
            root = getattr(c.root, "root", None)
            if not found and isinstance(root, Path) and root.is_dir() and \
                    exclusion_spec(root, c.root.settings.index).match_file(name):
                # a bare name may be of no file here: what the excludes would do is all that is known
                held = f"{name} is" if "/" in name and (root / name).is_file() else f"a file named {name} would be"
                reasons.append(f"{held} {LEFT_OUT}")
    reasons = list(dict.fromkeys(reasons))
    if not reasons:
        return None
    more = f"; and {len(reasons) - NAMED_UNINDEXED} more" if len(reasons) > NAMED_UNINDEXED else ""
    return "named but not indexed: " + "; ".join(reasons[:NAMED_UNINDEXED]) + more


#: how many of each leg's first chunks are looked at for a test written inside a file of code (no array holds
#: the chunks' kinds; the note is rare, and a test asked for is among the first chunks when there is one)
INLINE_TESTS_SEEN = 20


def no_tests_note(candidates: Sequence[Candidates], wants_tests: bool) -> str | None:
    """Says that a one-line query asking for tests ("the test that checks the retry delays") is asked of a
    workspace with no test file: its hits are then the code itself, and a walkthrough of a project without
    tests read them as the tests not found. P(here) does not read it (no labelled find of its kind to fit
    on). An issue text never asks for tests (`roles.asks_for_tests`: it mentions them in passing), and an
    organisation search's candidates are a few files of each repository, so neither is told."""
    if not wants_tests or not all(c.root.whole_corpus for c in candidates):
        return None
    test = ROLE_INDEX["test"]
    if any(np.any(c.arrays.symbols.roles == test) for c in candidates):
        return None
    # a test written inside a file of code is a test all the same (Zig's `test "..."` blocks): libxev's "the test
    # that checks a timer reset on io_uring" found `test "io_uring: timer reset"` first, and was told there was none
    if any(c.arrays.chunk(int(row)).kind == "test" for c in candidates for rows, _ in (c.bm25, c.dense, c.static)
           for row in rows[:INLINE_TESTS_SEEN]):
        return None
    return "no test here: no file of this workspace is a test (by its path or content), so a test asked for is not"


def retrieve(root, analysis: QueryAnalysis, arrays: CorpusArrays, *, legs: Sequence[str], include: Sequence[str],
             exclude: Sequence[str], query_vectors: dict[str, np.ndarray], stage: Stage, notes: list[str],
             term_idf: dict[str, float] | None = None) -> Candidates:
    """The top chunks of each leg with their raw scores (BM25 score, cosine) for an analysed query (its
    BM25 terms and how often it repeats each, counted once per find; the vector legs embed its text).
    `term_idf` overrides this root's BM25 idf per query term (multi-root search); `query_vectors` holds one
    query embedding per model, shared by the roots of one find."""
    query, term_counts = analysis.text, analysis.lexical_counts(arrays.vocabulary)
    search = root.settings.search
    allowed, allowed_files = root.row_filter.masks(arrays, include, exclude)
    empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
    bm25 = empty
    lexical = None
    if "bm25" in legs:
        started = time.perf_counter()
        terms = [t for t in term_counts if t in arrays.vocabulary]
        ids = np.array([arrays.vocabulary[t] for t in terms], dtype=np.int64)
        idf = np.array([term_idf[t] for t in terms], dtype=np.float64) if term_idf is not None else None
        lexical = arrays.bm25.scores(ids, idf, query_weights=repeated_term_weights(terms, term_counts))
        if include or exclude:  # the index scores dead rows 0 itself: only a filter is news to it
            lexical = np.where(allowed, lexical, 0.0).astype(np.float32)
        rows = top_k(lexical, search.candidates)
        bm25 = (rows, lexical[rows])
        stage("bm25", started)
    dense, cosines = empty, None
    embedder = root.embedder() if arrays.covered["dense"] and "dense" in legs else None
    if embedder is not None:
        dense, cosines = _vector_leg(embedder, root.model_key or "", query, arrays, "dense", allowed, query_vectors,
                                     search, stage, ("embed_query", "dense"))
    static, static_cosines = empty, None
    static_model = root.static_embedder() if arrays.covered["static"] and "static" in legs else None
    if static_model is not None:
        static, static_cosines = _vector_leg(static_model, root.static_key or "", query, arrays, "static", allowed,
                                             query_vectors, search, stage, ("embed_query_static", "static"))
    elif "static" in legs and root.static_problem:
        notes.append(f"no static leg: {root.static_problem}")
    if embedder is None and "dense" in legs and root.embedder_problem:
        notes.append(f"{'lexical only' if static_cosines is None else 'static leg only'}: {root.embedder_problem}")
    if arrays.rows and cosines is None and static_cosines is None and ({"dense", "static"} & set(legs)):
        notes.append("lexical only: no chunk is embedded yet (" + (
            "the background pass is embedding them" if getattr(root, "indexed_in_background", False)
            else "run `noul index`") + ")")
    return Candidates(root, arrays, bm25, dense, lexical, cosines, allowed, static, static_cosines, allowed_files)


def _vector_leg(embedder, key: str, query: str, arrays: CorpusArrays, leg: str, allowed: np.ndarray | None,
                query_vectors: dict[str, np.ndarray], search, stage: Stage,
                stages: tuple[str, str]) -> tuple[tuple[np.ndarray, np.ndarray], LegScores]:
    """One vector leg: (its top rows and cosines, any row's cosine), timed as `stages` (embedding the
    query, searching)."""
    if key not in query_vectors:
        started = time.perf_counter()
        query_vectors[key] = embedder.embed_query(query, max_windows=search.query_windows)
        stage(stages[0], started)
    started = time.perf_counter()
    found = vector_search(arrays.tables[leg], arrays.row_slot, query_vectors[key], search.candidates, allowed,
                          arrays.slot_rows)
    stage(stages[1], started)
    return (found.rows, found.scores), found


def union_idf(query: str, loaded: list[CorpusArrays], *, other_documents: int = 0,
              other_frequency: dict[str, int] | None = None) -> dict[str, float]:
    """BM25 idf of each query term over all roots together (document frequencies and counts summed),
    and over a collection outside them (`other_documents` chunks, `other_frequency` holding each term:
    an organisation index, of which only a few candidates are roots here)."""
    terms = query_terms(query)
    other_frequency = other_frequency or {}
    frequency = np.array([float(other_frequency.get(t, 0)) for t in terms], dtype=np.float64)
    for arrays in loaded:
        for position, term in enumerate(terms):
            term_id = arrays.vocabulary.get(term)
            if term_id is not None and term_id < len(arrays.bm25.document_frequency):
                frequency[position] += arrays.bm25.document_frequency[term_id]
    idf = bm25_idf(sum(a.live_rows for a in loaded) + other_documents, frequency)
    return dict(zip(terms, idf.tolist(), strict=True))
