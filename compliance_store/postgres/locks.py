"""The two advisory locks of the store, both transaction-scoped and keyed by schema.

``pg_advisory_xact_lock(class, id)`` takes two 32-bit keys: the class says which lock (writers,
migrations), the id which schema, so instances in different schemas of one database do not queue
for each other (two schema names with the same CRC-32 would only share a queue, never data).
"""

from __future__ import annotations

import zlib

__all__ = ["WRITERS", "MIGRATIONS", "schema_key"]

WRITERS = 0x636F6D70
"""Every write session of the store takes ``(WRITERS, schema_key)`` first ("comp")."""
MIGRATIONS = 0x636F6D6D
"""Start-up takes ``(MIGRATIONS, schema_key)`` around migrating ("comm")."""


def schema_key(schema: str) -> int:
    """A signed 32-bit key for ``schema`` (stable across processes and releases)."""
    key = zlib.crc32(schema.encode())
    return key - (1 << 32) if key >= 1 << 31 else key
