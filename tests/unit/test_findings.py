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
        ({"title": "", "severity": "high"}, "title"),
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


# -- issue 10: complete findings -------------------------------------------------------------------


def test_links_to_a_task_a_control_and_a_template(platform, owner) -> None:
    from compliance_core.areas.finding_templates import NewFindingTemplate
    from compliance_core.areas.frameworks.control_models import NewControl

    template = platform.finding_templates.create(owner, NewFindingTemplate(category="evidence_issue", title="Old"))
    control = platform.controls.create(owner, NewControl(name="Access review")).id
    finding = platform.findings.create(
        owner, NewFinding(title="Gap", severity="low", task_id="tsk_1", control_id=control, template_id=template.id)
    )
    assert (finding.task_id, finding.control_id, finding.template_id) == ("tsk_1", control, template.id)
    with pytest.raises(ValidationError) as unknown:
        platform.findings.create(owner, NewFinding(title="Gap", severity="low", control_id="ctl_7"))
    assert (unknown.value.details["field"], unknown.value.details["value"]) == ("controlId", "ctl_7")
    assert [f.id for f in platform.findings.list(owner, FindingFilter(task_id="tsk_1")).items] == [finding.id]
    assert platform.findings.list(owner, FindingFilter(control_id="ctl_8")).total == 0
    moved = platform.findings.update(owner, finding.id, FindingPatch(task_id="tsk_2", control_id=None))
    assert (moved.task_id, moved.control_id) == ("tsk_2", None)
    with pytest.raises(ValidationError) as caught:
        platform.findings.update(owner, finding.id, FindingPatch(template_id="ftp_nothere"))
    assert (caught.value.details["field"], caught.value.details["value"]) == ("templateId", "ftp_nothere")
    with pytest.raises(ValidationError) as caught:
        NewFinding(title="x", severity="low", task_id="task one")
    assert caught.value.details["field"] == "taskId"


def test_auditors_admins_and_owners_close_and_ask_for_revisions(platform, owner, actor_as) -> None:
    from compliance_core.areas.findings import RevisionRequest

    for role in (Role.OWNER, Role.ADMIN, Role.AUDITOR):
        finding = platform.findings.create(owner, NewFinding(title=f"Gap {role}", severity="low"))
        asked = platform.findings.request_revision(actor_as(role), finding.id, RevisionRequest(note="Add the logs"))
        assert (asked.status, asked.revision_note) == (FindingStatus.NEEDS_REVISION, "Add the logs")
        assert platform.findings.close(actor_as(role), finding.id).status is FindingStatus.CLOSED
    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    for role in (Role.EMPLOYEE, Role.CONTRACTOR):
        with pytest.raises(Forbidden):
            platform.findings.close(actor_as(role), finding.id)
        with pytest.raises(Forbidden):
            platform.findings.request_revision(actor_as(role), finding.id, RevisionRequest(note="x"))
    with pytest.raises(Forbidden):  # an auditor judges; marking a finding fixed is not theirs
        platform.findings.update(actor_as(Role.AUDITOR), finding.id, FindingPatch(status="ready_for_review"))


def test_a_revision_always_comes_with_a_note(platform, owner) -> None:
    from compliance_core.areas.findings import RevisionRequest

    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    with pytest.raises(ValidationError) as caught:
        platform.findings.update(owner, finding.id, FindingPatch(status="needs_revision"))
    assert caught.value.details["field"] == "revisionNote"
    with pytest.raises(ValidationError) as caught:
        RevisionRequest(note="   ")
    assert caught.value.details["field"] == "note"
    asked = platform.findings.request_revision(owner, finding.id, RevisionRequest(note="Add the logs"))
    with pytest.raises(ValidationError):  # the note cannot be taken away while the revision stands
        platform.findings.update(owner, finding.id, FindingPatch(revision_note=None))
    again = platform.findings.request_revision(owner, asked.id, RevisionRequest(note="And the config"))
    assert again.revision_note == "And the config"
    fixed = platform.findings.update(owner, finding.id, FindingPatch(status="ready_for_review"))
    assert (fixed.status, fixed.revision_note) == (FindingStatus.READY_FOR_REVIEW, None)
    updates = [m for m in _outbox(platform) if m.type == FindingUpdated.type]
    assert updates[0].payload["previous"] == {"status": "open", "revisionNote": None}


def test_a_closed_finding_is_reopened_before_it_is_sent_back(platform, owner) -> None:
    from compliance_core import Conflict
    from compliance_core.areas.findings import RevisionRequest

    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    platform.findings.close(owner, finding.id)
    with pytest.raises(Conflict):
        platform.findings.request_revision(owner, finding.id, RevisionRequest(note="Add the logs"))
    platform.findings.update(owner, finding.id, FindingPatch(status="open"))
    assert platform.findings.request_revision(owner, finding.id, RevisionRequest(note="Add the logs")).revision_note


def test_history_is_the_findings_audit_trail_newest_first(platform, owner, actor_as, clock) -> None:
    from compliance_core.areas.findings import RevisionRequest

    finding = platform.findings.create(owner, NewFinding(title="Gap", severity="low"))
    other = platform.findings.create(owner, NewFinding(title="Other", severity="low"))
    clock.advance(minutes=1)
    platform.findings.request_revision(actor_as(Role.AUDITOR), finding.id, RevisionRequest(note="Add the logs"))
    clock.advance(minutes=1)
    platform.findings.close(actor_as(Role.AUDITOR), finding.id)
    platform.findings.update(owner, other.id, FindingPatch(title="Not in the history"))
    history = platform.findings.history(actor_as(Role.AUDITOR), finding.id)
    assert [e.action for e in history.items] == ["finding.updated", "finding.updated", "finding.created"]
    assert {e.entity_id for e in history.items} == {finding.id} and history.total == 3
    closed, asked, created = history.items
    assert closed.changes["status"] == {"old": "needs_revision", "new": "closed"}
    assert asked.changes["revisionNote"] == {"old": None, "new": "Add the logs"}
    assert asked.actor_role is Role.AUDITOR and created.actor_role is Role.OWNER
    with pytest.raises(Forbidden):
        platform.findings.history(actor_as(Role.EMPLOYEE), finding.id)
    with pytest.raises(NotFound):
        platform.findings.history(owner, "fnd_nothere")
