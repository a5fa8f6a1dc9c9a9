"""Engine results to LSP shapes: URIs, ranges in the negotiated position encoding (the hover text is
noul_lsp.labels', shared with the CLI)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from noul_lsp.lsp.protocol import FindHit, FindIndexState, FindSignals, SemanticFindResult
from noul_lsp.retrieval.result import FindResult
from noul_lsp.text.decode import source_text


def uri_of(root: str, path: str) -> str:
    return from_fs_path(str(Path(root) / path)) or ""


#: the scheme of an organisation hit's uri: the code is in the shared store, not on this disk
ORG_SCHEME = "noul-org"


def org_uri(repository: str, path: str) -> str:
    """`noul-org://REPOSITORY/PATH`, the repository percent-encoded whole (its name holds a slash)."""
    return f"{ORG_SCHEME}://{quote(repository, safe='')}/{quote(path)}"


def org_location(uri: str) -> tuple[str, str] | None:
    """(repository, path) of an organisation uri; None for any other uri."""
    parts = urlsplit(uri)
    if parts.scheme != ORG_SCHEME or not parts.netloc or len(parts.path) < 2:
        return None
    return unquote(parts.netloc), unquote(parts.path[1:])


def path_of(uri: str) -> Path | None:
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def code_units(text: str, encoding: str) -> int:
    """Length of `text` in the client's position units (LSP's default is UTF-16 code units)."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def line_range(lines: list[str], start_line: int, end_line: int, encoding: str) -> types.Range:
    """Whole lines start_line..end_line (1-based, inclusive): from column 0 to the end of the last line."""
    last = lines[end_line - 1] if 0 < end_line <= len(lines) else ""
    return types.Range(types.Position(max(start_line - 1, 0), 0),
                       types.Position(max(end_line - 1, 0), code_units(last.rstrip("\r\n"), encoding)))


class FileLines:
    """Lines of the files one request touches, each read once (ranges need the last line's length)."""

    def __init__(self) -> None:
        self._read: dict[Path, list[str]] = {}

    def __call__(self, root: str, path: str) -> list[str]:
        absolute = Path(root) / path
        if absolute not in self._read:
            try:
                self._read[absolute] = source_text(absolute.read_bytes()).split("\n")
            except OSError:
                self._read[absolute] = []
        return self._read[absolute]


def to_find_result(result: FindResult, encoding: str, lines_of: FileLines | None = None) -> SemanticFindResult:
    lines_of = lines_of or FileLines()
    hits = []
    for hit in result.hits:
        # an organisation hit has no file here: its range is counted in its own preview's terms
        lines = [] if hit.repository else lines_of(hit.root, hit.path)
        hits.append(FindHit(uri=org_uri(hit.repository, hit.path) if hit.repository else uri_of(hit.root, hit.path),
                            repository=hit.repository or None, range=line_range(lines, hit.start_line, hit.end_line, encoding),
                            rank=hit.rank, score=round(hit.score, 6), probability=hit.probability, preview=hit.preview,
                            signals=FindSignals(hit.bm25_rank, hit.dense_rank, hit.rerank_score, hit.role or None,
                                                hit.static_rank), symbol=hit.symbol or None))
    index = result.index
    return SemanticFindResult(query=result.query, here_probability=result.here_probability, results=hits,
                              index=FindIndexState(index.files, index.chunks, index.pending, index.stale, index.embedded,
                                                   index.device, index.static),
                              timings={k: round(v, 2) for k, v in result.timings.items()}, notes=result.notes,
                              signals=result.signals)
