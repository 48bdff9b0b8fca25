"""Policies in-process: transitions, versions, approval, sign-off, the review sweep and PDFs (the
generic suites cover the rest)."""

from __future__ import annotations

import datetime as dt
import io

import pypdf
import pytest
from attrs import evolve as attrs_evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import Conflict, Forbidden, FrozenClock, NotFound, Platform, Role, SequentialIds, ValidationError
from compliance_core.areas.api_keys import API_KEYS, NewApiKey
from compliance_core.areas.frameworks.control_models import NewControl
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.areas.policies import (
    AcknowledgementFilter,
    ApprovePolicy,
    NewPolicy,
    PolicyFilter,
    PolicyPatch,
    PolicyStatus,
    PublishPolicy,
    RejectPolicy,
    SubmitForApproval,
    next_review,
)
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.pages import PageRequest
from compliance_store.memory import MemoryStore

AUP = NewPolicy(
    name="Acceptable use",
    description="How devices may be used.",
    content="# Acceptable use\n\nUse company devices for **work**.\n\n## Rules\n\n- Lock your screen\n- Report incidents\n",
    frequency="yearly",
)


def _person(platform, owner, name: str, role: str = "employee"):
    return platform.people.create(owner, NewPerson(name=name, email=f"{name.lower()}@acme.example", role=role))


def _as(platform, owner, person, role: str = "employee"):
    return platform.actor(owner.organization_id, role, person_id=person.id)


def _types(platform) -> list[str]:
    with platform.uow.read() as session:
        return [m.type for m in session[OUTBOX].pending(1000)]


def test_publishing_freezes_a_numbered_version_and_sets_the_next_review(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    assert (policy.status, policy.version, policy.in_force) == (PolicyStatus.DRAFT, 0, False)
    published = platform.policies.publish(owner, policy.id, PublishPolicy(changelog="First"))
    assert (published.status, published.version, published.in_force) == (PolicyStatus.PUBLISHED, 1, True)
    assert published.next_review_date == dt.date(2027, 1, 1)
    platform.policies.update(owner, policy.id, PolicyPatch(content="# Acceptable use\n\nRevised."))
    second = platform.policies.publish(owner, policy.id, PublishPolicy())
    versions = platform.policies.list_versions(owner, policy.id).items
    assert [(v.version, v.changelog) for v in versions] == [(2, None), (1, "First")]
    assert versions[1].content == AUP.content.strip()
    assert versions[0].content == "# Acceptable use\n\nRevised."
    assert second.current_version_id == versions[0].id
    assert "policy.published" in _types(platform)


def test_a_policy_without_content_is_not_published(platform, owner) -> None:
    policy = platform.policies.create(owner, NewPolicy(name="Empty"))
    with pytest.raises(Conflict) as raised:
        platform.policies.publish(owner, policy.id, PublishPolicy())
    assert raised.value.details["field"] == "content"


def test_republishing_asks_everyone_again(platform, owner) -> None:
    ann, bob = _person(platform, owner, "Ann"), _person(platform, owner, "Bob")
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.acknowledge(_as(platform, owner, ann), policy.id)
    first = platform.policies.sign_off(owner, policy.id)
    assert (first.required, first.acknowledged) == (2, 1)
    platform.policies.publish(owner, policy.id, PublishPolicy(changelog="Again"))
    again = platform.policies.sign_off(owner, policy.id)
    assert (again.version, again.required, again.acknowledged) == (2, 2, 0)
    ack = platform.policies.acknowledge(_as(platform, owner, bob), policy.id)
    assert ack.version == 2
    assert {s.person_id for s in platform.policies.sign_off(owner, policy.id).signers if s.acknowledged_at} == {bob.id}


def test_acknowledging_twice_keeps_the_first_signature(platform, owner, clock) -> None:
    ann = _person(platform, owner, "Ann")
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    first = platform.policies.acknowledge(_as(platform, owner, ann), policy.id)
    clock.advance(hours=1)
    assert platform.policies.acknowledge(_as(platform, owner, ann), policy.id) == first
    assert _types(platform).count("policy.acknowledged") == 1


def test_only_the_people_asked_sign(platform, owner) -> None:
    ann, bob = _person(platform, owner, "Ann"), _person(platform, owner, "Bob")
    policy = platform.policies.create(owner, NewPolicy(name="Remote work", content="Text", signer_ids=[ann.id]))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    with pytest.raises(Forbidden) as raised:
        platform.policies.acknowledge(_as(platform, owner, bob), policy.id)
    assert raised.value.details["field"] == "personId"
    platform.policies.acknowledge(_as(platform, owner, ann), policy.id)
    sign_off = platform.policies.sign_off(owner, policy.id)
    assert [s.person_id for s in sign_off.signers] == [ann.id]


def test_inactive_people_are_not_asked_when_everyone_signs(platform, owner) -> None:
    ann, bob = _person(platform, owner, "Ann"), _person(platform, owner, "Bob")
    platform.people.update(owner, bob.id, PersonPatch(is_active=False))
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    assert [s.person_id for s in platform.policies.sign_off(owner, policy.id).signers] == [ann.id]
    with pytest.raises(Forbidden):
        platform.policies.acknowledge(_as(platform, owner, bob), policy.id)


def test_signers_and_assignee_must_be_people_of_the_organization(platform, owner, other_org) -> None:
    stranger = _person(platform, other_org, "Stranger")
    with pytest.raises(ValidationError) as raised:
        platform.policies.create(owner, NewPolicy(name="X", signer_ids=[stranger.id]))
    assert raised.value.details == {
        "field": "signerIds[0]",
        "value": stranger.id,
        "reason": raised.value.details["reason"],
    }
    with pytest.raises(ValidationError) as raised:
        platform.policies.create(owner, NewPolicy(name="X", assignee_id="mem_nobody"))
    assert raised.value.details["field"] == "assigneeId"
    with pytest.raises(ValidationError) as raised:
        NewPolicy(name="X", signer_ids=["not an id"])
    assert raised.value.details["field"] == "signerIds[0]"


def test_staff_see_only_policies_in_force(platform, owner) -> None:
    ann = _person(platform, owner, "Ann")
    draft = platform.policies.create(owner, NewPolicy(name="Draft", content="x"))
    live = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, live.id, PublishPolicy())
    staff = _as(platform, owner, ann)
    assert [p.id for p in platform.policies.list(staff).items] == [live.id]
    with pytest.raises(Forbidden):  # refused, not quietly replaced
        platform.policies.list(staff, PolicyFilter(in_force=False))
    with pytest.raises(NotFound):
        platform.policies.get(staff, draft.id)
    with pytest.raises(NotFound):
        platform.policies.acknowledge(staff, draft.id)
    platform.policies.archive(owner, live.id)
    assert platform.policies.list(staff).total == 0
    with pytest.raises(NotFound):
        platform.policies.acknowledge(staff, live.id)


def test_staff_list_their_own_acknowledgements_only(platform, owner) -> None:
    ann, bob = _person(platform, owner, "Ann"), _person(platform, owner, "Bob")
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    for person in (ann, bob):
        platform.policies.acknowledge(_as(platform, owner, person), policy.id)
    mine = platform.policies.list_acknowledgements(_as(platform, owner, ann))
    assert [a.person_id for a in mine.items] == [ann.id]
    assert platform.policies.list_acknowledgements(owner).total == 2
    auditor = platform.actor(owner.organization_id, Role.AUDITOR)
    assert platform.policies.list_acknowledgements(auditor, AcknowledgementFilter(person_id=bob.id)).total == 1


def test_a_staff_caller_without_a_person_cannot_sign(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    with pytest.raises(Forbidden) as raised:
        platform.policies.acknowledge(platform.actor(owner.organization_id, Role.EMPLOYEE), policy.id)
    assert raised.value.details["field"] == "personId"


def test_roles(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    auditor = platform.actor(owner.organization_id, Role.AUDITOR)
    with pytest.raises(Forbidden):
        platform.policies.publish(auditor, policy.id, PublishPolicy())
    with pytest.raises(Forbidden):
        platform.policies.acknowledge(owner, policy.id)
    with pytest.raises(Forbidden):
        platform.policies.list_versions(platform.actor(owner.organization_id, Role.EMPLOYEE), policy.id)
    assert platform.policies.list_versions(auditor, policy.id).total == 0


def test_approval_by_the_named_approver(platform, owner) -> None:
    boss = _person(platform, owner, "Boss", role="admin")
    other_admin = _person(platform, owner, "Other", role="admin")
    policy = platform.policies.create(owner, AUP)
    pending = platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=boss.id))
    assert (pending.status, pending.pending_approval, pending.approver_id) == (PolicyStatus.NEEDS_REVIEW, True, boss.id)
    for someone in (owner, _as(platform, owner, other_admin, "admin")):
        with pytest.raises(Forbidden) as raised:
            platform.policies.approve(someone, policy.id, ApprovePolicy())
        assert raised.value.details["field"] == "approverId"
    approved = platform.policies.approve(_as(platform, owner, boss, "admin"), policy.id, ApprovePolicy(comment="OK"))
    assert (approved.status, approved.version, approved.pending_approval) == (PolicyStatus.PUBLISHED, 1, False)
    assert approved.last_approved_at is not None and approved.review_comment == "OK"
    version = platform.policies.list_versions(owner, policy.id).items[0]
    assert (version.approved_by, version.approval_comment) == (boss.id, "OK")
    with pytest.raises(Conflict):
        platform.policies.approve(owner, policy.id, ApprovePolicy())
    assert {"policy.submitted_for_approval", "policy.approved", "policy.published"} <= set(_types(platform))


def test_the_text_awaiting_approval_does_not_change(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval())
    with pytest.raises(Conflict) as raised:
        platform.policies.update(owner, policy.id, PolicyPatch(content="Other text"))
    assert raised.value.details["field"] == "content"
    assert platform.policies.update(owner, policy.id, PolicyPatch(description="Still fine")).description == "Still fine"
    approved = platform.policies.approve(owner, policy.id, ApprovePolicy())
    assert platform.policies.list_versions(owner, approved.id).items[0].content == AUP.content.strip()


def test_the_approver_must_be_an_active_manager(platform, owner) -> None:
    ann = _person(platform, owner, "Ann")
    policy = platform.policies.create(owner, AUP)
    with pytest.raises(ValidationError) as raised:
        platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=ann.id))
    assert raised.value.details["field"] == "approverId"


def test_rejection_returns_to_the_previous_state_with_the_comment(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval())
    rejected = platform.policies.reject(owner, policy.id, RejectPolicy(comment="Name a contact"))
    assert (rejected.status, rejected.review_comment, rejected.version) == (PolicyStatus.DRAFT, "Name a contact", 0)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval())
    again = platform.policies.reject(owner, policy.id, RejectPolicy(comment="No"))
    assert (again.status, again.version, again.in_force) == (PolicyStatus.PUBLISHED, 1, True)
    with pytest.raises(ValidationError):
        RejectPolicy(comment="  ")


def test_archived_policies_are_not_edited_until_restored(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    platform.policies.archive(owner, policy.id)
    with pytest.raises(Conflict):
        platform.policies.publish(owner, policy.id, PublishPolicy())
    assert platform.policies.list(owner, PolicyFilter(archived=True)).total == 1
    platform.policies.restore(owner, policy.id)
    assert platform.policies.publish(owner, policy.id, PublishPolicy()).version == 1


def test_the_sweep_moves_overdue_policies_to_needs_review(platform, owner, clock) -> None:
    monthly = platform.policies.create(owner, NewPolicy(name="Monthly", content="x", frequency="monthly"))
    yearly = platform.policies.create(owner, NewPolicy(name="Yearly", content="x", frequency="yearly"))
    never = platform.policies.create(owner, NewPolicy(name="Never", content="x"))
    for policy in (monthly, yearly, never):
        platform.policies.publish(owner, policy.id, PublishPolicy())
    assert platform.policies.sweep_reviews(clock.now() + dt.timedelta(days=30)) == 0
    assert platform.policies.sweep_reviews(clock.now() + dt.timedelta(days=31)) == 1
    assert platform.policies.sweep_reviews(clock.now() + dt.timedelta(days=31)) == 0
    assert platform.policies.get(owner, monthly.id).status == PolicyStatus.NEEDS_REVIEW
    assert platform.policies.get(owner, yearly.id).status == PolicyStatus.PUBLISHED
    assert "policy.needs_review" in _types(platform)
    reviewed = platform.policies.publish(owner, monthly.id, PublishPolicy(changelog="Reviewed"))
    assert reviewed.status == PolicyStatus.PUBLISHED and reviewed.next_review_date == dt.date(2026, 2, 1)


def test_changing_the_frequency_moves_the_next_review(platform, owner) -> None:
    policy = platform.policies.create(owner, NewPolicy(name="P", content="x", frequency="yearly"))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    moved = platform.policies.update(owner, policy.id, PolicyPatch(frequency="quarterly"))
    assert moved.next_review_date == dt.date(2026, 4, 1)


@pytest.mark.parametrize(
    ("start", "frequency", "expected"),
    [
        (dt.date(2026, 1, 31), "monthly", dt.date(2026, 2, 28)),
        (dt.date(2026, 11, 30), "quarterly", dt.date(2027, 2, 28)),
        (dt.date(2028, 2, 29), "yearly", dt.date(2029, 2, 28)),
        (dt.date(2026, 5, 5), None, None),
    ],
)
def test_next_review_clamps_to_the_month_end(start, frequency, expected) -> None:
    assert next_review(start, frequency) == expected


def _text(data: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() for page in reader.pages)


def test_the_pdf_holds_the_text_version_and_dates(platform, owner, clock) -> None:
    boss = _person(platform, owner, "Boss", role="admin")
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.update(owner, policy.id, PolicyPatch(content="# Acceptable use\n\n1. Be kind\n2. Be safe"))
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=boss.id))
    clock.advance(days=3)
    platform.policies.approve(_as(platform, owner, boss, "admin"), policy.id, ApprovePolicy())
    download = platform.policies.download(owner, policy.id)
    assert (download.filename, download.media_type) == ("Acceptable use.pdf", "application/pdf")
    text = _text(download.read())
    for expected in ("Acceptable use", "Version 2", "Published: 2026-01-04", "Approved: 2026-01-04", "Be kind"):
        assert expected in text
    assert "Lock your screen" not in text  # the version in force, not the first


def test_all_policies_in_force_in_one_pdf(platform, owner) -> None:
    for name in ("Access control", "Backups"):
        policy = platform.policies.create(owner, NewPolicy(name=name, content=f"# {name}\n\nText of {name}."))
        platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.create(owner, NewPolicy(name="Unpublished", content="secret draft"))
    text = _text(platform.policies.download_all(owner).read())
    assert "Acme: policies" in text and "Text of Access control." in text and "Text of Backups." in text
    assert "secret draft" not in text
    assert pypdf.PdfReader(io.BytesIO(platform.policies.download_all(owner).read())).metadata.title == "Acme: policies"


def test_inline_styles_past_the_budget_print_as_written() -> None:
    """fpdf2's line breaking slows with every styled fragment of a line: a policy's first
    ``MAX_STYLE_MARKERS`` markers style the text, a paragraph past them keeps its markers."""
    from compliance_core.areas.policies import PolicyDocument
    from compliance_pdf.policies import MAX_STYLE_MARKERS, FpdfPolicies

    styled = "**Bold start** and __italic__."  # 4 markers
    dense = " ".join(["**x**"] * ((MAX_STYLE_MARKERS - 4) // 2))  # the rest of the budget
    tail = "Then **this** stays as written."
    content = f"{styled}\n\n{dense}\n\n{tail}"
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    document = PolicyDocument(name="Dense", description="", version=1, content=content, published_at=at)
    text = _text(FpdfPolicies().render("Dense", [document], at))
    assert "Bold start and italic." in text.replace("\n", " ")
    assert "**x**" not in text  # the dense paragraph fits the budget that is left: styled
    assert "Then **this** stays as written." in text.replace("\n", " ")


def test_a_draft_has_nothing_to_download(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    with pytest.raises(NotFound) as raised:
        platform.policies.download(owner, policy.id)
    assert raised.value.details["resource"] == "policy version"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.one_of(st.just(("publish", None)), st.tuples(st.just("ack"), st.integers(0, 2))), max_size=12))
def test_acknowledgement_status_follows_a_simple_model(steps) -> None:
    """Whatever the order of publications and signatures, each person has signed the version in
    force exactly when the model says: a publication forgets every signature, a signature counts
    only while a version is in force."""
    platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    people = [_person(platform, owner, name) for name in ("Ann", "Bob", "Cy")]
    policy = platform.policies.create(owner, AUP)
    published, signed = False, set()
    for kind, who in steps:
        if kind == "publish":
            platform.policies.publish(owner, policy.id, PublishPolicy())
            published, signed = True, set()
        elif published:
            platform.policies.acknowledge(_as(platform, owner, people[who]), policy.id)
            signed.add(people[who].id)
        else:
            with pytest.raises(NotFound):
                platform.policies.acknowledge(_as(platform, owner, people[who]), policy.id)
        status = platform.policies.sign_off(owner, policy.id)
        assert {s.person_id for s in status.signers if s.acknowledged_at is not None} == signed
        assert status.acknowledged == len(signed)
        assert status.required == (3 if published else 0)
    everyone = platform.policies.list_acknowledgements(owner, page=PageRequest(per_page=200)).items
    assert {
        a.person_id for a in everyone if a.version_id == platform.policies.get(owner, policy.id).current_version_id
    } == signed


def test_controls_are_linked_by_id_each_once(platform, owner) -> None:
    first, second = (platform.controls.create(owner, NewControl(name=name)).id for name in ("A", "B"))
    policy = platform.policies.create(owner, NewPolicy(name="P", control_ids=[first, second, first]))
    assert policy.control_ids == (first, second)
    assert platform.policies.update(owner, policy.id, PolicyPatch(control_ids=None)).control_ids == ()
    with pytest.raises(ValidationError) as raised:
        PolicyPatch(control_ids=["ctl_ok", 7])
    assert (raised.value.details["field"], raised.value.details["value"]) == ("controlIds[1]", 7)


def _keyed(platform, owner, person, role: str, issuer=None):
    """A key bound to ``person``, issued by ``issuer`` (default: the operator), as its caller."""
    issued = platform.api_keys.create(issuer or owner, NewApiKey(name=person.name, role=role, person_id=person.id))
    return platform.access.admit(issued.secret).actor


def test_a_key_someone_else_bound_to_the_approver_does_not_approve(platform, owner) -> None:
    """Issue 16: a key bound to the approver by another key (possible before binding a key to
    an owner or admin was reserved to their own key, and still stored) approves nothing as them."""
    boss = _person(platform, owner, "Boss", role="admin")
    admin_key = platform.api_keys.create(owner, NewApiKey(name="ops", role="admin"))
    foreign = platform.api_keys.issue(
        owner.organization_id,
        NewApiKey(name="as Boss", role="admin", person_id=boss.id),
        created_by=admin_key.key.id,
    )
    with platform.uow.write(None) as tx:
        tx[API_KEYS].add(foreign.key)
    as_boss_by_other = platform.access.admit(foreign.secret).actor
    assert as_boss_by_other.person_id == boss.id and not as_boss_by_other.as_own_person
    policy = platform.policies.create(owner, AUP)
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=boss.id))
    for decide in (
        lambda: platform.policies.approve(as_boss_by_other, policy.id, ApprovePolicy()),
        lambda: platform.policies.reject(as_boss_by_other, policy.id, RejectPolicy(comment="no")),
    ):
        with pytest.raises(Forbidden) as raised:
            decide()
        assert (raised.value.details["field"], raised.value.details["value"]) == ("approverId", boss.id)
    own = _keyed(platform, owner, boss, "admin")
    approved = platform.policies.approve(own, policy.id, ApprovePolicy(comment="OK"))
    version = platform.policies.list_versions(owner, approved.id).items[0]
    assert (version.approved_by, version.approval_key_issued_by) == (boss.id, "local:owner")
    # The PDF names the approver and who issued the key that approved.
    text = " ".join(_text(platform.policies.download(owner, approved.id).read()).split())
    assert f"by Boss ({boss.id}) (key issued by local:owner)" in text


@pytest.mark.parametrize("change", [PersonPatch(role="employee"), PersonPatch(is_active=False)])
def test_approval_checks_again_that_the_approver_may_approve(platform, owner, change) -> None:
    boss = _person(platform, owner, "Boss", role="admin")
    policy = platform.policies.create(owner, AUP)
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=boss.id))
    platform.people.update(owner, boss.id, change)
    with pytest.raises(Forbidden) as raised:
        platform.policies.approve(_as(platform, owner, boss, "admin"), policy.id, ApprovePolicy())
    assert raised.value.details == {
        "field": "approverId",
        "value": boss.id,
        "reason": "is no longer an active owner or admin",
    }
    assert platform.policies.get(owner, policy.id).pending_approval


def test_every_signature_shows_who_issued_its_key(platform, owner) -> None:
    boss = _person(platform, owner, "Boss", role="admin")
    ann = _person(platform, owner, "Ann")
    as_boss = _keyed(platform, owner, boss, "admin")
    as_ann = _keyed(platform, owner, ann, "employee", issuer=as_boss)
    policy = platform.policies.create(owner, attrs_evolve(AUP, signer_ids=(ann.id,)))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    signed = platform.policies.acknowledge(as_ann, policy.id)
    assert (signed.acknowledged_by, signed.key_issued_by, signed.key_issued_by_person_id) == (
        as_ann.key_id,
        as_boss.key_id,
        boss.id,
    )
    (signer,) = platform.policies.sign_off(owner, policy.id).signers
    assert (signer.person_id, signer.acknowledged_by, signer.key_issued_by, signer.key_issued_by_person_id) == (
        ann.id,
        as_ann.key_id,
        as_boss.key_id,
        boss.id,
    )
    entry = platform.audit_log.list(owner, AuditFilter(entity_id=signed.id)).items[0]
    assert (entry.action, entry.actor_id) == ("policy.acknowledged", as_ann.key_id)
    assert (entry.key_issued_by, entry.key_issued_by_person_id) == (as_boss.key_id, boss.id)


def test_an_archived_policy_is_not_in_force(platform, owner) -> None:
    policy = platform.policies.create(owner, AUP)
    platform.policies.publish(owner, policy.id, PublishPolicy())
    archived = platform.policies.archive(owner, policy.id)
    assert (archived.archived, archived.in_force) == (True, False)
    assert platform.policies.list(owner, PolicyFilter(in_force=True)).total == 0
    assert platform.policies.restore(owner, policy.id).in_force
    draft = platform.policies.create(owner, AUP)
    platform.policies.archive(owner, draft.id)
    assert not platform.policies.restore(owner, draft.id).in_force


@pytest.mark.parametrize("filters", [PolicyFilter(in_force=False), PolicyFilter(archived=True)])
def test_staff_are_refused_the_filters_they_may_not_use(platform, owner, filters) -> None:
    ann = _as(platform, owner, _person(platform, owner, "Ann"))
    with pytest.raises(Forbidden) as raised:
        platform.policies.list(ann, filters)
    field = "inForce" if filters.in_force is False else "archived"
    assert raised.value.details["field"] == field
    assert platform.policies.list(ann, PolicyFilter(in_force=True)).total == 0


def test_staff_are_refused_someone_elses_sign_offs(platform, owner) -> None:
    ann, bob = _person(platform, owner, "Ann"), _person(platform, owner, "Bob")
    as_ann = _as(platform, owner, ann)
    with pytest.raises(Forbidden) as raised:
        platform.policies.list_acknowledgements(as_ann, AcknowledgementFilter(person_id=bob.id))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("personId", bob.id)
    assert platform.policies.list_acknowledgements(as_ann, AcknowledgementFilter(person_id=ann.id)).total == 0
