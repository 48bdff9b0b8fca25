"""Totals without counting, on every store: a list served through the platform's caches (a kept
total handed to the store, which then counts nothing) equals the store's uncached answer after any
writes, and on SQLite the second page of a filter set really runs no COUNT."""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import pathlib
import sqlite3
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import FrozenClock, PageRequest, Platform, SequentialIds
from compliance_core.areas.finding_templates import FindingTemplateFilter, NewFindingTemplate
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.records import list_page
from compliance_core.kernel.uow import Store
from compliance_store.listing import PagedQuery
from compliance_store.memory import MemoryStore
from compliance_store.placements import Anchors, Placements
from compliance_store.sqlite import SqliteStore

from . import samples
from .samples import Table
from .test_records import TABLES, _strategies

FILTERED = [t for t in TABLES if t.records.filters is not None]


@pytest.fixture
def organization_numbers() -> itertools.count:
    return itertools.count()


@pytest.mark.parametrize("table", FILTERED, ids=lambda t: t.name)
def test_totals_and_pages_through_the_caches_equal_the_uncached_answers(
    store: Store, table: Table, organization_numbers: itertools.count
) -> None:
    rows, chosen = _strategies(table)
    # Pages are never kept (budget 0), so every list goes to the store, with a kept total when
    # one is valid: the property is about totals, and the page cache has its own tests.
    pages = PageCache(budget=0)
    step = st.one_of(
        st.tuples(st.just("add"), rows, st.integers(0, 3), st.integers(0, 1)),
        st.tuples(st.just("update"), rows, st.integers(0, 50)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("list"), st.integers(0, 2), st.integers(0, 1), st.integers(1, 4), st.integers(1, 4)),
    )

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(steps=st.lists(step, max_size=30), wanted=st.lists(chosen, min_size=1, max_size=3))
    def check(steps: list[tuple[Any, ...]], wanted: list[dict[str, Any]]) -> None:
        # One database for every example: each example gets two new organizations.
        number = next(organization_numbers)
        organizations = (f"org_{number:05d}a", f"org_{number:05d}b")
        # The drawn filter sets, each one's first term alone and the default list: sets that many
        # records match, so a stale total would show (the full sets of many terms rarely match).
        singles = [dict(list(((k, v) for k, v in fields.items() if v is not None))[:1]) for fields in wanted]
        filter_sets = list(dict.fromkeys(table.records.filters(**fields) for fields in [{}, *singles, *wanted]))
        live: list[Any] = []

        def compare(organization_id: str, filters: Any, page: int, per_page: int) -> None:
            request = PageRequest(page=page, per_page=per_page)
            with store.session(write=False) as session:
                served = list_page(session, table.records, pages, organization_id, filters, request)
                items, total = session[table.records].list(organization_id, filters, request)
            expected = sorted(
                (r for r in live if r.organization_id == organization_id and filters.matches(r)),
                key=lambda r: (r.created_at, r.id),
                reverse=table.records.newest_first,
            )
            assert served.total == total == len(expected)
            assert list(served.items) == items == expected[request.offset : request.offset + per_page]

        for organization_id in organizations:  # every filter set gets a kept total first
            for kept in filter_sets:
                compare(organization_id, kept, 1, 2)
        for index, (kind, *args) in enumerate(steps):
            if kind == "add":
                fields, minute, which = args
                record = table.make(
                    organizations[which],
                    f"{table.records.prefix}_{index:05d}",
                    created_at=samples.T0 + dt.timedelta(minutes=minute),
                    **fields,
                )
                with store.session(write=True) as session:
                    session[table.records].add(record)
                live.append(record)
            elif kind == "update" and live:
                fields, at = args
                position = at % len(live)
                record = attrs.evolve(live[position], **fields)
                with store.session(write=True) as session:
                    session[table.records].update(record)
                live[position] = record
            elif kind == "delete" and live:
                record = live.pop(args[0] % len(live))
                with store.session(write=True) as session:
                    assert session[table.records].delete(record.organization_id, record.id)
            elif kind == "list":
                which_filters, which, page, per_page = args
                # The next page right after: no write between, so its total is a kept one.
                filters = filter_sets[which_filters % len(filter_sets)]
                for number in (page, page + 1):
                    compare(organizations[which], filters, number, per_page)
        for organization_id in organizations:  # and every filter set once more, at the end
            for kept in filter_sets:
                compare(organization_id, kept, 1, 2)
                compare(organization_id, kept, 2, 2)

    check()
    assert pages.totals.hits > 0, "no list reused a total: the property proved nothing"


# -- SQLite: the COUNT statements really executed ------------------------------------------------


def _counts(statements: list[str]) -> list[str]:
    return [s for s in statements if "count(*)" in s.lower()]


def test_the_second_page_of_the_same_filters_runs_no_count_on_sqlite(
    tmp_path: pathlib.Path, sqlite_statements: list[str]
) -> None:
    """Three filters are counted (one or two sum ``list_facet_blocks``: the next test), once per
    filter set and revision."""
    statements = sqlite_statements
    store = SqliteStore(f"sqlite:///{tmp_path / 'totals.db'}")
    try:
        platform = Platform(store, clock=FrozenClock(), ids=SequentialIds())
        owner = platform.actor(platform.bootstrap("Counted").organization.id)
        for n in range(12):
            criticality = "critical" if n % 2 else "standard"
            platform.vendors.create(owner, NewVendor(name=f"V{n}", criticality=criticality, category="cloud"))
        critical = VendorFilter(criticality="critical", category="cloud", ict_service=False)

        statements.clear()
        first = platform.vendors.list(owner, critical, PageRequest(page=1, per_page=2))
        assert len(_counts(statements)) == 1 and first.total == 6

        statements.clear()
        second = platform.vendors.list(owner, critical, PageRequest(page=2, per_page=2))
        assert _counts(statements) == [] and second.total == 6
        assert any("LIMIT" in s for s in statements), "the page query itself still runs"
        assert [v.id for v in second.items] != [v.id for v in first.items]

        statements.clear()  # another page size, same filters: still no count
        assert platform.vendors.list(owner, critical, PageRequest(page=1, per_page=5)).total == 6
        assert _counts(statements) == []

        statements.clear()  # another filter set is counted once
        standard = VendorFilter(criticality="standard", category="cloud", ict_service=False)
        platform.vendors.list(owner, standard, PageRequest(page=1, per_page=2))
        platform.vendors.list(owner, standard, PageRequest(page=2, per_page=2))
        assert len(_counts(statements)) == 1

        platform.vendors.create(owner, NewVendor(name="New", criticality="critical", category="cloud"))
        statements.clear()  # a write of the organization's vendors: counted again, once
        assert platform.vendors.list(owner, critical, PageRequest(page=3, per_page=2)).total == 7
        assert platform.vendors.list(owner, critical, PageRequest(page=4, per_page=2)).total == 7
        assert len(_counts(statements)) == 1
    finally:
        store.close()


def test_one_or_two_filters_are_never_counted_on_sqlite(tmp_path: pathlib.Path, sqlite_statements: list[str]) -> None:
    """Their totals are summed from ``list_facet_blocks``, kept by the triggers in the writing
    transaction: right after a write too, in a table whose pages are not cached as well."""
    statements = sqlite_statements
    store = SqliteStore(f"sqlite:///{tmp_path / 'totals.db'}")
    try:
        platform = Platform(store, clock=FrozenClock(), ids=SequentialIds())
        owner = platform.actor(platform.bootstrap("Counted").organization.id)
        for n in range(12):
            platform.vendors.create(owner, NewVendor(name=f"V{n}", criticality="critical" if n % 2 else "standard"))
        critical = VendorFilter(criticality="critical")
        pair = VendorFilter(criticality="critical", processes_personal_data=False)

        statements.clear()
        assert platform.vendors.list(owner, critical, PageRequest(page=1, per_page=2)).total == 6
        assert platform.vendors.list(owner, pair, PageRequest(page=2, per_page=2)).total == 6
        assert platform.vendors.list(owner, VendorFilter(criticality="important"), PageRequest()).total == 0
        platform.vendors.create(owner, NewVendor(name="New", criticality="critical"))
        assert platform.vendors.list(owner, critical, PageRequest(page=3, per_page=2)).total == 7
        assert platform.vendors.list(owner, pair, PageRequest(page=3, per_page=2)).total == 7
        assert platform.vendors.list(owner, VendorFilter(processes_personal_data=True), PageRequest()).total == 0

        platform.finding_templates.create(owner, NewFindingTemplate(category="Access", title="T"))
        access = FindingTemplateFilter(category="Access")
        assert platform.finding_templates.list(owner, access, PageRequest(page=1, per_page=1)).total == 1
        assert _counts(statements) == []
        assert any("list_facet_blocks" in s for s in statements)
    finally:
        store.close()


# -- Anchors: a deep page seeks from the nearest anchor, and equals the plain OFFSET page ----------


def _triples(table: Table) -> tuple[str, ...]:
    """Three filter columns beside the partition: the shortest filter set paged through anchors."""
    return tuple(f.name for f in attrs.fields(table.records.filters) if f.name != table.records.partition)[:3]


@pytest.mark.parametrize("table", [t for t in FILTERED if len(_triples(t)) == 3], ids=lambda t: t.name)
def test_pages_through_the_anchors_equal_the_plain_offset_pages(
    store: Store, table: Table, organization_numbers: itertools.count, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, chosen = _strategies(table)
    # Anchors every 3 rows, so small sets have many of them; pages are never kept (budget 0).
    pages = PageCache(budget=0)
    monkeypatch.setattr(PagedQuery, "ANCHOR_EVERY", 3)
    reused: list[Anchors] = []
    get = Placements.get

    def spied(self: Placements, key: Any, revision: int) -> Any:
        found = get(self, key, revision)
        if isinstance(found, Anchors):
            reused.append(found)
        return found

    monkeypatch.setattr(Placements, "get", spied)
    # and one or two filters look for their block from the second row on (SQL stores)
    monkeypatch.setattr(PagedQuery, "SEEK_FROM", 1)
    step = st.one_of(
        st.tuples(st.just("add"), rows, st.integers(0, 3)),
        st.tuples(st.just("update"), rows, st.integers(0, 50)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("list"), st.integers(0, 3), st.integers(1, 8), st.integers(1, 4)),
    )

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        seed=st.lists(rows, min_size=7, max_size=7),
        steps=st.lists(step, max_size=30),
        wanted=st.lists(chosen, min_size=1, max_size=2),
    )
    def check(seed: list[dict[str, Any]], steps: list[tuple[Any, ...]], wanted: list[dict[str, Any]]) -> None:
        organization_id = f"org_{next(organization_numbers):05d}s"
        # The seven records share three filter values (and the partition), so that filter set
        # spans anchors.
        partition = table.records.partition
        triple = {name: seed[0][name] for name in (*_triples(table), *([partition] if partition else []))}
        seed = [{**fields, **triple} for fields in seed]
        wanted = [*wanted, triple]
        singles = [dict(list(((k, v) for k, v in fields.items() if v is not None))[:1]) for fields in wanted]
        filter_sets = list(dict.fromkeys(table.records.filters(**fields) for fields in [{}, *singles, *wanted]))
        live: list[Any] = []

        def compare(filters: Any, page: int, per_page: int) -> None:
            request = PageRequest(page=page, per_page=per_page)
            with store.session(write=False) as session:
                served = list_page(session, table.records, pages, organization_id, filters, request)
                items, total = session[table.records].list(organization_id, filters, request)
            assert (list(served.items), served.total) == (items, total)

        # Seven records first, so the default list always reaches past two anchors.
        for index, (kind, *args) in enumerate([*(("add", fields, 0) for fields in seed), *steps]):
            if kind == "add":
                fields, minute = args
                record = table.make(
                    organization_id,
                    f"{table.records.prefix}_{index:05d}",
                    created_at=samples.T0 + dt.timedelta(minutes=minute),
                    **fields,
                )
                with store.session(write=True) as session:
                    session[table.records].add(record)
                live.append(record)
            elif kind == "update" and live:
                fields, at = args
                position = at % len(live)
                live[position] = attrs.evolve(live[position], **fields)
                with store.session(write=True) as session:
                    session[table.records].update(live[position])
            elif kind == "delete" and live:
                record = live.pop(args[0] % len(live))
                with store.session(write=True) as session:
                    assert session[table.records].delete(record.organization_id, record.id)
            elif kind == "list":
                which, page, per_page = args
                filters = filter_sets[which % len(filter_sets)]
                for number in (page, page + 1, 1, page + 2):  # deeper, then back: kept anchors
                    compare(filters, number, per_page)
        for filters in filter_sets:
            for number in range(1, len(live) + 2):
                compare(filters, number, 1)

    check()
    if not isinstance(store, MemoryStore):  # which keeps no anchors
        assert reused, "no list reused anchors: the property proved nothing"


def test_a_deep_page_of_three_filters_seeks_from_an_anchor_on_sqlite(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, sqlite_statements: list[str]
) -> None:
    statements = sqlite_statements
    monkeypatch.setattr(PagedQuery, "ANCHOR_EVERY", 4)
    store = SqliteStore(f"sqlite:///{tmp_path / 'anchors.db'}")
    try:
        platform = Platform(store, clock=FrozenClock(), ids=SequentialIds())
        owner = platform.actor(platform.bootstrap("Anchored").organization.id)
        for n in range(20):
            criticality = "critical" if n % 2 else "standard"
            platform.vendors.create(owner, NewVendor(name=f"V{n}", criticality=criticality, category="cloud"))
        # three filters: one or two find their pages through their block counts instead
        critical = VendorFilter(criticality="critical", category="cloud", ict_service=False)
        every = [v.id for v in platform.vendors.list(owner, critical, PageRequest(page=1, per_page=10)).items]

        statements.clear()
        deep = platform.vendors.list(owner, critical, PageRequest(page=4, per_page=2))  # offset 6
        assert [v.id for v in deep.items] == every[6:8] and deep.total == 10
        hops = [s for s in statements if "LIMIT 1 OFFSET 4" in s]
        seeks = [s for s in statements if "(created_at, id) >=" in s and "LIMIT 2 OFFSET 2" in s]
        assert len(hops) == 1 and len(seeks) == 1, statements
        assert not [s for s in statements if "LIMIT 2 OFFSET 6" in s], "no plain OFFSET walk"

        statements.clear()  # the anchor is kept: the next deep page only seeks
        deeper = platform.vendors.list(owner, critical, PageRequest(page=5, per_page=1))  # offset 4
        assert [v.id for v in deeper.items] == every[4:5]
        assert not [s for s in statements if "LIMIT 1 OFFSET 4" in s]
        assert [s for s in statements if "(created_at, id) >=" in s and "LIMIT 1 OFFSET 0" in s]

        seek = next(s for s in statements if "(created_at, id) >=" in s)
        with contextlib.closing(sqlite3.connect(tmp_path / "anchors.db")) as conn:  # the filter index serves it
            plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {seek}"))
        assert "USING INDEX vendors_by_" in plan and "(created_at,id)>" in plan, plan
    finally:
        store.close()
