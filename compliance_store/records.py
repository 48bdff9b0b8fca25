"""The repository of every declared ``Records`` table (vendors, findings, people's base), shared
by the SQLite and PostgreSQL stores: a store subclass names its mapper and page-query classes and
hands in its connection (sqlite3) or cursor (psycopg), which both ``execute``.

Get, add, update, delete, a filtered page and the organization's revision differ between areas
only in the table, the model and the filters, which the ``Mapper`` and ``PagedQuery`` carry. The
table's triggers (see ``migrations.helpers``) keep its block counts and revision in step with
every insert, update and delete, inside the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import cattrs

from compliance_core.kernel.pages import PageRequest

from .codec import BaseMapper
from .listing import PagedQuery
from .registry import facet_names

if TYPE_CHECKING:
    from .registry import Table

__all__ = ["ScopedRecords"]

M = TypeVar("M")


class ScopedRecords(Generic[M]):
    MAPPER: ClassVar[type[BaseMapper[Any]]]
    PAGES: ClassVar[type[PagedQuery[Any]]]

    @classmethod
    def prepare(cls, table: Table, converter: cattrs.Converter) -> PagedQuery[Any]:
        """The mapper and page queries, built once per store from the ``Records`` declaration."""
        records = table.records
        assert records is not None, f"{table.name} is not a declared Records table"
        mapper = cls.MAPPER(table.model, table.table, converter, table.key)
        return cls.PAGES(
            mapper,
            records.filters,
            partition=records.partition,
            newest_first=records.newest_first,
            blocked=True,
            facets=facet_names(table),
            listing=records.listing,
            indexed=records.indexed,
            within=records.within,
        )

    def __init__(self, db: Any, pages: PagedQuery[M]) -> None:
        mapper = pages.mapper
        m = mapper.mark
        self._db = db
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = {m} AND id = {m}"
        self._delete_sql = f"DELETE FROM {mapper.table} WHERE organization_id = {m} AND id = {m}"
        self._dump_sql = f"{mapper.select_sql} ORDER BY organization_id, created_at, id"

    def revision(self, organization_id: str) -> int:
        return self._pages.revision(self._db, organization_id)

    def add(self, item: M) -> None:
        self._db.execute(self._mapper.insert_sql, self._mapper.to_row(item))

    def update(self, item: M) -> None:
        self._db.execute(self._mapper.update_sql, self._mapper.update_params(item))

    def delete(self, organization_id: str, item_id: str) -> bool:
        """Remove the record; False when there was none (then nothing, not even the revision,
        changes: the triggers fire per deleted row)."""
        return bool(self._db.execute(self._delete_sql, (organization_id, item_id)).rowcount > 0)

    def get(self, organization_id: str, item_id: str) -> M | None:
        row = self._db.execute(self._get_sql, (organization_id, item_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

    def list(
        self,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        revision: int | None = None,
    ) -> tuple[Sequence[M], int]:
        """The page, and ``total`` when the caller knows it (then nothing is counted)."""
        return self._pages.run(self._db, organization_id, filters, page, total, revision)

    def dump(self) -> Iterator[M]:
        """Every record of every organization in list order, by (organization_id, created_at,
        id), read lazily (``compliance_store.copy``)."""
        return map(self._mapper.from_row, self._db.execute(self._dump_sql))

    def clear(self) -> int:
        """Delete every record of every organization (the triggers keep the counts and bump the
        revisions); returns how many (``compliance_store.copy``)."""
        return int(self._db.execute(f"DELETE FROM {self._mapper.table}").rowcount)
