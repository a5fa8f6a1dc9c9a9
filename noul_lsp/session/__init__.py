"""The layer above indexing and retrieval: a workspace root (its store, indexer, models and corpus) and
the background indexer that keeps roots fresh. The CLI, the language server and the benchmark use it."""
