"""The repository of every declared ``Records`` table (vendors, findings, people's base).

Get, add, update, delete, a filtered page and the organization's revision differ between areas
only in the table, the model and the filters, which the ``Mapper`` and ``PagedQuery`` carry. The
table's triggers (see ``migrations.helpers``) keep its list count and revision in step with every
insert, update and delete, inside the same transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import cattrs

from compliance_core.kernel.pagination import Anchors, PageRequest

from .codec import Mapper
from .listing import PagedQuery, read_revision

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["SqliteRecords"]

M = TypeVar("M")


class SqliteRecords(Generic[M]):
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> PagedQuery[Any]:
        """The mapper and page queries, built once per store from the ``Records`` declaration."""
        records = table.records
        assert records is not None, f"{table.name} is not a declared Records table"
        mapper: Mapper[Any] = Mapper(table.model, table.table, converter, table.key)
        return PagedQuery(mapper, records.filters, counted=True, partition=records.partition)

    def __init__(self, conn: sqlite3.Connection, pages: PagedQuery[M]) -> None:
        mapper = pages.mapper
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = ? AND id = ?"
        self._delete_sql = f"DELETE FROM {mapper.table} WHERE organization_id = ? AND id = ?"
        self._dump_sql = f"{mapper.select_sql} ORDER BY organization_id, id"

    def revision(self, organization_id: str) -> int:
        return read_revision(self._conn, self._mapper.table, organization_id)

    def add(self, item: M) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(item))

    def update(self, item: M) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(item))

    def delete(self, organization_id: str, item_id: str) -> bool:
        """Remove the record; False when there was none (then nothing, not even the revision,
        changes: the triggers fire per deleted row)."""
        return self._conn.execute(self._delete_sql, (organization_id, item_id)).rowcount > 0

    def get(self, organization_id: str, item_id: str) -> M | None:
        row = self._conn.execute(self._get_sql, (organization_id, item_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(
        self,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        anchors: Anchors | None = None,
    ) -> tuple[list[M], int]:
        """The page, and ``total`` when the caller knows it (then nothing is counted)."""
        return self._pages.run(self._conn, organization_id, filters, page, total, anchors)

    def dump(self) -> Iterator[M]:
        """Every record of every organization, by (organization_id, id), read lazily
        (``compliance_store.copy``)."""
        return map(self._mapper.from_row, self._conn.execute(self._dump_sql))

    def clear(self) -> int:
        """Delete every record of every organization (the triggers keep the counts and bump the
        revisions); returns how many (``compliance_store.copy``)."""
        return self._conn.execute(f"DELETE FROM {self._mapper.table}").rowcount
