"""Page requests and pages, what every list operation takes and answers.

``total_pages`` is at least 1, so "increase page until page equals totalPages" always ends,
even on an empty list. How a store finds a page and its total is its own business: core hands
it a ``PageRequest`` (and, through ``page_cache``, what it already knows) and gets the rows.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload

import attrs

from .errors import ValidationError

__all__ = [
    "Position",
    "PageRequest",
    "Listing",
    "fold",
    "MAX_QUERY",
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
    sort: str | None = None
    """The sort of the walk (``"-due_date"``), None for the list's own order: a cursor is good
    only for the sort it was issued with."""
    key: Any = attrs.field(default=None, eq=False)
    """The last row's value of the sorted field, which the page after it starts from: set from
    the row itself when the position is checked (``check_position``), so a client never
    supplies it."""


MAX_QUERY = 200
"""Longest ``q`` a list takes (characters)."""


def fold(text: str) -> str:
    """``text`` lowercased one character at a time, each to one character (the first of a
    longer lowercase, as ``İ`` to ``i``): the case folding ``q`` matches with, which is what
    every store's SQL ``lower`` does under a UTF-8 locale (SQLite gets this very function)."""
    if text.isascii():
        return text.lower()
    return "".join(ch.lower()[:1] or ch for ch in text)


def _nothing_to_none(value: str | None) -> str | None:
    return value or None


def _instant(value: Any) -> Any:
    """A date-time bound in UTC; one beyond the years a datetime holds once in UTC (year 1 at a
    positive offset) is the first or last instant there is, which bounds the same records."""
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        return value
    try:
        return value.astimezone(dt.UTC)
    except OverflowError:
        return (dt.datetime.min if value.year == 1 else dt.datetime.max).replace(tzinfo=dt.UTC)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""What ``q`` may not hold: the control characters no stored text holds either."""


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
    q: str | None = attrs.field(default=None, converter=_nothing_to_none)
    """Text the list's searchable fields are searched for (``Listing``); empty: no search."""
    sort: str | None = attrs.field(default=None, converter=_nothing_to_none)
    """A sortable field of the list, ``-`` before it for descending (``"-due_date"``); None:
    the list's own order."""
    since: dt.date | None = attrs.field(default=None, converter=_instant)
    """The list's ranged field at or after this (``from`` over HTTP): a ``datetime`` or, for a
    date field, a ``date``."""
    until: dt.date | None = attrs.field(default=None, converter=_instant)
    """The ranged field before this (``to`` over HTTP, exclusive)."""

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
        if self.q is not None and (
            not isinstance(self.q, str) or len(self.q) > MAX_QUERY or _CONTROL.search(self.q) is not None
        ):
            raise ValidationError.field(
                "q", self.q, f"must be text of at most {MAX_QUERY} characters, without control characters"
            )
        if self.sort is not None and not isinstance(self.sort, str):
            raise ValidationError.field("sort", self.sort, "must be a field name, with - before it for descending")
        for name, value in (("from", self.since), ("to", self.until)):
            if value is not None and (
                not isinstance(value, dt.date) or (isinstance(value, dt.datetime) and value.tzinfo is None)
            ):
                raise ValidationError.field(name, value, "must be a date, or a date-time with its UTC offset")
        if self.after is not None and self.after.sort != self.sort:
            raise ValidationError.field(
                "cursor",
                f"sorted by {self.after.sort or 'the list order'}",
                f"was issued for another sort than {self.sort or 'the list order'}: start the walk again",
            )

    @classmethod
    def walking(cls, per_page: int = DEFAULT_PER_PAGE, after: Position | None = None, **search: Any) -> PageRequest:
        """The page of a cursor walk after ``after`` (from the start when None); ``search``:
        ``q``, ``sort``, ``since``, ``until`` as for any page."""
        page = 1 if after is None else min(MAX_PAGE, after.offset // per_page + 1)
        return cls(page=page, per_page=per_page, walk=True, after=after, **search)

    @property
    def searched(self) -> bool:
        """Whether it searches, sorts or ranges (or only pages the list in its own order)."""
        return self.q is not None or self.sort is not None or self.since is not None or self.until is not None

    @property
    def terms(self) -> tuple[Any, ...]:
        """What besides the filters decides which rows a list has (so its total): not the
        sort, and ``q`` as every store matches it, folded (``ACME`` and ``acme`` have the same
        rows, so one count serves both)."""
        return (None if self.q is None else fold(self.q), self.since, self.until)

    @property
    def search(self) -> dict[str, Any]:
        """``q``, ``sort``, ``since`` and ``until``, to carry to another page of the list."""
        return {"q": self.q, "sort": self.sort, "since": self.since, "until": self.until}

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
    request: PageRequest | None = attrs.field(default=None, eq=False, repr=False)
    """The request answered (its search, sort and range carry to the next page of a walk)."""

    @classmethod
    def of(cls, items: Iterable[T], total: int, request: PageRequest) -> Page[T]:
        items = items if isinstance(items, RowItems) else tuple(items)
        if not request.walk:
            return cls(items=items, total=total, page=request.page, per_page=request.per_page, request=request)
        following = None
        if len(items) == request.per_page:
            # A full page may have more after it (the last page of a walk may be empty); the
            # offset cannot decide, since rows removed before the position leave it too high.
            last: Any = items[-1]
            key = None if request.sort is None else getattr(last, request.sort.lstrip("-"))
            following = Position(last.created_at, last.id, request.offset + len(items), request.sort, key)
        return cls(
            items=items,
            total=total,
            page=request.page,
            per_page=request.per_page,
            walk=True,
            after=request.after,
            next_after=following,
            request=request,
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
        search = {} if self.request is None else self.request.search
        return PageRequest.walking(self.per_page, self.next_after, **search)


class _Lookup(Protocol):
    def get(self, organization_id: str, item_id: str) -> Any: ...


def check_position(repository: _Lookup, organization_id: str, after: Position | None) -> Position | None:
    """Refuse a cursor walk's position unless it names a record of the organization in this list
    with the very ``created_at`` it was served with; a sorted walk's position comes back with
    its ``key`` read from that record (a row whose sorted value changed since continues from
    where the value now puts it).

    A cursor travels through the client, which could hand back any position: one of another
    list, an id that never existed, or a row's key with its time altered. Cursors are not signed
    (that needs a key shared by every process of the instance, which no store keeps yet), so the
    position is checked against the records instead: one primary-key read per page. A walk whose
    last served row has since been deleted therefore has to start again; rows deleted elsewhere
    in the list still neither shift nor repeat the rest. The offset only numbers ``meta.page``
    and is not checked (rows deleted before it make a true one too high).
    """
    if after is None:
        return None
    found = repository.get(organization_id, after.id)
    if found is None or getattr(found, "created_at", None) != after.created_at:
        raise ValidationError.field(
            "cursor",
            f"{after.id} at {after.created_at.isoformat()}",
            "names no row of this list (forged, altered, or its row was deleted: start the walk again "
            "with an empty cursor)",
        )
    if after.sort is None:
        return after
    return attrs.evolve(after, key=getattr(found, after.sort.lstrip("-"), None))


def _plain(value: Any) -> Any:
    """A value as the stores order it: an enum by its stored value."""
    return value.value if isinstance(value, enum.Enum) else value


@attrs.frozen(kw_only=True)
class Listing:
    """What a list offers besides its filters, declared by its ``Records`` table: ``q``,
    ``sort`` and ``since``/``until``. Also the reference semantics of all three (``select``),
    which the memory store runs and the property tests hold the SQL stores to.

    - ``q`` matches a record when one of its ``searchable`` fields contains it, both folded to
      lowercase (``fold``): a case-insensitive substring, so a word's prefix matches too.
    - ``sort`` orders by one of ``sortable`` (``created_at`` always is), ascending or, with
      ``-`` before it, descending; rows without a value come last either way, and ties go by
      ``id`` in the same direction, so every page is stable. Text orders by code point (``Z``
      before ``a``), enums by their stored value.
    - ``since`` (``from``) and ``until`` (``to``) keep the records whose ``ranged`` field is at
      or after ``since`` and before ``until`` (half-open, so consecutive ranges never share a
      record); a record without a value is outside every range.

    :param newest_first: the list's own order runs newest first (``Records.newest_first``)
    :param ranged_date: the ranged field is a ``date`` (a due date), so are ``since``/``until``
    """

    searchable: tuple[str, ...] = ()
    sortable: tuple[str, ...] = ()
    ranged: str | None = None
    ranged_date: bool = False
    newest_first: bool = False

    @property
    def sorts(self) -> tuple[str, ...]:
        """Every sortable field: ``created_at`` and the declared ones."""
        return ("created_at", *(name for name in self.sortable if name != "created_at"))

    def check(self, request: PageRequest) -> None:
        """Refuse what this list does not offer, naming the parameter and the value."""
        if request.q is not None and not self.searchable:
            raise ValidationError.field("q", request.q, "this list has no text search")
        if request.sort is not None and request.sort.removeprefix("-") not in self.sorts:
            raise ValidationError.field(
                "sort", request.sort, f"must be one of {', '.join(self.sorts)} (with - before it for descending)"
            )
        for name, value in (("from", request.since), ("to", request.until)):
            if value is None:
                continue
            if self.ranged is None:
                raise ValidationError.field(name, value, "this list has no date range")
            if self.ranged_date == isinstance(value, dt.datetime):
                raise ValidationError.field(
                    name, value, "must be a date" if self.ranged_date else "must be a date-time"
                )

    def order(self, sort: str | None) -> tuple[str, bool]:
        """The field a request sorts by and whether descending (the list's own order for None)."""
        if sort is None:
            return "created_at", self.newest_first
        return sort.removeprefix("-"), sort.startswith("-")

    def matches(self, record: Any, request: PageRequest) -> bool:
        """Whether ``record`` is within the request's ``q`` and range."""
        if request.q is not None:
            needle = fold(request.q)
            if not any(
                isinstance(text := getattr(record, name), str) and needle in fold(text) for name in self.searchable
            ):
                return False
        if (request.since is not None or request.until is not None) and self.ranged is not None:
            value = getattr(record, self.ranged)
            if value is None:
                return False
            if request.since is not None and value < request.since:
                return False
            if request.until is not None and value >= request.until:
                return False
        return True

    def keeps_rows(self, request: PageRequest) -> bool:
        """Whether the list has the same rows as without ``request``'s search and range (it only
        sorts, or ranges a list that takes none): its total is then the plain list's."""
        return request.q is None and (self.ranged is None or (request.since is None and request.until is None))

    def sort_key(self, field: str, value: Any, item_id: str, descending: bool) -> tuple[Any, ...]:
        """A record's place in a sort by ``field`` (with ``reverse=descending``): rows without a
        value last, then by the value, then by id."""
        value = _plain(value)
        return (value is not None, value, item_id) if descending else (value is None, value, item_id)

    def select(self, records: Iterable[T], request: PageRequest) -> tuple[list[T], int]:
        """The page ``request`` asks of ``records`` (every record the filters keep) and its
        total: the reference every store's answer equals."""
        field, descending = self.order(request.sort)

        def key(record: Any) -> tuple[Any, ...]:
            return self.sort_key(field, getattr(record, field), record.id, descending)

        hits = sorted((r for r in records if self.matches(r, request)), key=key, reverse=descending)
        if not request.walk:
            return hits[request.offset : request.offset + request.per_page], len(hits)
        after = request.after
        if after is None:
            return hits[: request.per_page], len(hits)
        value = after.created_at if request.sort is None else after.key
        start = self.sort_key(field, value, after.id, descending)
        rest = [r for r in hits if (key(r) < start if descending else key(r) > start)]
        return rest[: request.per_page], len(hits)
