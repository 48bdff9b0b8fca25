"""The transactional outbox: one row per domain event, written in the change's transaction."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import cattrs

from compliance_core.kernel.events import OutboxMessage

from .codec import Mapper, encode_timestamp

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["SqliteOutbox"]


class SqliteOutbox:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> Mapper[OutboxMessage]:
        return Mapper(table.model, table.table, converter, table.key)

    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[OutboxMessage]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._pending_sql = f"{mapper.select_sql} WHERE published_at IS NULL ORDER BY occurred_at, id LIMIT ?"

    def add(self, message: OutboxMessage) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(message))

    def pending(self, limit: int = 100) -> list[OutboxMessage]:
        """Unpublished messages, oldest first."""
        return self._mapper.from_rows(self._conn.execute(self._pending_sql, (limit,)))

    def mark_published(self, message_ids: Iterable[str], at: dt.datetime) -> None:
        stamp = encode_timestamp(at)
        self._conn.executemany(
            "UPDATE outbox SET published_at = ? WHERE id = ?", [(stamp, message_id) for message_id in message_ids]
        )

    def purge(self, before: dt.datetime) -> int:
        """A range of the ``outbox_pending`` index, whose first column is ``published_at``."""
        return self._conn.execute(
            "DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < ?", (encode_timestamp(before),)
        ).rowcount

    def dump(self) -> Iterator[OutboxMessage]:
        """Every message, published or not, by id, read lazily (``compliance_store.copy``)."""
        return map(self._mapper.from_row, self._conn.execute(f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        return self._conn.execute("DELETE FROM outbox").rowcount
