"""Rewrites of source text for a grammar that misreads it, each keeping every row where it was (the chunks
keep the file's own lines; only the parse reads the rewrite).

`before_parse` rewrites (`LanguageSpec.before_parse`) run on every file of the language: a shape tree-sitter's
grammar reads wrongly everywhere. `reread` rewrites (`LanguageSpec.reread`) run only where the first parse has
errors, on the rows in error, and their tree is kept when fewer rows err: C's conditional compilation, bash's
parameter expansions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

#: a class header alone on its line, its primary constructor on the next (`public class Builder` then
#: `internal constructor(`)
_KOTLIN_SPLIT_HEAD = re.compile(
    r"^([ \t]*(?:(?:public|internal|private|protected|open|abstract|sealed|data|inner|final|annotation|value|enum)"
    r"[ \t]+)*class[ \t]+\w+(?:<[^\n]*>)?)[ \t]*(\r?\n)"
    r"[ \t]*((?:(?:public|internal|private|protected)[ \t]+)?(?:@\w+(?:\([^()\n]*\))?[ \t]+)*constructor[ \t]*\()",
    re.MULTILINE)


def kotlin_joined_heads(text: str) -> str:
    """Kotlin with a nested class's header and its primary constructor on one line, the line break moved
    after the constructor's `(`: tree-sitter-kotlin 1.1.0 ends a nested class at its header's line break
    (fwcd/tree-sitter-kotlin#75, fixed after that release), and kotlinpoet's `TypeSpec.kt` was 1,022 of its
    1,060 lines in one error node, `TypeSpec` and its whole Builder defined nowhere."""
    return _KOTLIN_SPLIT_HEAD.sub(lambda m: f"{m.group(1)} {m.group(3)}{m.group(2)}", text)


#: a bats test's head: `@test "can exec" {`
_BATS_TEST = re.compile(r"""^([ \t]*)@test[ \t]+(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')[ \t]*\{""", re.MULTILINE)
#: what a bats test's head is read as: a function named by the title's hex (`bats_rewritten`)
BATS_FUNCTION = "__noul_bats_test_"


def bats_rewritten(text: str) -> str:
    """Bash whose bats tests (`@test "title" {`, which tree-sitter-bash reads as a command) are functions named
    by their title's hex digits, each on its row: pyenv's and rbenv's 597 tests were 40-line windows."""
    return _BATS_TEST.sub(lambda m: f"{m.group(1)}{BATS_FUNCTION}"
                          f"{(m.group(2) if m.group(2) is not None else m.group(3))[:80].encode('utf-8', 'surrogatepass').hex()}"
                          "() {", text)


#: a bats test's function as `bats_rewritten` writes it, in a header: read back as the test's own head
_BATS_HEAD = re.compile(r"\b" + BATS_FUNCTION + r"([0-9a-f]*)\(\)")


def shown_head(signature: str) -> str:
    """A definition's head as its file writes it, where a rewrite renamed it (a bats test's `@test "title"`)."""
    if BATS_FUNCTION not in signature:
        return signature
    return _BATS_HEAD.sub(lambda m: f'@test "{bats_title(BATS_FUNCTION + m.group(1)) or ""}"', signature)


def bats_title(function: str) -> str | None:
    """The title of a bats test from the name `bats_rewritten` gave its function (None for any other name,
    a user's `__noul_bats_test_x` included)."""
    if not function.startswith(BATS_FUNCTION):
        return None
    try:
        return bytes.fromhex(function[len(BATS_FUNCTION):]).decode("utf-8", "replace")
    except ValueError:
        return None


#: an all-capitals macro with an underscore or six letters or more between `class`/`struct` and the name
#: (`LEVELDB_EXPORT`, `FMT_API`, `LOCKABLE`): an export or annotation macro, not a type (`struct RGB c{1, 2, 3};`)
_EXPORT_MACRO = re.compile(r"\b((?:class|struct)\s+)((?:[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z][A-Z0-9]{5,})(?:\([^()\n]*\))?)"
                           r"(?=\s+(?!final\b)\w+\s*(?:final\b|[:{]))")
#: an all-capitals macro after a function's parameters (Clang's thread-safety annotations:
#: `EXCLUSIVE_LOCKS_REQUIRED(mu_)`, `UNLOCK_FUNCTION()`), before its body or semicolon
_TRAILING_MACRO = re.compile(r"(\)[ \t]*(?:(?:const|override|noexcept|final)[ \t]*)*)([A-Z][A-Z0-9]*_[A-Z0-9_]*(?:\([^()\n]*\))?)"
                             r"(?=[ \t]*(?:[{;:]|$))", re.MULTILINE)


#: an all-capitals macro with an underscore that heads a declaration, after a line's indentation, a template's
#: head and specifiers (`SPDLOG_INLINE void logger::flush()`, `SPDLOG_API void set_level(...)`, `template <typename
#: T> SPDLOG_CONSTEXPR_FUNC T f()`), followed by a type and a name or by a qualified name (a constructor:
#: `SPDLOG_INLINE logger::logger(...)`); not a type's use (`CRITICAL_SECTION mutex_;`, `LARGE_INTEGER Now()`): its
#: type was the macro, and the real type was read as the name (`spdlog.std::shared_ptr get`). A type blanked
#: where two names follow (`ULONG_PTR WINAPI Now()`) leaves a declaration of the same name
_LEADING_MACRO = re.compile(
    r"^([ \t]*(?:template[ \t]*<[^\n]*?>[ \t]*)?(?:(?:static|inline|explicit|constexpr|virtual|friend|extern)[ \t]+)*)"
    r"([A-Z][A-Z0-9]*_[A-Z0-9_]*)"
    r"(?=[ \t]+(?:(?:const|unsigned|signed|struct|class|typename)[ \t]+)*[A-Za-z_][\w:]*(?:<[^\n;]*>)?"
    r"(?:[ \t*&]+|[ \t*&]*\n[ \t]*)~?[A-Za-z_]"
    r"|[ \t]+[A-Za-z_][\w:]*(?:<[^\n;()]*>)?::~?[A-Za-z_]\w*[ \t]*\()", re.MULTILINE)
#: the same between a declaration's type and its name (`size_t SPDLOG_INLINE thread_pool::queue_size()`)
_INFIX_MACRO = re.compile(r"([\w>*&][ \t]+)([A-Z][A-Z0-9]*_[A-Z0-9_]*)"
                          r"(?=[ \t]+~?[A-Za-z_][\w:]*(?:<[^\n;()]*>)?(?:::~?[A-Za-z_]\w*)?[ \t]*\()", re.MULTILINE)
#: an all-capitals macro that stands for a keyword before a block, a statement's first word (`SPDLOG_TRY {`)
_BLOCK_MACRO = re.compile(r"^([ \t]*)([A-Z][A-Z0-9]*_[A-Z0-9_]*)(?=[ \t]*(?:\{|$))", re.MULTILINE)
#: a line that is a macro alone, or a macro's call without its semicolon (`SPDLOG_CATCH_STD`,
#: `SPDLOG_LOGGER_CATCH(msg.source)`)
_LONE_MACRO = re.compile(r"[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)(\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))?[ \t]*")
#: how a line ends that a statement, a declaration or a directive ended: a lone macro after it stands alone
_ENDED = ("}", ";", "{", "*/")


def _lone_macros_blanked(text: str) -> str:
    """`_LONE_MACRO` lines after a block's closing brace blanked, and a `_BLOCK_MACRO` before one's opening:
    `SPDLOG_TRY { ... } SPDLOG_CATCH_STD` stands for `try { ... } catch (...) {}`, and read as calls without
    their semicolons they made the rest of spdlog's `thread_pool-inl.h` one error, its functions defined
    nowhere. Not a test's head on its own line (`TEST(A, B)` above its `{`). And a bare macro alone between
    statements or declarations (`CLI11_DIAGNOSTIC_PUSH` above a definition was read as its type, `narrow_impl`
    defined nowhere); not an enum's last value (`FOO_LAST` above its `};`) nor an expression's continued line."""
    lines = text.split("\n")
    filled = [row for row, line in enumerate(lines) if line.strip()]
    for at, row in enumerate(filled):
        line = lines[row]
        if not line.lstrip()[:1].isupper():  # both kinds start with a capital: most lines are passed at once
            continue
        before = lines[filled[at - 1]].rstrip() if at else ""
        after = lines[filled[at + 1]].lstrip() if at + 1 < len(filled) else ""
        lone = _LONE_MACRO.fullmatch(line)
        after_a_block = before.endswith("}")  # `} SPDLOG_CATCH_STD`, `} SPDLOG_LOGGER_CATCH(msg.source)`
        bare_between = lone is not None and lone.group(2) is None and not after.startswith("}") and (
            not before or before.endswith(_ENDED) or before.lstrip().startswith(("#", "//")))
        if lone is not None and not after.startswith("{") and (after_a_block or bare_between):
            lines[row] = " " * len(line)
        elif (block := _BLOCK_MACRO.match(line)) is not None and (line[block.end():].strip() or after.startswith("{")):
            lines[row] = block.group(1) + " " * len(block.group(2)) + line[block.end():]
    return "\n".join(lines)


def c_macros_blanked(text: str) -> str:
    """C and C++ with the export, annotation and specifier macros blanked, and those that stand for `try` and
    `catch`: `class LEVELDB_EXPORT DB {` was a function named DB, `void Unlock() UNLOCK_FUNCTION();` a function
    named UNLOCK_FUNCTION, 51 of spdlog's 546 functions were named by their return types
    (`spdlog.SPDLOG_INLINE wincolor_sink::log`)."""
    for macro in (_EXPORT_MACRO, _TRAILING_MACRO, _LEADING_MACRO, _LEADING_MACRO, _INFIX_MACRO):  # two in a row:
        text = macro.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)  # `CLI11_NODISCARD CLI11_INLINE`
    return _lone_macros_blanked(text)


_CONDITIONAL = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)")


@dataclass(slots=True)
class _Conditional:
    """One `#if`/`#ifdef`/`#ifndef` ... `#endif` of a file: the rows of its directives and where each branch
    starts."""

    dead_first: bool  # `#if 0`, `#ifdef X`: its `#else` is the branch to read, when it has one
    zero: bool  # `#if 0`: its first branch is never read
    branches: list[int]  # the row of each of its directives but `#endif`
    directive_rows: list[int]
    end: int = -1


def one_branch_each(text: str, errors: list[tuple[int, int]]) -> str:
    """C source with each conditional that holds a row in error read by one branch, as if no macro were
    defined (`#ifdef WIN32`'s and `#if 0`'s `#else`, `#ifndef`'s first; the first where that is unknown):
    its directives and other branches blanked, every line where it was. jq's `main` was its Windows
    `umain`."""
    lines = text.split("\n")
    closed: list[_Conditional] = []
    open_: list[_Conditional] = []
    continued: _Conditional | None = None  # the conditional whose directive the line before continued
    for row, line in enumerate(lines):
        if continued is not None:
            continued.directive_rows.append(row)
        elif (directive := _CONDITIONAL.match(line)) is not None:
            keyword, rest = directive.group(1), directive.group(2).strip()
            if keyword in ("if", "ifdef", "ifndef"):  # read as if no macro were defined: `#ifdef WIN32` false
                zero = keyword == "if" and re.match(r"0\b", rest) is not None
                undefined = zero or keyword == "ifdef" or (keyword == "if" and re.match(r"defined\b", rest) is not None)
                open_.append(_Conditional(undefined, zero, [row], [row]))
            elif open_:
                open_[-1].directive_rows.append(row)
                if keyword == "endif":
                    open_[-1].end = row
                    closed.append(open_.pop())
                else:
                    open_[-1].branches.append(row)
            continued = (open_[-1] if keyword != "endif" and open_ else closed[-1] if closed else None) \
                if line.rstrip().endswith("\\") else None
            continue
        if not line.rstrip().endswith("\\"):
            continued = None
    blank = set()
    for conditional in closed:
        if not any(start <= conditional.end and conditional.branches[0] <= end for start, end in errors):
            continue
        blank.update(conditional.directive_rows)
        bounds = [*conditional.branches, conditional.end]
        read = 1 if conditional.dead_first and (len(bounds) > 2 or conditional.zero) else 0
        for index, (first, after) in enumerate(zip(bounds, bounds[1:], strict=False)):
            if index != read:
                blank.update(range(first + 1, after))
    return "\n".join("" if row in blank else line for row, line in enumerate(lines))


def error_rows(tree: tree_sitter.Tree) -> list[tuple[int, int]]:
    """(first, last) rows of the tree's outermost error nodes."""
    found, pending = [], [tree.root_node]
    while pending:
        node = pending.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append((node.start_point.row, node.end_point.row))
        elif node.has_error:
            pending.extend(node.children)
    return found


#: a parameter expansion on one line (`${out:+$out;}`, `${content:0:$posN + 1}`) and an extglob
#: (`@(<|>|>>|[12]>|[12]>>)`): tree-sitter-bash 0.25.1 errs on some, and the error takes the function in
_EXPANSION = re.compile(r"\$\{[^{}\n]*\}")
_EXTGLOB = re.compile(r"[@!?*+]\([^()\n]*\)")


def bash_expansions_blanked(text: str, errors: list[tuple[int, int]]) -> str:
    """Bash with the parameter expansions and extglobs of the rows in error read as a plain `$x` / `x`:
    oh-my-bash's `_svn` completion (1,421 rows) was one error node, all of `omb-prompt-colors.sh` another,
    their functions defined nowhere."""
    rows = {row for first, last in errors for row in range(first, last + 1)}
    lines = text.split("\n")
    for row in sorted(rows):
        if row < len(lines):
            line = _EXPANSION.sub(lambda m: "$x" + " " * (len(m.group()) - 2), lines[row])
            lines[row] = _EXTGLOB.sub(lambda m: "x" + " " * (len(m.group()) - 1), line)
    return "\n".join(lines)
