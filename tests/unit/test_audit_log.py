"""The audit trail in-process: every write of every area leaves one entry per event it records,
naming who, what and which fields changed; a rolled-back or refused write leaves none; Owners,
Admins and Auditors read it and nobody can change it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import Actor, Forbidden, FrozenClock, NotFound, PageRequest, Platform, Role, SequentialIds
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.audit_log import AREA
from compliance_core.areas.finding_templates import FindingTemplatePatch, NewFindingTemplate
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.areas.vendors import VENDORS, NewVendor, VendorCreated, VendorPatch
from compliance_core.kernel.audit import AUDIT_LOG, ActorType, AuditEntry, AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_store.memory import MemoryStore


@pytest.fixture
def keyed(platform, boot) -> Actor:
    """The bootstrap's Owner key as an HTTP caller would be: with its key id."""
    return Actor(organization_id=boot.organization.id, role=Role.OWNER, key_id=boot.owner_key.key.id)


def _trail(platform, actor, **filters) -> list[AuditEntry]:
    """The entries in the order they happened (the log itself lists newest first)."""
    return list(reversed(platform.audit_log.list(actor, AuditFilter(**filters), PageRequest(per_page=200)).items))


def _of(platform, actor, entity_id: str) -> list[tuple[str, dict]]:
    return [(entry.action, entry.changes) for entry in _trail(platform, actor, entity_id=entity_id)]


def test_bootstrap_is_recorded_as_the_system(platform, boot, owner) -> None:
    entries = _trail(platform, owner)
    assert [(e.action, e.entity_type, e.entity_id) for e in entries] == [
        ("organization.created", "organization", boot.organization.id),
        ("api_key.created", "api_key", boot.owner_key.key.id),
    ]
    assert {(e.actor_type, e.actor_id, e.actor_role) for e in entries} == {(ActorType.SYSTEM, None, None)}
    assert entries[0].changes["name"] == {"new": "Acme"}
    assert "secretHash" not in entries[1].changes  # what the API hides, the trail hides


def test_a_vendors_life_names_the_key_and_the_changed_fields(platform, keyed, clock) -> None:
    vendor = platform.vendors.create(keyed, NewVendor(name="Cloud Co", country="IE"))
    clock.advance(seconds=5)
    platform.vendors.update(keyed, vendor.id, VendorPatch(name="Cloud Company", country="IE"))
    platform.vendors.archive(keyed, vendor.id)
    platform.vendors.restore(keyed, vendor.id)
    entries = _trail(platform, keyed, entity_type="vendor", entity_id=vendor.id)
    assert [e.action for e in entries] == ["vendor.created", "vendor.updated", "vendor.archived", "vendor.restored"]
    assert {(e.actor_type, e.actor_id, e.actor_role) for e in entries} == {
        (ActorType.API_KEY, keyed.key_id, Role.OWNER)
    }
    created, updated, archived, _ = entries
    assert created.changes["name"] == {"new": "Cloud Co"} and created.changes["country"] == {"new": "IE"}
    assert not {"id", "organizationId", "createdAt", "updatedAt"} & created.changes.keys()
    assert updated.changes == {"name": {"old": "Cloud Co", "new": "Cloud Company"}}  # country did not change
    assert updated.created_at == clock.now()
    assert archived.changes == {
        "archived": {"old": False, "new": True},
        "archivedAt": {"old": None, "new": "2026-01-01T00:00:05Z"},
    }


def test_each_entry_links_to_its_event(platform, keyed) -> None:
    vendor = platform.vendors.create(keyed, NewVendor(name="Cloud Co"))
    [entry] = _trail(platform, keyed, entity_id=vendor.id)
    with platform.uow.read() as session:
        [message] = session[OUTBOX].pending()
    assert (entry.event_id, entry.action, entry.entity_id) == (message.id, message.type, message.subject_id)
    assert platform.audit_log.get(keyed, entry.id) == entry


def test_an_in_process_caller_is_recorded_as_local(platform, owner) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="V"))
    [entry] = _trail(platform, owner, entity_id=vendor.id)
    assert (entry.actor_type, entry.actor_id, entry.actor_role) == (ActorType.LOCAL, None, Role.OWNER)


def test_a_session_user_is_recorded_as_the_user(platform, boot) -> None:
    user = Actor(organization_id=boot.organization.id, role=Role.ADMIN, user_id="usr_1", auth_type="session")
    vendor = platform.vendors.create(user, NewVendor(name="V"))
    [entry] = _trail(platform, user, entity_id=vendor.id)
    assert (entry.actor_type, entry.actor_id, entry.actor_role) == (ActorType.USER, "usr_1", Role.ADMIN)


def test_people_findings_and_templates(platform, keyed) -> None:
    person = platform.people.create(keyed, NewPerson(name="Ada", email="ada@example.com"))
    platform.people.update(keyed, person.id, PersonPatch(job_title="Engineer"))
    assert _of(platform, keyed, person.id)[1] == ("person.updated", {"jobTitle": {"old": None, "new": "Engineer"}})

    batch = platform.people.bulk_create(
        keyed, [NewPerson(name="G", email="g@example.com"), NewPerson(name="H", email="h@example.com")]
    )
    assert [len(_of(platform, keyed, p.id)) for p in batch] == [1, 1]

    finding = platform.findings.create(keyed, NewFinding(title="TLS", severity="low"))
    platform.findings.update(keyed, finding.id, FindingPatch(severity="high"))
    assert _of(platform, keyed, finding.id)[1:] == [
        ("finding.updated", {"severity": {"old": "low", "new": "high"}}),
        ("finding.severity_changed", {"severity": {"old": "low", "new": "high"}}),
    ]
    platform.findings.close(keyed, finding.id)
    closed = _of(platform, keyed, finding.id)[-1]
    assert closed[0] == "finding.updated" and closed[1]["status"]["new"] == "closed"

    template = platform.finding_templates.create(keyed, NewFindingTemplate(category="c", title="T", content="x"))
    platform.finding_templates.update(keyed, template.id, FindingTemplatePatch(order=3))
    platform.finding_templates.delete(keyed, template.id)
    deleted = _of(platform, keyed, template.id)
    assert [action for action, _ in deleted] == [
        "finding_template.created",
        "finding_template.updated",
        "finding_template.deleted",
    ]
    assert deleted[1][1] == {"order": {"old": 0, "new": 3}}
    assert deleted[2][1] == {
        "category": {"old": "c"},
        "title": {"old": "T"},
        "content": {"old": "x"},
        "order": {"old": 3},
    }


def test_api_keys_and_plans(platform, keyed, boot) -> None:
    issued = platform.api_keys.create(keyed, NewApiKey(name="CI", role="auditor"))
    platform.api_keys.revoke(keyed, issued.key.id)
    assert [a for a, _ in _of(platform, keyed, issued.key.id)] == ["api_key.created", "api_key.archived"]
    assert _of(platform, keyed, issued.key.id)[1][1]["revokedAt"]["old"] is None

    platform.organizations.set_plan(keyed, "starter")
    platform.organizations.set_plan(keyed, "starter")  # no change: no entry
    [entry] = _trail(platform, keyed, action="organization.updated")
    assert entry.entity_id == boot.organization.id and entry.actor_id == keyed.key_id
    assert entry.changes["plan"] == {"old": "professional", "new": "starter"}
    assert entry.changes["rateLimit"]["new"] == {"requestsPerMinute": 60, "burst": 120}


def test_an_operator_created_organization_starts_its_own_trail(platform) -> None:
    organization = platform.organizations.create("Initech")
    actor = platform.actor(organization.id)
    [entry] = _trail(platform, actor)
    assert (entry.action, entry.actor_type, entry.organization_id) == (
        "organization.created",
        "system",
        organization.id,
    )


def test_writes_that_change_nothing_or_are_refused_leave_no_entry(platform, keyed, actor_as) -> None:
    vendor = platform.vendors.create(keyed, NewVendor(name="V"))
    before = _trail(platform, keyed)
    platform.vendors.update(keyed, vendor.id, VendorPatch(name="V"))
    platform.vendors.restore(keyed, vendor.id)  # not archived: nothing to do
    with pytest.raises(Forbidden):
        platform.vendors.create(actor_as("auditor"), NewVendor(name="W"))
    with pytest.raises(NotFound):
        platform.vendors.update(keyed, "vnd_missing", VendorPatch(name="X"))
    assert _trail(platform, keyed) == before


def test_a_rolled_back_write_leaves_no_entry_no_outbox_row_and_no_signal(platform, keyed) -> None:
    fired: list[object] = []
    platform.signals.connect(None, lambda message, event: fired.append(message))
    before = _trail(platform, keyed)
    vendor = platform.vendors.create(keyed, NewVendor(name="Kept"))
    fired.clear()
    with pytest.raises(RuntimeError):
        with platform.uow.write(keyed) as tx:
            doomed = platform.vendors.get(keyed, vendor.id)
            tx[VENDORS].delete(keyed.organization_id, vendor.id)
            tx.record(VendorCreated(organization_id=keyed.organization_id, subject=doomed))
            raise RuntimeError("boom")
    assert fired == []
    assert [e.entity_id for e in _trail(platform, keyed)] == [e.entity_id for e in before] + [vendor.id]
    with platform.uow.read() as session:
        assert len(session[OUTBOX].pending()) == 1


def test_the_log_lists_newest_first(platform, keyed, clock) -> None:
    first = platform.vendors.create(keyed, NewVendor(name="A"))
    clock.advance(seconds=1)
    second = platform.vendors.create(keyed, NewVendor(name="B"))
    page = platform.audit_log.list(keyed, AuditFilter(entity_type="vendor"), PageRequest(per_page=1))
    assert [e.entity_id for e in page.items] == [second.id]
    page = platform.audit_log.list(keyed, AuditFilter(entity_type="vendor"), PageRequest(page=2, per_page=1))
    assert [e.entity_id for e in page.items] == [first.id]


def test_filters_and_pages(platform, keyed, actor_as) -> None:
    admin = Actor(organization_id=keyed.organization_id, role=Role.ADMIN, key_id="key_admin")
    first = platform.vendors.create(keyed, NewVendor(name="A"))
    platform.vendors.create(admin, NewVendor(name="B"))
    platform.vendors.update(keyed, first.id, VendorPatch(name="A2"))
    assert [e.entity_id for e in _trail(platform, keyed, actor_id="key_admin")] != []
    assert {e.actor_id for e in _trail(platform, keyed, actor_id="key_admin")} == {"key_admin"}
    assert [e.action for e in _trail(platform, keyed, entity_type="vendor", entity_id=first.id)] == [
        "vendor.created",
        "vendor.updated",
    ]
    assert len(_trail(platform, keyed, action="vendor.created")) == 2
    page = platform.audit_log.list(keyed, AuditFilter(entity_type="vendor"), PageRequest(page=2, per_page=2))
    assert (page.total, page.page, len(page.items)) == (3, 2, 1)


@pytest.mark.parametrize("role", list(Role))
def test_owners_admins_and_auditors_read_it_others_do_not(platform, actor_as, boot, role) -> None:
    actor = actor_as(role)
    if role in (Role.OWNER, Role.ADMIN, Role.AUDITOR):
        entries = _trail(platform, actor)
        assert platform.audit_log.get(actor, entries[0].id) == entries[0]
    else:
        with pytest.raises(Forbidden):
            platform.audit_log.list(actor)
        with pytest.raises(Forbidden):
            platform.audit_log.get(actor, "aud_1")


def test_another_organizations_entries_are_not_found(platform, owner, other_org) -> None:
    [theirs, _] = _trail(platform, other_org)
    with pytest.raises(NotFound):
        platform.audit_log.get(owner, theirs.id)
    assert theirs.id not in {e.id for e in _trail(platform, owner)}


def test_nobody_can_change_the_trail() -> None:
    """Its operations only read (list, get and the exports) and it records no event of its own."""
    assert {op.method for op in AREA.operations} == {"list", "get", "export_csv", "export_xlsx"}
    assert all(op.route is not None and op.route.method == "GET" for op in AREA.operations)
    assert AREA.events == ()


_STEPS = st.lists(st.sampled_from(["create", "rename", "same", "archive", "restore"]), min_size=1, max_size=12)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=_STEPS)
def test_one_entry_per_event_with_the_same_type_subject_and_id(steps: list[str]) -> None:
    """Whatever the writes, the trail and the outbox hold the same events, one to one."""
    platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    boot = platform.bootstrap("Acme")
    actor = Actor(organization_id=boot.organization.id, role=Role.ADMIN, key_id="key_x")
    vendors: list[str] = []
    for step in steps:
        if step == "create" or not vendors:
            vendors.append(platform.vendors.create(actor, NewVendor(name=f"V{len(vendors)}")).id)
        elif step == "rename":
            platform.vendors.update(actor, vendors[-1], VendorPatch(name=f"R{len(steps)}-{len(vendors)}"))
        elif step == "same":
            platform.vendors.update(actor, vendors[-1], VendorPatch(name=platform.vendors.get(actor, vendors[-1]).name))
        elif step == "archive":
            platform.vendors.archive(actor, vendors[-1])
        else:
            platform.vendors.restore(actor, vendors[-1])
    with platform.uow.read() as session:
        messages = session[OUTBOX].pending(1000)
        entries, total = session[AUDIT_LOG].list(boot.organization.id, AuditFilter(), PageRequest(per_page=200))
    assert total == len(messages)
    assert [(e.event_id, e.action, e.entity_id) for e in entries] == [
        (m.id, m.type, m.subject_id) for m in reversed(messages)
    ]  # newest first
