"""The aggregation stage: chunk scores into a ranked list of files (or chunks), then hits with previews.

`Scored` is the shape every stage after fusion hands on: (score, chunk keys best first) per file in file
mode, per chunk in chunk mode, best first. Without a fitted ranker a file scores the weighted sum of its
best chunks' fused scores (`file_chunk_weights`); with one, the ranking stage scores files itself.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence

from noul_lsp.chunking.boilerplate import block_closing, is_comment
from noul_lsp.chunking.languages import LANGUAGES
from noul_lsp.chunking.sections import SECTIONS_PREFIX
from noul_lsp.chunking.text import front_matter_end
from noul_lsp.retrieval.fusion import Key
from noul_lsp.retrieval.result import Hit, preview
from noul_lsp.retrieval.retrieve import Candidates
from noul_lsp.retrieval.roles import ROLES
from noul_lsp.retrieval.symbols import defined_name
from noul_lsp.store import ChunkRecord

Scored = list[tuple[float, list[Key]]]


def aggregate(order: list[Key], chunk_scores: dict[Key, float], candidates: list[Candidates], mode: str,
              weights: Sequence[float]) -> Scored:
    """Files scored by a weighted sum of their best chunks' scores (file mode), or the chunks themselves."""
    if mode != "files":
        return [(chunk_scores[key], [key]) for key in order]
    groups: dict[tuple[int, int], list[Key]] = {}
    for key in order:
        index, row = key
        groups.setdefault((index, int(candidates[index].arrays.row_file[row])), []).append(key)
    return sorted(((sum(w * chunk_scores[k] for w, k in zip(weights, keys, strict=False)), keys)
                   for keys in groups.values()), key=lambda item: -item[0])


def file_order(ranking: list[Key], candidates: list[Candidates]) -> list[str]:
    """Distinct files of a chunk ranking, in order."""
    files = (f"{i}:{candidates[i].arrays.row_file[row]}" for i, row in ranking)
    return list(dict.fromkeys(files))


def build_hits(scored: Scored, candidates: list[Candidates], *, limit: int, bm25_rank: dict[Key, int],
               dense_rank: dict[Key, int], logits: dict[Key, float],
               before_rerank: dict[Key, float] | None = None, static_rank: dict[Key, int] | None = None,
               per_file: bool = True, moved: dict[str, list[str]] | None = None,
               at_definition: bool = False, names: frozenset[str] = frozenset(),
               wants_tests: bool = True, frame_lines: tuple[tuple[str, int, str], ...] = ()) -> list[Hit]:
    """The first `limit` entries as hits: location of the best chunk, the ranges of the best three, the
    file's role, the score before the cross-encoder (`before_rerank`, by chunk) and a preview read back
    from the store. A file gone from disk since it was indexed (a checkout the index has not caught up
    with) is left out, and one changed on disk kept: each is listed in `moved` ("gone", "changed").
    `at_definition` (a bare name asked): a file's hit opens where its best chunk's definition starts, the
    first of that definition's parts among the file's chunks (the same symbol and kind: a Rust `impl X` is
    not a part of `struct X`), not the later part that names it most; a hit in a window of module-level
    code (no symbol: `settings.py`'s constants) opens at the line that assigns one of the query's `names`
    (`PING_BODY_LIMIT = 100_000` on the window's 38th line), which it then names. Unless the query
    `wants_tests`, a source file's hit opens at its best chunk outside its test module (Rust's `mod tests`):
    just's in-file test modules were the first chunk of five of forty questions, the code they test second.
    A file a pasted trace's frame names (`frame_lines`) opens at its ranked chunk that holds the frame's line
    and defines its function: a Kotlin trace through `NiaApp.kt:227` opened `NiaApp.kt` at 135-184, its best
    chunk by words. The function is the check that the trace's lines are this code's: an issue's traceback
    names the lines of the version its reporter ran (opened at its lines alone, SWE-bench Verified's located@5
    fell 0.403 -> 0.374; with the check, four dev lists opened onto their fix and five off it)."""
    before_rerank = before_rerank or {}
    hits: list[tuple[Key, Hit, Key | None]] = []  # (the scoring chunk, its hit, a definition beside imports)
    shown: set[tuple] = set()
    for score, keys in scored:
        if len(hits) == limit:
            break
        scoring = keys[0]  # the chunk whose evidence the hit reports (its ranks and scores)
        index, row = scoring
        arrays = candidates[index].arrays
        if per_file and len(keys) > 1:  # the location may move; the evidence stays the scoring chunk's
            opening = _opening(keys, arrays, at_definition=at_definition, wants_tests=wants_tests, names=names)
            traced = _traced_lines(arrays.files[int(arrays.row_file[row])], frame_lines) if frame_lines else ()
            opening = next((key for key in keys if _holds_frame(arrays.chunk(key[1]), traced)), opening)
            keys = [opening, *(k for k in keys if k != opening)]
        best = arrays.chunk(keys[0][1])
        # roots nested in one another (a repository opened with one of its packages) index a file twice: it
        # is shown once (a chunk once, in chunk mode), where it ranks best; each root may pick another best chunk
        absolute = os.path.join(str(candidates[index].root.root), best.path)
        place = (absolute,) if per_file else (absolute, best.start_line, best.end_line)
        if place in shown:
            continue
        shown.add(place)
        if moved is not None and (state := candidates[index].root.disk_state(best.path)):
            if best.path not in moved[state]:  # (chunk mode: a file once)
                moved[state].append(best.path)
            if state == "gone":
                continue
        rank = len(hits) + 1
        ranges = [(c.start_line, c.end_line) for c in (arrays.chunk(r) for _, r in keys[:3])]
        hit = Hit(best.path, best.start_line, best.end_line, rank, score, best.symbol, "", best.kind,
                  bm25_rank=bm25_rank.get(scoring), dense_rank=dense_rank.get(scoring),
                  rerank_score=logits.get(scoring), ranges=ranges, root=str(candidates[index].root.root),
                  role=ROLES[int(arrays.symbols.roles[arrays.row_file[row]])],
                  rank_score=before_rerank.get(scoring),
                  static_rank=(static_rank or {}).get(scoring))
        # a file's head of imports is no place to open it at when the file has a definition that matched too
        # (9 of 10 hits for "tests for the Caddyfile lexer" opened at `package caddyfile / import "testing"`)
        beside = keys[1] if per_file and not at_definition and best.kind == "module" and len(keys) > 1 \
            and arrays.chunk(keys[1][1]).kind != "module" else None
        hits.append((keys[0], hit, beside))
    records = chunk_records(candidates, [key for key, _, _ in hits] + [b for _, _, b in hits if b is not None])
    for key, hit, beside in hits:
        record = records.get(key)
        if record is not None and beside in records and _imports_only(record.text, record.language):
            record = records[beside]
            hit.start_line, hit.end_line, hit.symbol, hit.kind = (record.start_line, record.end_line,
                                                                  record.symbol, record.kind)
        hit.preview = record_preview(record) if record is not None else ""
        if at_definition and record is not None and not hit.symbol \
                and not names.isdisjoint(name.lower() for name in record.names):
            _open_at_assignment(hit, record, names)
    return [hit for _, hit, _ in hits]


def _opening(keys: list[Key], arrays, *, at_definition: bool, wants_tests: bool,
             names: frozenset[str] = frozenset()) -> Key:
    """The chunk of a file's ranked `keys` where its hit opens: for a bare name (`at_definition`), the chunk
    that defines one of the query's `names` inside it (a window of a long definition: tigerbeetle's
    `post_or_void_pending_transfer` is one of `StateMachineType`'s 126 functions, and the hit opened at a window
    that calls it) or else the first part of the best chunk's definition; the best chunk outside a test module
    unless tests are asked for."""
    best = arrays.chunk(keys[0][1])
    opening = keys[0]
    defining = arrays.symbols.rows_defining(names) if at_definition and names else ()
    held = next((key for key in keys if key[1] in defining), None) if len(defining) else None
    if held is not None and held != keys[0]:  # the best chunk does not define it, another of the file's does
        opening = held
    # its own definition's first part, not where a window of a long definition holds it among others
    elif at_definition and best.symbol and (held is None or defined_name(best.symbol) in names):
        parts = [(chunk.start_line, key) for key, chunk in ((k, arrays.chunk(k[1])) for k in keys[1:])
                 if chunk.symbol == best.symbol and chunk.kind == best.kind and chunk.start_line < best.start_line]
        opening = min(parts)[1] if parts else opening
    if not wants_tests and _in_test_module(arrays.chunk(opening[1]).symbol):
        opening = next((k for k in keys if not _in_test_module(arrays.chunk(k[1]).symbol)), opening)
    return opening


def _traced_lines(path: str, frame_lines: tuple[tuple[str, int, str], ...]) -> list[tuple[int, str]]:
    """(line, function) of a trace's frames in a workspace's file: those whose path ends as the file's does, by
    the last two parts where the frame names a folder (`site-packages/requests/sessions.py` is
    `src/requests/sessions.py`), by the name where it names none (a JVM frame's `NiaApp.kt`)."""
    parts = path.lower().split("/")
    found = []
    for frame_path, line, function in frame_lines:
        frame_parts = frame_path.split("/")
        tail = min(2, len(frame_parts))
        if parts[-tail:] == frame_parts[-tail:]:
            found.append((line, function))
    return found


def _holds_frame(chunk, traced: list[tuple[int, str]]) -> bool:
    """Whether a chunk holds a frame's line and is its function's (its symbol's last part)."""
    defined = re.split(r"\.|::", chunk.symbol)[-1].lower() if chunk.symbol else ""
    return any(chunk.start_line <= line <= chunk.end_line and function == defined for line, function in traced)


def _in_test_module(symbol: str) -> bool:
    """Whether a chunk is a source file's module of tests or inside one (Rust's `#[cfg(test)] mod tests`)."""
    return symbol == "tests" or symbol.startswith(("tests.", "test."))


#: a statement of a file's head that names what it uses, not what it does: a package clause, an import,
#: an include, a `require`, a `use`, a namespace, a strict-mode string
_HEAD_STATEMENT = re.compile(
    r"(?:package\s+[\w.]+;?|import\b.*|from\s+\S+\s+import\b.*|using\s+[\w.]+;|#\s*(?:include|import)\b.*"
    r"|use\s+.*;?|extern\s+crate\s+.*|namespace\s+[\w\\.]+;|<\?php|require(?:_relative)?\b.*"
    r"|(?:const|let|var|local)\s+[\w{}\s,]+=\s*require\s*\(.*|[\"']use strict[\"'];?"
    # Haskell's module head: its pragmas and its `module X (exports) where` (PostgREST's `RangeQuery.hs:1-32`,
    # Haddock, exports and imports, opened the file above `rangeParse`, the definition that matched)
    r"|\{-#.*#-\}|module\s+[\w.]+\s*(?:\(.*|where)?)\s*")
#: the line that opens a group of imports spread over lines (`import (`, `from x import (`, `import {`,
#: `use a::{`), and the lines that close one
_GROUP_OPEN = re.compile(r".*(?:\(|\{)\s*$")
_GROUP_CLOSE = re.compile(r"[)}]\s*(?:from\s+.*|where)?;?\s*")


def _imports_only(text: str, language: str) -> bool:
    """Whether a chunk is a file's head of imports alone: comments (in `language`'s marks), blank lines, a
    module docstring before the first statement, `_HEAD_STATEMENT`s, and the lines of an import group those
    open."""
    grouped, stated, fence, closing = False, False, "", None
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:  # inside the module's docstring
            fence = "" if fence in stripped else fence
            continue
        if closing:  # inside a block comment
            closing = None if closing in stripped else closing
            continue
        if grouped:
            grouped = not _GROUP_CLOSE.fullmatch(stripped)
            continue
        if not stripped or is_comment(stripped, language):
            closing = block_closing(stripped, language) if stripped else None
            continue
        if not stated and (opened := _DOCSTRING_OPEN.match(stripped)):
            quotes = opened.group(0)[-3:]
            fence = quotes if stripped[opened.end():].count(quotes) == 0 else ""
            stated = True
            continue
        if not _HEAD_STATEMENT.fullmatch(stripped):
            return False
        stated = True
        grouped = _GROUP_OPEN.match(stripped) is not None and not stripped.startswith(("#", "<"))
    return True


#: a docstring's opening quotes (`"""`, `r"""`, `'''`)
_DOCSTRING_OPEN = re.compile(r"[rbuRBU]?(?:\"\"\"|''')")


@functools.lru_cache(maxsize=64)
def _assignment(names: frozenset[str]) -> re.Pattern[str]:
    """A line that assigns or defines one of `names` (any case) at its start, after keywords or a type:
    `PING_BODY_LIMIT = ...`, `export const X: T = ...`, `static final int X = ...`, `X := ...`, `#define X`."""
    spelled = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"^(?P<indent>[ \t]*)(?!(?:if|elif|while|for|with|case|return|assert|not)\b)"
                      rf"(?:#[ \t]*define[ \t]+(?:{spelled})\b|(?:[\w$.&<>\[\], ]+?[ \t])?(?:{spelled})"
                      rf"[ \t]*(?::[ \t]*[\w.\[\], |]+?[ \t]*)?:?=(?![=>]))", re.IGNORECASE | re.ASCII | re.MULTILINE)


def _open_at_assignment(hit: Hit, record: ChunkRecord, names: frozenset[str]) -> None:
    """Moves a symbol-less hit to the first line of its chunk that assigns a name the query asked for, at the
    module's level first (an indented `TIMEOUT=5,` is more often a call's keyword than a `var ( ... )` block's)."""
    found = None
    for match in _assignment(names).finditer(record.text):
        if not match.group("indent"):
            found = match
            break
        found = found or match
    if found is None:
        return
    line = hit.start_line + record.text.count("\n", 0, found.start())
    if line > hit.end_line:
        return
    named = next((n for n in re.findall(r"[\w$]+", found.group(0)) if n.lower() in names), None)
    if named is None:
        return
    hit.start_line, hit.symbol = line, named
    hit.preview = preview(record.text[found.start():], language=_code_language(record))


def moved_note(moved: dict[str, list[str]]) -> str | None:
    """The note for hits whose files changed on disk since they were indexed; None when none did."""
    parts = []
    if moved["gone"]:
        parts.append(f"{len(moved['gone'])} left out: gone from disk ({', '.join(moved['gone'][:3])}"
                     f"{', ...' if len(moved['gone']) > 3 else ''})")
    if moved["changed"]:
        parts.append(f"{len(moved['changed'])} changed on disk since, their lines may be off "
                     f"({', '.join(moved['changed'][:3])}{', ...' if len(moved['changed']) > 3 else ''})")
    if not parts:
        return None
    return "the index is catching up with files changed on disk: of the files found, " + "; ".join(parts)


#: the marker the chunker gives each window of a definition too long for one chunk (chunking/code.py)
_PART = re.compile(r"\(part (\d+) of \d+\)$")


def _without_front_matter(record: ChunkRecord) -> str:
    """A Markdown page's first chunk's text after its YAML front matter (`---` / `id: ...` / `title: ...` /
    `---`), whose title the chunk's symbol already shows: the preview was `---` and `id: ...`. A later
    window opening on a `---` rule is no front matter."""
    lines = record.text.split("\n")
    end = front_matter_end(lines) if record.start_line == 1 else None
    return record.text if end is None else "\n".join(lines[end + 1:])


def _code_language(record: ChunkRecord) -> str:
    """The record's language when it is code (its comments are read as such), else "" (a Markdown bullet's
    `*` is no comment)."""
    return record.language if record.language in LANGUAGES else ""


def record_preview(record: ChunkRecord) -> str:
    """A chunk's preview (`result.preview`). A later window of a long definition starts in its middle: its
    preview leads with the definition's signature and part, from the header every window carries (its last
    line but the section titles', chunking.sections)."""
    line = next((line for line in reversed(record.header.split("\n")) if not line.startswith(SECTIONS_PREFIX)), "")
    part = _PART.search(line)
    if part is None or part.group(1) == "1":
        # a definition's doc comment is read after its signature; a module window's comment is its summary
        return preview(_without_front_matter(record) if record.language == "markdown" else record.text,
                       language=_code_language(record) if record.kind != "module" else "")
    # a long signature is cut before its part, never the part: without it two windows read as one hit twice
    signature = line[: part.start()].rstrip()
    room = 160 - len(part.group(0)) - 1
    signature = signature if len(signature) <= room else signature[: room - 1].rstrip() + "…"
    return f"{signature} {part.group(0)}\n{preview(record.text, lines=1)}"


def chunk_records(candidates: list[Candidates], keys: list[Key]) -> dict[Key, ChunkRecord]:
    """The stored chunks (text and header) of `keys`, read back from each root (a workspace's store: texts
    are not kept in memory)."""
    found: dict[Key, ChunkRecord] = {}
    for index, candidate in enumerate(candidates):
        mine = {candidate.arrays.key(row): (i, row) for i, row in keys if i == index}
        if mine:
            found.update((mine[record.key], record) for record in candidate.root.chunk_records(mine))
    return found
