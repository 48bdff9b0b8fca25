"""Page requests and pages, what every list operation takes and answers.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list. How a store finds a page and its total is its own business: core hands
it a ``PageRequest`` (and, through ``page_cache``, what it already knows) and gets the rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload

import attrs

from .errors import ValidationError

__all__ = [
    "Position",
    "PageRequest",
    "RowItems",
    "RowSource",
    "Page",
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
