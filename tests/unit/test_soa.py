"""The statement of applicability in-process: versions, the justification rules on marks, the
approval by a named owner or admin that freezes the rows and pins the context, and the 409s of
a version that is not a draft."""

from __future__ import annotations

import attrs
import pytest

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas import AREAS
from compliance_core.areas.context import NewContextEntry
from compliance_core.areas.frameworks import soa
from compliance_core.areas.frameworks.control_models import (
    CONTROL_LINKS,
    CONTROL_REQUIREMENTS,
    CONTROLS,
    ENABLED_FRAMEWORKS,
    Control,
    ControlLink,
    ControlRequirement,
    ControlRequirementFilter,
    ControlStatus,
    Driver,
    EnabledFramework,
)
from compliance_core.areas.frameworks.soa import (
    ApproveSoa,
    DeclineSoa,
    Justify,
    MarkApplicable,
    MarkNotApplicable,
    NewSoaDocument,
    SoaDocumentFilter,
    SoaRowQuery,
    SoaStatus,
    SubmitSoa,
    open_statement,
)
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.kernel.errors import Conflict, Forbidden, NotFound, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.links import LinkState
from compliance_core.kernel.pages import PageRequest
from compliance_store.memory import MemoryStore

FRAMEWORK = "iso-27001-2022"
EVERY_ROW = ControlRequirementFilter()
LABELS = ("A.5.1", "A.5.2", "A.7.1", "A.8.25")
REGISTERED = any(area.name == "soa" for area in AREAS)
_AREAS = AREAS if REGISTERED else (*AREAS, soa.AREA)


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    """The default platform, with the SoA area added until it is registered in ``AREAS``."""
    return Platform(MemoryStore(_AREAS), clock=clock, ids=SequentialIds(), areas=_AREAS)


def enable(platform: Platform, organization_id: str, framework_id: str = FRAMEWORK, statuses: dict | None = None):
    """A framework enabled with one control and one working row per label (written directly, so
    these tests read only the SoA's rules, not how controls are made)."""
    now = platform.clock.now()
    statuses = statuses or {}
    with platform.uow.write(None) as tx:
        tx[ENABLED_FRAMEWORKS].add(
            EnabledFramework(
                id=platform.ids.new("frm"),
                organization_id=organization_id,
                framework_id=framework_id,
                name="ISO/IEC 27001:2022",
                requirement_count=len(LABELS),
                created_at=now,
            )
        )
        for label in LABELS:
            control = Control(
                id=platform.ids.new("ctl"),
                organization_id=organization_id,
                name=f"Control {label}",
                code=label,
                status=statuses.get(label, ControlStatus.NOT_STARTED),
                created_at=now,
                updated_at=now,
            )
            tx[CONTROLS].add(control)
            tx[CONTROL_REQUIREMENTS].add(
                ControlRequirement(
                    id=platform.ids.new("req"),
                    organization_id=organization_id,
                    framework_id=framework_id,
                    requirement_id=label.lower(),
                    label=label,
                    title=f"Requirement {label}",
                    control_id=control.id,
                    control_status=control.status,
                    created_at=now,
                    updated_at=now,
                )
            )


def link(platform: Platform, organization_id: str, control_id: str, kind: str, target_id: str) -> None:
    now = platform.clock.now()
    state = LinkState.CONTEXT if kind == "risk" else LinkState.DONE
    with platform.uow.write(None) as tx:
        tx[CONTROL_LINKS].add(
            ControlLink(
                id=platform.ids.new("cln"),
                organization_id=organization_id,
                control_id=control_id,
                kind=kind,
                target_id=target_id,
                state=state,
                created_at=now,
                updated_at=now,
            )
        )


@pytest.fixture
def draft(platform: Platform, owner):
    enable(platform, owner.organization_id, statuses={"A.5.1": ControlStatus.IMPLEMENTED})
    return platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK))


def _events(platform: Platform, kind: str) -> list[dict]:
    with platform.uow.read() as session:
        return [message.payload for message in session[OUTBOX].pending(100_000) if message.type == kind]


def _person(platform: Platform, owner, role: Role, email: str):
    return platform.people.create(owner, NewPerson(name=f"{role.value} person", email=email, role=role))


def test_a_version_starts_as_a_draft_of_the_framework_s_working_rows(platform: Platform, owner, draft) -> None:
    assert (draft.version, draft.status, draft.framework_name) == (1, SoaStatus.DRAFT, "ISO/IEC 27001:2022")
    rows = platform.soa.rows(owner, draft.id)
    assert [row.label for row in rows.items] == list(LABELS)
    assert {row.document_id for row in rows.items} == {draft.id}
    assert all(row.applicable and row.drivers == () for row in rows.items)
    assert platform.soa.rows(owner, draft.id, SoaRowQuery(control_status=ControlStatus.IMPLEMENTED)).total == 1
    assert platform.soa.get(owner, draft.id) == draft
    assert [item.id for item in platform.soa.list(owner, SoaDocumentFilter(framework_id=FRAMEWORK)).items] == [draft.id]
    assert platform.soa.row(owner, draft.id, "a.7.1").label == "A.7.1"
    assert [event["data"]["id"] for event in _events(platform, "soa.created")] == [draft.id]


def test_a_version_of_a_framework_not_enabled_is_refused_naming_framework_id(platform: Platform, owner) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.soa.create(owner, NewSoaDocument(framework_id="soc2-tsc-2017"))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("frameworkId", "soc2-tsc-2017")


def test_a_new_version_supersedes_an_open_one_and_leaves_the_approved_one_as_it_was(
    platform: Platform, owner, draft
) -> None:
    newer = platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK))
    assert (newer.version, platform.soa.get(owner, draft.id).status) == (draft.version + 1, "superseded")
    with pytest.raises(Conflict):
        platform.soa.submit(owner, draft.id, SubmitSoa())
    draft = newer
    platform.soa.mark_not_applicable(owner, draft.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    platform.soa.submit(owner, draft.id, SubmitSoa())
    approved = platform.soa.approve(owner, draft.id, ApproveSoa(comment="Agreed."))
    second = platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK))
    assert (second.version, second.status) == (3, SoaStatus.DRAFT)
    platform.soa.mark_applicable(owner, second.id, "a.7.1", MarkApplicable(drivers=[Driver.LEGAL]))
    assert platform.soa.get(owner, approved.id) == approved
    frozen = {row.label: row for row in platform.soa.rows(owner, approved.id).items}
    assert (frozen["A.7.1"].applicable, frozen["A.7.1"].justification) == (False, "No premises.")
    assert platform.soa.row(owner, second.id, "a.7.1").applicable is True
    assert [item.version for item in platform.soa.list(owner).items] == [3, 2, 1]


def test_an_exclusion_needs_its_justification(platform: Platform, owner, draft) -> None:
    for blank in ("", "   "):
        with pytest.raises(ValidationError) as raised:
            MarkNotApplicable(justification=blank)
        assert raised.value.details["field"] == "justification"
    row = platform.soa.mark_not_applicable(owner, draft.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    assert (row.applicable, row.justification, row.drivers) == (False, "No premises.", ())
    (event,) = _events(platform, "soa.row_updated")
    assert event["data"]["requirementId"] == "a.7.1" and event["data"]["documentId"] == draft.id
    assert event["previous"] == {"applicable": True, "justification": ""}


def test_applying_a_requirement_needs_a_driver_or_a_justification(platform: Platform, owner, draft) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.soa.mark_applicable(owner, draft.id, "a.5.2", MarkApplicable(drivers=[Driver.BEST_PRACTICE]))
    assert raised.value.details["field"] == "justification"
    with pytest.raises(ValidationError):
        platform.soa.mark_applicable(owner, draft.id, "a.5.2", MarkApplicable(drivers=[]))
    row = platform.soa.mark_applicable(
        owner,
        draft.id,
        "a.5.2",
        MarkApplicable(drivers=[Driver.BEST_PRACTICE], justification="Our customers expect it."),
    )
    assert (row.drivers, row.justification) == ((Driver.BEST_PRACTICE,), "Our customers expect it.")
    for driver in (Driver.RISK, Driver.LEGAL, Driver.CONTRACT):
        row = platform.soa.mark_applicable(owner, draft.id, "a.5.1", MarkApplicable(drivers=[driver, driver]))
        assert (row.drivers, row.justification) == ((driver,), "")


def test_a_risk_linked_to_the_control_counts_as_the_risk_driver(platform: Platform, owner, draft) -> None:
    row = platform.soa.row(owner, draft.id, "a.8.25")
    link(platform, owner.organization_id, row.control_id, "risk", "rsk_1")
    link(platform, owner.organization_id, row.control_id, "policy", "pol_1")
    marked = platform.soa.mark_applicable(owner, draft.id, "a.8.25", MarkApplicable(drivers=None))
    assert (marked.applicable, marked.risk_ids, marked.evidence_ids) == (True, ("rsk_1",), ())
    assert platform.soa.rows(owner, draft.id).items[3].risk_ids == ("rsk_1",)


def test_justify_changes_only_the_justification_and_a_mark_that_changes_nothing_records_nothing(
    platform: Platform, owner, draft
) -> None:
    platform.soa.mark_not_applicable(owner, draft.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    row = platform.soa.justify(owner, draft.id, "a.7.1", Justify(justification="We work from home only."))
    assert (row.applicable, row.justification) == (False, "We work from home only.")
    platform.soa.justify(owner, draft.id, "a.7.1", Justify(justification="We work from home only."))
    assert len(_events(platform, "soa.row_updated")) == 2
    with pytest.raises(ValidationError) as raised:
        Justify(justification=" ")
    assert raised.value.details["field"] == "justification"
    with pytest.raises(NotFound):
        platform.soa.justify(owner, draft.id, "a.99", Justify(justification="x"))
    by_id = platform.soa.row(owner, draft.id, row.id)
    assert by_id.requirement_id == "a.7.1"


def test_nothing_changes_while_submitted_or_once_approved(platform: Platform, owner, draft) -> None:
    platform.soa.submit(owner, draft.id, SubmitSoa())
    marks = (
        lambda: platform.soa.mark_applicable(owner, draft.id, "a.5.1", MarkApplicable(drivers=[Driver.LEGAL])),
        lambda: platform.soa.mark_not_applicable(owner, draft.id, "a.5.1", MarkNotApplicable(justification="x")),
        lambda: platform.soa.justify(owner, draft.id, "a.5.1", Justify(justification="x")),
        lambda: platform.soa.submit(owner, draft.id, SubmitSoa()),
    )
    for mark in marks:
        with pytest.raises(Conflict) as raised:
            mark()
        assert (raised.value.details["field"], raised.value.details["value"]) == ("status", "needs_review")
    platform.soa.approve(owner, draft.id, ApproveSoa(comment="Agreed."))
    for mark in (
        *marks,
        lambda: platform.soa.approve(owner, draft.id, ApproveSoa(comment="Again.")),
        lambda: platform.soa.decline(owner, draft.id, DeclineSoa(reason="Late.")),
    ):
        with pytest.raises(Conflict) as raised:
            mark()
        assert raised.value.details["value"] == "approved"
    with pytest.raises(Conflict):
        platform.soa.approve(
            owner, platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK)).id, ApproveSoa(comment="x")
        )


def test_the_approver_is_an_active_owner_or_admin_of_the_organization(
    platform: Platform, owner, draft, other_org
) -> None:
    employee = _person(platform, owner, Role.EMPLOYEE, "emp@acme.example")
    auditor = _person(platform, owner, Role.AUDITOR, "aud@acme.example")
    admin = _person(platform, owner, Role.ADMIN, "adm@acme.example")
    stranger = _person(platform, other_org, Role.ADMIN, "adm@globex.example")
    for refused in (employee.id, auditor.id, stranger.id, "mem_missing"):
        with pytest.raises(ValidationError) as raised:
            platform.soa.submit(owner, draft.id, SubmitSoa(approver_id=refused))
        assert (raised.value.details["field"], raised.value.details["value"]) == ("approverId", refused)
    platform.people.update(owner, admin.id, PersonPatch(is_active=False))
    with pytest.raises(ValidationError):
        platform.soa.submit(owner, draft.id, SubmitSoa(approver_id=admin.id))
    platform.people.update(owner, admin.id, PersonPatch(is_active=True))
    submitted = platform.soa.submit(owner, draft.id, SubmitSoa(approver_id=admin.id))
    assert (submitted.status, submitted.approver_id, submitted.submitted_by) == (
        SoaStatus.NEEDS_REVIEW,
        admin.id,
        owner.principal,
    )
    assert _events(platform, "soa.submitted")[0]["previous"]["status"] == "draft"


def test_only_the_named_approver_decides_when_the_caller_acts_as_a_person(platform: Platform, owner, draft) -> None:
    named = _person(platform, owner, Role.ADMIN, "named@acme.example")
    someone = _person(platform, owner, Role.OWNER, "someone@acme.example")
    platform.soa.submit(owner, draft.id, SubmitSoa(approver_id=named.id))
    as_someone = platform.actor(owner.organization_id, Role.OWNER, person_id=someone.id)
    with pytest.raises(Forbidden) as raised:
        platform.soa.approve(as_someone, draft.id, ApproveSoa(comment="Agreed."))
    assert raised.value.details["field"] == "approverId"
    with pytest.raises(Forbidden):
        platform.soa.decline(as_someone, draft.id, DeclineSoa(reason="No."))
    for role in (Role.AUDITOR, Role.EMPLOYEE):
        with pytest.raises(Forbidden):
            platform.soa.approve(platform.actor(owner.organization_id, role), draft.id, ApproveSoa(comment="x"))
    as_named = platform.actor(owner.organization_id, Role.ADMIN, person_id=named.id)
    approved = platform.soa.approve(as_named, draft.id, ApproveSoa(comment="Agreed."))
    assert (approved.status, approved.decided_by, approved.decided_by_name, approved.comment) == (
        SoaStatus.APPROVED,
        named.id,
        "admin person",
        "Agreed.",
    )


def test_a_decline_sends_the_version_back_to_draft_with_its_reason(platform: Platform, owner, draft) -> None:
    named = _person(platform, owner, Role.ADMIN, "named@acme.example")
    platform.soa.submit(owner, draft.id, SubmitSoa(approver_id=named.id))
    with pytest.raises(ValidationError) as raised:
        DeclineSoa(reason=" ")
    assert raised.value.details["field"] == "reason"
    with pytest.raises(ValidationError) as raised:
        ApproveSoa(comment="")
    assert raised.value.details["field"] == "comment"
    declined = platform.soa.decline(owner, draft.id, DeclineSoa(reason="Justify the exclusions."))
    assert (declined.status, declined.approver_id, declined.decline_reason) == (
        SoaStatus.DRAFT,
        None,
        "Justify the exclusions.",
    )
    previous = _events(platform, "soa.declined")[0]["previous"]
    assert (previous["status"], previous["approverId"]) == ("needs_review", named.id)
    platform.soa.mark_not_applicable(owner, draft.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    with pytest.raises(Conflict):
        platform.soa.decline(owner, draft.id, DeclineSoa(reason="Again."))
    resubmitted = platform.soa.submit(owner, draft.id, SubmitSoa())
    assert (resubmitted.status, resubmitted.decline_reason) == (SoaStatus.NEEDS_REVIEW, None)


def test_approval_freezes_the_rows_counts_them_and_pins_the_context(
    platform: Platform, owner, draft, clock: FrozenClock
) -> None:
    platform.context.create(owner, NewContextEntry(question="How does your team work?", answer="Fully remote."))
    (snapshot,) = platform.context.snapshots(owner).items
    row = platform.soa.row(owner, draft.id, "a.5.2")
    link(platform, owner.organization_id, row.control_id, "risk", "rsk_7")
    link(platform, owner.organization_id, row.control_id, "evidence", "evd_3")
    platform.soa.mark_not_applicable(owner, draft.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    platform.soa.submit(owner, draft.id, SubmitSoa())
    clock.advance(hours=1)
    approved = platform.soa.approve(owner, draft.id, ApproveSoa(comment="Agreed."))
    assert (approved.context_snapshot_id, approved.context_taken_at) == (snapshot.id, snapshot.created_at)
    assert (approved.row_count, approved.applicable_count, approved.implemented_count) == (4, 3, 1)
    assert approved.decided_at == clock.now()
    frozen = platform.soa.rows(owner, approved.id)
    assert [item.label for item in frozen.items] == list(LABELS)
    assert all(item.id.startswith("soar_") and item.document_id == approved.id for item in frozen.items)
    by_label = {item.label: item for item in frozen.items}
    assert (by_label["A.5.2"].risk_ids, by_label["A.5.2"].evidence_ids) == (("rsk_7",), ("evd_3",))
    assert platform.soa.rows(owner, approved.id, SoaRowQuery(applicable=False)).total == 1
    assert platform.soa.row(owner, approved.id, "a.7.1").justification == "No premises."
    assert platform.soa.row(owner, approved.id, by_label["A.7.1"].id).requirement_id == "a.7.1"
    with platform.uow.write(None) as tx:  # the working rows move on; the frozen ones do not
        for working in tx[CONTROL_REQUIREMENTS].list(owner.organization_id, EVERY_ROW, PageRequest(per_page=100))[0]:
            tx[CONTROL_REQUIREMENTS].update(attrs.evolve(working, control_status=ControlStatus.STALE))
    assert {item.control_status for item in platform.soa.rows(owner, approved.id).items} == {
        ControlStatus.IMPLEMENTED,
        ControlStatus.NOT_STARTED,
    }
    (event,) = _events(platform, "soa.approved")
    assert event["data"]["contextSnapshotId"] == snapshot.id


def test_an_organization_without_context_pins_none(platform: Platform, owner, draft) -> None:
    platform.soa.submit(owner, draft.id, SubmitSoa())
    approved = platform.soa.approve(owner, draft.id, ApproveSoa(comment="Agreed."))
    assert (approved.context_snapshot_id, approved.context_taken_at) == (None, None)


def test_readers_read_and_only_managers_write(platform: Platform, owner, draft, actor_as) -> None:
    auditor = actor_as(Role.AUDITOR)
    assert platform.soa.rows(auditor, draft.id).total == len(LABELS)
    assert platform.soa.get(auditor, draft.id) == draft
    with pytest.raises(Forbidden):
        platform.soa.mark_applicable(auditor, draft.id, "a.5.1", MarkApplicable(drivers=[Driver.LEGAL]))
    with pytest.raises(Forbidden):
        platform.soa.submit(auditor, draft.id, SubmitSoa())
    with pytest.raises(Forbidden):
        platform.soa.list(actor_as(Role.EMPLOYEE))
    admin = actor_as(Role.ADMIN)
    assert platform.soa.mark_applicable(admin, draft.id, "a.5.1", MarkApplicable(drivers=[Driver.LEGAL])).applicable


def test_another_organization_s_statement_is_not_found(platform: Platform, owner, draft, other_org) -> None:
    for call in (
        lambda: platform.soa.get(other_org, draft.id),
        lambda: platform.soa.rows(other_org, draft.id),
        lambda: platform.soa.row(other_org, draft.id, "a.5.1"),
        lambda: platform.soa.justify(other_org, draft.id, "a.5.1", Justify(justification="x")),
        lambda: platform.soa.export_csv(other_org, draft.id),
    ):
        with pytest.raises(NotFound):
            call()


def test_open_statement_opens_version_one_once_and_the_next_after_an_approval(platform: Platform, owner) -> None:
    organization_id = owner.organization_id
    enable(platform, organization_id)
    now = platform.clock.now()
    with platform.uow.write(None) as tx:
        first = open_statement(tx, organization_id, FRAMEWORK, now, platform.ids)
    with platform.uow.write(None) as tx:
        again = open_statement(tx, organization_id, FRAMEWORK, now, platform.ids)
    assert (first.version, first.status, first.framework_name) == (1, SoaStatus.DRAFT, "ISO/IEC 27001:2022")
    assert again == first
    platform.soa.submit(owner, first.id, SubmitSoa())
    platform.soa.approve(owner, first.id, ApproveSoa(comment="Agreed."))
    with platform.uow.write(None) as tx:
        second = open_statement(tx, organization_id, FRAMEWORK, now, platform.ids)
    assert (second.version, second.status) == (2, SoaStatus.DRAFT)
    assert len(_events(platform, "soa.created")) == 2


@pytest.mark.skipif(not REGISTERED, reason="the lead registers the SoA area and opens a statement on enable")
def test_enabling_a_framework_opens_its_statement(platform: Platform, owner) -> None:
    platform.controls.enable(owner, FRAMEWORK)
    (document,) = platform.soa.list(owner).items
    assert (document.framework_id, document.version, document.status) == (FRAMEWORK, 1, SoaStatus.DRAFT)
    assert platform.soa.rows(owner, document.id).total == 93
    row = platform.soa.mark_not_applicable(owner, document.id, "a.7.1", MarkNotApplicable(justification="Remote."))
    assert row.applicable is False
