"""Cutting files into chunks: tree-sitter definitions, notebook cells, line windows for the rest."""

from __future__ import annotations

from noul_lsp.chunking.chunk import Chunk, hash_text
from noul_lsp.chunking.code import CodeChunker
from noul_lsp.chunking.languages import LANGUAGES, GrammarUnavailable, language_for_path, language_for_script
from noul_lsp.chunking.notebook import chunk_notebook
from noul_lsp.chunking.text import chunk_lines, text_language
from noul_lsp.config import IndexSettings

__all__ = ["CHUNKING_IDENTITY", "Chunk", "FileChunker", "hash_text"]

#: what decides how files are cut besides the settings: the grammars and a version of the rules. A new
#: grammar or rule changes it, and an index made before it looks at every file again once (its vectors
#: stay: they are keyed by content, so only the chunks whose text changed are embedded again)
CHUNKING_IDENTITY = "11:" + ",".join(sorted(LANGUAGES))


class FileChunker:
    """Chooses the chunker for each file. Holds one parser per language: use one per thread."""

    def __init__(self, settings: IndexSettings) -> None:
        self.settings = settings
        self._code: dict[str, CodeChunker | None] = {}
        #: grammar problems met so far, reported once each
        self.warnings: list[str] = []

    def _code_chunker(self, name: str) -> CodeChunker | None:
        if name not in self._code:
            try:
                self._code[name] = CodeChunker(spec=LANGUAGES[name], max_chars=self.settings.chunk_max_chars,
                                               window_lines=self.settings.window_lines)
            except GrammarUnavailable as error:
                self.warnings.append(str(error))
                self._code[name] = None
        return self._code[name]

    def chunk(self, path: str, text: str) -> list[Chunk]:
        settings = self.settings
        windows = dict(window_lines=settings.window_lines, overlap=settings.window_overlap,
                       max_chars=settings.chunk_max_chars)
        if path.lower().endswith(".ipynb"):
            try:
                return chunk_notebook(path, text, code=self._code_chunker("python"), **windows)
            except (ValueError, TypeError, AttributeError):
                return chunk_lines(path, text, language="json", **windows)  # not valid notebook JSON
        spec = language_for_path(path) or language_for_script(path, text)
        if spec is not None:
            chunker = self._code_chunker(spec.name)
            if chunker is not None:
                try:
                    return chunker.chunk(path, text)
                except Exception as error:  # a definition reader's slip on one file: its lines stay findable
                    self.warnings.append(f"{path}: {spec.name} definitions unreadable ({type(error).__name__}: "
                                         f"{error}); cut into line windows")
            return chunk_lines(path, text, language=spec.name, **windows)
        return chunk_lines(path, text, language=text_language(path), **windows)
