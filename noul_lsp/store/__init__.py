"""Persistent per-workspace index storage (LMDB). Nothing outside this package imports lmdb."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from noul_lsp.store.lmdb_store import (
    CHANGE_LOG_KEEP,
    Changes,
    ChunkRecord,
    ChunkStore,
    FileRecord,
    IndexDamaged,
    IndexLocked,
    StoreError,
    WriteBatch,
    set_aside,
)

__all__ = ["CHANGE_LOG_KEEP", "Changes", "ChunkRecord", "ChunkStore", "FileRecord", "IndexDamaged", "IndexLocked", "StoreError", "WriteBatch",
           "cache_root", "delete_index", "index_directory", "set_aside"]


def cache_root(configured: str = "") -> Path:
    """Where indexes and downloaded models live: the setting, $NOUL_CACHE_DIR, or the user cache dir."""
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("NOUL_CACHE_DIR"):
        return Path(os.environ["NOUL_CACHE_DIR"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("noul", appauthor=False))


def delete_index(directory: Path) -> None:
    """Remove an index folder entirely (for `--rebuild`, also when it is too corrupt to open)."""
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


def index_directory(root: Path, configured_cache: str = "") -> Path:
    """The index folder of a workspace root: readable name plus a digest of the absolute path."""
    resolved = str(Path(root).resolve())
    digest = hashlib.sha1(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(resolved).name)[:40] or "root"
    return cache_root(configured_cache) / "indexes" / f"{name}-{digest}"
