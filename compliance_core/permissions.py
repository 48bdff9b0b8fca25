"""Who may do what: the one role -> action table, and the ``Actor`` every service call takes.

Every service method calls ``authorize`` itself, so an in-process caller meets exactly the same
403 as an HTTP caller. Auditor keys are read-only; only Owner and Admin manage API keys; nobody
hands out a role above their own (to a key or to a person).
"""

from __future__ import annotations

import enum
from typing import Literal

import attrs

from .errors import Forbidden, ValidationError

__all__ = ["Role", "Actor", "ACTIONS", "PERMISSIONS", "authorize", "can", "ensure_can_grant"]


class Role(enum.StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    AUDITOR = "auditor"
    EMPLOYEE = "employee"
    CONTRACTOR = "contractor"

    @classmethod
    def parse(cls, value: object, field: str = "role") -> "Role":
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

READ_ACTIONS = frozenset({"vendor:read", "person:read", "finding:read", "organization:read"})
WRITE_ACTIONS = frozenset(
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
KEY_ACTIONS = frozenset({"api_key:create", "api_key:read", "api_key:revoke"})
OWNER_ACTIONS = frozenset({"organization:update"})
ACTIONS = READ_ACTIONS | WRITE_ACTIONS | KEY_ACTIONS | OWNER_ACTIONS

PERMISSIONS: dict[Role, frozenset[str]] = {
    Role.OWNER: ACTIONS,
    Role.ADMIN: READ_ACTIONS | WRITE_ACTIONS | KEY_ACTIONS,
    Role.AUDITOR: READ_ACTIONS,
    # Staff see the registers they work with; findings are raised by owners and admins.
    Role.EMPLOYEE: frozenset({"vendor:read", "person:read", "finding:read", "organization:read"}),
    Role.CONTRACTOR: frozenset({"vendor:read", "finding:read"}),
}


@attrs.frozen(kw_only=True)
class Actor:
    """Who is calling: the organization is always taken from here, never from the request."""

    organization_id: str
    role: Role
    key_id: str | None = None
    user_id: str | None = None
    auth_type: Literal["api-key", "session", "local"] = "api-key"

    @property
    def principal(self) -> str:
        """What idempotency keys and audit trails are scoped to."""
        return self.key_id or self.user_id or f"local:{self.role}"


def can(role: Role, action: str) -> bool:
    return action in PERMISSIONS[role]


def authorize(actor: Actor, action: str) -> None:
    if action not in ACTIONS:  # a typo in a service must fail loudly, not deny quietly
        raise KeyError(action)
    if action not in PERMISSIONS[actor.role]:
        raise Forbidden(
            f"role {actor.role.value} may not {action}",
            {"action": action, "role": actor.role.value},
        )


def ensure_can_grant(actor: Actor, role: Role) -> None:
    if role.rank > actor.role.rank:
        raise Forbidden(
            f"role {actor.role.value} may not grant role {role.value}",
            {"role": role.value, "actorRole": actor.role.value},
        )
