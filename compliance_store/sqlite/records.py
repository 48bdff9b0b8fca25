"""Records that belong to one organization (vendors, findings, people): one repository shape.

Get, add, update, a filtered page and the organization's revision differ between these areas
only in the table and the model, which the ``Mapper`` already carries.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Generic, TypeVar

from compliance_core.pagination import PageRequest

from .codec import Mapper
from .listing import PagedQuery, read_revision

__all__ = ["SqliteRecords"]

M = TypeVar("M")


class SqliteRecords(Generic[M]):
    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[M], pages: PagedQuery[M]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = ? AND id = ?"

    def revision(self, organization_id: str) -> int:
        return read_revision(self._conn, self._mapper.table, organization_id)

    def add(self, item: M) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(item))

    def update(self, item: M) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(item))

    def get(self, organization_id: str, item_id: str) -> M | None:
        row = self._conn.execute(self._get_sql, (organization_id, item_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[list[M], int]:
        return self._pages.run(self._conn, organization_id, filters, page)
