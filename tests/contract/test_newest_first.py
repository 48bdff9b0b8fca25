"""A ``Records`` table declared ``newest_first`` lists in (created_at, id) descending order on every
store: plain pages, deep pages that seek from anchors, and filtered pages. Proven by declaring the
vendors table newest first (same table, same indexes) and opening each store with that area."""

from __future__ import annotations

import datetime as dt
import pathlib
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from compliance_core import PageRequest
from compliance_core.areas import AREAS
from compliance_core.areas.vendors import VENDORS, Criticality, VendorFilter
from compliance_core.kernel.uow import Store
from compliance_store.listing import PagedQuery
from compliance_store.memory import MemoryStore

from . import samples

NEWEST = attrs.evolve(VENDORS, newest_first=True)
AREAS_NEWEST = [
    attrs.evolve(area, records=tuple(NEWEST if r.name == VENDORS.name else r for r in area.records)) for area in AREAS
]


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def newest_store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Store]:
    store: Store
    if request.param == "memory":
        store = MemoryStore(areas=AREAS_NEWEST)
    elif request.param == "sqlite":
        from compliance_store.sqlite import SqliteStore

        store = SqliteStore(f"sqlite:///{tmp_path / 'newest.db'}", areas=AREAS_NEWEST)
    else:
        from compliance_store.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("postgres_url"), areas=AREAS_NEWEST)
    yield store
    store.close()


def _vendors(count: int) -> list[Any]:
    # Two vendors per second, so ties on created_at are broken by id (descending too).
    return [
        samples.plain_vendor(
            "org_a",
            f"vnd_{n:05d}",
            created_at=samples.T0 + dt.timedelta(seconds=n // 2),
            criticality=(Criticality.CRITICAL, Criticality.STANDARD)[n % 2],
        )
        for n in range(count)
    ]


def test_pages_run_newest_first_and_deep_pages_seek_alike(newest_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PagedQuery, "ANCHOR_EVERY", 100)  # both partitions seek from anchors
    vendors = _vendors(1_203)
    with newest_store.session(write=True) as session:
        for vendor in vendors:
            session[NEWEST].add(vendor)
    expected = sorted(vendors, key=lambda v: (v.created_at, v.id), reverse=True)
    for filters, wanted in (
        (VendorFilter(), expected),
        (VendorFilter(criticality="critical"), [v for v in expected if v.criticality == "critical"]),
        (VendorFilter(archived=None), expected),
    ):
        for request in (
            PageRequest(page=1, per_page=7),
            PageRequest(page=90, per_page=10),
            PageRequest(page=6, per_page=200),
        ):
            with newest_store.session(write=False) as session:
                plain, total = session[NEWEST].list("org_a", filters, request)
                revision = session[NEWEST].revision("org_a")
                seeking, _ = session[NEWEST].list("org_a", filters, request, total, revision)
                again, _ = session[NEWEST].list("org_a", filters, request, total, revision)  # from what was kept
            page = wanted[request.offset : request.offset + request.per_page]
            assert total == len(wanted)
            assert [v.id for v in plain] == [v.id for v in page]
            assert [v.id for v in seeking] == [v.id for v in again] == [v.id for v in page]
