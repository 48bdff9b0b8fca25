from __future__ import annotations

import pytest

from compliance_core import (
    Finding,
    FrozenClock,
    NewFinding,
    NewVendor,
    NotFound,
    Platform,
    SequentialIds,
    Severity,
    ValidationError,
)
from compliance_core.events import DomainEvent
from compliance_core.findings import FINDING_CREATED
from compliance_store.memory import MemoryStore


def test_signals_fire_after_commit_and_only_for_their_platform(platform, owner) -> None:
    seen, elsewhere = [], []
    other = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    other.signals.connect(None, lambda message: elsewhere.append(message))

    def receiver(message) -> None:
        with platform.uow.read() as session:  # the change is already visible when the signal fires
            seen.append(session.findings.get(owner.organization_id, message.subject_id))

    platform.signals.connect(FINDING_CREATED, receiver)
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    assert seen == [finding] and elsewhere == []


def test_no_signal_and_no_outbox_row_for_a_rolled_back_write(platform, owner) -> None:
    fired = []
    platform.signals.connect(None, fired.append)
    now = platform.clock.now()
    finding = Finding(id="fnd_x", organization_id=owner.organization_id, title="t", severity=Severity.LOW,
                      created_at=now, updated_at=now)
    with pytest.raises(RuntimeError):
        with platform.uow.write() as tx:
            tx.findings.add(finding)
            tx.record(DomainEvent(type=FINDING_CREATED, organization_id=owner.organization_id,
                                  subject_id=finding.id, data={}))
            raise RuntimeError("boom")
    assert fired == []
    with platform.uow.read() as session:
        assert session.outbox.pending() == []
        assert session.findings.get(owner.organization_id, finding.id) is None


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
