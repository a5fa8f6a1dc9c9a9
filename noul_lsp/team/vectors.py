"""Embed once per team: vectors by (model key, content hash), asked for before embedding and published
after. A vector is keyed exactly as in the local index (the model's id and token budget, and the hash of
the text it embeds), so a fetched vector is the one this machine would have computed.

The share never stops indexing: when the store is unreachable (or a call fails), it says why in `problem`,
answers "nothing found" for a minute (then tries again), and the indexer embeds locally; what it computed
meanwhile is offered once the store answers again (`Indexer._publish_backlog`)."""

from __future__ import annotations

import time

import numpy as np

from noul_lsp.team.schema import RETRY_SECONDS, SharedStoreError, StoreUnreachable, as_array, connect, described

#: hashes per fetch call (one round trip each; a ~400 KB array of text at most)
FETCH_BATCH = 5000


class VectorShare:
    """The shared vectors of one store, over one lazily opened connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._connection = None
        #: why the store is not used ("" while it works)
        self.problem = ""
        #: whether the problem may pass (the store unreachable, the connection lost), not a refusal that stays
        #: (not a member, no rights): vectors computed meanwhile are worth offering later only then
        self.transient = False
        self.fetched = 0
        self.published = 0
        self._failed_at = 0.0

    def _connect(self):
        if self.problem and time.monotonic() - self._failed_at >= RETRY_SECONDS:
            self.problem = ""
        if self._connection is None and not self.problem:
            try:
                self._connection = connect(self.url)
            except SharedStoreError as error:
                self.problem, self._failed_at = str(error), time.monotonic()
                self.transient = isinstance(error, StoreUnreachable)
        return self._connection

    def _failed(self, what: str, error: Exception) -> None:
        import psycopg

        self.problem, self._failed_at = f"{what} failed ({described(error, self.url)})", time.monotonic()
        self.transient = isinstance(error, psycopg.OperationalError)  # the connection, not a refusal
        self.close()

    def fetch(self, model_key: str, hashes: list[str]) -> dict[str, np.ndarray]:
        """The shared vectors of these hashes (those nobody published are simply absent)."""
        connection = self._connect()
        if connection is None or not hashes:
            return {}
        import psycopg

        found: dict[str, np.ndarray] = {}
        try:
            for start in range(0, len(hashes), FETCH_BATCH):
                rows = connection.cursor(binary=True).execute("SELECT hash, embedding FROM noul.fetch_vectors(%s, %s)",
                                          (model_key, hashes[start:start + FETCH_BATCH])).fetchall()
                found.update((h, as_array(v)) for h, v in rows)
        except psycopg.Error as error:
            self._failed("fetching shared vectors", error)
            return {}
        self.fetched += len(found)
        return found

    def publish(self, model_key: str, items: list[tuple[str, np.ndarray]]) -> None:
        """Offer what this machine computed (a hash another member published first is left as it is)."""
        connection = self._connect()
        if connection is None or not items:
            return
        import psycopg

        try:
            with connection.cursor() as cursor:
                cursor.executemany("INSERT INTO noul.vectors (model, hash, embedding) VALUES (%s, %s, %s) "
                                   "ON CONFLICT DO NOTHING",
                                   [(model_key, h, np.asarray(v, dtype=np.float32)) for h, v in items])
        except psycopg.Error as error:
            self._failed("publishing vectors", error)
            return
        self.published += len(items)

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None
