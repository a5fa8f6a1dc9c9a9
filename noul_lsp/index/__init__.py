"""Incremental indexing of a workspace root into its ChunkStore."""

from noul_lsp.index.indexer import EmbedReport, Indexer, UpdateReport, lexical_terms

__all__ = ["EmbedReport", "Indexer", "UpdateReport", "lexical_terms"]
