"""Page requests and pages, shared by every list operation.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Generic, Hashable, Iterable, Protocol, TypeVar

import attrs

from .errors import ValidationError

__all__ = ["PageRequest", "Page", "PageCache", "DEFAULT_PER_PAGE", "MAX_PER_PAGE"]

T = TypeVar("T")
DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 200


@attrs.frozen(kw_only=True)
class PageRequest:
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE

    def __attrs_post_init__(self) -> None:
        if isinstance(self.page, bool) or not isinstance(self.page, int) or self.page < 1:
            raise ValidationError.field("page", self.page, "must be an integer of at least 1")
        if (
            isinstance(self.per_page, bool)
            or not isinstance(self.per_page, int)
            or not 1 <= self.per_page <= MAX_PER_PAGE
        ):
            raise ValidationError.field(
                "perPage", self.per_page, f"must be an integer from 1 to {MAX_PER_PAGE}"
            )

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
    def of(cls, items: "Iterable[T]", total: int, request: PageRequest) -> "Page[T]":
        return cls(items=tuple(items), total=total, page=request.page, per_page=request.per_page)

    @property
    def total_pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


class _Listable(Protocol[T]):  # type: ignore[misc]
    def revision(self, organization_id: str) -> int: ...

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[list[T], int]: ...


class PageCache:
    """Recently served pages, each valid while its organization's revision for the area is
    unchanged.

    The revision is read in the same read transaction that would run the page query, and the
    store bumps it in the same transaction as every write, so a page served from here is exactly
    the page the query would return. A hit costs one single-row read instead of a page query, a
    count and 50 model constructions, and returns the same ``Page`` object, so a transport can
    reuse what it rendered. One cache per service instance (per Platform), bounded LRU.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[int, Page[Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def fetch(self, repository: "_Listable[T]", organization_id: str, filters: Hashable,
              request: PageRequest) -> Page[T]:
        revision = repository.revision(organization_id)
        key = (organization_id, filters, request)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == revision:
                self._entries.move_to_end(key)
                return entry[1]
        items, total = repository.list(organization_id, filters, request)
        page = Page.of(items, total, request)
        with self._lock:
            self._entries[key] = (revision, page)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return page
