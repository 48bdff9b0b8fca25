"""Page requests and pages, shared by every list operation.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list.

Two caches keep list requests cheap, both validated by the organization's revision of the area
(a counter the store bumps in the same transaction as every change of those records, and that is
read in the same read transaction as the page query): ``PageCache`` keeps whole pages, and
``TotalCache`` keeps the total of each filter set, so a page the page cache misses still runs no
COUNT when another page of the same filters was served at the same revision, and the ``Anchors``
of each filter set (every 500th row's (created_at, id), collected as deep as pages were asked
for), so a deep page seeks from the nearest anchor instead of walking OFFSET rows from the start.
(The SQL stores need anchors only for filter sets their trigger-kept block counts do not cover:
three filters or more; see ``compliance_store.listing``.)
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload

import attrs

from .errors import ValidationError

__all__ = [
    "Position",
    "PageRequest",
    "RowItems",
    "RowSource",
    "Page",
    "PageCache",
    "TotalCache",
    "Anchors",
    "ANCHOR_EVERY",
    "DEFAULT_ANCHOR_KEYS",
    "DEFAULT_BUDGET",
    "DEFAULT_TOTALS",
    "DEFAULT_PER_PAGE",
    "MAX_PER_PAGE",
    "MAX_PAGE",
    "check_position",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 200
MAX_PAGE = 10_000_000
"""The largest page number a list takes: two billion rows at the largest page size, far beyond
any organization's list, while an absurd page (10**12) is refused as such instead of becoming
an offset no store should be asked for."""


@attrs.frozen
class Position:
    """Where a cursor walk stands: the (created_at, id) of the last row served and how many rows
    of the list came before the next one (``offset``, for ``meta.page``). Rows are found from the
    key, not the offset, so a walk neither skips nor repeats a row when others are added or
    removed before it (the offset, and so the page number, may then be off: it is informative)."""

    created_at: dt.datetime
    id: str
    offset: int


@attrs.frozen(kw_only=True)
class PageRequest:
    """Which page of a list: ``page`` from 1 to ``MAX_PAGE``, ``per_page`` from 1 to
    ``MAX_PER_PAGE``; anything else is a ``ValidationError`` naming ``page`` or ``perPage``.

    A cursor walk (``walk=True``) reads the list in order for clients that want all of it: each
    page starts right after ``after`` (None: at the start) and ``Page.next_request`` continues
    it. It costs the same on the last page as on the first (no offset to skip), and a row added
    or removed meanwhile neither shifts nor repeats the rest.
    """

    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    walk: bool = False
    after: Position | None = None

    def __attrs_post_init__(self) -> None:
        if isinstance(self.page, bool) or not isinstance(self.page, int) or self.page < 1:
            raise ValidationError.field("page", self.page, "must be an integer of at least 1")
        if self.page > MAX_PAGE:
            raise ValidationError.field("page", self.page, f"is too large (at most {MAX_PAGE})")
        if (
            isinstance(self.per_page, bool)
            or not isinstance(self.per_page, int)
            or not 1 <= self.per_page <= MAX_PER_PAGE
        ):
            raise ValidationError.field("perPage", self.per_page, f"must be an integer from 1 to {MAX_PER_PAGE}")
        if self.after is not None and not self.walk:
            raise ValueError("after is a position of a cursor walk (walk=True)")

    @classmethod
    def walking(cls, per_page: int = DEFAULT_PER_PAGE, after: Position | None = None) -> PageRequest:
        """The page of a cursor walk after ``after`` (from the start when None)."""
        page = 1 if after is None else min(MAX_PAGE, after.offset // per_page + 1)
        return cls(page=page, per_page=per_page, walk=True, after=after)

    @property
    def offset(self) -> int:
        """Rows of the list before this page (for a cursor walk: as counted when the cursor was
        issued)."""
        if self.walk:
            return 0 if self.after is None else self.after.offset
        return (self.page - 1) * self.per_page


class RowSource(Protocol[T_co]):
    """What turns a store's rows into models (a SQL store's mapper): ``model`` and its fields'
    ``names`` in column order, ``from_row``, each column's ``column_decoder`` (None: the
    driver's value is the model's) and ``plain_loader``, which reads a nested JSON column as
    plain JSON values (``Renderer.row_function``)."""

    model: type
    names: tuple[str, ...]

    def from_row(self, row: Sequence[Any]) -> T_co: ...

    def column_decoder(self, name: str) -> Callable[[Any], Any] | None: ...

    def plain_loader(self, value: Any) -> Any: ...


class RowItems(Sequence[T]):
    """A page's records as the store read them: rows, built into models only when something
    reads them as models (an in-process caller), while a transport renders the rows straight to
    its wire format (``Renderer.row_function``) without building 50 models to throw away.
    Equal to any sequence of the same models; ``rows`` is never changed."""

    __slots__ = ("rows", "source", "_models")

    def __init__(self, rows: Sequence[Sequence[Any]], source: RowSource[T]) -> None:
        self.rows = rows
        self.source = source
        self._models: tuple[T, ...] | None = None

    @property
    def models(self) -> tuple[T, ...]:
        if self._models is None:  # two threads may both build them: the same value either way
            self._models = tuple(map(self.source.from_row, self.rows))
        return self._models

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return self.models[index]
        if self._models is not None:
            return self._models[index]
        return self.source.from_row(self.rows[index])

    def __iter__(self) -> Iterator[T]:
        return iter(self.models)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RowItems):
            other = other.models
        return isinstance(other, Sequence) and not isinstance(other, str) and self.models == tuple(other)

    def __hash__(self) -> int:
        return hash(self.models)

    def __repr__(self) -> str:
        return f"RowItems({len(self.rows)} rows of {self.source.model.__qualname__})"


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    """One page of a list. For a cursor walk, ``next_after`` is where the next page starts: set
    after every full page, None after a short one (so a walk may end with an empty page)."""

    items: Sequence[T]
    """A tuple, or ``RowItems`` as a SQL store read them (a sequence of the same models)."""
    total: int
    page: int
    per_page: int
    walk: bool = False
    after: Position | None = None
    next_after: Position | None = None

    @classmethod
    def of(cls, items: Iterable[T], total: int, request: PageRequest) -> Page[T]:
        items = items if isinstance(items, RowItems) else tuple(items)
        if not request.walk:
            return cls(items=items, total=total, page=request.page, per_page=request.per_page)
        following = None
        if len(items) == request.per_page:
            # A full page may have more after it (the last page of a walk may be empty); the
            # offset cannot decide, since rows removed before the position leave it too high.
            last: Any = items[-1]
            following = Position(last.created_at, last.id, request.offset + len(items))
        return cls(
            items=items,
            total=total,
            page=request.page,
            per_page=request.per_page,
            walk=True,
            after=request.after,
            next_after=following,
        )

    @property
    def total_pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def next_request(self) -> PageRequest | None:
        """The request for the page after this one of a cursor walk; None at its end (or when
        this page is not part of a walk)."""
        if self.next_after is None:
            return None
        return PageRequest.walking(self.per_page, self.next_after)


class _Lookup(Protocol):
    def get(self, organization_id: str, item_id: str) -> Any: ...


def check_position(repository: _Lookup, organization_id: str, after: Position | None) -> None:
    """Refuse a cursor walk's position unless it names a record of the organization in this list
    with the very ``created_at`` it was served with.

    A cursor travels through the client, which could hand back any position: one of another
    list, an id that never existed, or a row's key with its time altered. Cursors are not signed
    (that needs a key shared by every process of the instance, which no store keeps yet), so the
    position is checked against the records instead: one primary-key read per page. A walk whose
    last served row has since been deleted therefore has to start again; rows deleted elsewhere
    in the list still neither shift nor repeat the rest. The offset only numbers ``meta.page``
    and is not checked (rows deleted before it make a true one too high).
    """
    if after is None:
        return
    found = repository.get(organization_id, after.id)
    if found is None or getattr(found, "created_at", None) != after.created_at:
        raise ValidationError.field(
            "cursor",
            f"{after.id} at {after.created_at.isoformat()}",
            "names no row of this list (forged, altered, or its row was deleted: start the walk again "
            "with an empty cursor)",
        )


class _Listable(_Lookup, Protocol[T_co]):
    def revision(self, organization_id: str) -> int: ...

    def list(
        self,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        anchors: Anchors | None = None,
    ) -> tuple[Sequence[T_co], int]: ...


DEFAULT_TOTALS = 8192
"""Filter sets whose totals one Platform keeps (each entry is a key and two integers: a few
hundred bytes, so about 2-3 MB when full)."""

ANCHOR_EVERY = 500
"""Rows between two anchors: a deep page skips fewer than this many rows after its seek."""

DEFAULT_MARK_BYTES = 16 * 1024 * 1024
"""Bytes of ``Anchors.marks`` one Platform keeps, over all filter sets: the SQL stores' block
sums take 12 bytes a block (about 12 KB a filter set at a million rows), so some 1,400 filter
sets of a million rows."""

DEFAULT_ANCHOR_KEYS = 100_000
"""Anchor keys one Platform keeps, over all filter sets (about 200 bytes each with their
strings: some 20 MB when full). Anchors for fifty million rows at ``ANCHOR_EVERY``; measured
traffic over a register of a million spread over a few hundred filter sets, which a bound by
the number of sets (64, at first) evicted before their second page."""


class Marks(Protocol):
    """A store's placement data for one filter set at one revision (``Anchors.marks``)."""

    @property
    def nbytes(self) -> int:
        """About the memory it holds, counted against ``TotalCache``'s ``mark_bytes``."""
        ...


class Anchors:
    """Seek keys of one filter set at one revision: ``keys[k]`` is the (created_at, id) of the row
    at offset ``every * k`` in (created_at, id) order, as the store holds them (its own encoding).

    A page at offset ``o`` starts at the nearest anchor at or before it (``seek``): ``WHERE
    <filters> AND (created_at, id) >= anchor ORDER BY created_at, id LIMIT n OFFSET o - every * k``,
    a range of the same filter index that skips fewer than ``every`` rows. Since (created_at, id)
    is unique and is the page order, the rows from the anchor on are exactly the rows from offset
    ``every * k`` on, so the page equals the plain OFFSET one.

    How they are collected (measured on SQLite 3.40, 100k matches of 200k rows, covering index:
    COUNT 4.5 ms; one window-function scan numbering the matches 185-210 ms; the same key scan
    read in Python 55 ms; hopping from anchor to anchor 8.5 ms): no single scan can replace the
    COUNT at its cost, so the total is still counted (or read from the maintained counter), and
    the keys are collected lazily, only as deep as a page asks, by hops (``LIMIT 1 OFFSET every``
    from the last key, each walking ``every`` index entries). The first page at offset ``o`` thus
    walks about the ``o`` entries its OFFSET would have walked (plus ``o / every`` statements),
    and every later page of the filter set at that revision walks fewer than ``every``. A first
    request (offset below ``every``) runs exactly what it ran before: no scan at all.

    ``keys`` is a tuple and is never changed in place: a store that collects more assigns a longer
    one, so the cache can hand the kept tuple to many threads at once, each in its own
    ``Anchors``. Keys are valid only at the revision they were collected at (``TotalCache`` keeps
    them with it). A store may ignore them: the memory store does not page in SQL, and the SQL
    stores find the pages of the filter sets they keep block counts for without them.
    """

    __slots__ = ("every", "keys", "marks")

    def __init__(
        self, every: int = ANCHOR_EVERY, keys: Sequence[tuple[Any, Any]] = (), marks: Marks | None = None
    ) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.every = every
        self.keys: tuple[tuple[Any, Any], ...] = tuple(keys)
        self.marks = marks
        """What else the store read to place pages of this filter set at this revision, kept
        with the keys so later lists need not read it again (the SQL stores: the running sums
        of their block counts). Assigned, never changed in place: threads share it."""

    def wanted(self, offset: int) -> int:
        """How many keys a page at ``offset`` would seek with: 0 when it starts before the second
        anchor (a plain OFFSET page then skips fewer than ``every`` rows anyway)."""
        index = offset // self.every
        return 0 if index < 1 else index + 1

    def seek(self, offset: int) -> tuple[tuple[Any, Any] | None, int]:
        """The nearest collected anchor at or before ``offset`` and the offset left from it;
        (None, ``offset``) when there is none past the first row."""
        index = min(offset // self.every, len(self.keys) - 1)
        if index < 1:
            return None, offset
        return self.keys[index], offset - index * self.every


class TotalCache:
    """The total of each (area, organization, filter set), kept with the revision it was counted
    at, so a page query whose filters were counted before at the same revision runs no COUNT.

    Why this is exact: a total depends only on the organization's records of the area and on the
    filters (not on the page, nor on who asks). The store bumps the organization's revision of
    the area in the same transaction as every insert, update and delete of those records, and a
    list reads the revision in the same read transaction (one snapshot) as its page query. Two
    snapshots that show the same revision therefore show the same records, so the COUNT taken in
    one is the COUNT the other would take: a total kept at revision R is served only to a list
    that read R, and any write of the organization's records in the area makes every kept total
    of that organization and area stale at once (it is then counted again and replaced). Other
    organizations' and other areas' revisions are independent, and the key holds the area, the
    organization and the filters, so a total is never shared between them. (Like ``PageCache``,
    this relies on lists running in read transactions: a read joined to an uncommitted write
    could see a revision that a rollback later hands to different records.)

    Unfiltered lists, and lists filtered on one or two columns, need no entry to be cheap (the SQL
    stores read their totals from trigger-kept counters, valid after any write and in every
    process) but go through here too, which saves that single-row read as well; what this cache
    spares is the count of three filters or more, and the memory store's scan.

    Beside each total it keeps the filter set's ``Anchors`` keys at the same revision (collected by
    the store as deep as pages were asked for), handed to the store with the total,
    so a deep page seeks instead of walking OFFSET. The same reasoning makes them exact: keys
    collected in a snapshot at revision R are the keys of every snapshot at R.

    Real traffic has far fewer distinct filter sets than URLs (pages and page sizes vary, the
    filters combined do not), so a small bound covers it: at most ``entries`` totals and at most
    ``anchor_keys`` anchor keys over all sets (see ``DEFAULT_ANCHOR_KEYS``), each least recently
    used first out;
    ``anchor_every`` is the rows between anchors (0: no anchors, plain OFFSET). A store's own
    ``Anchors.marks`` are kept the same way, bounded by ``mark_bytes`` over all sets. One per Platform (inside its ``PageCache``), shared by the areas
    and safe to use from many threads: a lock guards the map, and the queries run outside it.
    """

    def __init__(
        self,
        entries: int = DEFAULT_TOTALS,
        anchor_keys: int = DEFAULT_ANCHOR_KEYS,
        anchor_every: int = ANCHOR_EVERY,
        mark_bytes: int = DEFAULT_MARK_BYTES,
    ) -> None:
        if entries < 0 or anchor_keys < 0 or anchor_every < 0 or mark_bytes < 0:
            raise ValueError("entries, anchor_keys, anchor_every and mark_bytes must be at least 0")
        self.entries = entries
        self.anchor_keys = anchor_keys
        self.anchor_every = anchor_every
        self.mark_bytes = mark_bytes
        self.anchor_keys_kept = 0
        self.mark_bytes_kept = 0
        self.hits = 0
        """Lists served a kept total (they ran no count): for tests and diagnostics."""
        self.anchor_hits = 0
        """Lists handed kept anchors: for tests and diagnostics."""
        self._totals: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()
        self._anchors: OrderedDict[Hashable, tuple[int, tuple[tuple[Any, Any], ...]]] = OrderedDict()
        self._marks: OrderedDict[Hashable, tuple[int, Marks]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._totals)

    def get(self, key: Hashable, revision: int) -> int | None:
        """The total kept for ``key`` if it was counted at ``revision``, else None."""
        with self._lock:
            entry = self._totals.get(key)
            if entry is None or entry[0] != revision:
                return None
            self._totals.move_to_end(key)
            self.hits += 1
            return entry[1]

    def anchors(self, key: Hashable, revision: int) -> Anchors | None:
        """New ``Anchors`` holding the keys kept for ``key`` at ``revision`` (none when there are
        none) for the store to use and extend; None when anchors are off. The kept keys tuple is
        never changed, so threads share it."""
        if self.anchor_every == 0 or self.anchor_keys == 0:
            return None
        with self._lock:
            marked = self._marks.get(key)
            marks = None
            if marked is not None and marked[0] == revision:
                self._marks.move_to_end(key)
                marks = marked[1]
            entry = self._anchors.get(key)
            if entry is not None and entry[0] == revision:
                self._anchors.move_to_end(key)
                self.anchor_hits += 1
                return Anchors(self.anchor_every, entry[1], marks)
        return Anchors(self.anchor_every, marks=marks)

    def put_marks(self, key: Hashable, revision: int, marks: Marks) -> None:
        """Keep ``marks`` as read at ``revision`` (replacing what ``key`` held), then drop the
        least recently used ones past ``mark_bytes``."""
        with self._lock:
            old = self._marks.pop(key, None)
            if old is not None:
                self.mark_bytes_kept -= old[1].nbytes
            self._marks[key] = (revision, marks)
            self.mark_bytes_kept += marks.nbytes
            while self.mark_bytes_kept > self.mark_bytes and self._marks:
                _, (_, dropped) = self._marks.popitem(last=False)
                self.mark_bytes_kept -= dropped.nbytes

    def put_anchors(self, key: Hashable, revision: int, keys: tuple[tuple[Any, Any], ...]) -> None:
        """Keep ``keys`` as collected at ``revision`` (replacing what ``key`` held, unless that
        is a longer tuple of the same revision, which another thread collected meanwhile)."""
        with self._lock:
            old = self._anchors.get(key)
            if old is not None and old[0] == revision and len(old[1]) >= len(keys):
                return
            if old is not None:
                self.anchor_keys_kept -= len(old[1])
            self._anchors[key] = (revision, keys)
            self._anchors.move_to_end(key)
            self.anchor_keys_kept += len(keys)
            while self.anchor_keys_kept > self.anchor_keys and self._anchors:
                _, (_, dropped) = self._anchors.popitem(last=False)
                self.anchor_keys_kept -= len(dropped)

    def put(self, key: Hashable, revision: int, total: int) -> None:
        """Keep ``total`` as counted at ``revision`` (replacing what ``key`` held)."""
        if self.entries == 0:
            return
        with self._lock:
            self._totals[key] = (revision, total)
            self._totals.move_to_end(key)
            while len(self._totals) > self.entries:
                self._totals.popitem(last=False)

    def list(
        self,
        area: str,
        repository: _Listable[T],
        organization_id: str,
        filters: Hashable,
        request: PageRequest,
        revision: int | None = None,
    ) -> tuple[Sequence[T], int]:
        """The repository's page and total, handing it the kept total and anchors when there
        are some, and keeping what it counted and collected.

        :param revision: the organization's revision of the area, read in the same read
            transaction as this list is (None: read it here, through ``repository``)
        """
        check_position(repository, organization_id, request.after)
        if revision is None:
            revision = repository.revision(organization_id)
        key = (area, organization_id, filters)
        known = self.get(key, revision)
        anchors = self.anchors(key, revision)
        kept = None if anchors is None else anchors.keys
        marked = None if anchors is None else anchors.marks
        items, total = repository.list(organization_id, filters, request, known, anchors)
        if known is None:
            self.put(key, revision, total)
        if anchors is not None and anchors.keys is not kept:
            self.put_anchors(key, revision, anchors.keys)
        if anchors is not None and anchors.marks is not None and anchors.marks is not marked:
            self.put_marks(key, revision, anchors.marks)
        return items, total


DEFAULT_BUDGET = 32 * 1024 * 1024
"""Bytes of pages one Platform keeps (an estimate of the models' memory, not of JSON)."""


class PageCache:
    """Recently served pages of every area that opts in, each valid while its organization's
    revision of that area is unchanged.

    The revision is read in the same read transaction that would run the page query, and the
    store bumps it in the same transaction as every write, so a page served from here is exactly
    the page the query would return. A hit costs one single-row read instead of a page query, a
    count and 50 model constructions, and returns the same ``Page`` object, so a transport can
    reuse what it rendered.

    One cache per Platform, shared by the areas, bounded by an estimate of the bytes its pages
    hold (least recently used first out). The key holds the area, the organization, the
    caller-dependent ``scope``, the filters and the page, so no caller is served another's page.

    A miss asks ``totals`` (the Platform's ``TotalCache``) with the revision already read, so a
    page of a filter set counted before at that revision runs only the page query. The scope is
    not part of a total's key: it does not reach the repository, so it cannot change the total.

    A page is kept from its second request at one revision on (``admit_after``): under traffic
    spread over many pages (random pages and filters), nearly every page is asked for once, and
    keeping each would only churn the cache and the garbage collector (measured: ~80 us a miss at
    10k vendors). A page asked for again is what a cache is for. The first requests are
    remembered by key and revision only, in a bounded map.
    """

    def __init__(self, budget: int = DEFAULT_BUDGET, totals: TotalCache | None = None, admit_after: int = 1) -> None:
        self.budget = budget
        self.totals = TotalCache() if totals is None else totals
        self.admit_after = admit_after
        """Requests of a page (at one revision) served before it is kept: 1 keeps it at its
        second, 0 at its first."""
        self.used = 0
        self._seen: dict[Hashable, tuple[int, int]] = {}
        self._entries: OrderedDict[Hashable, tuple[int, Page[Any], int]] = OrderedDict()
        self._item_sizes: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def fetch(
        self,
        area: str,
        repository: _Listable[T],
        organization_id: str,
        filters: Hashable,
        request: PageRequest,
        scope: Hashable = None,
    ) -> Page[T]:
        revision = repository.revision(organization_id)
        key = (area, organization_id, scope, filters, request)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == revision:
                self._entries.move_to_end(key)
                return entry[1]
        items, total = self.totals.list(area, repository, organization_id, filters, request, revision)
        page = Page.of(items, total, request)
        if not self._admitted(key, revision):
            return page
        cost = self._cost(page)
        if cost > self.budget:
            return page
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.used -= old[2]
            self._entries[key] = (revision, page, cost)
            self.used += cost
            while self.used > self.budget:
                _, (_, _, freed) = self._entries.popitem(last=False)
                self.used -= freed
        return page

    def _admitted(self, key: Hashable, revision: int) -> bool:
        """Whether a page missed at ``revision`` is to be kept: counts its requests at that
        revision until ``admit_after`` were served without keeping it."""
        if self.admit_after == 0:
            return True
        with self._lock:
            seen = self._seen.get(key)
            served = seen[1] if seen is not None and seen[0] == revision else 0
            if served >= self.admit_after:
                del self._seen[key]
                return True
            if len(self._seen) >= _SEEN_KEPT:
                self._seen.clear()
            self._seen[key] = (revision, served + 1)
            return False

    def _cost(self, page: Page[Any]) -> int:
        """An estimate: the deep size of the first item of its type, times the items."""
        items = page.items
        if not items:
            return _PAGE_OVERHEAD
        kind: Any = (items.source.model, "rows") if isinstance(items, RowItems) else type(items[0])
        size = self._item_sizes.get(kind)
        if size is None:
            if isinstance(items, RowItems):
                # a row, and room for the model an in-process reader may build from it
                size = _deep_size(items.rows[0]) + _deep_size(items[0])
            else:
                size = _deep_size(items[0])
            self._item_sizes[kind] = size
        return _PAGE_OVERHEAD + size * len(items)


_PAGE_OVERHEAD = 512
_SEEN_KEPT = 16_384
"""Pages remembered as asked for once; a full map is emptied and starts again (a page then
needs one more request to be kept)."""


def _deep_size(value: Any, depth: int = 0) -> int:
    size = sys.getsizeof(value)
    if depth > 4:
        return size
    if attrs.has(type(value)):
        return size + sum(_deep_size(getattr(value, f.name), depth + 1) for f in attrs.fields(type(value)))
    if isinstance(value, (list, tuple)):
        return size + sum(_deep_size(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return size + sum(_deep_size(k, depth + 1) + _deep_size(v, depth + 1) for k, v in value.items())
    return size
