"""MyBatis' (and iBATIS') mapper files cut at their statements: each `<select>`, `<insert>`, `<update>`,
`<delete>`, `<sql>` fragment and `<resultMap>` a chunk named by its mapper and its id
(`UserMapper.saveRelation`), as the Java interface it implements calls it.

A Spring service's SQL lives in these files (`src/main/resources/mapper/*.xml`), and as 40-line windows of
XML no statement was named: "MyBatis statements to insert a user and save a follow relation" found
`UserMapper.xml` first by its words and ranked it 26th, and `selectArticleData`, a `<sql>` fragment that only
the XML defines, asked by name, was "probably not here". The mapper's elements do not nest in one another and
are found by their tags once comments and CDATA sections are blanked (a `</select>` or a `<!--` in a
statement's SQL is text); an element keeps the comment lines right above it.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, blank, chunk_blocks, comment_start, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk
from noul_lsp.chunking.properties import named_by_android_names

XML_SUFFIXES = (".xml",)
#: a mapper file: MyBatis' root element (iBATIS' `<sqlMap>`) with the interface it implements
_MAPPER = re.compile(r"<(?:mapper|sqlMap)\s[^>]*?\bnamespace\s*=\s*[\"']([\w.$]+)[\"']")
#: what is no markup: comments and CDATA sections, whichever opens first
_NOT_MARKUP = re.compile(r"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)", re.DOTALL)
#: a statement, a fragment or a result map, with its id
_KINDS = ("select", "insert", "update", "delete", "sql", "resultMap")
_ELEMENT = re.compile(rf"<(?P<kind>{'|'.join(_KINDS)})\b[^>]*?\bid\s*=\s*[\"'](?P<name>[\w.$-]+)[\"']")
_CLOSING = {kind: re.compile(rf"</{kind}\s*>") for kind in _KINDS}
#: a fragment and a result map: packed with the statements around them while they fit (a statement starts a chunk)
_MINOR = frozenset({"sql", "resultMap"})


def mapper_blocks(text: str) -> list[Block]:
    """Each statement a block from its opening tag to its closing one, named `Mapper.id`; none where the file
    is no mapper."""
    code = _NOT_MARKUP.sub(blank, text)
    found = _MAPPER.search(code, 0, 4000)
    if found is None:
        return []
    mapper = found.group(1).rsplit(".", 1)[-1]
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)
    blocks: list[Block] = []
    position = 0
    for element in _ELEMENT.finditer(code):
        if element.start() < position:
            continue
        kind = element.group("kind")
        opening_end = code.find(">", element.end())
        self_closed = opening_end < 0 or code[opening_end - 1] == "/"
        closing = None if self_closed else _CLOSING[kind].search(code, element.end())
        end = closing.end() if closing is not None else opening_end + 1 if opening_end >= 0 else len(code)
        position = end
        first, last = row_at(element.start()), row_at(max(end - 1, element.start()))
        blocks.append(Block(comment_start(lines, code_lines, first), last, f"{mapper}.{element.group('name')}",
                            kind.lower(), major=kind not in _MINOR))
    return one_per_row(blocks)


def chunk_xml(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A mapper's statements as chunks (`blocks.chunk_blocks`), its other lines in windows; any other XML file in
    windows, named by the Android resources and manifest entries they declare (`properties.named_by_android_names`)."""
    blocks = mapper_blocks(text)
    chunks = chunk_blocks(path, text.split("\n"), blocks, language="xml",
                          window_lines=window_lines, overlap=overlap, max_chars=max_chars, pack=True)
    return chunks if blocks else named_by_android_names(chunks, text)
