"""Filtered, ordered pages pushed down into SQL.

Shared by the SQLite and PostgreSQL stores (each passes its parameter marker through the mapper
and names its counter's partition column). A filter object's non-None fields become ``AND column
= ?`` terms. The SELECT and COUNT text is built once per combination of filters in use and then
reused word for word, so sqlite3's statement cache and psycopg's prepared statements keep each one
prepared.

One source of a total per filter set: a declared facet set (one facet or a declared pair within
one partition, and the unfiltered list) sums the trigger-kept ``list_facet_blocks`` counts of its
values (``BlockSums``); any other set (an id, an undeclared pair, three filters or more, both
partitions) is counted. A caller that already knows the total (``compliance_core``'s
``TotalCache``: counted at the revision read in this same read transaction) passes it, and
nothing is read for it at all.

One way to reach a page: from the nearest known key at or before its offset, ``AND (created_at,
id) >= (key) ... LIMIT n OFFSET o - before``, a range of the filter's index that skips fewer than
a block's (or ``ANCHOR_EVERY``) rows; the key is the start of the block holding ``o`` for a facet
set (a newest-first table bounds it by the next block's start, ``< (start)``), an anchor for any
other, and the list's first row when none is known (a plain OFFSET, for shallow pages). Block
sums and anchors stay here (``Placements``, per filter set and revision). A cursor walk
(``PageRequest.walk``) starts right after the last row served, ``AND (created_at, id) > (?, ?)
... LIMIT n``, whatever the depth.

A page that searches, sorts or ranges (``PageRequest.searched``: ``q``, ``sort``, ``since``,
``until``) takes another way, with the semantics of core's ``Listing``: the filters' terms and
one ``CONTAINS`` term per searchable column (``q`` folded as core's ``fold`` folds), the ranged
column's ``>=``/``<`` terms, ``ORDER BY`` the sorted column (``NULLS LAST``, text in code point
order) and ``id`` in the same direction, counted by ``count(*)`` when no total is known, paged
by OFFSET or, for a cursor walk, from the last row's (value, id). Its statements are never
placed through block sums nor anchors (those hold the list's own order), so nothing kept for
the plain lists can place one of its pages.

A store with a search index (``narrowed``: SQLite's FTS5 trigrams) counts a ``q`` from the
index's candidates, each still tested by the exact term, and reads its page either way: from
the candidates (all of them, then sorted) or along the list's order, testing rows until the page
is full, whichever reads fewer rows (``_reads_in_order``): a ``q`` most rows hold fills a shallow
page from the first rows in order, a rare one from its few candidates.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Collection, Sequence
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import attrs

from compliance_core.kernel.pages import Listing, PageRequest, fold

from .codec import BaseMapper, quote, without_none
from .placements import ANCHOR_EVERY, DEFAULT_PLACEMENT_BYTES, Anchors, BlockSums, Placements

__all__ = ["PagedQuery"]

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


class PagedQuery(Generic[M]):
    """Pages of one table within an organization, ordered by (created_at, id).

    :param mapper: the table's mapper
    :param filter_type: an attrs class whose fields name columns (None: no filters)
    :param partition: the boolean column counted separately (``archived``); the block counts
        then answer the lists filtered by it, alone or with a facet
    :param newest_first: pages run in (created_at, id) descending order (logs); seeks and anchor
        hops then compare with ``<=``, over the same indexes read backwards
    :param blocked: whether ``list_facet_blocks`` keeps this table's counts per block,
        unfiltered and per value of each of ``facets`` (``helpers.count_blocks_v2`` in each
        store's migrations)
    :param facets: the column sets counted there (``"a"``, ``"a,b"`` with the pair's columns in
        the filter model's order; ``registry.facet_names``); None for every filter column and
        pair (``helpers.count_blocks``)
    """

    COUNTER_COLUMN: ClassVar[str]
    """The column of ``list_facet_blocks`` holding the partition value (each store's migrations
    name it)."""

    SEEK_FROM: ClassVar[int] = 1000
    """The offset from which a page of a facet set is found through block sums not kept yet (below
    it, skipping the rows costs less than reading the sums)."""

    SEEK_KEPT_FROM: ClassVar[int] = 128
    """``SEEK_FROM`` once the filter set's block sums are at hand (kept, or read for its total): a
    bisection and one block start then cost what skipping about 200 rows does."""

    ANCHOR_EVERY: ClassVar[int] = ANCHOR_EVERY
    """Rows between two anchors of the other filter sets."""

    PLACEMENT_BYTES: ClassVar[int] = DEFAULT_PLACEMENT_BYTES
    """What the table keeps of block sums and anchors over all its filter sets."""

    CONTAINS: ClassVar[str] = "strpos(lower({column}), {mark}) > 0"
    """The term of ``q`` on one searchable column: its text, folded to lowercase as core's
    ``fold`` does, contains the folded ``q``."""

    NULLS_FIRST_DESCENDING: ClassVar[bool] = False
    """Whether an index read backwards gives the rows without a value first (PostgreSQL, whose
    NULLs sort last ascending): a descending page then reads the rows with a value and those
    without apart. SQLite's planner reads its index for ``DESC NULLS LAST`` as it is."""

    TEXT_ORDER: ClassVar[str] = ""
    """What follows a text column to compare it by code point (as Python compares ``str``)."""

    ROW_KEY: ClassVar[str | None] = None
    """The column one row is read by (SQLite's ``rowid``), for a ranged page in the list's order
    that picks its rows from the covering sort index first and reads only those; None: the
    page reads its rows as it orders them."""

    PICK_KEY: ClassVar[str | None] = None
    """The columns that find one row (SQLite's ``rowid``; PostgreSQL's primary key), for a deep
    page sorted by an indexed field: it takes the page's keys from the sort index alone (an
    index-only read of the rows it skips) and then reads just the page's rows by key, where a
    plain ``OFFSET`` reads every skipped row from the table. None: pages read rows as they order
    them."""

    PICK_FROM: ClassVar[int] = 100
    """The offset from which a sorted page picks its keys first (``PICK_KEY``): below it, the
    rows skipped cost less than the second lookup."""

    def __init__(
        self,
        mapper: BaseMapper[M],
        filter_type: type | None = None,
        *,
        partition: str | None = None,
        newest_first: bool = False,
        blocked: bool = False,
        facets: Collection[str] | None = None,
        listing: Listing | None = None,
        indexed: Collection[str] = (),
        within: str | None = None,
    ) -> None:
        self.mapper = mapper
        self.listing = Listing(newest_first=newest_first) if listing is None else listing
        hints = typing.get_type_hints(mapper.model)
        self._texts = frozenset(
            name
            for name in hints
            if (kind := without_none(hints[name])) is str or (isinstance(kind, type) and issubclass(kind, enum.Enum))
        )
        self._nullable = frozenset(name for name in hints if without_none(hints[name]) is not hints[name])
        self.placements = Placements(self.PLACEMENT_BYTES)
        self._newest_first = newest_first
        self._order = "created_at DESC, id DESC" if newest_first else "created_at, id"
        self._from = "<=" if newest_first else ">="
        m = mapper.mark
        self._revision_sql = f"SELECT revision FROM list_revisions WHERE table_name = {m} AND organization_id = {m}"
        down = " DESC" if newest_first else ""
        self._sums_sql = (
            f"SELECT block, total FROM list_facet_blocks WHERE table_name = {m} AND organization_id = {m}"
            f" AND {self.COUNTER_COLUMN} = {m} AND columns = {m} AND value1 = CAST({m} AS TEXT)"
            f" AND value2 = CAST({m} AS TEXT) ORDER BY block{down}"
        )
        self._start_sql = (
            f"SELECT start_created_at, start_id FROM list_blocks WHERE table_name = {m} AND organization_id = {m}"
            f" AND block = {m}"
        )
        names = [f.name for f in attrs.fields(filter_type)] if filter_type is not None else []
        self._filters = [(name, mapper.codecs[name][0]) for name in names]
        self._statements: dict[tuple[str, ...], _Statements] = {}
        created_at = mapper.codecs["created_at"][0] if "created_at" in mapper.codecs else None
        self._encode_created_at = created_at or (lambda value: value)
        self._partition = partition
        self._blocked = blocked and (partition is None or partition in names)
        self._facets = None if facets is None else frozenset(("", *facets))
        self._indexed = frozenset(indexed)
        self._within = within
        ranged = self.listing.ranged
        self._covered_range = ranged if ranged in indexed and ranged != "created_at" else None

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
        revision: int | None = None,
    ) -> tuple[Sequence[M], int]:
        """The page and the total; ``total``, when given, is trusted and nothing is counted.

        :param revision: the organization's revision of the table, read in this same read
            transaction: block sums and anchors read for this filter set are kept at it, and
            those kept at it are used (None: nothing is kept, a deep page of a set without block
            counts walks its OFFSET)
        """
        if page.searched:
            if total is None and self.listing.keeps_rows(page):
                total = self._plain_total(db, organization_id, filters, revision)
            return self._run_searched(db, organization_id, filters, page, total, revision)
        key, params = self._filter_params(organization_id, filters)
        sql = self._statements.get(key) or self._statements_for(key)
        blocks = self._block_key(key, params)
        kept_as = (key, *params)
        kept = None if revision is None else self.placements.get(kept_as, revision)
        offset = -1 if page.walk else page.offset
        if blocks is not None:
            sums = kept if isinstance(kept, BlockSums) else None
            if sums is None and (total is None or offset >= self.SEEK_FROM):
                sums = BlockSums(db.execute(self._sums_sql, blocks))
                if revision is not None:
                    self.placements.put(kept_as, revision, sums)
            if total is None:
                assert sums is not None
                total = sums.total
            placement: BlockSums | Anchors | None = sums
        else:
            if total is None:
                total = int(db.execute(sql.count_rows, params).fetchone()[0])
            placement = kept if isinstance(kept, Anchors) else None
            if revision is not None and offset >= self.ANCHOR_EVERY:
                # a new holder of the kept keys: collecting assigns it a longer tuple, which
                # threads reading the kept one never see half-made
                anchors = Anchors(self.ANCHOR_EVERY, () if placement is None else placement.keys)
                if len(anchors.keys) < anchors.wanted(offset):
                    self._collect(db, sql.first, sql.hop, params, anchors, anchors.wanted(offset))
                    self.placements.put(kept_as, revision, anchors)
                placement = anchors
        if page.walk:
            if page.after is not None:
                after = page.after
                params.extend((self._encode_created_at(after.created_at), after.id, page.per_page))
                return self.mapper.page(db.execute(sql.after, params)), total
            params.extend((page.per_page, 0))
            return self.mapper.page(db.execute(sql.page, params)), total
        if offset >= total:
            return [], total
        statement, start, skip = self._start(db, organization_id, sql, placement, offset)
        params.extend((*start, page.per_page, skip))
        return self.mapper.page(db.execute(statement, params)), total

    def _filter_params(self, organization_id: str, filters: Any) -> tuple[tuple[str, ...], list[Any]]:
        """The filters in use (their statements' key) and the parameters of their terms."""
        params: list[Any] = [organization_id]
        active: list[str] = []
        for name, encode in self._filters:
            value = getattr(filters, name)
            if value is not None:
                active.append(name)
                params.append(value if encode is None else encode(value))
        return tuple(active), params

    def _plain_total(self, db: Any, organization_id: str, filters: Any, revision: int | None) -> int:
        """The total of the filter set as its unsorted list takes it (block sums, kept or read,
        or a count): a page that only sorts has the same rows."""
        key, params = self._filter_params(organization_id, filters)
        blocks = self._block_key(key, params)
        if blocks is None:
            sql = self._statements.get(key) or self._statements_for(key)
            return int(db.execute(sql.count_rows, params).fetchone()[0])
        kept_as = (key, *params)
        kept = None if revision is None else self.placements.get(kept_as, revision)
        if isinstance(kept, BlockSums):
            return kept.total
        sums = BlockSums(db.execute(self._sums_sql, blocks))
        if revision is not None:
            self.placements.put(kept_as, revision, sums)
        return sums.total

    def _run_searched(
        self,
        db: Any,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None,
        revision: int | None = None,
    ) -> tuple[Sequence[M], int]:
        """A page that searches, sorts or ranges (see the module), and its total."""
        m, listing = self.mapper.mark, self.listing
        terms = [f"organization_id = {m}"]
        params: list[Any] = [organization_id]
        active: list[str] = []
        for name, encode in self._filters:
            value = getattr(filters, name) if filters is not None else None
            if value is not None:
                terms.append(f"{quote(name)} = {m}")
                params.append(value if encode is None else encode(value))
                active.append(name)
        needle = None if page.q is None else fold(page.q)
        if needle is not None:
            contains, values = self.contains(needle)
            terms.append(
                "(" + " OR ".join(contains.format(column=quote(name), mark=m) for name in listing.searchable) + ")"
            )
            params.extend(values * len(listing.searchable))
        if listing.ranged is not None:
            for bound, value in ((">=", page.since), ("<", page.until)):
                if value is not None:
                    terms.append(f"{quote(listing.ranged)} {bound} {m}")
                    params.append(self._encode(listing.ranged, value))
        field, descending = listing.order(page.sort)
        column = quote(field) + (self.TEXT_ORDER if field in self._texts else "")
        identifier = "id" + self.TEXT_ORDER
        direction = " DESC" if descending else ""
        narrowed = None if needle is None or not listing.searchable else self.narrowed(terms, params, needle)
        if narrowed is not None:
            where, narrowed_params = " AND ".join(narrowed[0]), narrowed[1]
            if total is None:
                count = f"SELECT count(*) FROM {self.mapper.table} WHERE {where}"
                total = int(db.execute(count, narrowed_params).fetchone()[0])
            if not self._reads_in_order(db, organization_id, filters, page, total, revision, field):
                terms, params = narrowed
        where = " AND ".join(terms)
        if total is None:
            total = int(db.execute(f"SELECT count(*) FROM {self.mapper.table} WHERE {where}", params).fetchone()[0])
        nullable = field in self._nullable
        if nullable and descending and self.NULLS_FIRST_DESCENDING:
            return self._nulls_apart(db, where, params, page, total, field, column, identifier), total
        # a column without NULLs orders as its sort index does (NULLS LAST would keep
        # PostgreSQL from reading it backwards) and seeks a cursor's row as one range of it
        order = f"ORDER BY {column}{direction}{' NULLS LAST' if nullable else ''}, {identifier}{direction}"
        if page.walk and page.after is not None:
            after = page.after
            value = after.created_at if page.sort is None else after.key
            beyond = "<" if descending else ">"
            if not nullable and value is not None:
                where += f" AND ({column}, {identifier}) {beyond} ({m}, {m})"
                params.extend((self._encode(field, value), after.id))
            elif value is None:
                where += f" AND {column} IS NULL AND {identifier} {beyond} {m}"
                params.append(after.id)
            else:
                where += (
                    f" AND ({column} {beyond} {m} OR ({column} = {m} AND {identifier} {beyond} {m})"
                    f" OR {column} IS NULL)"
                )
                encoded = self._encode(field, value)
                params.extend((encoded, encoded, after.id))
            offset = 0
        elif page.walk:
            offset = 0
        else:
            offset = page.offset
            if offset >= total:
                return [], total
        params.extend((page.per_page, offset))
        select = self.mapper.select_sql
        if self.ROW_KEY is not None and needle is None and field == "created_at" and self._ranges(page, active):
            key = self.ROW_KEY
            picked = f"SELECT {key} FROM {self.mapper.table} WHERE {where} {order} LIMIT {m} OFFSET {m}"
            sql = f"{select} WHERE {key} IN ({picked}) {order}"
        elif self.PICK_KEY is not None and offset >= self.PICK_FROM and self._picks(page, active, field, needle):
            key = self.PICK_KEY
            picked = f"SELECT {key} FROM {self.mapper.table} WHERE {where} {order} LIMIT {m} OFFSET {m}"
            sql = f"{select} WHERE ({key}) IN ({picked}) {order}"
        else:
            sql = f"{select} WHERE {where} {order} LIMIT {m} OFFSET {m}"
        return self.mapper.page(db.execute(sql, params)), total

    def _ranges(self, page: PageRequest, active: Sequence[str]) -> bool:
        """Whether the page ranges over a field whose sort index holds ``created_at`` too
        (``registry.expected_indexes``): the rows in range are then ordered by the index's
        entries alone and only the page's own rows are read (``ROW_KEY``)."""
        return (
            self._covered_range is not None
            and (page.since is not None or page.until is not None)
            and self._scoped(active)
        )

    def _scoped(self, active: Sequence[str]) -> bool:
        """Whether the filters in use hold the ``within`` column that the sort indexes of this
        table begin with after the organization and partition (always, for a table without)."""
        return self._within is None or self._within in active

    def _sorted_by_index(self, field: str, active: Sequence[str]) -> bool:
        """Whether a page sorted by ``field`` with these filters reads a sort index in order
        (the list's own order reads the list's indexes)."""
        return field == "created_at" or (field in self._indexed and self._scoped(active))

    def _picks(self, page: PageRequest, active: Sequence[str], field: str, needle: str | None) -> bool:
        """Whether a sorted page can take its keys from the field's sort index alone
        (``PICK_KEY``): no ``q`` nor range and no filter but the partition and ``within``, whose
        columns that index holds, so the rows skipped are never read from the table."""
        if needle is not None or page.since is not None or page.until is not None or field == "created_at":
            return False
        if field not in self._indexed or not self._scoped(active):
            return False
        return all(name in (self._partition, self._within) for name in active)

    def _nulls_apart(
        self,
        db: Any,
        where: str,
        params: list[Any],
        page: PageRequest,
        total: int,
        field: str,
        column: str,
        identifier: str,
    ) -> Sequence[M]:
        """A page in descending order of a nullable column where the store's index reads NULLs
        first that way (``NULLS_FIRST_DESCENDING``): the rows with a value, read backwards along
        the sort index, then as many without one as the page still holds, backwards by id (each
        one range of the index, where ``NULLS LAST`` would sort every row)."""
        m, select = self.mapper.mark, self.mapper.select_sql
        valued = f"{select} WHERE {where} AND {column} IS NOT NULL"
        empty = f"{select} WHERE {where} AND {column} IS NULL"
        order = f"ORDER BY {column} DESC, {identifier} DESC LIMIT {m} OFFSET {m}"
        after, per_page = page.after, page.per_page
        if page.walk and after is not None and after.key is None:
            rows = db.execute(
                f"{empty} AND {identifier} < {m} ORDER BY {identifier} DESC LIMIT {m}", [*params, after.id, per_page]
            ).fetchall()
            return self.mapper.page(rows)
        if page.walk and after is not None:
            seek = f" AND ({column}, {identifier}) < ({m}, {m})"
            rows = db.execute(
                valued + seek + " " + order, [*params, self._encode(field, after.key), after.id, per_page, 0]
            ).fetchall()
            skip = 0
        else:
            offset = 0 if page.walk else page.offset
            if offset >= total:
                return self.mapper.page([])
            rows = db.execute(f"{valued} {order}", [*params, per_page, offset]).fetchall()
            skip = 0
            if not rows and offset:
                count = f"SELECT count(*) FROM {self.mapper.table} WHERE {where} AND {column} IS NOT NULL"
                skip = offset - int(db.execute(count, params).fetchone()[0])
        if len(rows) < per_page:
            rows += db.execute(
                f"{empty} ORDER BY {identifier} DESC LIMIT {m} OFFSET {m}", [*params, per_page - len(rows), skip]
            ).fetchall()
        return self.mapper.page(rows)

    def contains(self, needle: str) -> tuple[str, list[Any]]:
        """The term of ``q`` on one searchable column (``{column}``, ``{mark}`` for each
        parameter) and its parameters, for the folded ``needle``."""
        return self.CONTAINS, [needle]

    def narrowed(self, terms: list[str], params: list[Any], needle: str) -> tuple[list[str], list[Any]] | None:
        """The terms and parameters of a searched statement read from the store's search index
        (``terms`` and ``params`` as built, the organization's term first, plus a term keeping
        the index's candidates for the folded ``needle``); None when no index serves it (the
        default: the statement tests every row of the organization)."""
        return None

    def _reads_in_order(
        self,
        db: Any,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int,
        revision: int | None,
        field: str,
    ) -> bool:
        """Whether a searched page reads fewer rows along the list's order than from the search
        index: in order, about ``wanted * rows / total`` rows until the page is full (``rows``
        the filter set's plain list, known from its block sums); from the index, at least
        ``total`` candidates. A sort no index orders, or a filter set without block sums, reads
        from the index."""
        key, params = self._filter_params(organization_id, filters)
        if not self._sorted_by_index(field, key) or total == 0:
            return False
        if self._block_key(key, params) is None:
            return False
        rows = self._plain_total(db, organization_id, filters, revision)
        wanted = page.per_page + (0 if page.walk else page.offset)
        return wanted * rows <= total * total

    def _encode(self, name: str, value: Any) -> Any:
        encode = self.mapper.codecs[name][0]
        return value if encode is None else encode(value)

    def _start(
        self, db: Any, organization_id: str, sql: _Statements, placement: BlockSums | Anchors | None, offset: int
    ) -> tuple[str, tuple[Any, ...], int]:
        """The page statement, the key it starts from (none: the list's first row) and the rows
        it skips from there."""
        if isinstance(placement, BlockSums) and offset >= min(self.SEEK_FROM, self.SEEK_KEPT_FROM):
            block, before = placement.locate(offset)
            if before:  # else the page is within the first block's rows: a plain OFFSET skips fewer
                # ascending, the block's start; newest first, the next block's (rows before it)
                start = db.execute(
                    self._start_sql, (self.mapper.table, organization_id, block + 1 if self._newest_first else block)
                ).fetchone()
                if start is not None:
                    return sql.bound, tuple(start), offset - before
        elif isinstance(placement, Anchors):
            anchor, rest = placement.seek(offset)
            if anchor is not None:
                return sql.seek, anchor, rest
        return sql.page, (), offset

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
