"""HTTPTransport gives the same models and the same errors as LocalTransport."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import attrs
import httpx
import pytest

from compliance_core import (
    Actor,
    Client,
    ComplianceError,
    FrozenClock,
    LocalTransport,
    PageRequest,
    Platform,
    RateLimited,
    Role,
    SequentialIds,
)
from compliance_core.areas.api_keys import ApiKey, IssuedKey, NewApiKey
from compliance_core.areas.findings import FindingFilter, FindingPatch, NewFinding
from compliance_core.areas.people import NewPerson, PersonFilter, PersonPatch
from compliance_core.areas.vendors import NewVendor, SubProcessor, VendorFilter, VendorPatch
from compliance_core.kernel.registry import Operation
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport
from compliance_http.routes import OPENAPI
from compliance_store.memory import MemoryStore
from http_support import issue_key


def outcome(call: Callable[[], Any]) -> Any:
    """The result, or the error, with what differs by nature blanked: a key's random value and
    prefix, and the hash HTTP never shows."""
    try:
        result = call()
    except ComplianceError as error:
        return error
    if isinstance(result, IssuedKey):
        return attrs.evolve(result.key, secret_hash="", prefix=""), result.secret is not None
    if isinstance(result, ApiKey):
        return attrs.evolve(result, secret_hash="", prefix="", last_used_at=None)
    return result


def scenario(client: Client) -> list[Any]:
    vendor = client.vendors.create(
        NewVendor(
            name="Hosting",
            country="DE",
            dpa_signed_at=dt.date(2025, 12, 1),
            processes_personal_data=True,
            sub_processors=(SubProcessor(name="Disk", country="FR", purpose_category="data_storage"),),
        )
    )
    person = client.people.create(NewPerson(name="Ann", email="ann@example.com", role="admin"))
    finding = client.findings.create(NewFinding(title="MFA", severity="high"), idempotency_key="f1")
    key = client.api_keys.create(
        NewApiKey(name="CI", role="auditor", expires_at=dt.datetime(2027, 1, 1, tzinfo=dt.UTC))
    )
    steps: list[Callable[[], Any]] = [
        lambda: vendor,
        lambda: client.vendors.list(VendorFilter(country="de", processes_personal_data=True), PageRequest(per_page=5)),
        lambda: client.vendors.list(page=PageRequest(page=3, per_page=1)),
        lambda: client.vendors.update(vendor.id, VendorPatch(description="Storage", website=None)),
        lambda: client.vendors.update(vendor.id, VendorPatch(assignee_id=person.id)),
        lambda: client.vendors.archive(vendor.id),
        lambda: client.vendors.list(VendorFilter(archived=True)),
        lambda: client.vendors.restore(vendor.id),
        lambda: client.vendors.get("vnd_missing"),
        lambda: client.vendors.create(NewVendor(name="X", assignee_id="mem_00000999")),
        lambda: client.vendors.update(vendor.id, VendorPatch(country="US")),
        lambda: client.vendors.create(NewVendor(name="Once"), idempotency_key="v1"),
        lambda: client.vendors.create(NewVendor(name="Once"), idempotency_key="v1"),
        lambda: client.vendors.create(NewVendor(name="Twice"), idempotency_key="v1"),
        lambda: person,
        lambda: client.people.create(NewPerson(name="Copy", email="ann@example.com")),
        lambda: client.people.bulk_create(
            [NewPerson(name="B", email="b@example.com"), {"name": "C", "email": "c@example.com", "job_title": "Dev"}]
        ),
        lambda: client.people.bulk_create(
            [{"name": "D", "email": "nope"}, {"name": "E", "email": "e@x.io", "is_active": "yes"}]
        ),
        lambda: client.people.update(person.id, PersonPatch(job_title="CISO", is_active=False)),
        lambda: client.people.list(PersonFilter(is_active=True)),
        lambda: client.people.get("mem_missing"),
        lambda: finding,
        lambda: client.findings.create(NewFinding(title="MFA", severity="high"), idempotency_key="f1"),
        lambda: client.findings.update(finding.id, FindingPatch(status="needs_revision", revision_note="why")),
        lambda: client.findings.update(finding.id, FindingPatch(revision_note="x", status="open")),
        lambda: client.findings.close(finding.id),
        lambda: client.findings.list(FindingFilter(status="closed", severity="high")),
        lambda: key,
        lambda: client.api_keys.get(key.key.id),
        lambda: client.api_keys.revoke(key.key.id),
        lambda: client.api_keys.usage(key.key.id),
        lambda: client.api_keys.create(NewApiKey(name="Boss", role="owner"), idempotency_key="k"),
        lambda: client.api_keys.create(NewApiKey(name="Boss", role="owner"), idempotency_key="k"),
        lambda: client.organizations.get(),
        lambda: client.vendors.list(page=PageRequest.walking(2)),
        lambda: walk(client, 2),
        lambda: client.vendors.list(page=PageRequest(page=2, walk=False)),
    ]
    return [outcome(step) for step in steps]


def walk(client: Client, per_page: int) -> list[Any]:
    """Every page of a cursor walk over the vendors, from the start."""
    pages = []
    request: PageRequest | None = PageRequest.walking(per_page)
    while request is not None:
        page = client.vendors.list(page=request)
        pages.append(page)
        request = page.next_request
    return pages


def platform() -> Platform:
    return Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())


def http_client(platform: Platform, secret: str, **options: Any) -> Client:
    transport = httpx.WSGITransport(app=create_app(platform))
    return Client(HTTPTransport("http://testserver", secret, transport=transport, **options))


def test_http_and_local_transports_agree() -> None:
    local_platform, remote_platform = platform(), platform()
    local_boot, remote_boot = local_platform.bootstrap("Acme"), remote_platform.bootstrap("Acme")
    actor = Actor(organization_id=local_boot.organization.id, role=Role.OWNER, key_id=local_boot.owner_key.key.id)
    local = scenario(Client(LocalTransport(local_platform, actor)))
    remote = scenario(http_client(remote_platform, remote_boot.owner_key.secret or ""))
    assert len(local) == len(remote)
    for index, (expected, got) in enumerate(zip(local, remote)):
        assert got == expected, f"step {index}"
    assert sum(isinstance(result, ComplianceError) for result in local) == 8


@pytest.mark.parametrize("role", ["auditor", "employee", "contractor"])
def test_forbidden_is_the_same_error(role: str) -> None:
    local_platform, remote_platform = platform(), platform()
    local_boot, remote_boot = local_platform.bootstrap("Acme"), remote_platform.bootstrap("Acme")
    local = Client(LocalTransport(local_platform, Actor(organization_id=local_boot.organization.id, role=Role(role))))
    remote = http_client(remote_platform, issue_key(remote_platform, remote_boot.organization.id, role))
    for call in (
        lambda c: c.vendors.create(NewVendor(name="x")),
        lambda c: c.api_keys.list(),
        lambda c: c.people.bulk_create([NewPerson(name="x", email="x@example.com")]),
    ):
        assert outcome(lambda call=call: call(remote)) == outcome(lambda call=call: call(local))


def test_health_over_http() -> None:
    remote = platform()
    member = remote.bootstrap("Acme").owner_key.secret or ""
    assert http_client(remote, member).health() == remote.health()
    public = http_client(remote, "unused").health()  # a bad key is no key: the public report
    assert public == {k: v for k, v in remote.health().items() if k in ("status", "version", "timestamp")}


def test_rate_limited_carries_retry_after() -> None:
    remote = platform()
    client = http_client(remote, remote.bootstrap("Small", "free").owner_key.secret or "")
    for _ in range(60):
        client.vendors.list()
    with pytest.raises(RateLimited) as raised:
        client.vendors.list()
    assert raised.value.retry_after == 2
    assert raised.value.details == {
        "retryAfter": 2,
        "limit": 60,
        "remaining": 0,
        "reset": raised.value.details["reset"],
    }


def test_organization_header_is_sent() -> None:
    remote = platform()
    boot = remote.bootstrap("Acme")
    good = http_client(remote, boot.owner_key.secret or "", organization_id=boot.organization.id)
    assert good.organizations.get().id == boot.organization.id
    wrong = http_client(remote, boot.owner_key.secret or "", organization_id="org_other")
    with pytest.raises(ComplianceError) as raised:
        wrong.organizations.get()
    assert raised.value.code == "forbidden"


def test_path_parameters_are_escaped() -> None:
    remote = platform()
    client = http_client(remote, remote.bootstrap("Acme").owner_key.secret or "")
    with pytest.raises(ComplianceError) as raised:
        client.vendors.get("vnd 1?archived=true#x")
    assert raised.value.code == "not_found"
    assert raised.value.details == {"resource": "vendor", "id": "vnd 1?archived=true#x"}


def test_an_operation_without_a_route_is_a_key_error() -> None:
    transport = HTTPTransport("http://testserver", "k", transport=httpx.WSGITransport(app=create_app(platform())))
    with pytest.raises(KeyError):
        transport.call(Operation(name="vendors.explode", action=None), {})
    with pytest.raises(KeyError):
        transport.call(OPENAPI, {})
    transport.close()


def test_a_client_method_no_area_declares_is_an_attribute_error() -> None:
    client = http_client(platform(), "k")
    with pytest.raises(AttributeError):
        client.vendors.delete("vnd_1")


def test_a_503_body_is_the_same_service_unavailable_as_in_process() -> None:
    """A render refused for now (busy workers, time limit) reaches an HTTP caller as core's
    ``ServiceUnavailable`` with its retry time, as it reaches an in-process caller."""
    from compliance_core.kernel.errors import ServiceUnavailable
    from compliance_http.client import _error

    body = {"code": "internal_error", "message": "busy", "details": {"retryAfter": 7, "workers": 1}}
    error = _error(503, body)
    assert isinstance(error, ServiceUnavailable)
    assert (error.retry_after, error.details) == (7, {"retryAfter": 7, "workers": 1})
    assert type(_error(500, body)).__name__ == "InternalError"
