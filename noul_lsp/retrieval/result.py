"""What a find returns: hits with their evidence, the index state it ran on, timings and signals.

These types are the engine's contract with the CLI, the language server and the benchmark; none of them
knows how a hit was ranked.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from noul_lsp.chunking.boilerplate import C_GUARDS, block_closing, is_comment, is_magic_comment


class QueryError(ValueError):
    """The request itself is wrong (empty query, bad mode); the message says how."""


class FindCancelled(Exception):
    pass


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    rank: int
    score: float
    symbol: str
    preview: str
    kind: str
    bm25_rank: int | None = None
    dense_rank: int | None = None
    rerank_score: float | None = None
    probability: float | None = None
    #: in file mode, the line ranges of the file's best chunks (best first)
    ranges: list[tuple[int, int]] = field(default_factory=list)
    root: str = ""
    #: what the file is (roles.ROLES): source, test, docs, ...
    role: str = ""
    #: the score before the cross-encoder re-scored it (reranked hits only)
    rank_score: float | None = None
    #: the hit's rank in the static leg's list (None when it was not in it)
    static_rank: int | None = None
    #: the repository of an organisation hit (its path is inside it); "" for a workspace's own files
    repository: str = ""


@dataclass
class IndexState:
    files: int
    chunks: int
    embedded: int
    pending: int
    stale: bool
    model: str
    device: str
    #: chunks the static leg covers (all of them once indexed; the transformer's share is `embedded`)
    static: int = 0


@dataclass
class FindResult:
    query: str
    hits: list[Hit]
    index: IndexState
    timings: dict[str, float]
    here_probability: float | None = None
    notes: list[str] = field(default_factory=list)
    #: the result-list features P(here) is computed from (the benchmark records them for calibration)
    features: dict[str, float] = field(default_factory=dict)
    #: how the answer was made: the ranking, which reranker ran and on what device, or why it was skipped
    signals: dict[str, str] = field(default_factory=dict)
    #: the embedder+reranker pair the answer was made with (calibration files are per pair)
    pair: str = ""
    #: the ranking stage's candidates, for `noul rank-fit` (the benchmark records them): feature names,
    #: then per candidate file its path and feature row
    rank_candidates: dict = field(default_factory=dict)
    #: the organisation hits' files, (repository, path) -> lines, rebuilt from the chunks the store returned
    #: for the search (an answer's code comes from them: no second read, no file on this machine)
    organisation_files: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def report(self) -> dict:
        """The agent report printed by `noul find --json`."""
        files: dict[str, list[list[int]]] = {}
        for hit in self.hits:
            files.setdefault(f"{hit.repository}:{hit.path}" if hit.repository else hit.path, []).extend([list(r) for r in (hit.ranges or [(hit.start_line, hit.end_line)])])
        return {
            "query": self.query,
            "hereProbability": self.here_probability,
            "files": files,
            "results": [
                {**({"repository": h.repository} if h.repository else {}), "path": h.path, "startLine": h.start_line, "endLine": h.end_line, "rank": h.rank,
                 "score": round(h.score, 6), "probability": h.probability, "symbol": h.symbol, "kind": h.kind,
                 "role": h.role, "preview": h.preview,
                 "signals": {k: v for k, v in (("bm25Rank", h.bm25_rank), ("denseRank", h.dense_rank),
                                               ("staticRank", h.static_rank), ("rerankScore", h.rerank_score), ("role", h.role or None))
                             if v is not None}}
                for h in self.hits
            ],
            "index": asdict(self.index),
            "timings": {stage: round(ms, 2) for stage, ms in self.timings.items()},
            "signals": self.signals,
            "notes": self.notes,
        }


#: lines that say nothing on their own: decorators, Rust's attributes, Haskell's pragmas, lone quotes, brackets,
#: comment fences; a YAML document's `---`, a Go template's `{{- end }}`, `{{- else }}` and comment fences
#: (`{{/*`, `*/}}`: helm-charts' previews were `{{- end }} / {{- end }}`)
_EMPTY_LINE = re.compile(r"^(@.*|#!?\[.*\]|\{-#.*#-\}|[\"'`]{3}|[(){}\[\];,:]+|/\*+|\*+/?|\*|#+|//+|<!--|-->|\)\s*(->.*)?:?"
                         r"|<\?php|\?>|declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;"
                         r"|-{3}|\{\{-?\s*(?:end|else)\s*-?\}\}|\{\{-?\s*/\*|\*/\s*-?\}\}"
                         # a C header's guard and linkage (FreeRTOS' headers' hits showed `#ifndef __SECURE_INIT_H__`)
                         rf"|{C_GUARDS}"
                         # a shader's preamble: every Godot sprite shader's preview was `shader_type canvas_item;` /
                         # `render_mode blend_mix;`, GLSL's `#version 330 core` / `precision mediump float;`
                         r"|(?:shader_type|render_mode)\s[\w\s,]*;|#version\s.*|precision\s+\w+\s+\w+\s*;"
                         # an XML file's prolog and a property list's frame: every Info.plist and entitlements hit
                         # previewed `<?xml version="1.0" ...?>` / `<!DOCTYPE plist ...>`
                         r"|<\?xml\s[^>]*\?>|<!DOCTYPE\s[^>]*>|</?(?:plist|dict|array|resources)\b[^>]*>"
                         # a script's interpreter line and its shell options: 8 of a dotfiles repository's 15 `bin/`
                         # scripts previewed `#!/bin/sh` / `set -e`, siblings told apart by their paths alone
                         r"|#!\s*/.*|set(?:\s+[-+][A-Za-z]+(?:\s+pipefail)?|\s+[-+]o\s+\w+)+"
                         # Unity's serialisation frame: a scene's and a prefab's hits previewed `%YAML 1.1` / `%TAG !u!
                         # tag:unity3d.com,2011:`, then `m_ObjectHideFlags: 0`
                         r"|%(?:YAML|TAG)\s.*|--- !u!\d+ &-?\d+(?: stripped)?"
                         r"|(?:m_ObjectHideFlags|serializedVersion):\s*\d+|m_(?:PrefabParentObject|PrefabInternal"
                         r"|CorrespondingSourceObject|PrefabInstance|PrefabAsset):\s*\{.*\})$")
#: annotations opening a line (`@JvmStatic`, `@objc`, `@Deprecated("x")`), each with its arguments when they close
#: on the line
_ANNOTATIONS = re.compile(r"^(?:@[\w.]+(?:\([^()\n]*\))?\s*)+")
#: what follows annotations when it is a declaration: a keyword of one (or a modifier) and more
_DECLARED = re.compile(r"(?:public|private|protected|internal|open|final|static|abstract|override|async|export|"
                       r"fun|func|def|class|struct|enum|interface|object|void|var|val|let|const|function|init|"
                       r"suspend|inline|data|sealed|actor|extension|protocol|mutating|convenience|required|"
                       r"synchronized|default|native)\b|[A-Z][\w.]*(?:<[^<>\n]*>)?\s+\w+\s*\(")
_DOCSTRING_FENCE = re.compile(r"^[rbuRBU]?[\"']{3}|[\"']{3}$")


#: a comment line's markers, stripped to read its words (Haddock's `-- |` and `-- ^`, Sphinx's `#:` too)
_COMMENT_MARKS = re.compile(r"^(?:/\*+!?|\{-|--\[\[|\*+/?|//+!?|#+:?|--+)\s*[|^]?\s*|\s*(?:\*+/|-\}|\]\])$")
#: a comment that is an instruction to a tool, or a note, not a summary: `//go:build`, `//nolint:gosec`,
#: `eslint-disable`, `# noqa`, `# type: ignore`, `# pylint: disable`, `@ts-ignore`, `TODO`
_NOT_A_SUMMARY = re.compile(r"^(?:[\w.-]+:\S|nolint|noqa|eslint-|pylint:|mypy:|type:\s*ignore|@ts-|istanbul\b|"
                            r"prettier-ignore|clang-format|(?:TODO|FIXME|XXX|HACK)\b)", re.IGNORECASE)
#: the most lines a signature spread over lines is read to (a call left open in a window is no signature)
_SIGNATURE_LINES = 30
#: Haskell's pragma and Rust's attribute lines: nothing of their own above a doc comment
_PRAGMA = re.compile(r"^(?:\{-#.*#-\}|#!?\[.*\])$")
#: a language whose definitions carry their summary inside, after the signature: its docstring is read as it was
_DOCSTRINGS = frozenset({"python"})


def preview(text: str, lines: int = 2, *, language: str = "") -> str:
    """The first meaningful lines of a chunk: its signature (a signature spread over several lines joined
    into one), then the first line of its docstring or body (decorators, lone quotes and brackets skipped,
    docstring quotes stripped). In a `language` that writes its doc comment above the signature, that
    comment's first line is read after it, as a docstring is: 168 of 400 rows of a Go walkthrough showed
    two lines of godoc and no `func` line."""
    if language and lines > 1 and (lead := _signature_then_doc(text, language)) is not None:
        return lead
    shown: list[str] = []
    pending = ""  # a line whose brackets are still open
    depth = joined = 0  # the brackets still open in it, and the lines joined to it
    skipping = 0  # brackets still open in a skipped decorator
    for line in text.split("\n"):
        stripped = line.strip()
        if skipping > 0:
            skipping += stripped.count("(") - stripped.count(")")
            continue
        if pending:  # a signature's lines are read to its last, however long (a Rust signature with
            # lifetimes passed 200 characters, and its seventh parameter was shown as the body's first line)
            depth += stripped.count("(") - stripped.count(")")
            if len(pending) <= 200:
                pending = f"{pending} {stripped}".replace("( ", "(").replace(" )", ")")
            joined += 1
            if depth <= 0 or joined > _SIGNATURE_LINES:
                shown.append(pending[:160])
                pending = ""
            if len(shown) == lines:
                break
            continue
        if stripped.startswith("@"):  # a decorator or annotation: the rest of its line may be the signature
            rest = _ANNOTATIONS.sub("", stripped)  # (`@JvmStatic public fun classBuilder(...)`)
            # annotations only, arguments going on below, a comment after them, or a tag (`@param name`)
            if not _DECLARED.match(rest):
                skipping = stripped.count("(") - stripped.count(")")
                continue
            stripped = rest
        if not stripped or _EMPTY_LINE.match(stripped):
            continue
        cleaned = _DOCSTRING_FENCE.sub("", stripped).strip()
        if not cleaned or _EMPTY_LINE.match(cleaned):
            continue
        # a signature whose parameters go on below; not a call whose last argument opens a block there
        # (jQuery's `$(function () {` closes at the file's end: its body was joined into one line)
        if cleaned.count("(") > cleaned.count(")") and not cleaned.endswith(("{", "=>", "[")):
            pending, depth, joined = cleaned, cleaned.count("(") - cleaned.count(")"), 0
            continue
        shown.append(cleaned[:160])
        if len(shown) == lines:
            break
    if pending and len(shown) < lines:
        shown.append(pending[:160])
    return "\n".join(shown)


def _signature_then_doc(text: str, language: str) -> str | None:
    """A chunk that opens with a comment: the signature below it, then the first line of words of the
    comment block right above it (a blank line ends a block: a `//go:build` line or a licence above is no
    doc), or the code's own preview when the comment says nothing of it (a directive, a rule, a licence);
    None when it opens with no comment or nothing follows it. A comment is one in the language's own marks
    (`boilerplate.is_comment`: C's `# define` is code). In Python a docstring below the signature is the
    summary, when there is one."""
    rows = text.split("\n")
    doc, closing, opened = "", None, False
    for index, line in enumerate(rows):
        stripped = line.strip()
        if not stripped:
            doc = doc if closing else ""  # only the block touching the signature is its doc
            continue
        if not opened and _PRAGMA.match(stripped):
            continue  # a pragma or an attribute above the comment (`{-# INLINE f #-}`)
        if closing or is_comment(stripped, language):
            opened = True
            closing = (None if closing in stripped else closing) if closing else block_closing(stripped, language)
            words = _COMMENT_MARKS.sub("", stripped).strip(" \t=-*_#~")  # a rule's `=====` is no word
            if not doc and re.search(r"[^\W\d_]", words) and not words.startswith("@") and not is_magic_comment(line) \
                    and not _NOT_A_SUMMARY.match(words) and not _EMPTY_LINE.match(words):
                doc = words
            continue
        if not opened:
            return None
        code = "\n".join(rows[index:])
        if not doc or (language in _DOCSTRINGS and _opens_with_a_docstring(code)):
            return preview(code) or None  # a directive, a licence or a rule above says nothing of it
        signature = preview(code, lines=1)
        return f"{signature}\n{doc[:160]}" if signature else None
    return None


def _opens_with_a_docstring(code: str) -> bool:
    """Whether a Python definition's body opens with a docstring (below its signature's lines)."""
    body = code.split(":\n", 1)
    return len(body) == 2 and _DOCSTRING_FENCE.match(body[1].lstrip()) is not None
