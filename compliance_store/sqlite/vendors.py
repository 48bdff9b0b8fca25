"""The vendor register."""

from __future__ import annotations

import sqlite3

from compliance_core.pagination import PageRequest
from compliance_core.vendors import Vendor, VendorFilter

from .codec import Mapper
from .listing import PagedQuery, read_revision

__all__ = ["SqliteVendors"]


class SqliteVendors:
    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[Vendor], pages: PagedQuery[Vendor]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = ? AND id = ?"

    def revision(self, organization_id: str) -> int:
        return read_revision(self._conn, "vendors", organization_id)

    def add(self, vendor: Vendor) -> None:
        self._conn.execute(self._mapper.insert_sql, self._mapper.to_row(vendor))

    def update(self, vendor: Vendor) -> None:
        self._conn.execute(self._mapper.update_sql, self._mapper.update_params(vendor))

    def get(self, organization_id: str, vendor_id: str) -> Vendor | None:
        row = self._conn.execute(self._get_sql, (organization_id, vendor_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(self, organization_id: str, filters: VendorFilter, page: PageRequest) -> tuple[list[Vendor], int]:
        return self._pages.run(self._conn, organization_id, filters, page)
