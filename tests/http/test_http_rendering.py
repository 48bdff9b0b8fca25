"""Response rendering: the compiled per-model renderers write exactly what a generic rename of the
model's fields would, and a list body rendered once is reused only while it is still right."""

from __future__ import annotations

import datetime as dt
import weakref
from typing import Any

import attrs
import orjson

from compliance_core import Actor, FrozenClock, Platform, Role
from compliance_core.areas.api_keys import ApiKey
from compliance_core.areas.findings import Finding, FindingSource, FindingStatus, FindingType, Severity
from compliance_core.areas.people import Department, Person
from compliance_core.areas.vendors import (
    Criticality,
    DpaStatus,
    PurposeCategory,
    SubProcessor,
    Vendor,
    VendorCategory,
)
from compliance_core.kernel.pages import Page, PageRequest
from compliance_core.kernel.rendering import Renderer
from compliance_core.kernel.validation import wire_name
from compliance_http.wire import Wire
from http_support import Api

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)


def renamed(value: Any) -> Any:
    """The reference: every field in declaration order under its wire name, models nested."""
    if attrs.has(type(value)):
        return {wire_name(f.name): renamed(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, tuple):
        return [renamed(item) for item in value]
    return value


def reference(value: Any) -> bytes:
    return orjson.dumps(renamed(value), option=orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC)


VENDOR = Vendor(
    id="vnd_1",
    organization_id="org_1",
    name="Hosting Co",
    category=VendorCategory.CLOUD,
    criticality=Criticality.CRITICAL,
    country="DE",
    processes_personal_data=True,
    dpa_status=DpaStatus.SIGNED,
    dpa_signed_at=dt.date(2025, 12, 1),
    next_review_due=dt.date(2026, 12, 1),
    sub_processors=(
        SubProcessor(name="Disk GmbH", country="DE", purpose_category=PurposeCategory.DATA_STORAGE),
        SubProcessor(name="Mail Ltd", country="GB", purpose_category=PurposeCategory.COMMUNICATIONS),
    ),
    created_at=T0,
    updated_at=T0.replace(microsecond=0),
)
PERSON = Person(
    id="per_1",
    organization_id="org_1",
    name="Ada",
    email="ada@acme.example",
    department=Department.IT,
    job_title=None,
    created_at=T0,
    updated_at=T0,
)
FINDING = Finding(
    id="fnd_1",
    organization_id="org_1",
    title="No MFA",
    severity=Severity.HIGH,
    status=FindingStatus.CLOSED,
    type=FindingType.ISO27001,
    source=FindingSource.PENETRATION_TEST,
    created_at=T0,
    updated_at=T0,
    closed_at=T0,
)
ACTOR = Actor(organization_id="org_1", role=Role.OWNER, key_id="key_1")


def test_models_render_as_their_renamed_fields() -> None:
    wire = Wire()
    for model in (VENDOR, PERSON, FINDING, SubProcessor(name="A", country="FR", purpose_category="hosting")):
        assert wire.dumps(model) == reference(model)
    body = orjson.loads(wire.dumps(VENDOR))
    assert body["createdAt"] == "2026-01-02T03:04:05.678901Z" and body["updatedAt"] == "2026-01-02T03:04:05Z"
    assert body["dpaSignedAt"] == "2025-12-01" and body["dpaStatus"] == "signed" and body["archivedAt"] is None
    assert list(body)[:3] == ["id", "organizationId", "name"]


def test_a_page_renders_its_items_and_envelope() -> None:
    page = Page(items=(VENDOR, VENDOR), total=3, page=1, per_page=2)
    body = orjson.loads(Wire().page(page, ACTOR))
    assert body == {
        "data": [orjson.loads(reference(VENDOR))] * 2,
        "count": 3,
        "meta": {"total": 3, "page": 1, "perPage": 2, "totalPages": 2},
        "authType": "api-key",
    }


def test_a_page_served_again_is_sent_as_rendered_the_first_time() -> None:
    wire = Wire()
    page = Page(items=(VENDOR,), total=1, page=1, per_page=50)
    assert wire.page(page, ACTOR) is wire.page(page, ACTOR)


def test_a_rendered_page_is_not_kept_alive_for_its_body() -> None:
    wire = Wire()
    page = Page(items=(VENDOR,), total=1, page=1, per_page=50)
    wire.page(page, ACTOR)
    gone = weakref.ref(page)
    del page
    assert gone() is None


def test_a_page_is_rendered_per_kind_of_caller() -> None:
    wire = Wire()
    page = Page(items=(PERSON,), total=1, page=1, per_page=50)
    local = attrs.evolve(ACTOR, auth_type="local")
    assert orjson.loads(wire.page(page, ACTOR))["authType"] == "api-key"
    assert orjson.loads(wire.page(page, local))["authType"] == "local"
    assert orjson.loads(wire.page(page, ACTOR))["authType"] == "api-key"


def test_equal_pages_that_are_different_objects_render_their_own_content() -> None:
    wire = Wire()
    for index in range(300):  # more than the memo holds: old entries go, and ids may be reused
        person = attrs.evolve(PERSON, name=f"Person {index}")
        body = orjson.loads(wire.page(Page(items=(person,), total=1, page=1, per_page=50), ACTOR))
        assert body["data"][0]["name"] == f"Person {index}"


def test_api_key_status_follows_the_clock_even_for_the_same_page() -> None:
    clock = FrozenClock()
    wire = Wire(Renderer(clock))
    key = ApiKey(
        id="key_1",
        organization_id="org_1",
        name="CI",
        role=Role.AUDITOR,
        prefix="comp_ab",
        secret_hash="secret",
        created_at=clock.now(),
        expires_at=clock.now() + dt.timedelta(days=1),
    )
    page = Page(items=(key,), total=1, page=1, per_page=50)
    first = orjson.loads(wire.page(page, ACTOR))["data"][0]
    assert first["status"] == "active" and "secretHash" not in first
    clock.advance(days=2)
    assert orjson.loads(wire.page(page, ACTOR))["data"][0]["status"] == "expired"


def test_a_repeated_list_shows_every_change_in_between(api: Api, platform: Platform) -> None:
    ids = [api.post("/v1/vendors", {"name": f"Vendor {i}"}).json["id"] for i in range(3)]
    first = api.get("/v1/vendors", query="perPage=2")
    assert api.get("/v1/vendors", query="perPage=2").content == first.content
    assert api.patch(f"/v1/vendors/{ids[0]}", {"name": "Renamed"}).status_code == 200
    assert [v["name"] for v in api.get("/v1/vendors", query="perPage=2").json["data"]] == ["Renamed", "Vendor 1"]
    assert api.post(f"/v1/vendors/{ids[1]}/archive").status_code == 200
    again = api.get("/v1/vendors", query="perPage=2").json
    assert [v["id"] for v in again["data"]] == [ids[0], ids[2]] and again["meta"]["total"] == 2
    actor = platform.actor(again["data"][0]["organizationId"])
    assert platform.vendors.list(actor, page=PageRequest(per_page=2)).total == 2
