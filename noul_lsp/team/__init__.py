"""A team's shared store on PostgreSQL + pgvector (opt-in, by a connection setting).

Two things live there. The vectors of every (model, content hash) any teammate computed, so a second
machine opening the same code embeds nothing (`vectors.py`); and an organisation index of many
repositories' chunks, searched with the same ranking stages as a local workspace (`org.py`). Access is
PostgreSQL's own: roles, and row-level security on every table that holds chunk text (`schema.py`).
The local LMDB index stays the default and the cache; nothing here is imported unless a shared store is
configured, and psycopg is an extra (`pip install "noul-lsp[team]"`).
"""
