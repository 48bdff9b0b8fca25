"""Properties over generated requests: bad input never becomes a 5xx or a partial write, and the
the listing query is checked (the access matrix over every route is in test_http_generic)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.kernel.validation import wire_name
from compliance_http.app import create_app
from compliance_store.memory import MemoryStore
from http_support import Api, issue_key

pytestmark = pytest.mark.every_store

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
vendor_keys = st.sampled_from([wire_name(f.name) for f in attrs.fields(NewVendor)]) | st.text(max_size=16)
vendor_bodies = st.dictionaries(vendor_keys, json_values, max_size=6)
query_names = st.sampled_from([wire_name(f.name) for f in attrs.fields(VendorFilter)] + ["page", "perPage"])
queries = st.lists(st.tuples(query_names | st.text(min_size=1, max_size=8), st.text(max_size=12)), max_size=4)


class World:
    """One organization with a key per role and one record of each kind, rate limits out of the way."""

    def __init__(self) -> None:
        self.platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
        boot = self.platform.bootstrap("Acme", "enterprise", rpm=1_000_000, burst=1_000_000)
        self.app = create_app(self.platform)
        self.owner = Api(self.app, boot.owner_key.secret)
        self.callers = {role: Api(self.app, issue_key(self.platform, boot.organization.id, role)) for role in Role}
        person_id = self.owner.post("/v1/people", {"name": "T", "email": "t@example.com", "role": "contractor"}).json[
            "id"
        ]
        self.ids = {  # the records that bad input must not touch
            "vendor_id": self.owner.post("/v1/vendors", {"name": "Target"}).json["id"],
            "person_id": person_id,
            "finding_id": self.owner.post("/v1/findings", {"title": "T", "severity": "low"}).json["id"],
            "key_id": self.owner.post("/v1/api-keys", {"name": "T", "role": "contractor", "personId": person_id}).json[
                "id"
            ],
        }
        self.serial = itertools.count()

    def vendor_count(self) -> int:
        return self.owner.get("/v1/vendors").json["count"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    world = World()
    yield world
    world.platform.close()


@PROPERTY
@given(body=vendor_bodies)
def test_bad_vendor_bodies_are_400_and_write_nothing(world: World, body: dict[str, Any]) -> None:
    before = world.vendor_count()
    result = world.owner.post("/v1/vendors", body)
    assert result.status_code in (201, 400), result.text
    assert world.vendor_count() == before + (result.status_code == 201)
    if result.status_code == 400:
        assert result.json["error"]["code"] == "validation_error"
        assert "field" in result.json["error"]["details"]


@PROPERTY
@given(body=vendor_bodies)
def test_bad_patches_are_400_and_change_nothing(world: World, body: dict[str, Any]) -> None:
    path = f"/v1/vendors/{world.ids['vendor_id']}"
    before = world.owner.get(path).json
    result = world.owner.patch(path, body)
    assert result.status_code in (200, 400), result.text
    if result.status_code == 400:
        assert world.owner.get(path).json == before


@PROPERTY
@given(
    raw=st.binary(max_size=64) | json_values.map(lambda v: repr(v).encode()),
    content_type=st.sampled_from(["application/json", "text/plain", "application/json; charset=utf-8", ""]),
)
def test_arbitrary_bytes_never_fail_the_server(world: World, raw: bytes, content_type: str) -> None:
    before = world.vendor_count()
    result = world.owner.request("POST", "/v1/vendors", raw=raw, content_type=content_type or "x")
    assert result.status_code in (201, 400), result.text
    assert world.vendor_count() == before + (result.status_code == 201)


@PROPERTY
@given(params=queries)
def test_generated_queries_are_200_or_400(world: World, params: list[tuple[str, str]]) -> None:
    result = world.owner.get("/v1/vendors", query=urlencode(params))
    assert result.status_code in (200, 400), result.text
    if result.status_code == 400:
        assert result.json["error"]["details"]["field"]


@PROPERTY
@given(
    bulk=st.lists(
        st.dictionaries(
            st.sampled_from(["name", "email", "role", "isActive", "jobTitle", "x"]), json_values, max_size=5
        ),
        min_size=1,
        max_size=5,
    )
)
def test_bad_bulk_bodies_write_nothing(world: World, bulk: list[dict[str, Any]]) -> None:
    before = world.owner.get("/v1/people").json["count"]
    result = world.owner.post("/v1/people/bulk", {"members": bulk})
    assert result.status_code in (201, 400, 403, 409), result.text
    after = world.owner.get("/v1/people").json["count"]
    assert after == before + (len(bulk) if result.status_code == 201 else 0)
