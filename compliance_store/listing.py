"""Filtered, ordered pages pushed down into SQL.

Shared by the SQLite and PostgreSQL stores (each passes its parameter marker through the mapper
and names its counter's partition column). A filter object's non-None fields become ``AND column
= ?`` terms. The SELECT and COUNT text is built once per combination of filters in use and then
reused word for word, so sqlite3's statement cache and psycopg's prepared statements keep each one
prepared. An unfiltered page (of a partitioned table such as vendors: filtered by the
partition alone) takes its total from the trigger-maintained ``list_counts`` row instead of
counting an index range, and a page filtered on one or two columns from the trigger-maintained
``list_facets`` row of those values (the counts of migration SQLite 0011 / PostgreSQL 0008), so
a total is counted only for three filters or more.

A caller that already knows the total (``compliance_core.kernel.pagination.TotalCache``: the
total of this filter set, counted at the revision read in this same read transaction) passes it,
and no count runs at all: a page is then one SELECT, and a page past the end none.

No OFFSET walk: with ``Anchors`` (every 500th row's (created_at, id), kept by the same cache at
the same revision; see there why they are collected by hops rather than by one scan replacing
the count), a page at offset ``o >= every`` seeks: ``AND (created_at, id) >= (anchor) ... LIMIT n
OFFSET o - every * k``, a range of the same filter index (which ends in ``created_at, id``), so
fewer than ``every`` rows are skipped. Missing anchors up to the page are collected first, each
by ``LIMIT 1 OFFSET every`` from the last one over the covering index (only the key columns).
The count, and every page below ``every``, run exactly as without anchors.

A cursor walk (``PageRequest.walk``) needs no anchors: each page starts right after the last
row served, ``AND (created_at, id) > (?, ?) ... LIMIT n``, one range of the same index whatever
the depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

import attrs

from compliance_core.kernel.pagination import Anchors, PageRequest

from .codec import BaseMapper, quote

__all__ = ["PagedQuery"]

M = TypeVar("M")


class PagedQuery(Generic[M]):
    """Pages of one table within an organization, ordered by (created_at, id).

    :param mapper: the table's mapper
    :param filter_type: an attrs class whose fields name columns (None: no filters)
    :param counted: whether ``list_counts`` keeps this table's totals (the migration helper's
        triggers do for every ``Records`` table), keyed by organization and partition value
    :param partition: the boolean column counted separately (``archived``); the counter then
        answers the lists filtered by it alone, which is every unfiltered list when it is a filter
        field
    :param newest_first: pages run in (created_at, id) descending order (logs); seeks and anchor
        hops then compare with ``<=``, over the same indexes read backwards
    :param faceted: whether ``list_facets`` keeps this table's totals per value of each filter
        column and per pair of values (``helpers.count_facets`` in each store's migrations), with
        the pair's columns in the filter model's order
    """

    COUNTER_COLUMN: ClassVar[str]
    """The column of ``list_counts`` holding the partition value (each store's migrations name it)."""

    def __init__(
        self,
        mapper: BaseMapper[M],
        filter_type: type | None = None,
        *,
        counted: bool = False,
        partition: str | None = None,
        newest_first: bool = False,
        faceted: bool = False,
    ) -> None:
        self.mapper = mapper
        self._order = "created_at DESC, id DESC" if newest_first else "created_at, id"
        self._from = "<=" if newest_first else ">="
        m = mapper.mark
        self._counter_sql = (
            f"SELECT total FROM list_counts WHERE table_name = {m} AND organization_id = {m}"
            f" AND {self.COUNTER_COLUMN} = {m}"
        )
        self._revision_sql = f"SELECT revision FROM list_revisions WHERE table_name = {m} AND organization_id = {m}"
        self._facet_sql = (
            f"SELECT total FROM list_facets WHERE table_name = {m} AND organization_id = {m}"
            f" AND {self.COUNTER_COLUMN} = {m} AND columns = {m} AND value1 = CAST({m} AS TEXT)"
            f" AND value2 = CAST({m} AS TEXT)"
        )
        names = [f.name for f in attrs.fields(filter_type)] if filter_type is not None else []
        self._filters = [(name, mapper.codecs[name][0]) for name in names]
        self._statements: dict[tuple[str, ...], tuple[str, str, str, str, str, str]] = {}
        created_at = mapper.codecs["created_at"][0] if "created_at" in mapper.codecs else None
        self._encode_created_at = created_at or (lambda value: value)
        self._counted_when: tuple[str, ...] | None = None
        self._partition = partition
        self._faceted = faceted and (partition is None or partition in names)
        if counted and partition is None:
            self._counted_when = ()
        elif counted and partition is not None and partition in names:
            self._counted_when = (partition,)

    def _statements_for(self, active: tuple[str, ...]) -> tuple[str, str, str, str, str, str]:
        m = self.mapper.mark
        where = " AND ".join([f"organization_id = {m}", *(f"{quote(name)} = {m}" for name in active)])
        table = self.mapper.table
        order, start = self._order, self._from
        statements = (
            f"SELECT count(*) FROM {table} WHERE {where}",
            f"{self.mapper.select_sql} WHERE {where} ORDER BY {order} LIMIT {m} OFFSET {m}",
            f"SELECT created_at, id FROM {table} WHERE {where} ORDER BY {order} LIMIT 1",
            f"SELECT created_at, id FROM {table} WHERE {where} AND (created_at, id) {start} ({m}, {m})"
            f" ORDER BY {order} LIMIT 1 OFFSET {m}",
            f"{self.mapper.select_sql} WHERE {where} AND (created_at, id) {start} ({m}, {m})"
            f" ORDER BY {order} LIMIT {m} OFFSET {m}",
            f"{self.mapper.select_sql} WHERE {where} AND (created_at, id) {start[0]} ({m}, {m})"
            f" ORDER BY {order} LIMIT {m}",
        )
        self._statements[active] = statements
        return statements

    def revision(self, db: Any, organization_id: str) -> int:
        """The trigger-kept change counter of the table within the organization (0 before any
        change). ``db`` is a sqlite3 connection or a psycopg cursor (both ``execute``)."""
        row = db.execute(self._revision_sql, (self.mapper.table, organization_id)).fetchone()
        return 0 if row is None else int(row[0])

    def run(
        self,
        db: Any,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        anchors: Anchors | None = None,
    ) -> tuple[Sequence[M], int]:
        """The page and the total; ``total``, when given, is trusted and nothing is counted.

        :param anchors: the filter set's seek keys at this revision (see the module): a deep
            page seeks from them, after collecting the missing ones up to it
        """
        params: list[Any] = [organization_id]
        active: list[str] = []
        for name, encode in self._filters:
            value = getattr(filters, name)
            if value is not None:
                active.append(name)
                params.append(value if encode is None else encode(value))
        key = tuple(active)
        count_sql, page_sql, first_sql, hop_sql, seek_sql, after_sql = self._statements.get(
            key
        ) or self._statements_for(key)
        if total is None and key == self._counted_when:
            # the partition's value as a plain bool: SQLite binds it as 0/1, PostgreSQL as boolean
            found = db.execute(self._counter_sql, (self.mapper.table, organization_id, bool(key and params[1])))
            row = found.fetchone()
            total = 0 if row is None else int(row[0])
        elif total is None:
            total = self._facet_total(db, key, params)
            if total is None:
                total = int(db.execute(count_sql, params).fetchone()[0])
        if page.walk:
            if page.after is not None:
                after = page.after
                params.extend((self._encode_created_at(after.created_at), after.id, page.per_page))
                return self.mapper.page(db.execute(after_sql, params)), total
            params.extend((page.per_page, 0))
            return self.mapper.page(db.execute(page_sql, params)), total
        offset = page.offset
        if offset >= total:
            return [], total
        if anchors is not None:
            if len(anchors.keys) < anchors.wanted(offset):
                self._collect(db, first_sql, hop_sql, params, anchors, anchors.wanted(offset))
            anchor, rest = anchors.seek(offset)
            if anchor is not None:
                params.extend((*anchor, page.per_page, rest))
                return self.mapper.page(db.execute(seek_sql, params)), total
        params.append(page.per_page)
        params.append(offset)
        return self.mapper.page(db.execute(page_sql, params)), total

    def _facet_total(self, db: Any, active: tuple[str, ...], params: list[Any]) -> int | None:
        """The ``list_facets`` total of a filter set of one or two columns (beside the
        partition); None for any other."""
        if not self._faceted:
            return None
        values = dict(zip(active, params[1:], strict=True))
        part = False
        if self._partition is not None:
            if self._partition not in values:  # both partitions: no single row holds the total
                return None
            part = bool(values.pop(self._partition))
        if not 1 <= len(values) <= 2:
            return None
        columns, encoded = ",".join(values), list(values.values())
        second = encoded[1] if len(encoded) == 2 else ""
        row = db.execute(self._facet_sql, (self.mapper.table, params[0], part, columns, encoded[0], second)).fetchone()
        return 0 if row is None else int(row[0])

    @staticmethod
    def _collect(db: Any, first_sql: str, hop_sql: str, params: list[Any], anchors: Anchors, wanted: int) -> None:
        """Extend ``anchors`` to ``wanted`` keys (fewer at the end of the set), hopping ``every``
        rows at a time from the last key; assigns a new tuple (the kept one is shared)."""
        keys = list(anchors.keys)
        if not keys:
            row = db.execute(first_sql, params).fetchone()
            if row is None:
                return
            keys.append((row[0], row[1]))
        while len(keys) < wanted:
            row = db.execute(hop_sql, [*params, *keys[-1], anchors.every]).fetchone()
            if row is None:
                break
            keys.append((row[0], row[1]))
        anchors.keys = tuple(keys)
