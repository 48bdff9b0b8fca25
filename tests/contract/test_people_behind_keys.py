"""People, not key ids (issue 18), in-process on every store: a person-bound key's signature,
acceptance, approval and audit entries show the person (id and name) beside the key, and an
owner or admin bound to a person signs what a policy asks that person to sign."""

from __future__ import annotations

import datetime as dt

import pytest

from compliance_core import Actor, Forbidden, Platform, Role
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.people import NewPerson
from compliance_core.areas.policies import ApprovePolicy, NewPolicy, PublishPolicy, SubmitForApproval
from compliance_core.areas.risks import NewRisk, RiskAcceptance
from compliance_core.kernel.audit import AuditFilter
from compliance_core.platform import Bootstrap


def _bound(platform: Platform, owner: Actor, name: str, role: Role) -> tuple[str, Actor]:
    """A person of ``role`` and the actor of a key of that role bound to them (issued in-process
    by the operator, as only the person's own key or the operator binds one to a manager)."""
    person = platform.people.create(owner, NewPerson(name=name, email=f"{name.lower()}@acme.example", role=role))
    issued = platform.api_keys.create(owner, NewApiKey(name=f"{name}'s key", role=role, person_id=person.id))
    assert issued.secret is not None
    return person.id, platform.access.admit(issued.secret).actor


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_a_manager_bound_to_a_person_signs_what_is_asked_of_that_person(
    platform: Platform, owner: Actor, boot: Bootstrap, role: Role
) -> None:
    person, manager = _bound(platform, owner, "Boss", role)
    other, _ = _bound(platform, owner, "Ann", Role.EMPLOYEE)
    mine = platform.policies.create(owner, NewPolicy(name="Mine", content="Text", signer_ids=[person]))
    theirs = platform.policies.create(owner, NewPolicy(name="Theirs", content="Text", signer_ids=[other]))
    for policy in (mine, theirs):
        platform.policies.publish(owner, policy.id, PublishPolicy())
    signed = platform.policies.acknowledge(manager, mine.id)
    assert (signed.person_id, signed.person_name, signed.acknowledged_by) == (person, "Boss", manager.key_id)
    with pytest.raises(Forbidden):
        platform.policies.acknowledge(manager, theirs.id)  # not asked of this person
    with pytest.raises(Forbidden):
        platform.policies.acknowledge(owner, mine.id)  # a caller acting as no person
    (signer,) = platform.policies.sign_off(owner, mine.id).signers
    assert (signer.person_id, signer.person_name, signer.acknowledged_by) == (person, "Boss", manager.key_id)


def test_sign_offs_name_every_signer_and_the_person_who_issued_the_key(platform: Platform, owner: Actor) -> None:
    boss, as_boss = _bound(platform, owner, "Boss", Role.ADMIN)
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    bob = platform.people.create(owner, NewPerson(name="Bob", email="bob@acme.example"))
    issued = platform.api_keys.create(as_boss, NewApiKey(name="Ann", role=Role.EMPLOYEE, person_id=ann.id))
    assert issued.secret is not None
    policy = platform.policies.create(owner, NewPolicy(name="AUP", content="Text", signer_ids=[ann.id, bob.id]))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.acknowledge(platform.access.admit(issued.secret).actor, policy.id)
    signed, unsigned = platform.policies.sign_off(owner, policy.id).signers
    assert (signed.person_id, signed.person_name, signed.acknowledged_by) == (ann.id, "Ann", issued.key.id)
    assert (signed.key_issued_by_person_id, signed.key_issued_by_person_name) == (boss, "Boss")
    assert (unsigned.person_id, unsigned.person_name, unsigned.acknowledged_at) == (bob.id, "Bob", None)


def test_an_acceptance_shows_the_person_behind_the_key(platform: Platform, owner: Actor, boot: Bootstrap) -> None:
    person, admin = _bound(platform, owner, "Boss", Role.ADMIN)
    ratings = {"residual_likelihood": 2, "residual_impact": 2}
    risk = platform.risks.create(owner, NewRisk(title="Laptop theft", **ratings))
    accepted = platform.risks.accept(admin, risk.id, RiskAcceptance(expires_on=dt.date(2026, 6, 30)))
    assert (accepted.accepted_by, accepted.accepted_by_person_id, accepted.accepted_by_person_name) == (
        admin.key_id,
        person,
        "Boss",
    )
    assert platform.risks.get(owner, risk.id) == accepted  # stored, not only answered
    unbound = platform.access.admit(boot.owner_key.secret or "").actor
    other = platform.risks.create(owner, NewRisk(title="Flood", **ratings))
    by_key = platform.risks.accept(unbound, other.id, RiskAcceptance(expires_on=dt.date(2026, 6, 30)))
    assert (by_key.accepted_by, by_key.accepted_by_person_id, by_key.accepted_by_person_name) == (
        unbound.key_id,
        None,
        None,
    )


def test_an_approval_and_the_audit_log_show_the_person(platform: Platform, owner: Actor) -> None:
    person, approver = _bound(platform, owner, "Boss", Role.ADMIN)
    policy = platform.policies.create(owner, NewPolicy(name="AUP", content="Text"))
    platform.policies.submit_for_approval(owner, policy.id, SubmitForApproval(approver_id=person))
    approved = platform.policies.approve(approver, policy.id, ApprovePolicy())
    (version,) = platform.policies.list_versions(owner, policy.id).items
    assert (version.approved_by, version.approved_by_person_name) == (person, "Boss")
    entries = platform.audit_log.list(owner, AuditFilter(entity_id=approved.id, action="policy.published")).items
    (entry,) = entries
    assert (entry.actor_id, entry.actor_person_id, entry.actor_person_name) == (approver.key_id, person, "Boss")
    (created,) = platform.audit_log.list(owner, AuditFilter(entity_id=policy.id, action="policy.created")).items
    assert (created.actor_person_id, created.actor_person_name) == (None, None)  # the operator: no person


def test_an_in_process_actor_made_without_a_name_is_named_from_the_directory(platform: Platform, owner: Actor) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example", role=Role.ADMIN))
    actor = Actor(organization_id=owner.organization_id, role=Role.ADMIN, person_id=ann.id, auth_type="local")
    assert platform.actor(owner.organization_id, Role.ADMIN, person_id=ann.id).person_name == "Ann"
    vendor_policy = platform.policies.create(actor, NewPolicy(name="Vendors"))
    (entry,) = platform.audit_log.list(owner, AuditFilter(entity_id=vendor_policy.id)).items
    assert (entry.actor_type.value, entry.actor_person_id, entry.actor_person_name) == ("local", ann.id, "Ann")
