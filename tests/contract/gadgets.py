"""A test-only area, declared as a new area would be (model, filter, ``Records`` table), for the
migration-helper tests of each SQL store: each store writes the table's migration with its own
helper, and both hold the table served from it to the same behaviour (``check_served``)."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any
from unittest import mock

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest
from compliance_core.areas import AREAS
from compliance_core.kernel.page_cache import TotalCache
from compliance_core.kernel.records import Filter, Records
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store
from compliance_store.listing import PagedQuery

from . import samples

__all__ = [
    "Gadget",
    "GadgetFilter",
    "GADGETS",
    "GADGET_BLOCK_ROWS",
    "WITH_GADGETS",
    "check_served",
    "check_blocks",
    "fill_in_order",
]


@attrs.frozen(kw_only=True)
class Gadget:
    id: str
    organization_id: str
    kind: str
    order: int = 0
    archived: bool = False
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class GadgetFilter(Filter):
    kind: str | None = None
    order: int | None = None
    archived: bool = False


GADGETS: Records[Gadget, GadgetFilter] = Records(
    "gadgets",
    model=Gadget,
    filters=GadgetFilter,
    kind="gadget",
    prefix="gdg",
    partition="archived",
    facets=("kind", "order"),
    facet_pairs=(("kind", "order"),),
)
"""Every filter a facet and their pair counted: what ``count_blocks`` (every filter and pair)
keeps, so the gadgets' migrations may call either helper."""
GADGET_BLOCK_ROWS = 2
"""Rows per block of the gadgets' migration: a handful of records spans many blocks."""
WITH_GADGETS = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(GADGETS,)))


def check_served(store: Store) -> None:
    """Records of the table round-trip, and its counters (per partition, and its facet counts
    of one and two filters) and its revision follow every add, update and delete; closes
    ``store``."""

    def gadget(id: str, **changes: Any) -> Gadget:
        return Gadget(id=id, organization_id="org_a", kind="lamp", order=len(id), created_at=samples.T0, **changes)

    def state() -> tuple[int, int, int, int, int]:
        with store.session(write=False) as session:
            gadgets = session[GADGETS]
            return (
                gadgets.list("org_a", GadgetFilter(), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(archived=True), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(kind="lamp"), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(kind="lamp", order=6), PageRequest())[1],
                gadgets.revision("org_a"),
            )

    try:
        with store.session(write=True) as session:
            for id in ("gdg_1", "gdg_22", "gdg_333"):
                session[GADGETS].add(gadget(id))
        assert state() == (3, 0, 3, 1, 3)
        with store.session(write=True) as session:
            session[GADGETS].update(gadget("gdg_22", archived=True))
        assert state() == (2, 1, 2, 0, 4)
        with store.session(write=True) as session:
            assert session[GADGETS].delete("org_a", "gdg_22") is True
            assert session[GADGETS].delete("org_a", "gdg_22") is False
        assert state() == (2, 0, 2, 0, 5)
        with store.session(write=False) as session:
            assert session[GADGETS].get("org_a", "gdg_333") == gadget("gdg_333")
    finally:
        store.close()


def check_blocks(store: Store) -> None:
    """Every page of every filter set the block counts serve (none, one or two columns, each
    partition), found through them from any offset, equals the page of the records in (created_at,
    id) order, after any inserts (out of order too, so blocks grow past their size), updates of
    any column and key, and deletes; and so does every page listed through a ``TotalCache``, which
    hands the store its revision, so the store keeps the running block sums at it (``Placements``),
    before and after one more insert; closes ``store``."""
    organizations = itertools.count()
    step = st.one_of(
        st.tuples(
            st.just("add"), st.sampled_from(["lamp", "desk"]), st.integers(0, 2), st.booleans(), st.integers(0, 30)
        ),
        st.tuples(
            st.just("update"),
            st.integers(0, 99),
            st.sampled_from(["kind", "order", "archived", "created_at"]),
            st.integers(0, 30),
        ),
        st.tuples(st.just("delete"), st.integers(0, 99)),
    )

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(steps=st.lists(step, min_size=1, max_size=40))
    def check(steps: list[tuple[Any, ...]]) -> None:
        organization_id = f"org_{next(organizations):04d}"
        live: dict[str, Gadget] = {}
        for index, (kind, *args) in enumerate(steps):
            with store.session(write=True) as session:
                gadgets = session[GADGETS]
                if kind == "add":
                    name, order, archived, minute = args
                    gadget = Gadget(
                        id=f"gdg_{index:03d}",
                        organization_id=organization_id,
                        kind=name,
                        order=order,
                        archived=archived,
                        created_at=samples.T0 + dt.timedelta(minutes=minute),
                    )
                    gadgets.add(gadget)
                    live[gadget.id] = gadget
                elif kind == "update" and live:
                    at, field, value = args
                    old = sorted(live)[at % len(live)]
                    changes = {
                        "kind": ["lamp", "desk", "fan"][value % 3],
                        "order": value % 3,
                        "archived": bool(value % 2),
                        "created_at": samples.T0 + dt.timedelta(minutes=value),
                    }
                    live[old] = attrs.evolve(live[old], **{field: changes[field]})
                    gadgets.update(live[old])
                elif kind == "delete" and live:
                    gone = sorted(live)[args[0] % len(live)]
                    assert gadgets.delete(organization_id, gone)
                    del live[gone]
        ordered = sorted(live.values(), key=lambda g: (g.created_at, g.id))
        filter_sets = [
            GadgetFilter(kind=kind, order=order, archived=archived)
            for kind in (None, "lamp", "desk", "fan")
            for order in (None, 0, 1, 2)
            for archived in (False, True)
        ]
        with store.session(write=False) as session:
            gadgets = session[GADGETS]
            for filters in filter_sets:
                expected = [g for g in ordered if filters.matches(g)]
                for per_page in (1, 2, 3):
                    for number in range(1, len(expected) // per_page + 2):
                        request = PageRequest(page=number, per_page=per_page)
                        items, total = gadgets.list(organization_id, filters, request)
                        assert total == len(expected), filters
                        assert list(items) == expected[request.offset : request.offset + per_page], (filters, request)
        cache = TotalCache()
        for round in range(2):  # the second time, block sums kept at the first revision must not serve
            ordered = sorted(live.values(), key=lambda g: (g.created_at, g.id))
            with store.session(write=False) as session:
                gadgets = session[GADGETS]
                revision = gadgets.revision(organization_id)
                for filters in filter_sets:
                    expected = [g for g in ordered if filters.matches(g)]
                    for offset in [*range(len(expected)), *range(len(expected))]:  # each twice: the kept sums
                        request = PageRequest(page=offset + 1, per_page=1)
                        items, total = cache.list("gadgets", gadgets, organization_id, filters, request, revision)
                        assert (list(items), total) == (expected[offset : offset + 1], len(expected)), filters
            if round == 0:  # before every row: each one's offset moves
                early = Gadget(id="gdg_new", organization_id=organization_id, kind="lamp", created_at=samples.T0)
                with store.session(write=True) as session:
                    session[GADGETS].add(early)
                live[early.id] = early

    try:
        with mock.patch.object(PagedQuery, "SEEK_FROM", 1):
            check()
    finally:
        store.close()


def fill_in_order(store: Store) -> None:
    """Nine gadgets of every kind, order and partition, written in list order (as a migration
    finds a table's rows: ``count_blocks`` is to count them as the triggers did); closes
    ``store``."""
    try:
        with store.session(write=True) as session:
            for n in range(9):
                kind = ("lamp", "desk", "fan")[n % 3]
                session[GADGETS].add(
                    Gadget(
                        id=f"gdg_{n}",
                        organization_id="org_a",
                        kind=kind,
                        order=n % 2,
                        archived=n == 4,
                        created_at=samples.at(n),
                    )
                )
    finally:
        store.close()
