"""The files a C toolchain builds a firmware from, by their declarations: assembly by its labels and macros, a
GNU linker script by its `MEMORY` and `SECTIONS` commands, CMake by its functions, macros, options and cached
settings, a Makefile by its rules and variables.

An embedded engineer's walkthrough (FreeRTOS-Kernel, pico-sdk) asked for the reset handler in `crt0.S`, the
context switch in a port's `portASM.S`, the memory map in `memmap_default.ld` and `pico_generate_pio_header` in a
`.cmake` file: each was forty-line windows of no name, and `find "_reset_handler"` said the name was probably not
in the workspace. These kinds have no grammar wheel here, and their declarations are regular enough to find
without one (`blocks.py` makes the chunks).
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, blank, brace_end, chunk_blocks, comment_start, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk

ASSEMBLY_SUFFIXES = (".s", ".asm")  # (`.S` too: suffixes are matched on the lowercased path)
LINKER_SCRIPT_SUFFIXES = (".ld", ".lds")
CMAKE_SUFFIXES = (".cmake", "cmakelists.txt")
#: a Makefile (`Makefile`, `GNUmakefile`, `makefile`, matched on the lowercased path) and its included pieces
MAKEFILE_SUFFIXES = ("makefile", ".mk")

#: assembly's comments (`/* */`, `//`, ARM's `@`, `;`) and strings, blanked before labels are read; `#` is the C
#: preprocessor's in a `.S`
_ASSEMBLY_NOT_CODE = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*|[@;][^\n]*|\"(?:[^\"\\\n]|\\.)*(?:\"|$)",
                                re.DOTALL | re.MULTILINE)
#: a label at a line's start (`_reset_handler:`, `FreeRTOS_IRQ_Handler:`), not a local one (`.L1:`, `1:`), nor a
#: section directive; or a macro (`.macro portSAVE_CONTEXT` ... `.endm`, MASM's `name MACRO`)
_ASSEMBLY_DECLARATION = re.compile(
    r"^(?P<label>(?!\.L)[A-Za-z_.$][\w.$]*):|^[ \t]*\.macro[ \t]+(?P<macro>[A-Za-z_.$][\w.$]*)"
    r"|^(?P<masm>[A-Za-z_][\w]*)[ \t]+(?:MACRO|PROC)\b", re.MULTILINE)
#: where a macro's definition ends (the lines after it, to the next label, are windows)
_ASSEMBLY_MACRO_END = re.compile(r"^[ \t]*(?:\.endm|ENDM|ENDP)\b", re.MULTILINE)

#: a linker script's comments, blanked
_LINKER_NOT_CODE = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:[^\"\\\n]|\\.)*(?:\"|$)", re.DOTALL | re.MULTILINE)
#: the commands that make a memory map, each a braced block
_LINKER_COMMAND = re.compile(r"^[ \t]*(?P<command>MEMORY|SECTIONS|PHDRS)\s*\{", re.MULTILINE)
#: inside them: a memory region (`FLASH(rx) : ORIGIN = ...`) or an output section (`.text : {`, `.boot2 : ALIGN(4)`)
_LINKER_MEMBER = re.compile(r"^[ \t]*(?P<name>\.?[A-Za-z_][\w.]*)[ \t]*(?:\([^)\n]*\))?[ \t]*(?:[\w.()]+[ \t]*)?:"
                            r"(?!:)", re.MULTILINE)

#: CMake's comments (`#` to the line's end, outside strings) and strings, blanked
_CMAKE_NOT_CODE = re.compile(r"#\[\[.*?\]\]|#[^\n]*|\"(?:[^\"\\]|\\.)*\"", re.DOTALL)
_CMAKE_BLOCK = re.compile(r"^[ \t]*(?P<keyword>function|macro)[ \t]*\([ \t\n]*(?P<name>[\w.+-]+)",
                          re.MULTILINE | re.IGNORECASE)
_CMAKE_END = {"function": re.compile(r"^[ \t]*endfunction[ \t]*\(", re.MULTILINE | re.IGNORECASE),
              "macro": re.compile(r"^[ \t]*endmacro[ \t]*\(", re.MULTILINE | re.IGNORECASE)}
#: a setting a build's user sets (`option(PICO_NO_FLASH ...)`, `set(PICO_BOARD pico CACHE STRING ...)`): a minor
#: block, packed with the lines before it
_CMAKE_SETTING = re.compile(r"^[ \t]*(?:option[ \t]*\([ \t]*(?P<option>[\w.+-]+)"
                            r"|set[ \t]*\([ \t]*(?P<cached>[\w.+-]+)\b[^)]*\bCACHE\b)", re.MULTILINE | re.IGNORECASE)


#: a Makefile's comments (`#` to the line's end), blanked
_MAKE_NOT_CODE = re.compile(r"#[^\n]*")
#: a rule's targets at a line's start (`backup:`, `smoke-test: build`, `%.o: %.c`, `a b::`), not an assignment
#: (`X := 1`, `X ::= 1`), a special target (`.PHONY:`) or a target a variable names (`$(BIN):`)
_MAKE_RULE = re.compile(r"^(?P<targets>[A-Za-z0-9_%/][\w%./-]*(?:[ \t]+[A-Za-z0-9_%/][\w%./-]*)*)[ \t]*::?(?![:=])",
                        re.MULTILINE)
#: a variable the build's user sets (`CLUSTER ?= homelab`, `export KUBECONFIG = ...`, `define HELP`): a minor block
_MAKE_VARIABLE = re.compile(r"^(?:export[ \t]+|override[ \t]+)?(?P<name>[A-Za-z_][\w.-]*)[ \t]*(?:[?:+!]?=|::=)"
                            r"|^define[ \t]+(?P<defined>[A-Za-z_][\w.-]*)", re.MULTILINE)


def make_blocks(text: str) -> list[Block]:
    """Each rule a block named by its first target, its recipe (the tab-indented lines below it) with it and the
    comment run above it, its other targets its members; each variable set at a line's start a minor one."""
    code = _MAKE_NOT_CODE.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks = []
    for found in _MAKE_RULE.finditer(code):
        row = row_at(found.start())
        last = row
        while last + 1 < len(lines) and (lines[last + 1].startswith("\t") or lines[last].rstrip().endswith("\\")):
            last += 1
        targets = found.group("targets").split()
        blocks.append(Block(comment_start(lines, code_lines, row), last, targets[0], "rule",
                            tuple((row, target) for target in targets[1:])))
    rules = [(block.first, block.last) for block in blocks]
    for found in _MAKE_VARIABLE.finditer(code):
        row = row_at(found.start())
        if not any(first <= row <= last for first, last in rules):
            name = found.group("name") or found.group("defined")
            blocks.append(Block(comment_start(lines, code_lines, row), row, name, "variable", major=False))
    return one_per_row(sorted(blocks, key=lambda block: block.first))


def assembly_blocks(text: str) -> list[Block]:
    """Each label and macro a block, to the next one, with the comment run above it."""
    code = _ASSEMBLY_NOT_CODE.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    starts = [(found, row_at(found.start()), found.group("label") or found.group("macro") or found.group("masm"),
               "macro" if found.group("label") is None else "label")
              for found in _ASSEMBLY_DECLARATION.finditer(code)]
    firsts = [comment_start(lines, code_lines, row) for _, row, _, _ in starts]
    blocks = []
    for index, (found, row, name, kind) in enumerate(starts):
        last = (firsts[index + 1] - 1) if index + 1 < len(starts) else len(lines) - 1
        ended = _ASSEMBLY_MACRO_END.search(code, found.end()) if kind == "macro" else None
        if ended is not None:
            last = min(last, row_at(ended.start()))
        while last > row and not lines[last].strip():  # the blank rows before the next
            last -= 1
        blocks.append(Block(firsts[index], max(last, row), name, kind))
    return one_per_row(blocks)


def linker_script_blocks(text: str) -> list[Block]:
    """Each `MEMORY` / `SECTIONS` command a block, listing its regions or output sections."""
    code = _LINKER_NOT_CODE.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks = []
    for found in _LINKER_COMMAND.finditer(code):
        end = brace_end(code, found.end() - 1)
        body = code[found.end():end]
        members = tuple((row_at(found.end() + member.start("name")), member.group("name"))
                        for member in _LINKER_MEMBER.finditer(body))
        first = row_at(found.start("command"))
        blocks.append(Block(comment_start(lines, code_lines, first), row_at(max(end - 1, found.start())),
                            found.group("command"), "command", members))
    return one_per_row(blocks)


def cmake_blocks(text: str) -> list[Block]:
    """Each function and macro a block (to its `endfunction()`), each option and cached setting a minor one,
    with the comment run above it."""
    code = _CMAKE_NOT_CODE.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks = []
    covered = -1  # the offset the last function's block ends at: a setting inside one is the function's
    for found in _CMAKE_BLOCK.finditer(code):
        if found.start() < covered:
            continue
        ended = _CMAKE_END[found.group("keyword").lower()].search(code, found.end())
        line_end = code.find("\n", ended.end()) if ended else -1  # the `endfunction()` line's, or the file's
        covered = line_end if line_end >= 0 else len(code)
        first = row_at(found.start("keyword"))
        blocks.append(Block(comment_start(lines, code_lines, first), row_at(covered - 1), found.group("name"),
                            found.group("keyword").lower()))
    functions = [(block.first, block.last) for block in blocks]
    for found in _CMAKE_SETTING.finditer(code):
        row = row_at(found.start())
        if not any(first <= row <= last for first, last in functions):
            blocks.append(Block(comment_start(lines, code_lines, row), row, found.group("option") or
                                found.group("cached"), "setting", major=False))
    return one_per_row(sorted(blocks, key=lambda block: block.first))


def chunk_assembly(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    return chunk_blocks(path, text.split("\n"), assembly_blocks(text), language="assembly",
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars)


def chunk_linker_script(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    return chunk_blocks(path, text.split("\n"), linker_script_blocks(text), language="linker-script",
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars)


def chunk_makefile(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A Makefile by its rules (an ops walkthrough's `backup:` target opened at `restore:`, a 40-line window)."""
    return chunk_blocks(path, text.split("\n"), make_blocks(text), language="make",
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars, pack=True)


def chunk_cmake(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    return chunk_blocks(path, text.split("\n"), cmake_blocks(text), language="cmake",
                        window_lines=window_lines, overlap=overlap, max_chars=max_chars, pack=True)
