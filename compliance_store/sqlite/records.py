"""SQLite's repository of every declared ``Records`` table: the shared ``ScopedRecords`` on one
thread's connection."""

from __future__ import annotations

import sqlite3
from typing import Any, ClassVar, TypeVar

from compliance_core.areas.webhooks import WebhookDelivery

from ..deliveries import ScopedDeliveries
from ..records import ScopedRecords
from .codec import Mapper
from .listing import PagedQuery

__all__ = ["SqliteRecords", "SqliteDeliveries"]

M = TypeVar("M")


class SqliteRecords(ScopedRecords[M]):
    MAPPER: ClassVar[type[Mapper[Any]]] = Mapper
    PAGES: ClassVar[type[PagedQuery[Any]]] = PagedQuery

    def __init__(self, conn: sqlite3.Connection, pages: PagedQuery[M]) -> None:
        super().__init__(conn, pages)
        self._conn = conn


class SqliteDeliveries(ScopedDeliveries, SqliteRecords[WebhookDelivery]):
    """The webhook deliveries table, with the engine's ``due`` query."""
