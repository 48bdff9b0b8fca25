"""Token buckets, one row per API key, shared by every process using the file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

import cattrs

from compliance_core.kernel.ratelimit import Bucket

from .codec import decode_timestamp, encode_timestamp

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["SqliteRateLimits"]

_GET = "SELECT tokens, updated_at FROM rate_limit_buckets WHERE key_id = ?"
_PUT = (
    "INSERT INTO rate_limit_buckets (key_id, tokens, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT (key_id) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at"
)


class SqliteRateLimits:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> None:
        return None

    def __init__(self, conn: sqlite3.Connection, prepared: None = None) -> None:
        self._conn = conn

    def get(self, key_id: str) -> Bucket | None:
        row = self._conn.execute(_GET, (key_id,)).fetchone()
        return None if row is None else Bucket(tokens=row[0], updated_at=decode_timestamp(row[1]))

    def put(self, key_id: str, bucket: Bucket) -> None:
        self._conn.execute(_PUT, (key_id, bucket.tokens, encode_timestamp(bucket.updated_at)))

    def dump(self) -> Iterator[tuple[str, Bucket]]:
        """Every key's bucket, by key id, read lazily (``compliance_store.copy``)."""
        rows = self._conn.execute("SELECT key_id, tokens, updated_at FROM rate_limit_buckets ORDER BY key_id")
        for key_id, tokens, updated_at in rows:
            yield key_id, Bucket(tokens=tokens, updated_at=decode_timestamp(updated_at))

    def clear(self) -> int:
        return self._conn.execute("DELETE FROM rate_limit_buckets").rowcount
