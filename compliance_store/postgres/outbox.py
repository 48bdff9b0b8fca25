"""The transactional outbox: one row per domain event, written in the change's transaction.

In a write session ``pending`` claims the rows it returns (``FOR UPDATE SKIP LOCKED``): until
that transaction ends, no other transaction can claim, change or delete them, and a concurrent
claimer skips them instead of waiting, so N delivering workers never take one message twice. A
read session only looks (a read-only transaction cannot lock rows).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import cattrs
import psycopg

from compliance_core.kernel.events import OutboxMessage

from .codec import Mapper, stream

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["PostgresOutbox"]

_MARK = "UPDATE outbox SET published_at = %s WHERE id = ANY(%s)"


class PostgresOutbox:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> Mapper[OutboxMessage]:
        return Mapper(table.model, table.table, converter, table.key)

    def __init__(self, cur: psycopg.Cursor[Any], mapper: Mapper[OutboxMessage], *, write: bool) -> None:
        self._cur = cur
        self._mapper = mapper
        self._pending_sql = f"{mapper.select_sql} WHERE published_at IS NULL ORDER BY occurred_at, id LIMIT %s"
        if write:
            self._pending_sql += " FOR UPDATE SKIP LOCKED"

    def add(self, message: OutboxMessage) -> None:
        self._cur.execute(self._mapper.insert_sql, self._mapper.to_row(message))

    def pending(self, limit: int = 100) -> list[OutboxMessage]:
        """Unpublished messages, oldest first (claimed until the transaction ends, in a write)."""
        return self._mapper.from_rows(self._cur.execute(self._pending_sql, (limit,)).fetchall())

    def mark_published(self, message_ids: Iterable[str], at: dt.datetime) -> None:
        ids = list(message_ids)
        if ids:
            self._cur.execute(_MARK, (at, ids))

    def purge(self, before: dt.datetime) -> int:
        """A range of the ``outbox_published`` index (migration 0010)."""
        return self._cur.execute(
            "DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < %s", (before,)
        ).rowcount

    def dump(self) -> Iterator[OutboxMessage]:
        """Every message, published or not, by id, read in batches (``compliance_store.copy``)."""
        return map(self._mapper.from_row, stream(self._cur, f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        return self._cur.execute("DELETE FROM outbox").rowcount
