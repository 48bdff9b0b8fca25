"""Page requests and pages, shared by every list operation.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list.
"""

from __future__ import annotations

from typing import Generic, Iterable, TypeVar

import attrs

from .errors import ValidationError

__all__ = ["PageRequest", "Page", "DEFAULT_PER_PAGE", "MAX_PER_PAGE"]

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
