"""PostgreSQL's repository of every declared ``Records`` table: the shared ``ScopedRecords`` on one
session's cursor, dumping in batches through a server-side cursor."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, TypeVar

import psycopg

from compliance_core.areas.webhooks import WebhookDelivery

from ..deliveries import ScopedDeliveries
from ..records import ScopedRecords
from .codec import Mapper, stream
from .listing import PagedQuery

__all__ = ["PostgresRecords", "PostgresDeliveries"]

M = TypeVar("M")


class PostgresRecords(ScopedRecords[M]):
    MAPPER: ClassVar[type[Mapper[Any]]] = Mapper
    PAGES: ClassVar[type[PagedQuery[Any]]] = PagedQuery

    def __init__(self, cur: psycopg.Cursor[Any], pages: PagedQuery[M], *, write: bool) -> None:
        super().__init__(cur, pages)
        self._cur = cur

    def dump(self) -> Iterator[M]:
        """Every record of every organization, by (organization_id, id), read in batches
        (``compliance_store.copy``)."""
        return map(self._mapper.from_row, stream(self._cur, self._dump_sql))


class PostgresDeliveries(ScopedDeliveries, PostgresRecords[WebhookDelivery]):
    """The webhook deliveries table, with the engine's ``due`` query."""
