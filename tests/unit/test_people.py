from __future__ import annotations

import pytest

from compliance_core import Conflict, Forbidden, NotFound, Role, ValidationError
from compliance_core.areas.people import MAX_BULK, NewPerson, PersonFilter, PersonPatch


def test_create_and_unique_email(platform, owner, other_org) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="Ann@Acme.test", job_title="CISO", role="Admin"))
    assert (ann.email, ann.role, ann.is_active) == ("ann@acme.test", Role.ADMIN, True)
    with pytest.raises(Conflict) as caught:
        platform.people.create(owner, NewPerson(name="Ann 2", email="ann@acme.test"))
    assert caught.value.details == {"field": "email", "value": "ann@acme.test"}
    platform.people.create(other_org, NewPerson(name="Ann", email="ann@acme.test"))  # unique per organization only
    assert platform.people.list(owner).total == 1


def test_update_and_email_conflict_on_update(platform, owner) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"))
    bob = platform.people.create(owner, NewPerson(name="Bob", email="bob@acme.test"))
    with pytest.raises(Conflict):
        platform.people.update(owner, bob.id, PersonPatch(email="ann@acme.test"))
    moved = platform.people.update(
        owner, bob.id, PersonPatch(email="robert@acme.test", is_active=False, department="it")
    )
    assert (moved.email, moved.is_active, moved.department) == ("robert@acme.test", False, "it")
    platform.people.create(owner, NewPerson(name="New Bob", email="bob@acme.test"))  # the old address is free again
    assert platform.people.list(owner, PersonFilter(is_active=False)).total == 1
    assert platform.people.get(owner, ann.id) == ann


def test_bulk_create_is_all_or_nothing_with_each_bad_entry_named(platform, owner) -> None:
    platform.people.create(owner, NewPerson(name="Existing", email="taken@acme.test"))
    members = [
        {"name": "Ok", "email": "ok@acme.test"},
        {"name": "No Mail", "email": "not-an-email"},
        {"name": "Dup", "email": "ok@acme.test"},
        {"email": "nameless@acme.test"},
        {"name": "Odd", "email": "odd@acme.test", "shoe_size": 44},
        {"name": "Bad role", "email": "role@acme.test", "role": "emperor"},
    ]
    with pytest.raises(ValidationError) as caught:
        platform.people.bulk_create(owner, members)
    errors = {(e["index"], e["field"]) for e in caught.value.details["errors"]}
    assert errors == {(1, "email"), (2, "email"), (3, "name"), (4, "shoeSize"), (5, "role")}
    assert platform.people.list(owner).total == 1

    with pytest.raises(Conflict) as conflict:
        platform.people.bulk_create(
            owner, [{"name": "A", "email": "a@acme.test"}, {"name": "T", "email": "taken@acme.test"}]
        )
    assert conflict.value.details["errors"] == [
        {"index": 1, "field": "email", "value": "taken@acme.test", "reason": "already exists"}
    ]
    assert platform.people.list(owner).total == 1

    created = platform.people.bulk_create(owner, [{"name": f"P{n}", "email": f"p{n}@acme.test"} for n in range(5)])
    assert len(created) == 5 and platform.people.list(owner).total == 6


def test_bulk_limits(platform, owner) -> None:
    for members in ([], [{"name": "x", "email": f"x{n}@a.test"} for n in range(MAX_BULK + 1)], "nope"):
        with pytest.raises(ValidationError) as caught:
            platform.people.bulk_create(owner, members)
        assert caught.value.details["field"] == "members"


def test_bulk_respects_role_ceiling(platform, actor_as) -> None:
    admin = actor_as(Role.ADMIN)
    with pytest.raises(Forbidden) as caught:
        platform.people.bulk_create(
            admin, [{"name": "A", "email": "a@a.test"}, {"name": "O", "email": "o@a.test", "role": "owner"}]
        )
    assert caught.value.details["errors"] == [
        {"index": 1, "field": "role", "value": "owner", "reason": "above the caller's role"}
    ]
    assert platform.people.list(admin).total == 0


def test_roles_and_visibility(platform, owner, actor_as, other_org) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test", role="owner"))
    with pytest.raises(Forbidden):
        platform.people.update(actor_as(Role.ADMIN), ann.id, PersonPatch(name="Demoted"))
    with pytest.raises(Forbidden):
        platform.people.create(actor_as(Role.AUDITOR), NewPerson(name="X", email="x@acme.test"))
    with pytest.raises(NotFound):
        platform.people.get(other_org, ann.id)
    assert platform.people.list(actor_as(Role.EMPLOYEE)).total == 1
    with pytest.raises(Forbidden):
        platform.people.list(actor_as(Role.CONTRACTOR))
