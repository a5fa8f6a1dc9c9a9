"""Protocol buffers cut at their top-level declarations: each message, enum, service and extension a chunk
named by its name, listing what it declares (a service's rpcs, a message's fields and nested messages).

As 40-line windows, grpc-gateway's 38 `.proto` files were 145 unnamed chunks that each previewed as
`syntax = "proto3";`: "BulkEcho" asked by name found the generated `_grpc.pb.go` stub first and the service
that declares it 8th. There is no grammar wheel for protobuf; its declarations are regular (a keyword, a name,
a braced body), so they are found by their braces once comments and strings are blanked. A declaration keeps
the run of comment lines right above it (protobuf's documentation); the file's `syntax`, `package`, `import` and
`option` lines are windows.
"""

from __future__ import annotations

import re

from noul_lsp.chunking.blocks import Block, blank, chunk_blocks, comment_start, one_per_row, row_finder
from noul_lsp.chunking.chunk import Chunk

PROTO_SUFFIXES = (".proto",)
LANGUAGE = "proto"

#: comments and string literals, blanked (their offsets kept) before the braces are read
_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)|'(?:[^'\\\n]|\\.)*(?:'|$)",
                       re.DOTALL | re.MULTILINE)
_TOKEN = re.compile(
    r"\b(?P<keyword>message|enum|service|extend|oneof)\s+(?P<name>[A-Za-z_][\w.]*)\s*\{"
    r"|\brpc\s+(?P<rpc>[A-Za-z_]\w*)\s*\("
    r"|(?P<field>\b[A-Za-z_]\w*)\s*=\s*-?(?:0[xX][0-9a-fA-F]+|\d+)\s*[;\[]"  # a field or an enum's value
    r"|(?P<open>\{)|(?P<close>\})")
#: how deep a nested declaration's name is qualified by its scopes' (a file nested a thousand deep is not)
_QUALIFIED_DEPTH = 8
#: the kind of chunk each top-level keyword makes
_KINDS = {"message": "message", "enum": "enum", "service": "service", "extend": "extension"}


def proto_blocks(text: str) -> list[Block]:
    """Each top-level declaration a block, with the comment run above it."""
    code = _NOT_CODE.sub(blank, text)
    lines, code_lines = text.split("\n"), code.split("\n")
    row_at = row_finder(text)

    blocks: list[Block] = []
    #: the open scopes: (keyword or "" for an options block, qualified name, first row, the qualified name of the
    #: scope its fields are declared in: a oneof's fields are its message's)
    scopes: list[tuple[str, str, int, str]] = []
    members: list[tuple[int, str]] = []
    for token in _TOKEN.finditer(code):
        at = row_at(token.start())
        if token.group("keyword"):
            keyword, name = token.group("keyword"), token.group("name")
            if scopes and keyword != "extend":
                # qualified by its scopes' names (`JSONSchema.FieldConfiguration`), a few levels deep at most
                name = f"{scopes[-1][1]}.{name}" if scopes[-1][1] and len(scopes) <= _QUALIFIED_DEPTH else name
                members.append((at, name))
            declared = name if keyword != "extend" else ""
            scopes.append((keyword, declared, at, scopes[-1][3] if keyword == "oneof" and scopes else declared))
        elif token.group("rpc"):
            if scopes and scopes[-1][0] == "service":
                members.append((at, f"{scopes[-1][1]}.{token.group('rpc')}"))
        elif token.group("field"):
            if scopes and scopes[-1][0] in ("message", "enum", "oneof", "extend"):
                field, owner = token.group("field"), scopes[-1][3]
                members.append((at, f"{owner}.{field}" if owner else field))
        elif token.group("open"):
            scopes.append(("", scopes[-1][1] if scopes else "", at, scopes[-1][3] if scopes else ""))
        elif scopes:  # a closing brace
            keyword, name, first, _ = scopes.pop()
            if not scopes and keyword:
                own = name or (members[0][1] if members else "")  # an extension by its first field
                kept = tuple(member for member in members if member[1] != own)
                blocks.append(Block(comment_start(lines, code_lines, first), at, own, _KINDS.get(keyword, keyword),
                                    kept))
            if not scopes:
                members = []
    return one_per_row(blocks)


def chunk_proto(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """The file's top-level declarations as chunks (`blocks.chunk_blocks`), its other lines in windows."""
    return chunk_blocks(path, text.split("\n"), proto_blocks(text), language=LANGUAGE, window_lines=window_lines,
                        overlap=overlap, max_chars=max_chars)
