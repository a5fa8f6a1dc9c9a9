"""The answer for a coding agent: the fewest files and line ranges that likely hold what it described,
sized to a token budget.

An agent pays for every token it reads, again on every later turn, so the answer is a set, not a list:
`answer_size` keeps the top files whose inclusion raises the expected F-beta of the returned set against
the files the agent needs (the plug-in estimate Σp / (β²·Σp_all + k) over each file's calibrated
P(answer); the search-subagent metric is F1 of that file set). The token budget then decides how much
of each file comes back, in this order, each step only while it fits: the chosen files with their best
range and symbol, the two-line preview of that range, the file's further ranges, a few runner-up files
(path and probability only), and last the source lines of the ranges, cropped at the budget. Never a
whole file: a range is one indexed chunk.

Tokens are counted approximately, as the characters of the compact JSON answer divided by 4 (what
tokenizers average on code and English), and the answer says so. Nothing here knows MCP; the bench
scores the same answers (`noul bench`: answer F1/F2 and the median tokens of an answer).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from noul_lsp.labels import LOW_HERE, score_is_share
from noul_lsp.retrieval.result import FindResult
from noul_lsp.text.decode import source_text

#: the default size of an answer, in approximate tokens
DEFAULT_TOKEN_BUDGET = 2000
#: the smallest budget that holds one file with its range and the answer's header
MIN_TOKEN_BUDGET = 200
TOKEN_COUNT = "approximate: characters of this JSON / 4"
#: without any probability, files scoring at least this share of the top file's score join the answer
#: (dev labels, fusion scores: F1 equal to the top file alone, F2 higher)
RELATIVE_SCORE = 0.9
#: runner-up files named (path and probability) after the answer, when the budget allows
RUNNERS_UP = 3
#: a range's source is shown only when at least this many of its lines fit
MIN_CODE_LINES = 3
MAX_LINE_CHARS = 200

#: (root, path relative to it) -> the file's lines, or None when it cannot be read
SourceLines = Callable[[str, str], Sequence[str] | None]


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def answer_size(probabilities: Sequence[float | None], scores: Sequence[float], *, beta: float = 1.0) -> int:
    """How many of the ranked files (best first) make the answer: the k that maximises the expected
    F-beta of the top k, Σ_{i≤k} p_i · (1+β²) / (β²·Σ_i p_i + k), when every file has a probability
    (calibrated P(answer), or the fitted ranker's share of the candidates); otherwise every file within
    RELATIVE_SCORE of the top score. At least one file when there is any."""
    if not scores:
        return 0
    if all(p is not None for p in probabilities) and len(probabilities) == len(scores):
        expected = sum(probabilities)
        best, size, running = -1.0, 1, 0.0
        for k, p in enumerate(probabilities, 1):
            running += p
            value = (1 + beta**2) * running / (beta**2 * expected + k)
            if value > best + 1e-12:
                best, size = value, k
        return size
    top = scores[0]
    return max(1, sum(1 for s in scores if top > 0 and s >= RELATIVE_SCORE * top))


@dataclass
class AnswerRange:
    start: int
    end: int
    symbol: str = ""
    preview: str = ""
    #: the range's own lines, when the budget allowed (cropped: `code_end` is the last line shown)
    code: str = ""
    code_end: int = 0

    def to_dict(self, *, with_preview: bool) -> dict:
        found: dict = {"lines": [self.start, self.end]}
        if self.symbol:
            found["symbol"] = self.symbol
        if with_preview and self.preview and not self.code:  # the code starts with what the preview says
            found["preview"] = self.preview
        if self.code:
            found["code"] = self.code
            if self.code_end < self.end:
                found["codeLines"] = [self.start, self.code_end]
        return found


@dataclass
class AnswerFile:
    path: str
    root: str
    role: str
    probability: float | None
    score: float
    ranges: list[AnswerRange] = field(default_factory=list)
    #: the repository of an organisation hit (its path is inside it; it has no root on this machine)
    repository: str = ""


@dataclass
class AgentAnswer:
    query: str
    here_probability: float | None
    files: list[AnswerFile]
    token_budget: int
    #: the whole answer as a JSON-ready dict (what `tokens` counts)
    body: dict
    tokens: int
    #: chosen files left out because the budget could not hold them
    omitted_files: int = 0

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def text(self) -> str:
        return compact_json(self.body)


def compact_json(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _merged(ranges: list[AnswerRange]) -> list[AnswerRange]:
    """Best first, a range overlapping one already kept widens it instead of repeating lines."""
    kept: list[AnswerRange] = []
    for candidate in ranges:
        for earlier in kept:
            if candidate.start <= earlier.end and earlier.start <= candidate.end:
                earlier.start, earlier.end = min(earlier.start, candidate.start), max(earlier.end, candidate.end)
                break
        else:
            kept.append(candidate)
    return kept


def candidate_files(result: FindResult) -> list[AnswerFile]:
    """The result's files best first, each with its ranges best first: a file-mode hit's best chunks,
    or in chunk mode every hit of the file (the file scores its best chunk)."""
    share = score_is_share(result)
    files: dict[tuple[str, str, str], AnswerFile] = {}
    for hit in result.hits:
        probability = hit.probability if hit.probability is not None else (hit.score if share else None)
        key = (hit.root, hit.repository, hit.path)
        found = files.get(key)
        if found is None:
            found = files[key] = AnswerFile(hit.path, hit.root, hit.role, probability, hit.score,
                                            repository=hit.repository)
        elif probability is not None and (found.probability is None or probability > found.probability):
            found.probability = probability
        spans = hit.ranges or [(hit.start_line, hit.end_line)]
        for number, (start, end) in enumerate(spans):
            best = number == 0 and (start, end) == (hit.start_line, hit.end_line)
            found.ranges.append(AnswerRange(start, end, hit.symbol if best else "", hit.preview if best else ""))
    for found in files.values():
        found.ranges = _merged(found.ranges)
    return list(files.values())


@dataclass
class _Shown:
    """How much of a chosen file the answer shows so far."""

    file: AnswerFile
    ranges: int = 1
    preview: bool = False


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


#: below labels.LOW_HERE the answer is "probably not here" (the editors' warning too): its files and ranges
#: come with previews but without their code, which an agent would re-read on every later turn for nothing
#: (P(here) 0.02 came with 1,500 tokens of code: docs/benchmarks.md)
PROBABLY_ABSENT_NOTE = ("P(here) is low: probably not in these roots. The ranges come without their code; "
                        "read one, or ask again with other words, if it is worth it")
#: what the note adds when the answer holds organisation files (their code comes: they cannot be read)
ORGANISATION_CODE_NOTE = " (an organisation file's code comes all the same: it cannot be read otherwise)"


def agent_answer(result: FindResult, token_budget: int = DEFAULT_TOKEN_BUDGET, *, source: SourceLines | None = None,
                 beta: float = 1.0, extra: dict | None = None) -> AgentAnswer:
    """The fewest files and ranges for `result` (see the module docstring), within about `token_budget`
    tokens. `source` reads a file's lines for the code of the ranges (none: previews only; an organisation
    hit's come with the result, `organisation_files`); `extra` is merged into the answer's JSON (and
    counted). The best file with its best range is always there, even when a tiny budget cannot
    hold it. An organisation hit names its `repository` instead of a root."""
    candidates = candidate_files(result)
    size = answer_size([f.probability for f in candidates], [f.score for f in candidates], beta=beta)
    chosen, others = candidates[:size], candidates[size:]
    roots = {f.root for f in chosen if not f.repository}
    single_root = len(roots) == 1
    shown: list[_Shown] = []
    runners_up = 0
    absent = result.here_probability is not None and result.here_probability < LOW_HERE

    def body() -> dict:
        files = []
        for item in shown:
            answer_file = item.file
            entry: dict = {"path": answer_file.path}
            if answer_file.repository:
                entry["repository"] = answer_file.repository
            elif not single_root:
                entry["root"] = answer_file.root
            entry["probability"] = _round(answer_file.probability)
            if answer_file.probability is None:
                entry["scoreOfTop"] = round(answer_file.score / candidates[0].score, 3) if candidates[0].score else None
            entry["role"] = answer_file.role
            entry["ranges"] = [r.to_dict(with_preview=item.preview and i == 0)
                               for i, r in enumerate(answer_file.ranges[:item.ranges])]
            files.append(entry)
        found: dict = {"hereProbability": _round(result.here_probability)}  # not the query: the agent has it
        if single_root:
            found["root"] = next(iter(roots))
        found["files"] = files
        if runners_up:
            found["alsoConsidered"] = [
                {"path": f.path, **({"repository": f.repository} if f.repository else
                                    {"root": f.root} if f.root not in roots or not single_root else {}),
                 "probability": _round(f.probability)} for f in others[:runners_up]]
        if len(shown) < len(chosen):
            found["omittedFiles"] = [f"{f.repository}:{f.path}" if f.repository else f.path for f in chosen[len(shown):]]
        index = result.index
        found["index"] = {"files": index.files, "chunks": index.chunks, "embedded": index.embedded,
                          "pending": index.pending, "stale": index.stale}
        organisation = ORGANISATION_CODE_NOTE if any(item.file.repository for item in shown) else ""
        notes = [*result.notes, *([PROBABLY_ABSENT_NOTE + organisation] if absent else [])]
        if notes:
            found["notes"] = notes
        if extra:
            found.update(extra)
        found["tokens"] = 0
        found["tokenBudget"] = token_budget
        found["tokenCount"] = TOKEN_COUNT
        return found

    def measured() -> tuple[dict, int]:
        found = body()
        tokens = 0
        for _ in range(3):  # the count is part of the text it counts
            found["tokens"] = tokens
            counted = approx_tokens(compact_json(found))
            if counted == tokens:
                break
            tokens = counted
        found["tokens"] = tokens
        return found, tokens

    def fits() -> bool:
        return measured()[1] <= token_budget

    # 1. the chosen files, each with its best range; the first one whatever the budget
    for number, answer_file in enumerate(chosen):
        shown.append(_Shown(answer_file))
        if number and not fits():
            shown.pop()
            break
    # 2. the preview of each file's best range
    for item in shown:
        item.preview = True
        item.preview = fits()
    # 3. the further ranges of each file
    for item in shown:
        while item.ranges < len(item.file.ranges):
            item.ranges += 1
            if not fits():
                item.ranges -= 1
                break
    # 4. the runners-up, by name
    while runners_up < min(RUNNERS_UP, len(others)):
        runners_up += 1
        if not fits():
            runners_up -= 1
            break
    # 5. the code of the shown ranges, best range of every file first, cropped at the budget (none of a file
    # on this machine when the answer is probably not here)
    def lines_of(answer_file: AnswerFile) -> Sequence[str] | None:
        if answer_file.repository:  # whatever P(here) says: the agent has no other way to read it
            return result.organisation_files.get((answer_file.repository, answer_file.path))
        return None if absent or source is None else source(answer_file.root, answer_file.path)

    if source is not None or result.organisation_files:
        texts = {id(item): lines_of(item.file) for item in shown}
        for depth in range(max((item.ranges for item in shown), default=0)):
            for item in shown:
                if depth < item.ranges and texts[id(item)]:
                    _add_code(item.file.ranges[depth], texts[id(item)], fits)
    found, tokens = measured()
    return AgentAnswer(result.query, result.here_probability, [item.file for item in shown], token_budget, found, tokens,
                       len(chosen) - len(shown))


def _add_code(answer_range: AnswerRange, lines: Sequence[str], fits: Callable[[], bool]) -> None:
    """The range's source lines, as many as fit (at least MIN_CODE_LINES, else none)."""
    wanted = [line[:MAX_LINE_CHARS] for line in lines[answer_range.start - 1:answer_range.end]]
    if not wanted:
        return
    low, high, best = min(MIN_CODE_LINES, len(wanted)), len(wanted), 0
    while low <= high:  # the most lines that fit, by bisection (each check serialises the answer)
        middle = (low + high) // 2
        answer_range.code, answer_range.code_end = "\n".join(wanted[:middle]), answer_range.start + middle - 1
        if fits():
            best, low = middle, middle + 1
        else:
            high = middle - 1
    if best:
        answer_range.code, answer_range.code_end = "\n".join(wanted[:best]), answer_range.start + best - 1
    else:
        answer_range.code, answer_range.code_end = "", 0


def lines_from_disk(root: str, path: str) -> list[str] | None:
    """A file's lines as the index saw them (`source_text`), or None."""
    try:
        return source_text((Path(root) / path).read_bytes()).split("\n")
    except OSError:
        return None
