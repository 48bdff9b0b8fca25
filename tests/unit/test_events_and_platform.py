from __future__ import annotations

import pytest

from compliance_core import FrozenClock, NotFound, Platform, SequentialIds, ValidationError
from compliance_core.areas.findings import FINDINGS, Finding, FindingCreated, NewFinding, Severity
from compliance_core.areas.vendors import NewVendor
from compliance_core.kernel.events import OUTBOX, OutboxMessage
from compliance_store.memory import MemoryStore


def test_signals_fire_after_commit_and_only_for_their_platform(platform, owner) -> None:
    seen, by_name, elsewhere = [], [], []
    other = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    other.signals.connect(None, lambda message, event: elsewhere.append(message))

    def receiver(message, event) -> None:
        with platform.uow.read() as session:  # the change is already visible when the signal fires
            seen.append((session[FINDINGS].get(owner.organization_id, message.subject_id), type(event)))

    platform.signals.connect(FindingCreated, receiver)
    platform.signals.connect("finding.created", lambda message, event: by_name.append(event.subject))
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    assert seen == [(finding, FindingCreated)] and by_name == [finding] and elsewhere == []


def test_receivers_get_the_stored_message_and_the_typed_event(platform, owner) -> None:
    received = []
    platform.signals.connect(None, lambda message, event: received.append((message, event)))
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    [(message, event)] = received
    with platform.uow.read() as session:
        assert session[OUTBOX].pending() == [message]
    assert isinstance(message, OutboxMessage) and isinstance(event, FindingCreated)
    assert (event.organization_id, event.subject, event.previous) == (owner.organization_id, finding, None)
    assert message.payload["data"]["id"] == finding.id


def test_no_signal_and_no_outbox_row_for_a_rolled_back_write(platform, owner) -> None:
    fired = []
    platform.signals.connect(None, lambda message, event: fired.append(message))
    now = platform.clock.now()
    finding = Finding(
        id="fnd_x",
        organization_id=owner.organization_id,
        title="t",
        severity=Severity.LOW,
        created_at=now,
        updated_at=now,
    )
    with pytest.raises(RuntimeError):
        with platform.uow.write(owner) as tx:
            tx[FINDINGS].add(finding)
            tx.record(FindingCreated(organization_id=owner.organization_id, subject=finding))
            raise RuntimeError("boom")
    assert fired == []
    with platform.uow.read() as session:
        assert session[OUTBOX].pending() == []
        assert session[FINDINGS].get(owner.organization_id, finding.id) is None


def test_open_by_url() -> None:
    with Platform.open("memory://") as platform:
        boot = platform.bootstrap("Acme")
        assert platform.vendors.create(platform.actor(boot.organization.id), NewVendor(name="V")).name == "V"
        assert platform.health()["status"] == "ok"
    with pytest.raises(ValidationError) as caught:
        Platform.open("carrier-pigeon://coop")
    assert caught.value.details["field"] == "url"


def test_actor_for_a_missing_organization(platform) -> None:
    with pytest.raises(NotFound):
        platform.actor("org_missing")


def test_health_reports_the_store(platform, clock) -> None:
    clock.advance(seconds=90)
    health = platform.health()
    assert health["status"] == "ok" and health["uptimeSeconds"] == 90
    platform.close()
    assert platform.health()["status"] == "degraded"


def test_bootstrap_if_empty_bootstraps_once(platform) -> None:
    first = platform.bootstrap_if_empty("First")
    assert first is not None and first.owner_key.secret
    assert platform.bootstrap_if_empty("Second") is None
    assert platform.organizations.get(platform.actor(first.organization.id)).name == "First"
