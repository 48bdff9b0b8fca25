"""Who may do what: roles, the actions areas declare, and the ``Actor`` every service call takes.

Each area declares its actions next to its operations (``Action("vendor:read", EVERYONE)``), so
the role -> action table is the union of those declarations (``permission_table``) and no hub
file grows with every area. Every service method calls ``authorize`` itself, so an in-process
caller meets exactly the same 403 as an HTTP caller. Auditor keys are read-only; only Owner and
Admin manage API keys; nobody hands out a role above their own (to a key or to a person).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Literal

import attrs

from .errors import Forbidden, ValidationError

__all__ = [
    "Role",
    "Actor",
    "Action",
    "EVERYONE",
    "MEMBERS",
    "READERS",
    "MANAGERS",
    "OWNERS",
    "authorize",
    "can",
    "ensure_can_grant",
    "permission_table",
]


class Role(enum.StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    AUDITOR = "auditor"
    EMPLOYEE = "employee"
    CONTRACTOR = "contractor"

    @classmethod
    def parse(cls, value: object, field: str = "role") -> Role:
        """Accept the wire value or its capitalised display name ("Owner")."""
        if isinstance(value, str):
            try:
                return cls(value.lower())
            except ValueError:
                pass
        raise ValidationError.field(field, value, f"must be one of {', '.join(r.value for r in cls)}")

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Role.OWNER: 4, Role.ADMIN: 3, Role.AUDITOR: 2, Role.EMPLOYEE: 1, Role.CONTRACTOR: 0}

EVERYONE = frozenset(Role)
"""Every key of the organization, contractors included."""
MEMBERS = frozenset({Role.OWNER, Role.ADMIN, Role.AUDITOR, Role.EMPLOYEE})
"""Staff and auditors: contractors do not see the organization's people or settings."""
READERS = frozenset({Role.OWNER, Role.ADMIN, Role.AUDITOR})
"""Those who read everything, auditors included, but not staff."""
MANAGERS = frozenset({Role.OWNER, Role.ADMIN})
"""Those who change the organization's records and manage its keys."""
OWNERS = frozenset({Role.OWNER})


@attrs.frozen
class Action:
    """A permission an operation needs, with the roles that hold it.

    >>> VENDOR_READ = Action("vendor:read", EVERYONE)
    """

    name: str
    roles: frozenset[Role]

    def __str__(self) -> str:
        return self.name


@attrs.frozen(kw_only=True)
class Actor:
    """Who is calling: the organization is always taken from here, never from the request."""

    organization_id: str
    role: Role
    key_id: str | None = None
    user_id: str | None = None
    person_id: str | None = None
    """The person this caller acts as (a person-bound key, later a session): it signs policies
    as that person and reads that person's own items."""
    person_name: str | None = None
    """That person's name as admission read it (None: not read; ``directory.acting_name``
    reads it then), so what the caller signs, accepts, approves and writes shows who they are."""
    auth_type: Literal["api-key", "session", "local"] = "api-key"
    key_issued_by: str | None = None
    """Who issued the caller's key (the issuing principal): signatures made with it show it."""
    key_issued_by_person_id: str | None = None
    """The person the issuing key acted as, if any."""
    self_issued: bool = False
    """The caller's key is its person's own (``ApiKey.self_issued``)."""

    @property
    def as_own_person(self) -> bool:
        """Whether the caller may take the decisions reserved to its person: a key of the
        person's own, or no key at all (an in-process caller, or a session, is the person
        itself). A key someone else bound to the person only acts for them where it is seen."""
        return self.person_id is not None and (self.key_id is None or self.self_issued)

    @property
    def principal(self) -> str:
        """What idempotency keys and audit trails are scoped to."""
        return self.key_id or self.user_id or f"local:{self.role}"


def can(role: Role, action: Action) -> bool:
    return role in action.roles


def authorize(actor: Actor, action: Action) -> None:
    if actor.role not in action.roles:
        raise Forbidden(
            f"role {actor.role.value} may not {action.name}",
            {"action": action.name, "role": actor.role.value},
        )


def ensure_can_grant(actor: Actor, role: Role) -> None:
    if role.rank > actor.role.rank:
        raise Forbidden(
            f"role {actor.role.value} may not grant role {role.value}",
            {"role": role.value, "actorRole": actor.role.value},
        )


def permission_table(actions: Iterable[Action]) -> dict[Role, frozenset[str]]:
    """Role -> the names of the actions it holds, for documentation and the access matrix."""
    actions = list(actions)
    return {role: frozenset(a.name for a in actions if role in a.roles) for role in Role}
