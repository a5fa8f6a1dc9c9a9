"""Text below every other layer: the code-aware terms that the index stores and queries match."""
