"""Page requests and pages, shared by every list operation.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any, Generic, Protocol, TypeVar

import attrs

from .errors import ValidationError

__all__ = ["PageRequest", "Page", "PageCache", "DEFAULT_BUDGET", "DEFAULT_PER_PAGE", "MAX_PER_PAGE", "MAX_PAGE"]

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

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[list[T], int]: ...


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
    """

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
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
        items, total = repository.list(organization_id, filters, request)
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
