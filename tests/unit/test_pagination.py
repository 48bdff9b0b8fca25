from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core import FrozenClock, Page, PageRequest, Platform, SequentialIds, ValidationError
from compliance_core.areas.vendors import NewVendor
from compliance_store.memory import MemoryStore


@pytest.mark.parametrize(
    "kwargs, field, value",
    [
        ({"page": 0}, "page", 0),
        ({"page": -3}, "page", -3),
        ({"per_page": 201}, "perPage", 201),
        ({"per_page": 0}, "perPage", 0),
        ({"page": True}, "page", True),
        ({"per_page": "5"}, "perPage", "5"),
    ],
)
def test_page_request_rejects_out_of_bounds(kwargs, field, value) -> None:
    with pytest.raises(ValidationError) as caught:
        PageRequest(**kwargs)
    assert caught.value.details["field"] == field
    assert caught.value.details["value"] == value


@given(total=st.integers(0, 10_000), per_page=st.integers(1, 200))
def test_total_pages_is_at_least_one_and_covers_every_item(total: int, per_page: int) -> None:
    page = Page(items=(), total=total, page=1, per_page=per_page)
    assert page.total_pages >= 1
    assert (page.total_pages - 1) * per_page < max(total, 1) <= page.total_pages * per_page


@settings(max_examples=30, deadline=None)
@given(count=st.integers(0, 60), per_page=st.integers(1, 25))
def test_paging_yields_every_vendor_exactly_once(count: int, per_page: int) -> None:
    clock = FrozenClock()
    platform = Platform(MemoryStore(), clock=clock, ids=SequentialIds())
    actor = platform.actor(platform.bootstrap("Acme").organization.id)
    created = set()
    for n in range(count):
        created.add(platform.vendors.create(actor, NewVendor(name=f"Vendor {n}")).id)
        if n % 7 == 0:
            clock.advance(seconds=1)
    seen: list[str] = []
    number = 1
    while True:
        page = platform.vendors.list(actor, page=PageRequest(page=number, per_page=per_page))
        seen.extend(v.id for v in page.items)
        assert page.total == count
        if page.page == page.total_pages:
            break
        number += 1
    assert len(seen) == len(set(seen)) == count
    assert set(seen) == created
