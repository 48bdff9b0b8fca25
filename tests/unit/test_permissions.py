from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_core import Forbidden, Role
from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import API_KEY_CREATE, NewApiKey
from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import VENDOR_CREATE, VENDOR_READ, NewVendor
from compliance_core.kernel.permissions import Action, Actor, authorize, can, ensure_can_grant, permission_table
from compliance_core.kernel.registry import Area, Operation

# There is no global action table any more: each area declares its actions, and the role table is
# their union.
ACTIONS = [action for area in AREAS for action in area.actions]
TABLE = permission_table(ACTIONS)
READS = frozenset({"vendor:read", "person:read", "finding:read", "organization:read"})
WRITES = frozenset(
    {
        "vendor:create",
        "vendor:update",
        "vendor:archive",
        "person:create",
        "person:update",
        "finding:create",
        "finding:update",
        "finding:close",
    }
)
KEYS = frozenset({"api_key:create", "api_key:read", "api_key:revoke"})

roles = st.sampled_from(list(Role))
actions = st.sampled_from(ACTIONS)


def test_the_role_table_is_the_one_before_actions_moved_into_the_areas() -> None:
    known = READS | WRITES | KEYS | {"organization:update"}
    assert known <= {action.name for action in ACTIONS}
    assert {role: names & known for role, names in TABLE.items()} == {
        Role.OWNER: READS | WRITES | KEYS | {"organization:update"},
        Role.ADMIN: READS | WRITES | KEYS,
        Role.AUDITOR: READS | {"finding:close"},  # issue 10: auditors close findings (the reference's rule)
        Role.EMPLOYEE: READS,
        Role.CONTRACTOR: frozenset({"vendor:read", "finding:read"}),
    }


def test_action_names_are_unique_across_areas() -> None:
    """Two areas may share one action (evidence and attachments guard the same records), never
    two different actions one name."""
    distinct = set(ACTIONS)
    assert len({action.name for action in distinct}) == len(distinct), sorted(action.name for action in ACTIONS)


@given(role=roles, action=actions)
def test_authorize_denies_exactly_what_the_table_denies(role: Role, action: Action) -> None:
    actor = Actor(organization_id="org_1", role=role)
    assert can(role, action) == (action.name in TABLE[role])
    if can(role, action):
        authorize(actor, action)
    else:
        with pytest.raises(Forbidden) as caught:
            authorize(actor, action)
        assert caught.value.details == {"action": action.name, "role": role.value}


AUDIT_VERDICTS = frozenset({"finding:close", "finding:request_revision", "comment:write", "evidence_export:audit"})
"""What an auditor writes: the verdict on a finding (issue 10, the reference's rule), comments on
what they examine, and the evidence exports they audit from (issue 20: the auditor's export)."""


def test_auditor_is_read_only_but_for_the_verdict_on_findings() -> None:
    assert all(action.endswith(":read") for action in TABLE[Role.AUDITOR] - AUDIT_VERDICTS)
    assert TABLE[Role.AUDITOR] >= AUDIT_VERDICTS


def test_only_owner_and_admin_manage_keys() -> None:
    holders = {role for role, allowed in TABLE.items() if API_KEY_CREATE.name in allowed}
    assert holders == {Role.OWNER, Role.ADMIN}


# Replaces "an unknown action is a KeyError": actions are objects now, so a typo in a service is a
# NameError at import. What remains to check is that every operation needs an action its own
# area declares, which the Area constructor enforces.
@pytest.mark.parametrize("area", AREAS, ids=[area.name for area in AREAS])
def test_every_operation_needs_an_action_its_area_declares(area: Area) -> None:
    assert area.operations
    for operation in area.operations:
        assert operation.area == area.name
        assert operation.action is not None and operation.action in area.actions, operation.name


def test_an_area_refuses_an_operation_with_an_undeclared_action() -> None:
    with pytest.raises(ValueError, match="vendor:read"):
        Area(
            name="vendors",
            service=lambda context: None,
            operations=(Operation(name="vendors.get", action=VENDOR_READ),),
        )
    with pytest.raises(ValueError, match="declared in area"):
        Area(
            name="people",
            service=lambda context: None,
            actions=(VENDOR_READ,),
            operations=(Operation(name="vendors.get", action=VENDOR_READ),),
        )


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
    write_allowed = can(role, VENDOR_CREATE)
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


SELF_SERVICE = {"policy:acknowledge", "comment:write"}
"""The only writes staff make: signing as the person their key acts as, and commenting on what
they can see."""


def test_write_actions_are_denied_to_staff_roles() -> None:
    writes = {action.name for action in ACTIONS if not action.name.endswith(":read")}
    assert writes >= WRITES
    assert TABLE[Role.AUDITOR] & writes <= AUDIT_VERDICTS
    for role in (Role.EMPLOYEE, Role.CONTRACTOR):
        assert TABLE[role] & writes == SELF_SERVICE
