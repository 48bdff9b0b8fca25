"""The caches that keep list requests cheap: ``PageCache`` keeps whole pages, ``TotalCache`` the
total of each filter set.

Both are validated by the organization's revision of the area: a counter the store bumps in the
same transaction as every change of those records, and that is read in the same read
transaction as the page query. A page the page cache misses still runs no count when another
page of the same filters was served at the same revision. What a store reads to place a deep
page (its block sums, its anchors) it keeps itself, handed that same revision.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any, Protocol, TypeVar

import attrs

from .pages import Page, PageRequest, RowItems, check_position

__all__ = ["PageCache", "TotalCache", "DEFAULT_BUDGET", "DEFAULT_TOTALS"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Listable(Protocol[T_co]):
    def get(self, organization_id: str, item_id: str) -> Any: ...

    def revision(self, organization_id: str) -> int: ...

    def list(
        self,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        revision: int | None = None,
    ) -> tuple[Sequence[T_co], int]: ...


DEFAULT_TOTALS = 8192
"""Filter sets whose totals one Platform keeps (each entry is a key and two integers: a few
hundred bytes, so about 2-3 MB when full)."""


class TotalCache:
    """The total of each (area, organization, filter set), kept with the revision it was counted
    at, so a page query whose filters were counted before at the same revision runs no count.

    Why this is exact: a total depends only on the organization's records of the area and on the
    filters (not on the page, nor on who asks). The store bumps the organization's revision of
    the area in the same transaction as every insert, update and delete of those records, and a
    list reads the revision in the same read transaction (one snapshot) as its page query. Two
    snapshots that show the same revision therefore show the same records, so the count taken in
    one is the count the other would take: a total kept at revision R is served only to a list
    that read R, and any write of the organization's records in the area makes every kept total
    of that organization and area stale at once (it is then counted again and replaced). Other
    organizations' and other areas' revisions are independent, and the key holds the area, the
    organization and the filters, so a total is never shared between them. (Like ``PageCache``,
    this relies on lists running in read transactions: a read joined to an uncommitted write
    could see a revision that a rollback later hands to different records.)

    The revision is handed to the store with the kept total, so the store may keep what it read
    to place this filter set's deep pages at the same revision, by the same reasoning.

    Real traffic has far fewer distinct filter sets than URLs (pages and page sizes vary, the
    filters combined do not), so a small bound covers it: at most ``entries`` totals, least
    recently used first out. One per Platform (inside its ``PageCache``), shared by the areas and
    safe to use from many threads: a lock guards the map, and the queries run outside it.
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
    ) -> tuple[Sequence[T], int]:
        """The repository's page and total, handing it the kept total when there is one and the
        revision it was read at, and keeping what it counted.

        :param revision: the organization's revision of the area, read in the same read
            transaction as this list is (None: read it here, through ``repository``)
        """
        after = check_position(repository, organization_id, request.after)
        if after is not None and after.key is not None:
            request = attrs.evolve(request, after=after)
        if revision is None:
            revision = repository.revision(organization_id)
        # q and the range decide the rows as the filters do (the sort does not): one total each
        key = (area, organization_id, filters, *request.terms) if request.searched else (area, organization_id, filters)
        known = self.get(key, revision)
        items, total = repository.list(organization_id, filters, request, known, revision)
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
