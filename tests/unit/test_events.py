"""What vendors and people record: one typed event per real change, stored as the event body
``{"id", "type", "createdAt", "organizationId", "data", "previous"}`` in the same transaction as
the change, and announced only after it commits."""

from __future__ import annotations

import pytest

from compliance_core import Conflict, ValidationError
from compliance_core.areas import AREAS
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.people import NewPerson, PersonCreated, PersonPatch, PersonUpdated
from compliance_core.areas.vendors import (
    VENDORS,
    NewVendor,
    VendorArchived,
    VendorCreated,
    VendorPatch,
    VendorRestored,
    VendorUpdated,
)
from compliance_core.kernel.events import OUTBOX, Event
from compliance_core.kernel.idempotency import IDEMPOTENCY


def _bodies(platform) -> list[dict]:
    with platform.uow.read() as session:
        return [message.payload for message in session[OUTBOX].pending(1000)]


@pytest.fixture
def announced(platform) -> list[tuple[str, Event]]:
    """(type, event) of every signal the platform sends."""
    seen: list[tuple[str, Event]] = []
    platform.signals.connect(None, lambda message, event: seen.append((message.type, event)))
    return seen


def test_every_event_class_has_its_own_wire_type() -> None:
    types = [event.type for area in AREAS for event in area.events]
    assert len(types) == len(set(types)), types
    assert {VendorCreated.type, VendorUpdated.type, VendorArchived.type, VendorRestored.type} == {
        "vendor.created",
        "vendor.updated",
        "vendor.archived",
        "vendor.restored",
    }
    assert (PersonCreated.type, PersonUpdated.type) == ("person.created", "person.updated")


def test_creating_a_vendor_records_its_body(platform, owner, clock, announced) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co", country="IE", processes_personal_data=True))
    [body] = _bodies(platform)
    assert body == {
        "id": body["id"],
        "type": "vendor.created",
        "createdAt": "2026-01-01T00:00:00Z",
        "organizationId": owner.organization_id,
        "data": platform.renderer.json(vendor),
    }
    assert body["id"].startswith("evt_")
    data = body["data"]
    assert (data["id"], data["name"], data["country"], data["processesPersonalData"]) == (
        vendor.id,
        "Cloud Co",
        "IE",
        True,
    )
    assert (data["createdAt"], data["archivedAt"], data["subProcessors"]) == ("2026-01-01T00:00:00Z", None, [])
    assert all("_" not in key for key in data)  # camelCase, as the API shows the vendor
    [(kind, event)] = announced
    assert kind == "vendor.created" and type(event) is VendorCreated
    assert (event.subject, event.previous) == (vendor, None)


def test_a_vendor_update_names_only_what_changed_with_its_old_value(platform, owner, clock, announced) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co", country="IE"))
    clock.advance(minutes=5)
    updated = platform.vendors.update(
        owner,
        vendor.id,
        VendorPatch(
            name="Cloud Co Ltd",
            country="IE",
            criticality="critical",
            sub_processors=[{"name": "Mail", "country": "DE", "purpose_category": "communications"}],
        ),
    )
    created, body = _bodies(platform)
    assert body["type"] == "vendor.updated" and body["createdAt"] == "2026-01-01T00:05:00Z"
    assert body["data"] == platform.renderer.json(updated)
    # country was sent but did not change; updatedAt is bookkeeping, not a change the caller made.
    assert body["previous"] == {"name": "Cloud Co", "criticality": "standard", "subProcessors": []}
    assert body["data"]["subProcessors"] == [{"name": "Mail", "country": "DE", "purposeCategory": "communications"}]
    _, (kind, event) = announced
    assert type(event) is VendorUpdated and event.subject == updated
    assert dict(event.previous) == {"name": "Cloud Co", "criticality": "standard", "sub_processors": ()}


def test_archive_and_restore_are_events_once_each(platform, owner, clock) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co"))
    clock.advance(hours=1)
    platform.vendors.archive(owner, vendor.id)
    platform.vendors.archive(owner, vendor.id)  # already archived: nothing happens
    clock.advance(hours=1)
    restored = platform.vendors.restore(owner, vendor.id)
    platform.vendors.restore(owner, vendor.id)
    bodies = _bodies(platform)
    assert [b["type"] for b in bodies] == ["vendor.created", "vendor.archived", "vendor.restored"]
    assert bodies[1]["previous"] == {"archived": False, "archivedAt": None}
    assert (bodies[1]["data"]["archived"], bodies[1]["data"]["archivedAt"]) == (True, "2026-01-01T01:00:00Z")
    assert bodies[2]["previous"] == {"archived": True, "archivedAt": "2026-01-01T01:00:00Z"}
    assert bodies[2]["data"] == platform.renderer.json(restored)


def test_people_record_created_and_updated(platform, owner, clock, announced) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"))
    crew = platform.people.bulk_create(
        owner, [{"name": "Bo", "email": "bo@acme.test"}, {"name": "Cy", "email": "cy@acme.test", "role": "admin"}]
    )
    clock.advance(minutes=1)
    moved = platform.people.update(owner, ann.id, PersonPatch(job_title="CISO", department="it", name="Ann"))
    bodies = _bodies(platform)
    assert [(b["type"], b["data"]["id"]) for b in bodies] == [
        ("person.created", ann.id),
        ("person.created", crew[0].id),
        ("person.created", crew[1].id),
        ("person.updated", ann.id),
    ]
    assert bodies[0]["data"] == platform.renderer.json(ann)
    assert bodies[2]["data"]["role"] == "admin" and "previous" not in bodies[2]
    assert bodies[3]["data"] == platform.renderer.json(moved)
    assert bodies[3]["previous"] == {"department": "none", "jobTitle": None}
    assert [type(event) for _, event in announced] == [PersonCreated] * 3 + [PersonUpdated]


@pytest.mark.parametrize("area", ["vendors", "people", "findings"])
def test_an_update_that_changes_nothing_returns_the_record_as_it_was(platform, owner, clock, area) -> None:
    # Changed on purpose in the refactor: an update whose values equal the current ones no longer
    # bumps updatedAt or records an event.
    service = platform.services[area]
    record, patch = {
        "vendors": (
            lambda: service.create(owner, NewVendor(name="Cloud Co", country="DE")),
            VendorPatch(name="Cloud Co", country="de", description=None),
        ),
        "people": (
            lambda: service.create(owner, NewPerson(name="Ann", email="ann@acme.test")),
            PersonPatch(name="Ann", email="ANN@acme.test", job_title=None),
        ),
        "findings": (
            lambda: service.create(owner, NewFinding(title="Gap", severity="low")),
            FindingPatch(title="Gap", severity="low", status="open"),
        ),
    }[area]
    created = record()
    clock.advance(minutes=1)
    assert service.update(owner, created.id, patch) == created
    assert service.get(owner, created.id).updated_at == created.updated_at
    assert len(_bodies(platform)) == 1


def test_a_rejected_write_records_nothing(platform, owner, announced) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"))
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co"))
    with pytest.raises(Conflict):
        platform.people.bulk_create(
            owner, [{"name": "Bo", "email": "bo@acme.test"}, {"name": "Ann", "email": "ann@acme.test"}]
        )
    with pytest.raises(ValidationError):
        platform.vendors.update(owner, vendor.id, VendorPatch(country="US", processes_personal_data=True))
    with pytest.raises(ValidationError):
        platform.vendors.update(owner, vendor.id, VendorPatch(assignee_id="mem_missing"))
    assert [b["type"] for b in _bodies(platform)] == ["person.created", "vendor.created"]
    assert len(announced) == 2 and platform.people.get(owner, ann.id) == ann


def test_a_write_rolled_back_after_its_event_was_recorded_emits_nothing(
    platform, owner, announced, monkeypatch
) -> None:
    """The idempotency record is written after the vendor and its event: when that fails, the
    whole transaction goes, the event with it."""
    with platform.uow.read() as session:
        idempotency = session[IDEMPOTENCY]  # the memory store hands out the same repositories

    def fail(record) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(idempotency, "put", fail)
    with pytest.raises(RuntimeError):
        platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="k-1")
    monkeypatch.undo()
    assert _bodies(platform) == [] and announced == []
    assert platform.vendors.list(owner).total == 0
    with platform.uow.read() as session:
        assert session[VENDORS].revision(owner.organization_id) == 0


def test_a_replayed_create_records_no_second_event(platform, owner) -> None:
    first = platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="k-1")
    assert platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="k-1") == first
    platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"), idempotency_key="k-2")
    platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"), idempotency_key="k-2")
    assert [b["type"] for b in _bodies(platform)] == ["vendor.created", "person.created"]
