"""Search, sort and date ranges (``q``, ``sort``, ``since``/``until``) on every store and every
declared ``Records`` table that offers them: each page, numbered or walked with a cursor,
equals core's ``Listing.select`` (the plain Python filter and sort) of the same rows, with the
same total."""

from __future__ import annotations

import datetime as dt
import enum
import itertools
import typing
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest
from compliance_core.kernel.pages import Page, check_position
from compliance_core.kernel.uow import Store

from . import samples
from .samples import Table
from .test_records import TABLES

SEARCHED = [t for t in TABLES if t.records.filters is not None and t.records.listing.sorts]
WORDS = ["Łódź", "łÓDŹ", "acme", "ACME", "Zeta", "σας", "beta"]


def _value(kind: Any, nullable: bool) -> st.SearchStrategy[Any]:
    base: st.SearchStrategy[Any]
    if kind is str:
        base = st.sampled_from(WORDS)
    elif kind is int:
        base = st.integers(0, 3)
    elif kind is dt.datetime:
        base = st.integers(0, 4).map(lambda day: samples.T0 + dt.timedelta(days=day))
    elif kind is dt.date:
        base = st.integers(0, 4).map(lambda day: samples.T0.date() + dt.timedelta(days=day))
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        base = st.sampled_from(list(kind)[:3])
    else:
        raise AssertionError(f"no values for {kind}")
    return st.none() | base if nullable else base


def _rows(table: Table) -> st.SearchStrategy[dict[str, Any]]:
    listing = table.records.listing
    hints = typing.get_type_hints(table.records.model)
    names = {*listing.searchable, *listing.sorts, *([listing.ranged] if listing.ranged else [])} - {"created_at"}
    fields = {}
    for name in sorted(names):
        options = [a for a in typing.get_args(hints[name]) if a is not type(None)] or [hints[name]]
        fields[name] = _value(options[0], type(None) in typing.get_args(hints[name]))
    return st.fixed_dictionaries(fields)


def _made(table: Table, organization_id: str, item_id: str, fields: dict[str, Any], minute: int) -> Any:
    """The sample record with the generated values; a text a field's own rule refuses (an
    e-mail, a URL) is kept as a prefix of the sample's valid value instead."""
    created_at = samples.T0 + dt.timedelta(minutes=minute)
    base = table.make(organization_id, item_id, created_at=created_at)
    partition = {table.records.partition: False} if table.records.partition else {}
    changes: dict[str, Any] = {}
    for name, value in fields.items():
        try:
            attrs.evolve(base, **{name: value})
            changes[name] = value
        except Exception:
            if isinstance(value, str):
                changes[name] = value.lower() + "x" + getattr(base, name)
    if "email" in changes:  # unique within the organization
        changes["email"] = f"{item_id}.{base.email}"
    return attrs.evolve(base, **changes, **partition)


@pytest.fixture
def organization_numbers() -> itertools.count:
    return itertools.count()


@pytest.mark.parametrize("table", SEARCHED, ids=lambda t: t.name)
def test_searched_sorted_ranged_pages_equal_the_python_reference(
    store: Store, table: Table, organization_numbers: itertools.count
) -> None:
    listing = table.records.listing
    sorts = [None, *listing.sorts, *("-" + name for name in listing.sorts)]
    if listing.ranged_date:
        bound: st.SearchStrategy[Any] = st.none() | st.integers(0, 5).map(
            lambda d: samples.T0.date() + dt.timedelta(days=d)
        )
    else:
        bound = st.none() | st.integers(-1, 5).map(lambda d: samples.T0 + dt.timedelta(days=d, minutes=d))

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        specs=st.lists(st.tuples(_rows(table), st.integers(0, 2)), max_size=14),
        q=st.none() | st.sampled_from(["łódź", "ACM", "a", "Σ", "zz"]) if listing.searchable else st.none(),
        sort=st.sampled_from(sorts),
        since=bound if listing.ranged else st.none(),
        until=bound if listing.ranged else st.none(),
        per_page=st.integers(1, 5),
    )
    def check(
        specs: list[tuple[dict[str, Any], int]],
        q: str | None,
        sort: str | None,
        since: Any,
        until: Any,
        per_page: int,
    ) -> None:
        organization_id = f"org_{next(organization_numbers):05d}"
        records = [
            _made(table, organization_id, f"{table.records.prefix}_{n:05d}", fields, minute)
            for n, (fields, minute) in enumerate(specs)
        ]
        with store.session(write=True) as session:
            for record in records:
                session[table.records].add(record)
        partition = {table.records.partition: False} if table.records.partition else {}
        filters = table.records.filters(**partition)
        mine = [r for r in records if filters.matches(r)]
        search = {"q": q, "sort": sort, "since": since, "until": until}
        everything, total = listing.select(mine, PageRequest(per_page=200, **search))
        for number in range(1, max(1, -(-total // per_page)) + 2):
            request = PageRequest(page=number, per_page=per_page, **search)
            with store.session(write=False) as session:
                items, counted = session[table.records].list(organization_id, filters, request)
            assert counted == total
            assert [i.id for i in items] == [r.id for r in everything[(number - 1) * per_page : number * per_page]]
        walked: list[str] = []
        request: PageRequest | None = PageRequest.walking(per_page, **search)
        while request is not None:
            with store.session(write=False) as session:
                repository = session[table.records]

                after = check_position(repository, organization_id, request.after)
                items, _ = repository.list(organization_id, filters, attrs.evolve(request, after=after))
            walked.extend(i.id for i in items)
            request = Page.of(items, total, request).next_request
        assert walked == [r.id for r in everything]

    check()


WITHIN = [t for t in SEARCHED if t.records.within is not None]


@pytest.mark.parametrize("table", WITHIN, ids=lambda t: t.name)
@pytest.mark.parametrize("pick_from", [0, 10_000], ids=["keys_first", "rows_in_order"])
def test_pages_sorted_within_the_declared_filter_equal_the_python_reference(
    store: Store, table: Table, organization_numbers: itertools.count, pick_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table declaring ``within`` (a framework's rows, a statement's rows) is listed with that
    filter set: its sorted pages read the sort index scoped by it, and a deep one takes its keys
    from that index first (``PagedQuery.PICK_KEY``; ``PICK_FROM`` lowered so that every page but
    the first does). Both ways, and without the filter, equal ``Listing.select`` of the same rows."""
    from compliance_store.listing import PagedQuery

    monkeypatch.setattr(PagedQuery, "PICK_FROM", pick_from)
    picked: list[bool] = []
    picks = PagedQuery._picks

    def spied(self: PagedQuery[Any], *args: Any) -> bool:
        picked.append(picks(self, *args))
        return picked[-1]

    monkeypatch.setattr(PagedQuery, "_picks", spied)
    records_of = table.records
    within = records_of.within
    assert within is not None
    listing = records_of.listing
    sorts = [None, *listing.sorts, *("-" + name for name in listing.sorts)]

    # Derandomized: the closing assertion needs some example to page past the first page sorted
    # and scoped, which 20 random examples did not always do.
    @settings(
        max_examples=20,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        specs=st.lists(st.tuples(_rows(table), st.integers(0, 2), st.sampled_from(["one", "two"])), max_size=16),
        sort=st.sampled_from(sorts),
        scoped=st.sampled_from(["one", "two", None]),
        per_page=st.integers(1, 4),
    )
    def check(
        specs: list[tuple[dict[str, Any], int, str]], sort: str | None, scoped: str | None, per_page: int
    ) -> None:
        organization_id = f"org_{next(organization_numbers):05d}"
        records = [
            attrs.evolve(
                _made(table, organization_id, f"{records_of.prefix}_{n:05d}", fields, minute),
                **{within: f"{within}_{part}"},
            )
            for n, (fields, minute, part) in enumerate(specs)
        ]
        with store.session(write=True) as session:
            for record in records:
                session[records_of].add(record)
        partition = {records_of.partition: False} if records_of.partition else {}
        scope = {within: f"{within}_{scoped}"} if scoped else {}
        filters = records_of.filters(**partition, **scope)
        mine = [r for r in records if filters.matches(r)]
        everything, total = listing.select(mine, PageRequest(per_page=200, sort=sort))
        for number in range(1, max(1, -(-total // per_page)) + 2):
            request = PageRequest(page=number, per_page=per_page, sort=sort)
            with store.session(write=False) as session:
                items, counted = session[records_of].list(organization_id, filters, request)
            assert counted == total
            assert [i.id for i in items] == [r.id for r in everything[(number - 1) * per_page : number * per_page]]

    check()
    with store.session(write=False) as session:
        sql_store = hasattr(session[records_of], "_pages")  # the SQL stores' records repository
    if sql_store and pick_from == 0:
        assert True in picked, "no sorted page took its keys from the scoped sort index"
