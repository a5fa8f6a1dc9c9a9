"""A file's bytes as the text the index reads, the same for every reader: the indexer, the language server's
ranges and an agent's code (a file read two ways put a hit's lines on other lines)."""

from __future__ import annotations

#: byte-order marks of the UTF-16 that Windows editors and PowerShell write
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def source_text(data: bytes) -> str:
    """UTF-16 with its byte-order mark decoded as such (invalid pairs replaced); anything else as UTF-8,
    undecodable bytes replaced."""
    if data.startswith(UTF16_MARKS):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")
