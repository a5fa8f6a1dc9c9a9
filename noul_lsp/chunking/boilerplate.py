"""Lines between definitions that carry no name to find: a file's licence, interpreter and editor
directives, include guards, `<?php`, `namespace X;`, `#region`, `'use strict'`.

As chunks of their own they were the same text in many files of a project: 164 of grape's 167 source
files began with `# frozen_string_literal: true`, Polly's 386 chunks were only `namespace X;`,
kotlinpoet's and Kingfisher's licence blocks opened every file. Each made its file look half copied to
the ranking stage (`duplicate_share`) and was a chunk whose embedding is boilerplate (docs/benchmarks.md).
A left-over run of lines (`code._Segment.filler`) made only of such lines is dropped, and a licence block
opening a file is cut off the run it opens.

Imports are not among them: they say what a file works with. Dropped, a small file lost the evidence of
its `use std::time::{Duration, SystemTime}` or `require('proxy-addr')`, and the dev descriptions lost
four first places of 36 to 83 (docs/benchmarks.md).
"""

from __future__ import annotations

import re

#: a line that only instructs the interpreter or an editor, in any language: a shebang, an Emacs mode line
#: (`# -*- coding: utf-8 -*-`) or a one-word `key: value` pragma (Ruby's `# frozen_string_literal: true`,
#: `# encoding: utf-8`, Sorbet's `# typed: strict`)
_MAGIC_COMMENT = re.compile(r"\s*(#!.*|(#|//|--|;+)\s*-\*-.*-\*-\s*|(#|//)\s*[\w.-]+\s*[:=]\s*[\w.-]+\s*)")
#: a line that names nothing a query could ask for, per grammar: where the file belongs, compiler
#: directives, include guards
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
#: a C header's guard and linkage, which name nothing (a preview skips them too: result.preview)
C_GUARDS = _DIRECTIVES["c"]
_DIRECTIVES["typescript"] = _DIRECTIVES["tsx"] = _DIRECTIVES["javascript"]
_DIRECTIVES["cpp"] = _DIRECTIVES["c"] + r"|namespace\s*[\w:]*\s*\{|\}"
_PATTERNS = {language: re.compile(rf"\s*({pattern})\s*(//.*)?") for language, pattern in _DIRECTIVES.items()}
#: brackets and punctuation alone, or a lone `end` (one class, then the keyword: linear on any line)
_EMPTY = re.compile(r"[\s{}()\[\];,]*(end[\s;]*)?")
#: a comment line: `#` only where it starts a comment (not C's `#include` or Rust's `#[derive]`); `*` only as a
#: block comment's continuation (`* text`, `*/`), not a dereference (`*out = value;`)
_HASH_COMMENTS = frozenset({"python", "ruby", "bash", "elixir", "yaml"})
_DASH_COMMENTS = frozenset({"lua", "haskell"})
_SLASH_COMMENT = re.compile(r"\s*(//|/\*|\*(?:[\s/]|$))")
#: each language's block comment (its opening, its closing): C's family's `/* */` unless named here
_BLOCK_COMMENTS = {"haskell": ("{-", "-}"), "lua": ("--[[", "]]"), **{language: None for language in _HASH_COMMENTS}}
_BARE_COMMENT = re.compile(r"\s*(//|\*|#|--)\s*")  # a comment line with nothing in it: a paragraph break
_WORD = re.compile(r"[A-Za-z]{3}")
#: a link: a paragraph of the project's links alone closes its notice (FreeRTOS' ` * https://www.FreeRTOS.org`
#: lines after the MIT licence were each file's first chunk, and its hits' preview)
_LINK = re.compile(r"(?:https?://|www\.)\S+")
#: the words of the header Xcode writes above a notice: the file's name, the project's, "Created by X on date."
_FILE_NAME = re.compile(r"[\w+@-]+\.\w+")
_FEW_WORDS = re.compile(r"[\w+.@-]+(?: [\w+.@-]+){0,2}")
#: words of a notice's later paragraphs (the Apache licence's link and its warranty disclaimer)
_NOTICE = re.compile(r"licen[cs]|copyright|warrant|liabilit|permission|distribut|"
                     r"https?://\S*(apache|gnu|opensource|mozilla)\.org", re.IGNORECASE)
#: words only a licence or copyright notice uses ("validates license keys" is not one)
_LICENCE = re.compile(r"copyright\b|\(c\)\s*\d|©|spdx-license-identifier|all rights reserved|licensed (under|to)\b|"
                      r"permission is hereby granted|under the terms of|\blicen[cs]e,? version|"
                      r"(mit|apache|bsd|mozilla public|gnu (lesser )?general public) licen[cs]e", re.IGNORECASE)


def leading_licence(lines: list[str], language: str) -> int:
    """How many of a file's first lines its licence takes: the first comment block when it is a licence
    notice (up to a paragraph of it that is not, but for Xcode's header of the file's name above the
    notice), with the blank lines after it. In Go a comment block right above `package` is the package's
    documentation, copyright line or not."""
    end = 0
    while end < len(lines) and lines[end].strip() and is_comment(lines[end], language):
        if (closing := block_closing(lines[end], language)) is not None:  # its lines need no comment mark
            while end < len(lines) and closing not in lines[end]:
                end += 1
        end += 1
    if not end or not any(_LICENCE.search(line) for line in lines[:end]):
        return 0
    if language == "go" and end < len(lines) and lines[end].strip():
        return 0
    # the notice's paragraphs only: leveldb writes the file's own description in the same block, after a
    # line with nothing but the comment mark (`//`)
    paragraphs = [0, *(row + 1 for row in range(end) if _BARE_COMMENT.fullmatch(lines[row])), end]
    noticed = False
    for first, after in zip(paragraphs, paragraphs[1:], strict=False):
        block = lines[first:after]
        if any(_NOTICE.search(line) for line in block):
            noticed = True
        elif first > 0 and after > first and any(_WORD.search(_LINK.sub("", line)) for line in block) \
                and (noticed or not _xcode_header(block)):
            return first
    while end < len(lines) and not lines[end].strip():
        end += 1
    return end


def _xcode_header(block: list[str]) -> bool:
    """Whether a comment paragraph is the header Xcode writes above a file's notice: lines of a few words (the
    file's name, the project's) or "Created by ...", one of them the file's name or "Created by"."""
    words = [line[mark.end():].strip() if (mark := _BARE_COMMENT.match(line)) else line.strip() for line in block]
    return all(not w or w.startswith("Created by ") or _FEW_WORDS.fullmatch(w) for w in words) \
        and any(w.startswith("Created by ") or _FILE_NAME.fullmatch(w) for w in words)


def carries_nothing(lines: list[str], language: str) -> bool:
    """Whether every line is blank, a bracket, a magic comment or a directive of `language` that names
    nothing (`_DIRECTIVES`)."""
    pattern = _PATTERNS.get(language)
    return all(not line.strip() or _EMPTY.fullmatch(line) or _MAGIC_COMMENT.fullmatch(line)
               or (pattern is not None and pattern.fullmatch(line)) for line in lines)


def is_comment(line: str, language: str) -> bool:
    """Whether a line is a comment's, in `language`'s own marks (or opens its block comment)."""
    if language in _HASH_COMMENTS:
        return line.lstrip().startswith("#")
    if language in _DASH_COMMENTS:
        return line.lstrip().startswith(("--", "{-"))
    if language == "hcl":  # Terraform writes `#` and `//` both, and `/* */`
        return line.lstrip().startswith("#") or _SLASH_COMMENT.match(line) is not None
    return _SLASH_COMMENT.match(line) is not None


def block_closing(line: str, language: str) -> str | None:
    """The mark that closes the block comment `line` opens and leaves open (`*/` of a `/**` line), None when it
    opens none."""
    block = _BLOCK_COMMENTS.get(language, ("/*", "*/"))
    stripped = line.lstrip()
    if block is None or not stripped.startswith(block[0]) or stripped.startswith("{-#"):  # (`{-# INLINE #-}`)
        return None
    return block[1] if block[1] not in stripped[len(block[0]):] else None


def is_magic_comment(line: str) -> bool:
    """Whether a line only instructs the interpreter or an editor (`_MAGIC_COMMENT`)."""
    return _MAGIC_COMMENT.fullmatch(line) is not None
