"""API keys (looked up by their unique SHA-256 hash) and their per-day request counters."""

from __future__ import annotations

import builtins
import datetime as dt
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import cattrs

from compliance_core.areas.api_keys import API_KEYS, ApiKey, DailyUsage
from compliance_core.kernel.clock import utc
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.permissions import Role

from .codec import Mapper, decode_date, encode_date, encode_timestamp
from .listing import PagedQuery

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["SqliteApiKeys"]

_COUNT_USE = (
    "INSERT INTO key_usage (key_id, day, requests) VALUES (?, ?, ?) "
    "ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests"
)
# ISO 8601 UTC text sorts in time order, so the later stamp wins.
_TOUCH = "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?1)"
_USAGE = "SELECT day, requests FROM key_usage WHERE key_id = ? AND day >= ? ORDER BY day"
_DUMP_USAGE = "SELECT key_id, day, requests FROM key_usage ORDER BY key_id, day"
_ADD_USAGE = "INSERT INTO key_usage (key_id, day, requests) VALUES (?, ?, ?)"
# Served by the partial index api_keys_active_by_role (migration 0005) alone.
_COUNT_ACTIVE = (
    "SELECT count(*) FROM api_keys WHERE organization_id = ? AND role = ? AND revoked_at IS NULL "
    "AND (expires_at IS NULL OR expires_at > ?)"
)


class SqliteApiKeys:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> PagedQuery[ApiKey]:
        """The page queries, with the search, sorts and range ``API_KEYS`` declares."""
        mapper: Mapper[ApiKey] = Mapper(table.model, table.table, converter, table.key)
        return PagedQuery(mapper, listing=API_KEYS.listing, indexed=API_KEYS.indexed)

    def __init__(self, conn: sqlite3.Connection, pages: PagedQuery[ApiKey]) -> None:
        mapper = pages.mapper
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE id = ? AND organization_id = ?"
        self._by_hash_sql = f"{mapper.select_sql} WHERE secret_hash = ?"

    def add(self, key: ApiKey) -> None:
        try:
            self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(key))
        except sqlite3.IntegrityError as error:
            if "api_keys.secret_hash" in str(error):
                raise Conflict("an API key with this value already exists") from None
            raise

    def update(self, key: ApiKey) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(key))

    def get(self, organization_id: str, key_id: str) -> ApiKey | None:
        row = self._conn.execute(self._get_sql, (key_id, organization_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def find_by_hash(self, secret_hash: str) -> ApiKey | None:
        row = self._conn.execute(self._by_hash_sql, (secret_hash,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(self, organization_id: str, page: PageRequest) -> tuple[Sequence[ApiKey], int]:
        return self._pages.run(self._conn, organization_id, None, page)

    def count_active(self, organization_id: str, role: Role, now: dt.datetime) -> int:
        row = self._conn.execute(_COUNT_ACTIVE, (organization_id, Role(role).value, encode_timestamp(now))).fetchone()
        return int(row[0])

    def record_use(self, key_id: str, at: dt.datetime, count: int = 1) -> None:
        """Count ``count`` requests on ``at``'s UTC day and stamp the key, inside the caller's transaction."""
        at = utc(at)
        self._conn.execute(_COUNT_USE, (key_id, encode_date(at.date()), count))
        self._conn.execute(_TOUCH, (encode_timestamp(at), key_id))

    def usage(self, key_id: str, since: dt.date) -> builtins.list[DailyUsage]:
        rows = self._conn.execute(_USAGE, (key_id, encode_date(since)))
        return [DailyUsage(date=decode_date(day), requests=requests) for day, requests in rows]

    # --- copying a store (``compliance_store.copy``) ---

    def dump(self) -> Iterator[ApiKey]:
        """Every key of every organization, by id, read lazily."""
        return map(self._mapper.from_row, self._conn.execute(f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        """Delete every key (not their usage: see ``clear_usage``); returns how many."""
        return self._conn.execute("DELETE FROM api_keys").rowcount

    def dump_usage(self) -> Iterator[tuple[str, DailyUsage]]:
        """Every key's per-day request counts, by (key id, day), read lazily."""
        for key_id, day, requests in self._conn.execute(_DUMP_USAGE):
            yield key_id, DailyUsage(date=decode_date(day), requests=requests)

    def add_usage(self, key_id: str, usage: DailyUsage) -> None:
        """Store one day's count as it is (a day already counted is an error)."""
        self._conn.execute(_ADD_USAGE, (key_id, encode_date(usage.date), usage.requests))

    def clear_usage(self) -> int:
        return self._conn.execute("DELETE FROM key_usage").rowcount
