"""Filtered, ordered pages pushed down into SQL.

Shared by the SQLite and PostgreSQL stores (each passes its parameter marker through the mapper
and names its counter's partition column). A filter object's non-None fields become ``AND column
= ?`` terms. The SELECT and COUNT text is built once per combination of filters in use and then
reused word for word, so sqlite3's statement cache and psycopg's prepared statements keep each one
prepared.

Totals without counting: an unfiltered page (of a partitioned table such as vendors: filtered by
the partition alone) takes its total from the trigger-maintained ``list_counts`` row, and a page
filtered on a facet or a declared pair of facets from the sum of the trigger-maintained
``list_facet_blocks`` counts of those values (migrations SQLite 0012 / PostgreSQL 0009, narrowed
to the declared facets by SQLite 0014 / PostgreSQL 0012), so a total is counted only for other
filter sets: an id, an undeclared pair, three filters or more. A caller that already knows the
total (``compliance_core.kernel.pagination.TotalCache``: the total of this filter set, counted at
the revision read in this same read transaction) passes it, and no count runs at all.

No OFFSET walk, for the same filter sets (none, a facet or a pair within one partition): their
block counts (per block of about a thousand rows in (created_at, id) order, see
``migrations.helpers.count_blocks``) give, by a running sum, the block holding offset ``o`` and
the matches before it; the page seeks to that block's start key, ``AND (created_at, id) >=
(start) ... LIMIT n OFFSET o - before``, a range of the filter's index that skips fewer than a
block's rows. A newest-first table runs the sum from the last block down and bounds the seek by
the next block's start, ``< (start)``. The running sums (``BlockSums``) are read in one primary-key
range, and kept with the filter set's anchors at the revision (``Anchors.marks``), so a later deep
page of the set bisects them and reads one block start; the first deep page in a new process, or
after a write, reads them again (0.27 ms at a million rows on SQLite).

Other filter sets (an id, an undeclared pair, three columns or more, or both partitions) seek
from ``Anchors`` (every 500th row's (created_at, id), kept by the same cache at the same
revision; see there why they are collected by hops): a page at offset ``o >= every`` runs ``AND (created_at, id) >= (anchor) ...
LIMIT n OFFSET o - every * k``, after collecting the missing anchors up to it, each by ``LIMIT 1
OFFSET every`` from the last one over the covering index (only the key columns).

A cursor walk (``PageRequest.walk``) needs neither: each page starts right after the last row
served, ``AND (created_at, id) > (?, ?) ... LIMIT n``, one range of the same index whatever the
depth.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Collection, Iterable, Sequence
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import attrs

from compliance_core.kernel.pagination import Anchors, PageRequest

from .codec import BaseMapper, quote

__all__ = ["PagedQuery", "BlockSums"]

M = TypeVar("M")


class _Statements(NamedTuple):
    """The SQL of one combination of filters (see the module for each one's part)."""

    count_rows: str
    page: str
    first: str
    hop: str
    seek: str
    after: str
    bound: str


class BlockSums:
    """One filter set's block counts at one revision, as running sums in page order (ascending
    blocks, or descending for a newest-first table): kept by ``TotalCache`` as the filter set's
    ``Anchors.marks``, so a later deep page at the same revision finds its block by bisection
    instead of reading every block count again (at a million rows, 977 of them: 0.27 ms)."""

    __slots__ = ("blocks", "upto")

    def __init__(self, rows: Iterable[tuple[int, int]]) -> None:
        read = list(rows)
        self.blocks = array("l", (row[0] for row in read))
        self.upto = array("q", itertools.accumulate(row[1] for row in read))

    @property
    def total(self) -> int:
        return self.upto[-1] if self.upto else 0

    @property
    def nbytes(self) -> int:
        return self.blocks.itemsize * len(self.blocks) + self.upto.itemsize * len(self.upto)

    def locate(self, offset: int) -> tuple[int, int]:
        """The block holding the match at ``offset`` (below ``total``) and the matches before it."""
        index = bisect.bisect_right(self.upto, offset)
        return self.blocks[index], self.upto[index - 1] if index else 0


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
    :param blocked: whether ``list_facet_blocks`` keeps this table's counts per block,
        unfiltered and per value of each of ``facets`` (``helpers.count_blocks_v2`` in each
        store's migrations)
    :param facets: the column sets counted there (``"a"``, ``"a,b"`` with the pair's columns in
        the filter model's order; ``registry.facet_names``); None for every filter column and
        pair (``helpers.count_blocks``). A filter set of one or two columns that is none of them
        is counted (once per filter set and revision, by the platform's total cache) and seeks
        from its anchors, as three filters do
    """

    COUNTER_COLUMN: ClassVar[str]
    """The column of ``list_counts`` and ``list_facet_blocks`` holding the partition value (each
    store's migrations name it)."""

    SEEK_FROM: ClassVar[int] = 1000
    """The offset from which a page of a blocked filter set is found through its block counts
    (below it, skipping the rows costs less than summing the counts)."""

    SEEK_KEPT_FROM: ClassVar[int] = 128
    """``SEEK_FROM`` once the filter set's block sums are kept (``BlockSums``): a bisection and one
    block start then cost what skipping about 200 rows does (0.04 us a row at 10k vendors)."""

    def __init__(
        self,
        mapper: BaseMapper[M],
        filter_type: type | None = None,
        *,
        counted: bool = False,
        partition: str | None = None,
        newest_first: bool = False,
        blocked: bool = False,
        facets: Collection[str] | None = None,
    ) -> None:
        self.mapper = mapper
        self._newest_first = newest_first
        self._order = "created_at DESC, id DESC" if newest_first else "created_at, id"
        self._from = "<=" if newest_first else ">="
        m = mapper.mark
        part = self.COUNTER_COLUMN
        self._counter_sql = (
            f"SELECT total FROM list_counts WHERE table_name = {m} AND organization_id = {m} AND {part} = {m}"
        )
        self._revision_sql = f"SELECT revision FROM list_revisions WHERE table_name = {m} AND organization_id = {m}"
        counts = (
            f"FROM list_facet_blocks WHERE table_name = {m} AND organization_id = {m} AND {part} = {m}"
            f" AND columns = {m} AND value1 = CAST({m} AS TEXT) AND value2 = CAST({m} AS TEXT)"
        )
        self._blocks_total_sql = f"SELECT coalesce(sum(total), 0) {counts}"
        down = " DESC" if newest_first else ""
        self._sums_sql = f"SELECT block, total {counts} ORDER BY block{down}"
        self._start_sql = (
            f"SELECT start_created_at, start_id FROM list_blocks WHERE table_name = {m} AND organization_id = {m}"
            f" AND block = {m}"
        )
        names = [f.name for f in attrs.fields(filter_type)] if filter_type is not None else []
        self._filters = [(name, mapper.codecs[name][0]) for name in names]
        self._statements: dict[tuple[str, ...], _Statements] = {}
        created_at = mapper.codecs["created_at"][0] if "created_at" in mapper.codecs else None
        self._encode_created_at = created_at or (lambda value: value)
        self._counted_when: tuple[str, ...] | None = None
        self._partition = partition
        self._blocked = blocked and (partition is None or partition in names)
        self._facets = None if facets is None else frozenset(("", *facets))
        if counted and partition is None:
            self._counted_when = ()
        elif counted and partition is not None and partition in names:
            self._counted_when = (partition,)

    def _statements_for(self, active: tuple[str, ...]) -> _Statements:
        m = self.mapper.mark
        where = " AND ".join([f"organization_id = {m}", *(f"{quote(name)} = {m}" for name in active)])
        table, select = self.mapper.table, self.mapper.select_sql
        order, start = self._order, self._from
        bound = "<" if self._newest_first else ">="
        statements = _Statements(
            count_rows=f"SELECT count(*) FROM {table} WHERE {where}",
            page=f"{select} WHERE {where} ORDER BY {order} LIMIT {m} OFFSET {m}",
            first=f"SELECT created_at, id FROM {table} WHERE {where} ORDER BY {order} LIMIT 1",
            hop=f"SELECT created_at, id FROM {table} WHERE {where} AND (created_at, id) {start} ({m}, {m})"
            f" ORDER BY {order} LIMIT 1 OFFSET {m}",
            seek=f"{select} WHERE {where} AND (created_at, id) {start} ({m}, {m}) ORDER BY {order} LIMIT {m} OFFSET {m}",
            after=f"{select} WHERE {where} AND (created_at, id) {start[0]} ({m}, {m}) ORDER BY {order} LIMIT {m}",
            bound=f"{select} WHERE {where} AND (created_at, id) {bound} ({m}, {m}) ORDER BY {order} LIMIT {m} OFFSET {m}",
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
            page of a filter set without block counts seeks from them, after collecting the
            missing ones up to it
        """
        params: list[Any] = [organization_id]
        active: list[str] = []
        for name, encode in self._filters:
            value = getattr(filters, name)
            if value is not None:
                active.append(name)
                params.append(value if encode is None else encode(value))
        key = tuple(active)
        sql = self._statements.get(key) or self._statements_for(key)
        blocks = self._block_key(key, params)
        sums = anchors.marks if anchors is not None and isinstance(anchors.marks, BlockSums) else None
        seek_from = self.SEEK_FROM if sums is None else min(self.SEEK_FROM, self.SEEK_KEPT_FROM)
        deep = blocks is not None and not page.walk and page.offset >= seek_from
        if deep and sums is None:
            sums = BlockSums(db.execute(self._sums_sql, blocks))
            if anchors is not None:
                anchors.marks = sums
        if total is None and key == self._counted_when:
            # the partition's value as a plain bool: SQLite binds it as 0/1, PostgreSQL as boolean
            found = db.execute(self._counter_sql, (self.mapper.table, organization_id, bool(key and params[1])))
            row = found.fetchone()
            total = 0 if row is None else int(row[0])
        elif total is None and sums is not None:
            total = sums.total
        elif total is None and blocks is not None:
            total = int(db.execute(self._blocks_total_sql, blocks).fetchone()[0])
        elif total is None:
            total = int(db.execute(sql.count_rows, params).fetchone()[0])
        if page.walk:
            if page.after is not None:
                after = page.after
                params.extend((self._encode_created_at(after.created_at), after.id, page.per_page))
                return self.mapper.page(db.execute(sql.after, params)), total
            params.extend((page.per_page, 0))
            return self.mapper.page(db.execute(sql.page, params)), total
        offset = page.offset
        if offset >= total:
            return [], total
        if deep and sums is not None:
            block, before = sums.locate(offset)
            if before:  # else the page is within the first block's rows: a plain OFFSET skips fewer
                # ascending, the block's start; newest first, the next block's (rows before it)
                start = db.execute(
                    self._start_sql, (self.mapper.table, organization_id, block + 1 if self._newest_first else block)
                ).fetchone()
                if start is not None:
                    params.extend((*start, page.per_page, offset - before))
                    return self.mapper.page(db.execute(sql.bound, params)), total
        elif anchors is not None and blocks is None:
            if len(anchors.keys) < anchors.wanted(offset):
                self._collect(db, sql.first, sql.hop, params, anchors, anchors.wanted(offset))
            anchor, rest = anchors.seek(offset)
            if anchor is not None:
                params.extend((*anchor, page.per_page, rest))
                return self.mapper.page(db.execute(sql.seek, params)), total
        params.append(page.per_page)
        params.append(offset)
        return self.mapper.page(db.execute(sql.page, params)), total

    def _block_key(self, active: tuple[str, ...], params: list[Any]) -> tuple[Any, ...] | None:
        """The ``list_facet_blocks`` key (table, organization, partition, columns, two values)
        of a filter set of none, one or two columns within one partition whose counts are kept
        (a facet or pair of facets); None for any other."""
        if not self._blocked:
            return None
        values = dict(zip(active, params[1:], strict=True))
        part = False
        if self._partition is not None:
            if self._partition not in values:  # both partitions: no single key holds the counts
                return None
            part = bool(values.pop(self._partition))
        if len(values) > 2:
            return None
        if self._facets is not None and ",".join(values) not in self._facets:
            return None  # no counts kept for this column set: counted instead
        encoded = [*values.values(), "", ""]
        return (self.mapper.table, params[0], part, ",".join(values), encoded[0], encoded[1])

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
