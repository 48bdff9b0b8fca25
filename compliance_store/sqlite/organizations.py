"""Organizations: the tenants."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

import cattrs

from compliance_core.areas.organizations import Organization

from .codec import Mapper

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["SqliteOrganizations"]


class SqliteOrganizations:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> Mapper[Organization]:
        return Mapper(table.model, table.table, converter, table.key)

    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[Organization]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._get_sql = f"{mapper.select_sql} WHERE id = ?"
        self._slug_sql = f"{mapper.select_sql} WHERE slug = ?"

    def add(self, organization: Organization) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(organization))

    def update(self, organization: Organization) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(organization))

    def get(self, organization_id: str) -> Organization | None:
        row = self._conn.execute(self._get_sql, (organization_id,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def find_slug(self, slug: str) -> Organization | None:
        row = self._conn.execute(self._slug_sql, (slug,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM organizations").fetchone()[0])

    def list_all(self) -> list[Organization]:
        return self._mapper.from_rows(self._conn.execute(f"{self._mapper.select_sql} ORDER BY created_at, id"))

    def dump(self) -> Iterator[Organization]:
        """Every organization, by id, read lazily (``compliance_store.copy``)."""
        return map(self._mapper.from_row, self._conn.execute(f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        """Delete every organization; returns how many (``compliance_store.copy``)."""
        return self._conn.execute("DELETE FROM organizations").rowcount
