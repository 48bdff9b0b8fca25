"""Page requests and pages, shared by every list operation.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list.

Two caches keep list requests cheap, both validated by the organization's revision of the area
(a counter the store bumps in the same transaction as every change of those records, and that is
read in the same read transaction as the page query): ``PageCache`` keeps whole pages, and
``TotalCache`` keeps the total of each filter set, so a page the page cache misses still runs no
COUNT when another page of the same filters was served at the same revision.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any, Generic, Protocol, TypeVar

import attrs

from .errors import ValidationError

__all__ = [
    "PageRequest",
    "Page",
    "PageCache",
    "TotalCache",
    "DEFAULT_BUDGET",
    "DEFAULT_TOTALS",
    "DEFAULT_PER_PAGE",
    "MAX_PER_PAGE",
    "MAX_PAGE",
]

T = TypeVar("T")
DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 200
MAX_PAGE = 10_000_000
"""The largest page number a list takes: two billion rows at the largest page size, far beyond
any organization's list, while an absurd page (10**12) is refused as such instead of becoming
an offset no store should be asked for."""


@attrs.frozen(kw_only=True)
class PageRequest:
    """Which page of a list: ``page`` from 1 to ``MAX_PAGE``, ``per_page`` from 1 to
    ``MAX_PER_PAGE``; anything else is a ``ValidationError`` naming ``page`` or ``perPage``."""

    page: int = 1
    per_page: int = DEFAULT_PER_PAGE

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

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    total: int
    page: int
    per_page: int

    @classmethod
    def of(cls, items: Iterable[T], total: int, request: PageRequest) -> Page[T]:
        return cls(items=tuple(items), total=total, page=request.page, per_page=request.per_page)

    @property
    def total_pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


class _Listable(Protocol[T]):
    def revision(self, organization_id: str) -> int: ...

    def list(
        self, organization_id: str, filters: Any, page: PageRequest, total: int | None = None
    ) -> tuple[list[T], int]: ...


DEFAULT_TOTALS = 8192
"""Filter sets whose totals one Platform keeps (each entry is a key and two integers: a few
hundred bytes, so about 2-3 MB when full)."""


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

    Unfiltered lists need no entry to be cheap (the stores read their totals from maintained
    counters) but go through here too, which saves that single-row read as well.

    Real traffic has far fewer distinct filter sets than URLs (pages and page sizes vary, the
    filters combined do not), so a small bound covers it: at most ``entries`` keys, least
    recently used first out. One per Platform (inside its ``PageCache``), shared by the areas
    and safe to use from many threads: a lock guards the map, and the queries run outside it.
    """

    def __init__(self, entries: int = DEFAULT_TOTALS) -> None:
        if entries < 0:
            raise ValueError("entries must be at least 0")
        self.entries = entries
        self.hits = 0
        """Lists served a kept total (they ran no count): for tests and diagnostics."""
        self._totals: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()
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
    ) -> tuple[list[T], int]:
        """The repository's page and total, handing it the kept total when there is one.

        :param revision: the organization's revision of the area, read in the same read
            transaction as this list is (None: read it here, through ``repository``)
        """
        if revision is None:
            revision = repository.revision(organization_id)
        key = (area, organization_id, filters)
        known = self.get(key, revision)
        items, total = repository.list(organization_id, filters, request, known)
        if known is None:
            self.put(key, revision, total)
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
    """

    def __init__(self, budget: int = DEFAULT_BUDGET, totals: TotalCache | None = None) -> None:
        self.budget = budget
        self.totals = TotalCache() if totals is None else totals
        self.used = 0
        self._entries: OrderedDict[Hashable, tuple[int, Page[Any], int]] = OrderedDict()
        self._item_sizes: dict[type, int] = {}
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

    def _cost(self, page: Page[Any]) -> int:
        """An estimate: the deep size of the first item of its type, times the items."""
        if not page.items:
            return _PAGE_OVERHEAD
        model = type(page.items[0])
        size = self._item_sizes.get(model)
        if size is None:
            size = self._item_sizes[model] = _deep_size(page.items[0])
        return _PAGE_OVERHEAD + size * len(page.items)


_PAGE_OVERHEAD = 512


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
