"""`noul train mine`: (text a developer would write, the code it is about) pairs from git repositories.

Torch-free: git, tree-sitter and numpy. Two kinds of pair, both over the same chunks the engine indexes:
  * docstring: a definition's docstring or leading doc comment (its first paragraph) → the definition
    with that text removed (CodeSearchNet style); from the files at HEAD;
  * commit: a commit message → each definition the commit changed, as it was at the parent commit
    (SweRank style). Merges, bots, reverts, release bumps, messages under three words and commits that
    touch more than a few definitions or files are dropped.
Every pair then passes a consistency filter (its positive must be among the `consistency_top` chunks of
its repository for its query under BM25, or, with `static_model`, under a static model too; the rest are
noise: a message that does not describe its diff) and gets hard negatives: the best-ranked chunks of
the same repository that are not its positive, taken in turn from both rankings (SweRank: a reranker
trained with random negatives collapsed). A negative is a definition, as every positive is, so that the
shape of a chunk (an import block, module code) never tells the positive apart; a cross-encoder trained
with such negatives scored one repository's chunks alike for unrelated queries (docs/benchmarks.md,
"Two more cross-encoder runs"). The second ranking is meant for the pairs a palette query looks like:
a docstring that says in other words than the code what it does shares few terms with it, and BM25
alone drops exactly those pairs. Only source files give positives and negatives (file role from the
path): tests and docs are the ranking stage's business.

A repository named in the exclusion list (the benchmark repositories and their forks) is refused, and so
is one whose licence is not recognised as permissive, unless the caller says the code is their own.
Every source is recorded with its licence and commit in `sources.json` beside the pairs.
"""

from __future__ import annotations

import ast
import inspect
import json
import random
import re
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from noul_lsp.chunking import FileChunker
from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.languages import LANGUAGES, language_for_path
from noul_lsp.config import IndexSettings
from noul_lsp.retrieval.bm25 import BM25Index, BM25Parameters
from noul_lsp.retrieval.roles import file_role
from noul_lsp.text.terms import query_terms, term_counts
from noul_lsp.train.git import CommitChange, GitError, Repository
from noul_lsp.train.pairs import Pair, pairs_file

PERMISSIVE = ("MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Unlicense", "0BSD", "Zlib")
DEFINITION_KINDS = frozenset({"function", "method", "class", "struct", "interface", "enum", "trait", "impl",
                              "type", "module_definition", "extension", "actor", "union", "macro"})


class MiningRefused(RuntimeError):
    """The repository must not be mined (excluded, or its licence is not permissive); says which."""

    def __init__(self, message: str, repository: str = "") -> None:
        super().__init__(message)
        self.repository = repository


@dataclass(frozen=True)
class MineSettings:
    #: commits read from HEAD back, per repository
    max_commits: int = 3000
    #: a commit that changes more definitions (or code files) than this is a refactor, not one intent
    max_definitions_per_commit: int = 3
    max_files_per_commit: int = 3
    #: keep a pair when its positive is within this many chunks of its repository under BM25
    consistency_top: int = 20
    hard_negatives: int = 7
    #: a static model for a second ranking (consistency and hard negatives), e.g. "noul-code-static-v2";
    #: "" = BM25 alone. Off by default: the one run trained on pairs mined with it (and 60% docstrings)
    #: came out below the base model on the dev bench (docs/benchmarks.md, "What did not work")
    static_model: str = ""
    #: pairs kept per repository (sampled, seeded), so that one large repository does not dominate
    max_pairs_per_repository: int = 3000
    min_query_words: int = 3
    max_query_chars: int = 600
    max_file_bytes: int = 400_000
    seed: int = 13
    #: test chunks added to each pair's negatives (0: none, the mined negatives are definitions of source
    #: files): the tests that call the positive, best first for the query and the positive's name. A model
    #: trained without them ranks a test that exercises a function above the function itself (the GPU run
    #: in docs/benchmarks.md: describe-dev dense Acc@1 0.361 -> 0.167, 0.639 with test hits removed)
    test_negatives: int = 0


@dataclass
class SourceRecord:
    repository: str
    commit: str
    licence: str
    licence_file: str
    chunks: int = 0
    docstring_pairs: int = 0
    commit_pairs: int = 0
    commits_read: int = 0
    commits_kept: int = 0
    dropped_by_consistency: int = 0
    seconds: float = 0.0
    languages: dict[str, int] = field(default_factory=dict)


# --- licences --------------------------------------------------------------------------------------------

_LICENCE_FILES = re.compile(r"^(licen[sc]e|copying|unlicense)([-_.].*)?$", re.I)


def classify_licence(text: str) -> str:
    """An SPDX-style id for the usual permissive and copyleft licence texts, else "unknown"."""
    head = " ".join(text.split())[:6000]
    if re.search(r"GNU (AFFERO |LESSER |LIBRARY )?GENERAL PUBLIC LICENSE", head, re.I):
        return "GPL-family"
    if "Mozilla Public License" in head:
        return "MPL-2.0"
    if re.search(r"Apache License,? Version 2\.0", head, re.I):
        return "Apache-2.0"
    if "Permission is hereby granted, free of charge" in head:
        return "MIT"
    if "Redistribution and use in source and binary forms" in head:
        return "BSD-3-Clause" if re.search(r"neither the name|names of (its|the) contributors", head, re.I) else "BSD-2-Clause"
    if re.search(r"Permission to use, copy, modify, and(/or)? distribute this software", head):
        return "ISC"
    if "This is free and unencumbered software released into the public domain" in head:
        return "Unlicense"
    if "This software is provided 'as-is'" in head and "zlib" in head.lower():
        return "Zlib"
    return "unknown"


def repository_licence(repository: Repository) -> tuple[str, str]:
    """(licence, files it was read from) of the top-level licence files at HEAD; several are joined with
    OR (dual licensing, e.g. LICENSE-MIT + LICENSE-APACHE)."""
    found: dict[str, str] = {}
    for path in repository.files(repository.head):
        if "/" not in path and _LICENCE_FILES.match(path):
            text = repository.read(repository.head, path, max_bytes=200_000)
            if text:
                found[path] = classify_licence(text)
    if not found:
        return "unknown", ""
    kinds = sorted(set(found.values()))
    # LICENSE-MIT + LICENSE-APACHE is the Rust ecosystem's dual licence (take either); any other set of
    # files binds together (a COPYING beside a LICENSE-MIT is GPL code with an MIT part)
    dual = len(found) > 1 and all(re.search(r"-(mit|apache)", name, re.I) for name in found)
    return (" OR " if dual else " AND ").join(kinds), ", ".join(sorted(found))


def is_permissive(licence: str) -> bool:
    """True when some alternative (OR) is permissive in every part (AND)."""
    return any(all(part.strip() in PERMISSIVE for part in alternative.split(" AND "))
               for alternative in licence.split(" OR "))


def is_excluded(repository: str, exclusions: set[str]) -> bool:
    """Listed, or named like a listed repository under another owner (a fork usually keeps the name)."""
    name = repository.lower()
    return name in exclusions or name.split("/")[-1] in {e.split("/")[-1] for e in exclusions}


def read_exclusions(path: Path | None) -> set[str]:
    if path is None:
        return set()
    lines = (line.split("#", 1)[0].strip().lower() for line in Path(path).read_text().splitlines())
    return {line for line in lines if line}


# --- docstrings ------------------------------------------------------------------------------------------

_COMMENT_LINE = re.compile(r"^\s*(///?!?|/\*\*?|\*/?|#(?![\[!])|---?\s*\|?)\s?")
_DOC_STOP = re.compile(r"^\s*(@\w+|:param|:returns?|:raises|Args:|Arguments:|Returns:|Raises:|Parameters\b|"
                       r"Examples?:?$|Example usage|Usage:|Note:|See also|>>>|```|\.\. )", re.I)
_NOT_A_DESCRIPTION = re.compile(r"copyright|spdx-license|licensed under|todo\b|fixme|xxx\b|deprecated|"
                                r"auto-?generated|do not edit|noqa|pragma|type: ignore|eslint|clippy", re.I)


def _first_paragraph(lines: Sequence[str]) -> str:
    kept: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            if kept:
                break
            continue
        if _DOC_STOP.match(stripped):
            break
        kept.append(stripped)
    return " ".join(kept)


def _python_docstring(text: str) -> tuple[str, str] | None:
    """The docstring of the definition a chunk holds and the text without it, read with `ast` (a chunk
    that is a part of a longer definition does not parse, and gives None)."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    body = tree.body[0].body
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
        return None
    lines = text.split("\n")
    rest = lines[: first.lineno - 1] + lines[first.end_lineno:]
    return _first_paragraph(inspect.cleandoc(first.value.value).splitlines()), "\n".join(rest)


def _leading_comment(text: str) -> tuple[str, str] | None:
    """The doc comment a chunk starts with (the chunker attaches it to the definition below) and the rest."""
    lines = text.split("\n")
    count = 0
    described: list[str] = []
    while count < len(lines):
        line = lines[count].strip()
        if line.startswith("/*"):  # a block comment is one unit, whatever its inner lines look like
            end = count
            while end < len(lines) and "*/" not in lines[end]:
                end += 1
            block = lines[count : end + 1]
            described.extend(re.sub(r"^\s*(/\*\*?|\*/?)\s?", "", b).replace("*/", "").strip() for b in block)
            count = end + 1
        elif _COMMENT_LINE.match(lines[count]) and not line.startswith("#["):
            described.append(_COMMENT_LINE.sub("", lines[count]).strip())
            count += 1
        else:
            break
    if count == 0:
        return None
    return _first_paragraph(described), "\n".join(lines[count:])


_ELIXIR_DOC = re.compile(r'\A\s*@doc\s+(?:"""(.*?)"""|"((?:[^"\\\n]|\\.)*)")[ \t]*\n?', re.S)


def _elixir_doc(text: str) -> tuple[str, str] | None:
    """The `@doc` (heredoc or one-line string) a function's chunk starts with, and the rest: Elixir
    documents with module attributes, which the chunker keeps with the function below them."""
    match = _ELIXIR_DOC.match(text)
    if match is None:
        return None
    doc = match.group(1) if match.group(1) is not None else match.group(2)
    return _first_paragraph(inspect.cleandoc(doc).splitlines()), text[match.end():]


def split_docstring(chunk: Chunk) -> tuple[str, str] | None:
    """(the description, the chunk's text without it) for a definition that documents itself."""
    if chunk.language == "python":
        split = _python_docstring(chunk.text)
    elif chunk.language == "elixir":
        split = _elixir_doc(chunk.text)
    else:
        split = _leading_comment(chunk.text)
    if split is None:
        return None
    description, rest = split[0].strip(), split[1]
    if not description or _NOT_A_DESCRIPTION.search(description) or len(rest.strip().splitlines()) < 2:
        return None
    return description, rest


# --- commit messages -------------------------------------------------------------------------------------

_BOT = re.compile(r"\[bot\]|\bbot\b|dependabot|renovate|github-actions|greenkeeper|pre-commit-ci|snyk", re.I)
_SKIP_SUBJECT = re.compile(r"^(revert|merge (pull request|branch|remote)|bump|release v?\d|prepare (for )?release|"
                           r"version|v?\d+\.\d+|update (the )?changelog|changelog|typos?|reformat|run (black|prettier|"
                           r"rustfmt|gofmt|clang-format|ruff)|lint|wip|fixup!|squash!|apply suggestions)\b", re.I)
_TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|change-id|closes|fixes|refs?)\b", re.I)
_CONVENTIONAL = re.compile(r"^\s*(\w+)(\([^)]*\))?!?:\s*")
_REFERENCES = re.compile(r"\(#\d+\)|\[#\d+\]|#\d+|\bgh-\d+\b|https?://\S+", re.I)


def commit_query(change: CommitChange, settings: MineSettings) -> str | None:
    """The message as a query: subject (without a conventional-commit prefix and issue numbers) and the
    first paragraph of the body; None for a message that describes nothing."""
    if _BOT.search(change.author) or _BOT.search(change.email):
        return None
    lines = change.message.splitlines()
    if not lines:
        return None
    subject = _REFERENCES.sub("", _CONVENTIONAL.sub("", lines[0])).strip(" .:-")
    if _SKIP_SUBJECT.match(lines[0].strip()) or _SKIP_SUBJECT.match(subject):
        return None
    if len(re.findall(r"[A-Za-z]{2,}", subject)) < settings.min_query_words:
        return None
    body = [line for line in lines[1:] if not _TRAILER.match(line.strip())]
    paragraph = _REFERENCES.sub("", _first_paragraph(body)).strip()
    query = f"{subject}. {paragraph}" if paragraph else subject
    return query[: settings.max_query_chars]


# --- the repository's corpus -----------------------------------------------------------------------------

BM25_PARAMETERS = BM25Parameters()


class Corpus:
    """Chunks of one repository under BM25, and under a static model when one is given, for the
    consistency filter and the hard negatives."""

    def __init__(self, texts: list[str], keys: list[tuple[str, str]], *, seed: int = 13, static=None,
                 definitions: list[bool] | None = None) -> None:
        self.texts = texts
        self.keys = keys  # (path, symbol) of each row: the same definition at another commit is no negative
        #: the rows that may be negatives (None: all): definitions, the kind every positive is
        self.negative_rows = np.ones(len(texts), dtype=bool) if definitions is None else np.array(definitions, bool)
        vocabulary: dict[str, int] = {}
        row_ids, row_counts = [], []
        for text in texts:
            counts = term_counts(text)
            row_ids.append(np.array([vocabulary.setdefault(t, len(vocabulary)) for t in counts], dtype=np.int64))
            row_counts.append(np.array(list(counts.values()), dtype=np.float32))
        self.vocabulary = vocabulary
        self.index = BM25Index(row_ids, row_counts, max(1, len(vocabulary)), BM25_PARAMETERS)
        lengths = np.array([c.sum() for c in row_counts], dtype=np.float32)
        self.average_length = float(lengths.mean()) if len(lengths) else 1.0
        self.rows_of_text: dict[str, list[int]] = {}
        self.rows_of_key: dict[tuple[str, str], list[int]] = {}
        for row, (text, key) in enumerate(zip(texts, keys, strict=True)):
            self.rows_of_text.setdefault(text, []).append(row)
            self.rows_of_key.setdefault(key, []).append(row)
        # rows no query term matches fill in after the lexical ones, in a seeded order (not file order, or
        # the same few chunks would be every pair's filler)
        self.tie_order = np.random.default_rng(seed).random(len(texts))
        self.static = static
        self.vectors = static.embed_documents(texts) if static is not None and texts else None

    def _ids(self, query: str) -> np.ndarray:
        return np.array([self.vocabulary[t] for t in query_terms(query) if t in self.vocabulary], dtype=np.int64)

    def score_text(self, query_ids: np.ndarray, text: str) -> float:
        """BM25 of a text that is not a row, with this corpus's statistics."""
        counts = term_counts(text)
        k1, b = BM25_PARAMETERS.k1, BM25_PARAMETERS.b  # as the index scored its rows
        norm = k1 * (1 - b + b * sum(counts.values()) / max(self.average_length, 1e-9))
        wanted = set(query_ids.tolist())
        total = 0.0
        for term, count in counts.items():
            term_id = self.vocabulary.get(term)
            if term_id is not None and term_id in wanted:
                total += float(self.index.idf[term_id]) * count / (count + norm)
        return total

    def best_matches(self, query: str, count: int) -> list[str]:
        """The `count` rows BM25 scores highest for the query (only rows some query term matches)."""
        query_ids = self._ids(query)
        if not len(query_ids) or not count:
            return []
        scores = self.index.scores(query_ids)
        top = np.lexsort((self.tie_order, -scores))[:count]
        return [self.texts[row] for row in top if scores[row] > 0]

    def rank_and_negatives(self, query: str, positive: str, keys: set[tuple[str, str]], *,
                           negatives: int) -> tuple[int, int, list[str]]:
        """(rank of the positive among the rows under BM25, its rank under the static model or -1 without
        one, the best-ranked rows that are not it: BM25's and the static model's in turn). Rows of `keys`
        (the positive's definition, and the other definitions the same commit changed) and copies of the
        positive's text are neither competitors nor negatives; negatives come from `negative_rows` alone
        (the rank counts every competitor)."""
        eligible = np.ones(len(self.texts), dtype=bool)
        for key in keys:
            eligible[self.rows_of_key.get(key, [])] = False
        eligible[self.rows_of_text.get(positive, [])] = False
        query_ids = self._ids(query)
        rank, lexical = len(self.texts), []
        if len(query_ids):
            competing = np.where(eligible, self.index.scores(query_ids), -np.inf)
            rank = int(np.sum(competing > self.score_text(query_ids, positive)))
            competing = np.where(self.negative_rows, competing, -np.inf)
            # best first; ties (above all the zero scores) broken by the seeded order
            top = np.lexsort((self.tie_order, -competing))[:negatives]
            lexical = [int(row) for row in top if np.isfinite(competing[row])]
        static_rank, semantic = -1, []
        if self.vectors is not None:
            query_vector = self.static.embed_query(query)
            positive_vector = self.static.embed_documents([positive])[0]
            competing = np.where(eligible, self.vectors @ query_vector, -np.inf)
            static_rank = int(np.sum(competing > float(positive_vector @ query_vector)))
            competing = np.where(self.negative_rows, competing, -np.inf)
            top = np.argsort(-competing, kind="stable")[:negatives]
            semantic = [int(row) for row in top if np.isfinite(competing[row])]
        chosen: list[int] = []
        for row in (r for both in zip(lexical, semantic, strict=False) for r in both):
            if row not in chosen:
                chosen.append(row)
        chosen += [r for r in lexical[len(semantic):] + semantic[len(lexical):] if r not in chosen]
        return rank, static_rank, [self.texts[row] for row in chosen[:negatives]]


# --- mining ----------------------------------------------------------------------------------------------

def code_suffixes() -> tuple[str, ...]:
    return tuple(sorted({suffix for spec in LANGUAGES.values() for suffix in spec.extensions}))


def _code_role(path: str) -> str | None:
    """The role of a file in a chunked language (source, test, ...); None for any other file."""
    return file_role(path) if language_for_path(path) is not None else None


def _definition(chunk: Chunk) -> bool:
    return chunk.kind in DEFINITION_KINDS and bool(chunk.symbol)


def admitted(repository: Repository, name: str, exclusions: set[str], own_code: bool) -> tuple[str, str, str]:
    """(owner/name, licence, licence file) of a repository that may be learnt from; raises MiningRefused
    for one in the exclusion list (or, by its name, a fork of one) and for a licence that is not
    permissive, unless the code is the caller's own."""
    repository_name = name or repository.name()
    if is_excluded(repository_name, exclusions):
        raise MiningRefused(f"{repository_name} is in the exclusion list (a benchmark or evaluation repository "
                            "or, by its name, a fork of one)", repository_name)
    licence, licence_file = repository_licence(repository)
    if not own_code and not is_permissive(licence):
        raise MiningRefused(f"{repository_name}: licence {licence} ({licence_file or 'no licence file'}) is not "
                            "a recognised permissive licence; pass --own for your own code", repository_name)
    return repository_name, licence, licence_file


def mine_repository(directory: Path, *, settings: MineSettings = MineSettings(), exclusions: set[str] = frozenset(),
                    own_code: bool = False, name: str = "", progress: Callable[[str], None] = lambda _m: None
                    ) -> tuple[list[Pair], SourceRecord]:
    """Every kept pair of one repository and its provenance record; raises MiningRefused when the
    repository is excluded or its licence is not permissive (and `own_code` is not set)."""
    started = time.monotonic()
    chunker = FileChunker(IndexSettings())
    with Repository(directory) as repository:
        repository_name, licence, licence_file = admitted(repository, name, exclusions, own_code)
        record = SourceRecord(repository_name, repository.head, licence, licence_file)

        # every chunk twice: as the engine indexes it (commit positives are compared with these), and with
        # its docstring removed (docstring positives are; else "has no docstring" would mark the positive)
        full_texts: list[str] = []
        stripped_texts: list[str] = []
        keys: list[tuple[str, str]] = []
        definitions: list[bool] = []
        docstring_pairs: list[tuple[str, str, Chunk]] = []
        test_texts: list[str] = []
        for path in repository.files(repository.head):
            role = _code_role(path)
            if settings.test_negatives and role == "test":
                content = repository.read(repository.head, path, max_bytes=settings.max_file_bytes)
                test_texts += [chunk.embed_text for chunk in chunker.chunk(path, content or "")]
                continue
            if role != "source":
                continue
            content = repository.read(repository.head, path, max_bytes=settings.max_file_bytes)
            if content is None:
                continue
            for chunk in chunker.chunk(path, content):
                definitions.append(_definition(chunk))
                split = split_docstring(chunk) if definitions[-1] else None
                stripped = replace(chunk, text=split[1]).embed_text if split else chunk.embed_text
                full_texts.append(chunk.embed_text)
                stripped_texts.append(stripped)
                keys.append((path, chunk.symbol))
                record.languages[chunk.language] = record.languages.get(chunk.language, 0) + 1
                if split and len(re.findall(r"[A-Za-z]{2,}", split[0])) >= settings.min_query_words + 1:
                    docstring_pairs.append((split[0][: settings.max_query_chars], stripped, chunk))
        record.chunks = len(full_texts)
        progress(f"{repository_name}: {len(full_texts)} chunks, {len(docstring_pairs)} documented definitions")
        static = static_ranker(settings.static_model)
        stripped_corpus = Corpus(stripped_texts, keys, seed=settings.seed, static=static, definitions=definitions)
        full_corpus = Corpus(full_texts, keys, seed=settings.seed, static=static, definitions=definitions)
        tests = Corpus(test_texts, [("", "")] * len(test_texts), seed=settings.seed) if test_texts else None

        def test_chunks(query: str, chunk: Chunk) -> list[str]:
            """The tests that best match the query and the positive's name (given twice: it is what a test
            of the positive calls); they go first, so that a trainer reading the first few negatives sees them."""
            if tests is None:
                return []
            name = re.split(r"[.:#]", chunk.symbol)[-1] if chunk.symbol else ""
            return tests.best_matches(f"{query} {name} {name}", settings.test_negatives)

        pairs: list[Pair] = []
        for query, body, chunk in docstring_pairs:
            rank, static_rank, negatives = stripped_corpus.rank_and_negatives(
                query, body, {(chunk.path, chunk.symbol)}, negatives=settings.hard_negatives)
            if not _consistent(rank, static_rank, settings) or not negatives:
                record.dropped_by_consistency += 1
                continue
            found = test_chunks(query, chunk)
            pairs.append(Pair(query, body, found + negatives, "docstring", repository_name, chunk.path, chunk.symbol,
                              chunk.language, repository.head, rank, static_rank, test_negatives=len(found)))
        record.docstring_pairs = len(pairs)

        suffixes = code_suffixes()
        for change in repository.history(max_commits=settings.max_commits, suffixes=suffixes):
            record.commits_read += 1
            query = commit_query(change, settings)
            if query is None:
                continue
            code_files = {p: spans for p, spans in change.changed.items() if _code_role(p) == "source"}
            if not code_files or len(code_files) > settings.max_files_per_commit:
                continue
            touched: list[Chunk] = []
            parent_keys: set[tuple[str, str]] = set()
            for path, spans in code_files.items():
                content = repository.read(change.parent, path, max_bytes=settings.max_file_bytes)
                if content is None:
                    continue
                for chunk in chunker.chunk(path, content):
                    parent_keys.add((chunk.path, chunk.symbol))
                    if _definition(chunk) and any(_overlaps(chunk, span) for span in spans):
                        touched.append(chunk)
            touched_keys = {(c.path, c.symbol) for c in touched}
            if not touched or len(touched_keys) > settings.max_definitions_per_commit:
                continue
            record.commits_kept += 1
            # negatives come from the head, where what this commit *added* exists: the best match for its
            # message, it is neither a negative nor a competitor of what it changed (nor is anything it changed)
            not_negatives = touched_keys | added_definitions(repository, chunker, change, code_files, parent_keys,
                                                             settings)
            for chunk in touched:
                rank, static_rank, negatives = full_corpus.rank_and_negatives(
                    query, chunk.embed_text, not_negatives, negatives=settings.hard_negatives)
                if not _consistent(rank, static_rank, settings) or not negatives:
                    record.dropped_by_consistency += 1
                    continue
                found = test_chunks(query, chunk)
                pairs.append(Pair(query, chunk.embed_text, found + negatives, "commit", repository_name, chunk.path,
                                  chunk.symbol, chunk.language, change.parent, rank, static_rank,
                                  test_negatives=len(found)))
        record.commit_pairs = len(pairs) - record.docstring_pairs
    if len(pairs) > settings.max_pairs_per_repository:
        pairs = random.Random(settings.seed).sample(pairs, settings.max_pairs_per_repository)
    record.seconds = round(time.monotonic() - started, 1)
    progress(f"{repository_name}: {record.docstring_pairs} docstring + {record.commit_pairs} commit pairs kept "
             f"({record.commits_kept} of {record.commits_read} commits, {record.dropped_by_consistency} dropped by "
             f"consistency) in {record.seconds} s")
    return pairs, record


def added_definitions(repository: Repository, chunker: FileChunker, change: CommitChange, code_files: Iterable[str],
                      parent_keys: set[tuple[str, str]], settings: MineSettings) -> set[tuple[str, str]]:
    """(path, symbol) of the definitions the commit added: in its changed code files as it left them and
    not among `parent_keys`, the (path, symbol) of those files' chunks at its parent."""
    added: set[tuple[str, str]] = set()
    for path in code_files:
        content = repository.read(change.sha, path, max_bytes=settings.max_file_bytes)
        if content is not None:
            added |= {(chunk.path, chunk.symbol) for chunk in chunker.chunk(path, content) if _definition(chunk)}
    return added - parent_keys


def static_ranker(name: str):
    """The static model of the second ranking (numpy, bundled: no download), or None for BM25 alone."""
    if not name:
        return None
    from noul_lsp.models.registry import resolve_embedder
    from noul_lsp.models.static import StaticEmbedder, StaticSpec
    from noul_lsp.store import cache_root

    spec = resolve_embedder(name, cache_root())
    if not isinstance(spec, StaticSpec):
        raise MiningRefused(f"{name} is not a static model (the miner ranks with one, not a transformer)")
    return StaticEmbedder(spec)


def _consistent(bm25_rank: int, static_rank: int, settings: MineSettings) -> bool:
    """The positive is among the repository's best chunks for its text under either ranking."""
    return bm25_rank < settings.consistency_top or 0 <= static_rank < settings.consistency_top


def _overlaps(chunk: Chunk, span: tuple[int, int]) -> bool:
    """Whether the change touches the chunk; an insertion (first = last + 1) counts only strictly inside."""
    first, last = span
    return chunk.start_line <= last and chunk.end_line >= first


def mine(directories: Sequence[Path], out: Path, *, settings: MineSettings = MineSettings(),
         exclusions: set[str] = frozenset(), own_code: bool = False,
         progress: Callable[[str], None] = lambda _m: None) -> dict:
    """Mine each repository into out/repositories/<owner--name>.jsonl; out/sources.json (rewritten
    atomically after each repository) records every repository mined there so far, and only those are
    read back by `read_pairs`. A later run adds repositories; a re-mined one is replaced, a refused one
    removed; one that cannot be read is listed under "failed" and the others go on."""
    out = Path(out)
    (out / "repositories").mkdir(parents=True, exist_ok=True)
    sources_path = out / "sources.json"
    sources = {"repositories": {}, "refused": {}, "failed": {}}
    if sources_path.is_file():
        try:
            sources |= json.loads(sources_path.read_text())
        except ValueError as error:
            raise MiningRefused(f"{sources_path} is unreadable ({error}); mine into a new --out folder") from error
    for directory in directories:
        try:
            pairs, record = mine_repository(Path(directory), settings=settings, exclusions=exclusions,
                                            own_code=own_code, progress=progress)
        except MiningRefused as refusal:
            progress(f"refused: {refusal}")
            sources["refused"][str(directory)] = str(refusal)
            if refusal.repository:  # mined before under other rules: its pairs must not be trained on
                pairs_file(out, refusal.repository).unlink(missing_ok=True)
                sources["repositories"].pop(refusal.repository, None)
        except (GitError, OSError) as error:
            progress(f"failed: {error}")
            sources["failed"][str(directory)] = str(error)
        else:
            target = pairs_file(out, record.repository)
            temporary = target.with_suffix(".tmp")
            with temporary.open("w") as handle:
                for pair in pairs:
                    handle.write(json.dumps(asdict(pair)) + "\n")
            temporary.replace(target)
            sources["repositories"][record.repository] = asdict(record) | {"pairs_kept": len(pairs)}
            sources["refused"].pop(str(directory), None)
            sources["failed"].pop(str(directory), None)
        _write_sources(sources_path, sources, settings)
    return sources


def _write_sources(path: Path, sources: dict, settings: MineSettings) -> None:
    sources["settings"] = asdict(settings)
    repositories = sources["repositories"].values()
    sources["totals"] = {"repositories": len(sources["repositories"]),
                         "pairs": sum(r["pairs_kept"] for r in repositories),
                         "docstring_pairs": sum(r["docstring_pairs"] for r in repositories),
                         "commit_pairs": sum(r["commit_pairs"] for r in repositories)}
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(sources, indent=2) + "\n")
    temporary.replace(path)
