"""Lines between definitions that carry no name to find: licence headers, include guards, `<?php`,
`namespace X;`, `#region`, `'use strict'`.

As chunks of their own they were the same text in many files of a project: Polly's 386 chunks that were
only `namespace X;`, flysystem's `<?php declare(strict_types=1); namespace X;` head, kotlinpoet's and
Kingfisher's licence blocks opening every file. Each made its file look half copied to the ranking stage
(`duplicate_share`) and was a chunk whose embedding is boilerplate. A left-over run of lines
(`code._Segment.filler`) made only of such lines is dropped, as a lone brace or a magic comment already
was, and a licence block opening a run is cut off it.

Imports are not among them: they say what a file works with. Dropped, a small file lost the evidence of
its `use std::time::{Duration, SystemTime}` or `require('proxy-addr')`, and the dev descriptions lost
four first places of 36 to 83 (docs/benchmarks.md).
"""

from __future__ import annotations

import re

#: a line that names nothing a query could ask for, per grammar: where the file belongs, compiler and
#: editor directives, include guards
_DIRECTIVES: dict[str, str] = {
    "javascript": r"['\"]use strict['\"];?",
    "go": r"package\s+\w+",
    "java": r"package\s[\w.\s]+;",
    "kotlin": r"package\s[\w.`\s]+",
    "scala": r"package\s[\w.\s]+",
    "csharp": r"namespace\s+[\w.]+;?|#\s*(region|endregion|pragma|nullable|if|elif|else|endif)\b.*",
    "php": r"<\?php|\?>|namespace\s+[\w\\]+;|declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;",
    "swift": r"//\s*MARK:.*",
    "c": r"#\s*(pragma\s+once|ifndef\s+\w+|define\s+\w+|endif\b.*|ifdef\s+__cplusplus)|extern\s+\"C\"\s*\{",
}
_DIRECTIVES["typescript"] = _DIRECTIVES["tsx"] = _DIRECTIVES["javascript"]
_DIRECTIVES["cpp"] = _DIRECTIVES["c"] + r"|namespace\s*[\w:]*\s*\{|\}"
_PATTERNS = {language: re.compile(rf"\s*({pattern})\s*(//.*)?") for language, pattern in _DIRECTIVES.items()}
#: what carries nothing on any line: brackets, a lone `end`, punctuation
_EMPTY = re.compile(r"\s*[{}()\[\];,]*\s*(end)?\s*")
#: a comment line in any of the grammars
_COMMENT = re.compile(r"\s*(//|/\*|\*|\*/|--|#|;;|\{-|-\})")
_LICENCE = re.compile(r"copyright|licen[cs]e|spdx-|all rights reserved", re.IGNORECASE)


def leading_licence(lines: list[str]) -> int:
    """How many of the lines a licence opens: the first comment block when it names a copyright or a
    licence, and the blank lines after it (0 when the lines open otherwise)."""
    end = 0
    while end < len(lines) and _COMMENT.match(lines[end]) and lines[end].strip():
        if lines[end].lstrip().startswith("/*"):  # a block comment: its lines need no comment mark
            while end < len(lines) and "*/" not in lines[end]:
                end += 1
        end += 1
    if not end or not any(_LICENCE.search(line) for line in lines[:end]):
        return 0
    while end < len(lines) and not lines[end].strip():
        end += 1
    return end


def carries_nothing(lines: list[str], language: str) -> bool:
    """Whether every line is a bracket or a directive of `language` that names nothing (`_DIRECTIVES`)."""
    pattern = _PATTERNS.get(language)
    return pattern is not None and all(
        not line.strip() or _EMPTY.fullmatch(line) or pattern.fullmatch(line) for line in lines)
