from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest, Platform
from compliance_core.areas.vendors import (
    VENDORS,
    Criticality,
    DpaStatus,
    NewVendor,
    Vendor,
    VendorCategory,
    VendorFilter,
    VendorPatch,
    VendorStatus,
)
from compliance_core.kernel.uow import Store

from . import samples

FILTER_VALUES: dict[str, tuple[Any, Any]] = {
    # field: (the value filtered for, another value)
    "criticality": (Criticality.CRITICAL, Criticality.STANDARD),
    "processes_personal_data": (True, False),
    "ict_service": (True, False),
    "category": (VendorCategory.HR, VendorCategory.CLOUD),
    "country": ("DE", "FR"),
    "dpa_status": (DpaStatus.PENDING, None),
    "status": (VendorStatus.IN_PROGRESS, VendorStatus.NOT_ASSESSED),
    "assignee_id": ("mem_00000001", None),
}


def _add(store: Store, vendors: list[Vendor]) -> None:
    with store.session(write=True) as session:
        for vendor in vendors:
            session[VENDORS].add(vendor)


def _list(store: Store, organization_id: str, filters: VendorFilter, page: PageRequest) -> tuple[list[Vendor], int]:
    with store.session(write=False) as session:
        items, total = session[VENDORS].list(organization_id, filters, page)
    return list(items), total


def test_a_vendor_round_trips_with_every_field(store: Store) -> None:
    vendor = samples.vendor()
    _add(store, [vendor])
    with store.session(write=False) as session:
        assert session[VENDORS].get(vendor.organization_id, vendor.id) == vendor
    assert _list(store, vendor.organization_id, VendorFilter(archived=True), PageRequest()) == ([vendor], 1)


def test_a_vendor_with_only_required_fields_round_trips(store: Store) -> None:
    vendor = samples.plain_vendor("org_a", "vnd_plain")
    _add(store, [vendor])
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_plain") == vendor


def test_another_organizations_vendor_is_not_found(store: Store) -> None:
    _add(store, [samples.vendor(organization_id="org_a")])
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_b", "vnd_full") is None
        assert session[VENDORS].get("org_a", "vnd_missing") is None
    assert _list(store, "org_b", VendorFilter(archived=True), PageRequest()) == ([], 0)


def test_an_update_replaces_every_field(store: Store) -> None:
    vendor = samples.vendor()
    _add(store, [vendor])
    changed = attrs.evolve(
        samples.plain_vendor(vendor.organization_id, vendor.id, created_at=vendor.created_at),
        updated_at=samples.at(10_000),
    )
    with store.session(write=True) as session:
        session[VENDORS].update(changed)
    with store.session(write=False) as session:
        assert session[VENDORS].get(vendor.organization_id, vendor.id) == changed


@pytest.mark.parametrize("field", sorted(FILTER_VALUES))
def test_each_filter_alone_selects_exactly_the_matching_vendors(store: Store, field: str) -> None:
    wanted, other = FILTER_VALUES[field]
    vendors = [
        samples.plain_vendor("org_a", f"vnd_{n}", samples.at(n), **{field: wanted if n % 3 == 0 else other})
        for n in range(9)
    ]
    _add(store, vendors + [samples.plain_vendor("org_b", "vnd_x", **{field: wanted})])
    items, total = _list(store, "org_a", VendorFilter(**{field: wanted}), PageRequest())
    assert [v.id for v in items] == ["vnd_0", "vnd_3", "vnd_6"]
    assert total == 3


def test_filters_combine_with_and(store: Store) -> None:
    combos = itertools.product([Criticality.CRITICAL, Criticality.STANDARD], [True, False], ["DE", "US", None])
    vendors = [
        samples.plain_vendor("org_a", f"vnd_{n}", samples.at(n), criticality=c, processes_personal_data=p, country=k)
        for n, (c, p, k) in enumerate(combos)
    ]
    _add(store, vendors)
    filters = VendorFilter(criticality="critical", processes_personal_data=True, country="DE")
    items, total = _list(store, "org_a", filters, PageRequest())
    assert (items, total) == ([v for v in vendors if filters.matches(v)], 1)


def test_archived_vendors_leave_the_register_and_form_the_archive(store: Store) -> None:
    live = [samples.plain_vendor("org_a", f"vnd_live{n}", samples.at(n)) for n in range(3)]
    gone = [
        samples.plain_vendor("org_a", f"vnd_gone{n}", samples.at(n), archived=True, archived_at=samples.at(9))
        for n in range(2)
    ]
    _add(store, live + gone)
    assert _list(store, "org_a", VendorFilter(), PageRequest()) == (live, 3)
    assert _list(store, "org_a", VendorFilter(archived=True), PageRequest()) == (gone, 2)


def test_totals_follow_archive_and_restore(platform: Platform, owner: Any) -> None:
    vendors = [platform.vendors.create(owner, NewVendor(name=f"V{n}")) for n in range(4)]
    platform.vendors.archive(owner, vendors[1].id)
    platform.vendors.archive(owner, vendors[2].id)
    platform.vendors.restore(owner, vendors[2].id)
    platform.vendors.update(owner, vendors[3].id, VendorPatch(name="renamed"))
    live = platform.vendors.list(owner)
    archive = platform.vendors.list(owner, VendorFilter(archived=True))
    assert (live.total, [v.id for v in live.items]) == (3, [vendors[0].id, vendors[2].id, vendors[3].id])
    assert (archive.total, [v.id for v in archive.items]) == (1, [vendors[1].id])


def test_pages_follow_created_at_then_id(store: Store) -> None:
    # Ids deliberately disagree with insertion order; equal timestamps are ordered by id.
    vendors = [samples.plain_vendor("org_a", f"vnd_{9 - n}", samples.at(n // 3)) for n in range(10)]
    _add(store, vendors)
    expected = sorted(vendors, key=lambda v: (v.created_at, v.id))
    pages = [_list(store, "org_a", VendorFilter(), PageRequest(page=p, per_page=4)) for p in (1, 2, 3, 4)]
    assert [total for _, total in pages] == [10, 10, 10, 10]
    assert [len(items) for items, _ in pages] == [4, 4, 2, 0]
    assert [v for items, _ in pages for v in items] == expected


def test_the_service_lists_what_it_created(platform: Platform, owner: Any, outsider: Any) -> None:
    created = [
        platform.vendors.create(owner, NewVendor(name=f"V{n}", criticality="critical" if n % 2 else "standard"))
        for n in range(5)
    ]
    platform.vendors.create(outsider, NewVendor(name="elsewhere"))
    page = platform.vendors.list(owner, VendorFilter(criticality="critical"), PageRequest(per_page=1, page=2))
    assert (page.items, page.total, page.total_pages) == ((created[3],), 2, 2)
    assert platform.vendors.get(owner, created[0].id) == created[0]


# -- property: the store's pages are Python's AND of the filters, in (created_at, id) order ------

_FILTER_CHOICES: dict[str, list[Any]] = {
    "criticality": [None, *Criticality],
    "processes_personal_data": [None, True, False],
    "ict_service": [None, True, False],
    "category": [None, VendorCategory.CLOUD, VendorCategory.HR],
    "country": [None, "DE", "US"],
    "dpa_status": [None, DpaStatus.SIGNED, DpaStatus.PENDING],
    "status": [None, VendorStatus.ASSESSED, VendorStatus.NOT_ASSESSED],
    "assignee_id": [None, "mem_1", "mem_2"],
}
_FIELD_CHOICES = {
    name: [v for v in values if v is not None] + ([None] if name in ("country", "dpa_status", "assignee_id") else [])
    for name, values in _FILTER_CHOICES.items()
}

_vendor_fields = st.fixed_dictionaries(
    {name: st.sampled_from(values) for name, values in _FIELD_CHOICES.items()}
    | {"archived": st.booleans(), "minute": st.integers(0, 4)}
)
_filters = st.fixed_dictionaries(
    {name: st.sampled_from(values) for name, values in _FILTER_CHOICES.items()} | {"archived": st.booleans()}
)


@pytest.fixture
def organization_numbers() -> itertools.count:
    return itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specs=st.lists(_vendor_fields, max_size=30),
    filters=_filters,
    per_page=st.integers(1, 7),
    ids=st.randoms(use_true_random=False),
)
def test_pages_equal_pythons_and_of_the_filters(
    store: Store,
    organization_numbers: itertools.count,
    specs: list[dict[str, Any]],
    filters: dict[str, Any],
    per_page: int,
    ids: Any,
) -> None:
    # One database for the whole test: each example (and each replay) gets a new organization.
    organization_id = f"org_{next(organization_numbers):05d}"
    numbers = ids.sample(range(10_000), len(specs))
    vendors = []
    for number, spec in zip(numbers, specs):
        spec = dict(spec)
        created_at = samples.T0 + dt.timedelta(minutes=spec.pop("minute"))
        vendors.append(samples.plain_vendor(organization_id, f"vnd_{number:05d}", created_at, **spec))
    _add(store, vendors)
    wanted = VendorFilter(**filters)
    expected = sorted((v for v in vendors if wanted.matches(v)), key=lambda v: (v.created_at, v.id))

    seen: list[Vendor] = []
    page = 1
    while True:
        items, total = _list(store, organization_id, wanted, PageRequest(page=page, per_page=per_page))
        assert total == len(expected)
        seen.extend(items)
        if page >= max(1, -(-total // per_page)):
            break
        page += 1
    assert seen == expected
