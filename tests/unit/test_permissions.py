from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_core import Forbidden, NewApiKey, NewPerson, NewVendor, Role
from compliance_core.permissions import ACTIONS, PERMISSIONS, WRITE_ACTIONS, Actor, authorize, ensure_can_grant

roles = st.sampled_from(list(Role))
actions = st.sampled_from(sorted(ACTIONS))


@given(role=roles, action=actions)
def test_authorize_denies_exactly_what_the_table_denies(role: Role, action: str) -> None:
    actor = Actor(organization_id="org_1", role=role)
    if action in PERMISSIONS[role]:
        authorize(actor, action)
    else:
        with pytest.raises(Forbidden) as caught:
            authorize(actor, action)
        assert caught.value.details == {"action": action, "role": role.value}


def test_auditor_is_read_only() -> None:
    assert all(action.endswith(":read") for action in PERMISSIONS[Role.AUDITOR])


def test_only_owner_and_admin_manage_keys() -> None:
    holders = {role for role, allowed in PERMISSIONS.items() if "api_key:create" in allowed}
    assert holders == {Role.OWNER, Role.ADMIN}


def test_unknown_action_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        authorize(Actor(organization_id="org_1", role=Role.OWNER), "vendor:explode")


@given(granter=roles, granted=roles)
def test_nobody_grants_a_role_above_their_own(granter: Role, granted: Role) -> None:
    actor = Actor(organization_id="org_1", role=granter)
    if granted.rank > granter.rank:
        with pytest.raises(Forbidden):
            ensure_can_grant(actor, granted)
    else:
        ensure_can_grant(actor, granted)


@pytest.mark.parametrize("role", list(Role))
def test_services_check_permissions_themselves(platform, actor_as, role: Role) -> None:
    actor = actor_as(role)
    write_allowed = "vendor:create" in PERMISSIONS[role]
    if write_allowed:
        platform.vendors.create(actor, NewVendor(name="Hosting Co"))
    else:
        with pytest.raises(Forbidden):
            platform.vendors.create(actor, NewVendor(name="Hosting Co"))
    assert platform.vendors.list(actor_as(Role.OWNER)).total == (1 if write_allowed else 0)


def test_admin_cannot_create_an_owner_key_or_promote_to_owner(platform, actor_as) -> None:
    admin = actor_as(Role.ADMIN)
    with pytest.raises(Forbidden):
        platform.api_keys.create(admin, NewApiKey(name="escalate", role="owner"))
    with pytest.raises(Forbidden):
        platform.people.create(admin, NewPerson(name="Boss", email="boss@acme.test", role="owner"))
    assert platform.api_keys.create(admin, NewApiKey(name="peer", role="admin")).key.role is Role.ADMIN


def test_write_actions_are_denied_to_staff_roles() -> None:
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        assert not (PERMISSIONS[role] & WRITE_ACTIONS)
