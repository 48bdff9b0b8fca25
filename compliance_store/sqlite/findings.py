"""Findings."""

from __future__ import annotations

import sqlite3

from compliance_core.findings import Finding, FindingFilter
from compliance_core.pagination import PageRequest

from .codec import Mapper
from .listing import PagedQuery, read_revision

__all__ = ["SqliteFindings"]


class SqliteFindings:
    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[Finding], pages: PagedQuery[Finding]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = ? AND id = ?"

    def revision(self, organization_id: str) -> int:
        return read_revision(self._conn, "findings", organization_id)

    def add(self, finding: Finding) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(finding))

    def update(self, finding: Finding) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(finding))

    def get(self, organization_id: str, finding_id: str) -> Finding | None:
        row = self._conn.execute(self._get_sql, (organization_id, finding_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(self, organization_id: str, filters: FindingFilter, page: PageRequest) -> tuple[list[Finding], int]:
        return self._pages.run(self._conn, organization_id, filters, page)
