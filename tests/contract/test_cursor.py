"""Cursor walks on every store and every declared ``Records`` table: following ``next_request``
from the start visits every matching record once, in list order, and records added or removed
between two pages neither shift nor repeat the others."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest
from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.page_cache import TotalCache
from compliance_core.kernel.pages import Page, Position
from compliance_core.kernel.uow import Store

from . import samples
from .samples import Table
from .test_records import TABLES, _strategies

FILTERED = [t for t in TABLES if t.records.filters is not None]


@pytest.fixture
def organization_numbers() -> itertools.count:
    return itertools.count()


def _order(table: Table, records: Any) -> list[Any]:
    return sorted(records, key=lambda r: (r.created_at, r.id), reverse=table.records.newest_first)


@pytest.mark.parametrize("table", FILTERED, ids=lambda t: t.name)
def test_a_walk_visits_every_match_once_in_order_despite_changes(
    store: Store, table: Table, organization_numbers: itertools.count
) -> None:
    rows, chosen = _strategies(table)

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        specs=st.lists(st.tuples(rows, st.integers(0, 3)), max_size=16),
        later=st.lists(st.tuples(rows, st.integers(0, 3)), max_size=6),
        wanted=chosen,
        per_page=st.integers(1, 5),
        ids=st.randoms(use_true_random=False),
        delete_every=st.integers(2, 5),
    )
    def check(
        specs: list[tuple[dict[str, Any], int]],
        later: list[tuple[dict[str, Any], int]],
        wanted: dict[str, Any],
        per_page: int,
        ids: Any,
        delete_every: int,
    ) -> None:
        organization_id = f"org_{next(organization_numbers):05d}"
        numbers = iter(ids.sample(range(10_000), len(specs) + len(later)))

        def make(fields: dict[str, Any], minute: int) -> Any:
            return table.make(
                organization_id,
                f"{table.records.prefix}_{next(numbers):05d}",
                created_at=samples.T0 + dt.timedelta(minutes=minute),
                **fields,
            )

        records = [make(fields, minute) for fields, minute in specs]
        with store.session(write=True) as session:
            for record in records:
                session[table.records].add(record)
        filters = table.records.filters(**wanted)
        expected = _order(table, (r for r in records if filters.matches(r)))

        # A walk with no change in between serves exactly the list, page by page.
        seen: list[Any] = []
        request: PageRequest | None = PageRequest.walking(per_page)
        while request is not None:
            with store.session(write=False) as session:
                items, total = session[table.records].list(organization_id, filters, request)
            page = Page.of(items, total, request)
            assert total == len(expected)
            assert len(items) <= per_page
            seen.extend(items)
            request = page.next_request
        assert seen == expected

        # Changes between pages: what was served stays served once; what is left is read in order,
        # including records added after the walk's position and without those removed.
        with store.session(write=False) as session:
            items, total = session[table.records].list(organization_id, filters, PageRequest.walking(per_page))
        first = Page.of(items, total, PageRequest.walking(per_page))
        added = [make(fields, minute) for fields, minute in later]
        removed = [r for i, r in enumerate(records) if i % delete_every == 0 and r not in first.items]
        with store.session(write=True) as session:
            for record in added:
                session[table.records].add(record)
            for record in removed:
                session[table.records].delete(organization_id, record.id)
        live = [r for r in records if r not in removed] + added
        key = None if not first.items else (first.items[-1].created_at, first.items[-1].id)
        if key is None:
            rest = _order(table, (r for r in live if filters.matches(r)))
        elif table.records.newest_first:
            rest = _order(table, (r for r in live if filters.matches(r) and (r.created_at, r.id) < key))
        else:
            rest = _order(table, (r for r in live if filters.matches(r) and (r.created_at, r.id) > key))
        seen = []
        request = first.next_request
        while request is not None:
            with store.session(write=False) as session:
                items, total = session[table.records].list(organization_id, filters, request)
            seen.extend(items)
            request = Page.of(items, total, request).next_request
        if first.next_request is not None:
            assert seen == rest

    check()


@pytest.mark.parametrize("table", FILTERED, ids=lambda t: t.name)
def test_a_position_that_names_no_row_of_the_list_is_refused(store: Store, table: Table) -> None:
    """A cursor comes back from the client: a position whose id is no record of the organization
    here, or whose time is not that record's, is a validation error on ``cursor``; the real one
    is served."""
    rows, _ = _strategies(table)
    numbers = itertools.count()

    @settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(fields=rows)
    def check(fields: dict[str, Any]) -> None:
        _refused_unless_real(store, table, fields, f"org_forged{next(numbers)}")

    check()


def _refused_unless_real(store: Store, table: Table, fields: dict[str, Any], organization_id: str) -> None:
    record = table.make(organization_id, f"{table.records.prefix}_00001", created_at=samples.T0, **fields)
    with store.session(write=True) as session:
        session[table.records].add(record)
    filters = table.records.filters()
    real = Position(record.created_at, record.id, 1)
    forged = [
        Position(record.created_at, f"{table.records.prefix}_99999", 1),
        Position(record.created_at + dt.timedelta(microseconds=1), record.id, 1),
        Position(record.created_at, record.id.upper(), 1),
    ]
    with store.session(write=False) as session:
        repository = session[table.records]
        items, _ = TotalCache().list(table.name, repository, organization_id, filters, PageRequest.walking(5, real))
        assert list(items) == []
        for position in forged:
            with pytest.raises(ValidationError) as refused:
                TotalCache().list(table.name, repository, organization_id, filters, PageRequest.walking(5, position))
            assert refused.value.details["field"] == "cursor"
        # Another organization's row is no row of this list either.
        with pytest.raises(ValidationError):
            TotalCache().list(table.name, repository, "org_other", filters, PageRequest.walking(5, real))
