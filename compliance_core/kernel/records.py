"""Organization-scoped records: the shape most areas store, declared once per table.

A ``Records`` declaration tells every store what to keep (a table keyed by organization and id,
listed by ``(created_at, id)``, with a per-organization count and revision) and tells the list
machinery how to page it. The helpers below are the few steps every area's service repeats:
fetch one record or 404, list a page (through the page cache when the table opts in, and always
through the platform's total cache, so a filter set counted at the current revision is not
counted again), and turn a patch into the changed record with the previous values of what changed.
"""

from __future__ import annotations

import datetime as dt
import functools
import typing
from collections.abc import Hashable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import attrs

from .errors import NotFound
from .page_cache import PageCache
from .pages import Listing, Page, PageRequest
from .registry import Repo, Session

__all__ = ["Records", "Listed", "RecordRepository", "fetch", "list_page", "changed"]

M = TypeVar("M")
F = TypeVar("F")
F_contra = TypeVar("F_contra", contravariant=True)
R = TypeVar("R")


class Filter:
    """The base of a list filter model: each field is a column matched for equality, None meaning
    any, and the fields combine with AND. That is how every store filters in SQL; ``matches`` is
    the same rule on one record, for the memory store and the property tests that hold every
    store to it."""

    __slots__ = ()

    def matches(self, record: Any) -> bool:
        return all(
            expected is None or getattr(record, name) == expected
            for name, expected in attrs.asdict(self, recurse=False).items()  # type: ignore[arg-type]
        )


class RecordRepository(Protocol[M, F_contra]):
    """What every store offers for each declared ``Records`` table."""

    def revision(self, organization_id: str) -> int:
        """A number that grows with every committed change of the organization's records here,
        bumped in the same transaction as the change: list pages are cached against it."""
        ...

    def add(self, item: M) -> None: ...

    def get(self, organization_id: str, item_id: str) -> M | None: ...

    def update(self, item: M) -> None: ...

    def delete(self, organization_id: str, item_id: str) -> bool:
        """Remove the record; False when there was none."""
        ...

    def list(
        self,
        organization_id: str,
        filters: F_contra,
        page: PageRequest,
        total: int | None = None,
        revision: int | None = None,
    ) -> tuple[list[M], int]:
        """One page ordered by (created_at, id) (descending for ``newest_first`` tables), and the
        total matching the filters.

        :param total: the total of these filters, already known at the revision this transaction
            reads (``TotalCache``); a store then runs no count and returns it as the total
        :param revision: that revision, read in this same read transaction (never in a write
            one, which a rollback could undo): a store may keep what it read to find deep pages
            of these filters at it (the SQL stores' block sums and anchors) and use what it kept
        """
        ...


@attrs.frozen(kw_only=True)
class Records(Repo[RecordRepository[M, F]], Generic[M, F]):
    """An organization-scoped table.

    :param name: the table (and repository) name, plural snake case (``finding_templates``)
    :param model: the stored attrs model; it has ``id``, ``organization_id`` and ``created_at``
    :param filters: the list filter model; each field is a column matched for equality (None
        meaning any), a ``Filter`` whose ``matches(record)`` gives the reference semantics
    :param kind: how a message names one record (``finding template``)
    :param prefix: the id prefix (``ftp``)
    :param partition: a boolean field counted separately (``archived``: the register and the
        archive each have their own total)
    :param cached: list pages go through the platform's page cache
    :param newest_first: lists run newest first ((created_at, id) descending), as a log reads
    :param facets: the filter fields a user pages by whose counts the SQL stores keep per value
        (enums, booleans, a country: few values each), so a list filtered on one of them takes
        its total and finds a deep page from counters instead of counting. Every write pays one
        counter statement per facet, so an id field (an owner, a person) is never one: a list
        filtered on it is counted once per filter set and revision instead, which is as exact
    :param facet_pairs: pairs of facets, each in the filter model's field order, counted per
        pair of values too (one more statement per write each): only for pairs users combine
    :param queries: the Protocol of what its repository answers beyond ``RecordRepository`` (a
        store-specific query or rule, such as people's unique e-mails): the declared extension
        point of the stores. Each store serves such a table with a class of its own naming this
        declaration in ``serves``, and refuses to open without one that has every method;
        a table without ``queries`` is served by each store's generic records repository
    :param searchable: the text fields ``q`` searches (names, titles, e-mails: see ``Listing``)
    :param sortable: the fields a list may be sorted by besides ``created_at`` (each a column of
        text, a number, a date or an enum; the SQL stores index the ones users sort large lists
        by)
    :param ranged: the date or date-time field ``from``/``to`` range over (a log's time, a due
        date); None: the list takes no range
    :param indexed: the sortable or ranged fields the SQL stores index for large lists, each on
        (organization, partition, field, id): a page sorted by it reads the index in order
        instead of sorting every row, and a range on it (and its total) reads only the rows in
        range. Each one costs every insert and update of the field one more index entry, so
        only the fields users sort or range long lists by
    :param within: the filter field every list of the table sets (a framework's rows carry
        ``framework_id``, a statement's rows ``document_id``): the SQL stores then index the
        ``indexed`` fields on (organization, partition, this field, field, id), so a sorted
        page of one framework reads that framework's index entries only, not every
        organization row's. A list without it still works, sorting its rows instead
    """

    model: type[M]
    filters: type[F] | None = None
    kind: str
    prefix: str
    partition: str | None = None
    cached: bool = False
    newest_first: bool = False
    facets: tuple[str, ...] = ()
    facet_pairs: tuple[tuple[str, str], ...] = ()
    queries: type | None = None
    searchable: tuple[str, ...] = ()
    sortable: tuple[str, ...] = ()
    ranged: str | None = None
    indexed: tuple[str, ...] = ()
    within: str | None = None

    @property
    def listing(self) -> Listing:
        """What its lists offer besides filters: search, sort and a date range."""
        return _listing(self)

    def __attrs_post_init__(self) -> None:
        """A facet that is no filter field would be counted by no list and miss from the
        start-up check's view; a pair out of the filter order would be kept under a name no
        list asks for. Both are declaration mistakes, refused when the module is read."""
        fields = [field.name for field in attrs.fields(self.filters)] if self.filters is not None else []  # type: ignore[arg-type]
        strangers = [name for name in self.facets if name not in fields or name == self.partition]
        if strangers or len(set(self.facets)) != len(self.facets):
            raise ValueError(f"{self.name}: facets {list(self.facets)} must be distinct filter fields, not {strangers}")
        for first, second in self.facet_pairs:
            if first not in self.facets or second not in self.facets or fields.index(first) >= fields.index(second):
                raise ValueError(
                    f"{self.name}: facet pair {(first, second)} must name two facets in the filter model's order"
                )
        if self.within is not None and (self.within not in fields or self.within == self.partition):
            raise ValueError(f"{self.name}: within={self.within!r} must be a filter field other than the partition")
        _check_listing(self)


def _check_listing(declared: Records[Any, Any] | Listed[Any]) -> None:
    """Refuse searchable, sortable, ranged or indexed fields the model lacks, and an indexed
    field that no list sorts or ranges by (an index no page reads, paid for by every write)."""
    columns = {field.name for field in attrs.fields(declared.model)}
    unknown = [
        name
        for name in (*declared.searchable, *declared.sortable, *([declared.ranged] if declared.ranged else []))
        if name not in columns
    ]
    if unknown:
        raise ValueError(
            f"{declared.name}: searchable, sortable and ranged fields {unknown} are no fields of the model"
        )
    unordered = [name for name in declared.indexed if name not in declared.sortable and name != declared.ranged]
    if unordered or len(set(declared.indexed)) != len(declared.indexed):
        raise ValueError(
            f"{declared.name}: indexed fields {list(declared.indexed)} must be distinct sortable or ranged fields"
        )


@attrs.frozen(kw_only=True)
class Listed(Repo[R], Generic[R]):
    """A kernel table that is no ``Records`` table (API keys: a repository of its own, looked up
    by hash across organizations) whose organization's list still searches, sorts and ranges.
    It declares those as a ``Records`` table does (the same fields, with the same meaning), so
    its list takes ``q``, ``sort``, ``from`` and ``to`` with ``Listing``'s semantics and the SQL
    stores give it the same search index and sort indexes, through ``make migration``.

    :param model: the stored model (with ``id``, ``organization_id`` and ``created_at``)
    :param kind: how a message names one record (``api key``)
    """

    model: type
    kind: str
    newest_first: bool = False
    searchable: tuple[str, ...] = ()
    sortable: tuple[str, ...] = ()
    ranged: str | None = None
    indexed: tuple[str, ...] = ()

    @property
    def listing(self) -> Listing:
        """What its list offers besides paging: search, sort and a date range."""
        return _listing(self)

    def __attrs_post_init__(self) -> None:
        _check_listing(self)


@functools.cache
def _listing(records: Records[Any, Any] | Listed[Any]) -> Listing:
    """A table's ``Listing``, built the first time a list asks (the model's annotations are
    resolved then, not when the module is read)."""
    ranged_date = False
    if records.ranged is not None:
        hint = typing.get_type_hints(records.model)[records.ranged]
        kinds = typing.get_args(hint) or (hint,)
        ranged_date = dt.date in kinds and dt.datetime not in kinds
    return Listing(
        searchable=records.searchable,
        sortable=records.sortable,
        ranged=records.ranged,
        ranged_date=ranged_date,
        newest_first=records.newest_first,
    )


def fetch(session: Session, records: Records[M, Any], organization_id: str, item_id: str) -> M:
    """The record, or ``NotFound`` (also for another organization's id: existence never leaks)."""
    item = session[records].get(organization_id, item_id)
    if item is None:
        raise NotFound.resource(records.kind, item_id)
    return item


def list_page(
    session: Session,
    records: Records[M, F],
    pages: PageCache,
    organization_id: str,
    filters: F,
    request: PageRequest,
    scope: Hashable = None,
) -> Page[M]:
    """One page of the organization's records.

    A table that does not cache pages still reuses totals: the revision is read here, in the
    caller's read transaction, and a total kept for these filters at that revision spares the
    count (see ``TotalCache`` for why that total is exact).

    :param scope: whatever else makes this list differ between callers (an "assigned to me"
        list passes the caller's person id), so no caller is ever served another's page
    """
    repository = session[records]
    records.listing.check(request)
    if records.cached:
        return pages.fetch(records.name, repository, organization_id, filters, request, scope)
    items, total = pages.totals.list(records.name, repository, organization_id, filters, request)
    return Page.of(items, total, request)


def changed(current: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The previous values of the fields ``changes`` really changes (for events and audit)."""
    return {name: getattr(current, name) for name, value in changes.items() if getattr(current, name) != value}
