from __future__ import annotations

import pytest

from compliance_core import Forbidden, NotFound, Role, ValidationError
from compliance_core.areas.findings import (
    FindingCreated,
    FindingFilter,
    FindingPatch,
    FindingSeverityChanged,
    FindingStatus,
    FindingUpdated,
    NewFinding,
    Severity,
)
from compliance_core.kernel.events import OUTBOX


def _outbox(platform):
    with platform.uow.read() as session:
        return session[OUTBOX].pending(1000)


def test_create_records_an_event_in_the_outbox(platform, owner) -> None:
    finding = platform.findings.create(owner, NewFinding(title="MFA missing on admin accounts", severity="high"))
    assert (finding.status, finding.severity, finding.type, finding.source) == ("open", "high", "soc2", "audit")
    assert finding.created_by == owner.principal
    [message] = _outbox(platform)
    assert message.type == FindingCreated.type == "finding.created" and message.subject_id == finding.id
    assert message.payload["type"] == "finding.created" and message.payload["id"] == message.id
    assert message.payload["data"]["title"] == "MFA missing on admin accounts"
    assert "previous" not in message.payload


def test_severity_change_is_its_own_event_and_other_changes_are_updates(platform, owner) -> None:
    # Changed on purpose in the "one declaration per area" refactor: every real change is now a
    # finding.updated event (before, only creation and severity changes were events); a severity
    # change is still announced by finding.severity_changed as well.
    finding = platform.findings.create(owner, NewFinding(title="Old TLS", severity="medium"))
    platform.findings.update(owner, finding.id, FindingPatch(content="TLS 1.0 on the legacy API"))
    platform.findings.update(owner, finding.id, FindingPatch(severity="critical"))
    messages = _outbox(platform)
    assert [m.type for m in messages] == [
        FindingCreated.type,
        FindingUpdated.type,
        FindingUpdated.type,
        FindingSeverityChanged.type,
    ]
    assert messages[1].payload["previous"] == {"content": ""}
    change = messages[-1].payload
    assert (change["previous"], change["data"]["severity"]) == ({"severity": "medium"}, "critical")


def test_an_update_that_changes_nothing_is_not_a_change(platform, owner, clock) -> None:
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    clock.advance(minutes=1)
    same = platform.findings.update(owner, finding.id, FindingPatch(title="Gap", severity="low", content=None))
    assert same == finding and same.updated_at == finding.created_at
    assert [m.type for m in _outbox(platform)] == [FindingCreated.type]


def test_validation(platform, owner) -> None:
    for fields, field in (
        ({"severity": "high"}, "title"),
        ({"title": "x", "severity": "urgent"}, "severity"),
        ({"title": "x", "severity": "low", "content": "y" * 5001}, "content"),
        ({"title": "x", "severity": "low", "type": "nist"}, "type"),
    ):
        with pytest.raises((ValidationError, TypeError)) as caught:
            NewFinding(**fields)
        if isinstance(caught.value, ValidationError):
            assert caught.value.details["field"] == field


def test_revision_note_lives_only_while_needs_revision(platform, owner) -> None:
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    with pytest.raises(ValidationError) as caught:
        platform.findings.update(owner, finding.id, FindingPatch(revision_note="please add evidence"))
    assert caught.value.details["field"] == "revisionNote"
    asked = platform.findings.update(owner, finding.id, FindingPatch(status="needs_revision", revision_note="add logs"))
    assert asked.revision_note == "add logs"
    answered = platform.findings.update(owner, finding.id, FindingPatch(status="ready_for_review"))
    assert answered.revision_note is None


def test_close_and_reopen(platform, owner, clock) -> None:
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    clock.advance(hours=1)
    closed = platform.findings.close(owner, finding.id)
    assert closed.status is FindingStatus.CLOSED and closed.closed_at == clock.now()
    assert platform.findings.close(owner, finding.id) == closed
    reopened = platform.findings.update(owner, finding.id, FindingPatch(status="open"))
    assert reopened.closed_at is None


def test_filters_roles_and_isolation(platform, owner, actor_as, other_org) -> None:
    high = platform.findings.create(owner, NewFinding(title="A", severity="high", type="iso27001"))
    platform.findings.create(owner, NewFinding(title="B", severity="low", source="penetration_test"))
    assert [f.id for f in platform.findings.list(owner, FindingFilter(severity="high", type="iso27001")).items] == [
        high.id
    ]
    assert platform.findings.list(owner, FindingFilter(severity=Severity.HIGH, source="penetration_test")).total == 0
    with pytest.raises(Forbidden):
        platform.findings.create(actor_as(Role.AUDITOR), NewFinding(title="C", severity="low"))
    assert platform.findings.list(actor_as(Role.AUDITOR)).total == 2
    with pytest.raises(NotFound):
        platform.findings.close(other_org, high.id)
