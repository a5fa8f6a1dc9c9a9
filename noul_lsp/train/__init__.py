"""Training noul's own models: mining (query, code) pairs from git history (torch-free, `mine`), then
fine-tuning an embedder and a cross-encoder on them (`fit`, the `train` extra)."""
