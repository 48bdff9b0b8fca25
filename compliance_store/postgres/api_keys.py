"""API keys (looked up by their unique SHA-256 hash) and their per-day request counters."""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import cattrs
import psycopg

from compliance_core.areas.api_keys import API_KEYS, ApiKey, DailyUsage
from compliance_core.kernel.clock import utc
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.permissions import Role

from .codec import Mapper, stream
from .listing import PagedQuery

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["PostgresApiKeys"]

# One round trip: count the day's requests and stamp the key (the later stamp wins).
_RECORD_USE = (
    "WITH counted AS (INSERT INTO key_usage AS u (key_id, day, requests) VALUES (%(key)s, %(day)s, %(count)s) "
    "ON CONFLICT (key_id, day) DO UPDATE SET requests = u.requests + EXCLUDED.requests) "
    "UPDATE api_keys SET last_used_at = %(at)s WHERE id = %(key)s AND (last_used_at IS NULL OR last_used_at < %(at)s)"
)
_USAGE = "SELECT day, requests FROM key_usage WHERE key_id = %s AND day >= %s ORDER BY day"
_DUMP_USAGE = "SELECT key_id, day, requests FROM key_usage ORDER BY key_id, day"
_ADD_USAGE = "INSERT INTO key_usage (key_id, day, requests) VALUES (%s, %s, %s)"
# Served by the partial index api_keys_active_by_role.
_COUNT_ACTIVE = (
    "SELECT count(*) FROM api_keys WHERE organization_id = %s AND role = %s AND revoked_at IS NULL "
    "AND (expires_at IS NULL OR expires_at > %s)"
)


class PostgresApiKeys:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> PagedQuery[ApiKey]:
        """The page queries, with the search, sorts and range ``API_KEYS`` declares."""
        mapper: Mapper[ApiKey] = Mapper(table.model, table.table, converter, table.key)
        return PagedQuery(mapper, listing=API_KEYS.listing, indexed=API_KEYS.indexed)

    def __init__(self, cur: psycopg.Cursor[Any], pages: PagedQuery[ApiKey], *, write: bool) -> None:
        mapper = pages.mapper
        self._cur = cur
        self._mapper = mapper
        self._pages = pages
        self._add_sql = f"{mapper.insert_sql} ON CONFLICT (secret_hash) DO NOTHING"
        self._get_sql = f"{mapper.select_sql} WHERE id = %s AND organization_id = %s"
        self._by_hash_sql = f"{mapper.select_sql} WHERE secret_hash = %s"

    def add(self, key: ApiKey) -> None:
        # ON CONFLICT rather than a failing statement: a failed statement would abort the whole
        # PostgreSQL transaction, where SQLite undoes the statement alone.
        if not self._cur.execute(self._add_sql, self._mapper.to_row(key)).rowcount:
            raise Conflict("an API key with this value already exists")

    def update(self, key: ApiKey) -> None:
        self._cur.execute(self._mapper.update_sql, self._mapper.update_params(key))

    def get(self, organization_id: str, key_id: str) -> ApiKey | None:
        row = self._cur.execute(self._get_sql, (key_id, organization_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def find_by_hash(self, secret_hash: str) -> ApiKey | None:
        row = self._cur.execute(self._by_hash_sql, (secret_hash,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(self, organization_id: str, page: PageRequest) -> tuple[Sequence[ApiKey], int]:
        return self._pages.run(self._cur, organization_id, None, page)

    def count_active(self, organization_id: str, role: Role, now: dt.datetime) -> int:
        row = self._cur.execute(_COUNT_ACTIVE, (organization_id, Role(role).value, now)).fetchone()
        return 0 if row is None else int(row[0])

    def record_use(self, key_id: str, at: dt.datetime, count: int = 1) -> None:
        """Count ``count`` requests on ``at``'s UTC day and stamp the key, inside the caller's transaction."""
        at = utc(at)
        self._cur.execute(_RECORD_USE, {"key": key_id, "day": at.date(), "count": count, "at": at})

    def usage(self, key_id: str, since: dt.date) -> builtins.list[DailyUsage]:
        rows = self._cur.execute(_USAGE, (key_id, since)).fetchall()
        return [DailyUsage(date=day, requests=requests) for day, requests in rows]

    # --- copying a store (``compliance_store.copy``) ---

    def dump(self) -> Iterator[ApiKey]:
        """Every key of every organization, by id, read in batches."""
        return map(self._mapper.from_row, stream(self._cur, f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        """Delete every key (not their usage: see ``clear_usage``); returns how many."""
        return self._cur.execute("DELETE FROM api_keys").rowcount

    def dump_usage(self) -> Iterator[tuple[str, DailyUsage]]:
        """Every key's per-day request counts, by (key id, day), read in batches."""
        for key_id, day, requests in stream(self._cur, _DUMP_USAGE):
            yield key_id, DailyUsage(date=day, requests=requests)

    def add_usage(self, key_id: str, usage: DailyUsage) -> None:
        """Store one day's count as it is (a day already counted is an error)."""
        self._cur.execute(_ADD_USAGE, (key_id, usage.date, usage.requests))

    def clear_usage(self) -> int:
        return self._cur.execute("DELETE FROM key_usage").rowcount
