"""Organizations: the tenants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import cattrs
import psycopg

from compliance_core.areas.organizations import Organization

from .codec import Mapper, scalar, stream

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["PostgresOrganizations"]


class PostgresOrganizations:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> Mapper[Organization]:
        return Mapper(table.model, table.table, converter, table.key)

    def __init__(self, cur: psycopg.Cursor[Any], mapper: Mapper[Organization], *, write: bool) -> None:
        self._cur = cur
        self._mapper = mapper
        self._get_sql = f"{mapper.select_sql} WHERE id = %s"
        self._slug_sql = f"{mapper.select_sql} WHERE slug = %s"
        self._all_sql = f"{mapper.select_sql} ORDER BY created_at, id"

    def add(self, organization: Organization) -> None:
        self._cur.execute(self._mapper.insert_sql, self._mapper.to_row(organization))

    def update(self, organization: Organization) -> None:
        self._cur.execute(self._mapper.update_sql, self._mapper.update_params(organization))

    def get(self, organization_id: str) -> Organization | None:
        row = self._cur.execute(self._get_sql, (organization_id,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def find_slug(self, slug: str) -> Organization | None:
        row = self._cur.execute(self._slug_sql, (slug,)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def count(self) -> int:
        return int(scalar(self._cur, "SELECT count(*) FROM organizations"))

    def list_all(self) -> list[Organization]:
        """Every organization, oldest first."""
        return self._mapper.from_rows(self._cur.execute(self._all_sql).fetchall())

    def dump(self) -> Iterator[Organization]:
        """Every organization, by id, read in batches (``compliance_store.copy``)."""
        return map(self._mapper.from_row, stream(self._cur, f"{self._mapper.select_sql} ORDER BY id"))

    def clear(self) -> int:
        """Delete every organization; returns how many (``compliance_store.copy``)."""
        return self._cur.execute("DELETE FROM organizations").rowcount
