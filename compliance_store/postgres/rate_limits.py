"""Token buckets, one row per API key, shared by every process and machine using the database.

``get`` then ``put`` is a read-check-write; it is atomic because the write session that runs it
holds the store's writer lock (see ``store``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import cattrs
import psycopg

from compliance_core.kernel.ratelimit import Bucket

from .codec import stream

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["PostgresRateLimits"]

_GET = "SELECT tokens, updated_at FROM rate_limit_buckets WHERE key_id = %s"
_DUMP = "SELECT key_id, tokens, updated_at FROM rate_limit_buckets ORDER BY key_id"
_PUT = (
    "INSERT INTO rate_limit_buckets (key_id, tokens, updated_at) VALUES (%s, %s, %s) "
    "ON CONFLICT (key_id) DO UPDATE SET tokens = EXCLUDED.tokens, updated_at = EXCLUDED.updated_at"
)


class PostgresRateLimits:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> None:
        return None

    def __init__(self, cur: psycopg.Cursor[Any], prepared: None = None, *, write: bool) -> None:
        self._cur = cur

    def get(self, key_id: str) -> Bucket | None:
        row = self._cur.execute(_GET, (key_id,)).fetchone()
        return None if row is None else Bucket(tokens=row[0], updated_at=row[1])

    def put(self, key_id: str, bucket: Bucket) -> None:
        self._cur.execute(_PUT, (key_id, float(bucket.tokens), bucket.updated_at))

    def dump(self) -> Iterator[tuple[str, Bucket]]:
        """Every key's bucket, by key id, read in batches (``compliance_store.copy``)."""
        for key_id, tokens, updated_at in stream(self._cur, _DUMP):
            yield key_id, Bucket(tokens=tokens, updated_at=updated_at)

    def clear(self) -> int:
        return self._cur.execute("DELETE FROM rate_limit_buckets").rowcount
