"""Organizations and their plans: the tenant every other record belongs to.

An organization has a profile (name, unique ``slug``, website), branding (logo, primary colour)
and settings, which its Owner and Admins edit, and one Owner: the person ``owner_person_id``
names. Ownership moves with ``transfer_ownership`` (Owner keys only): the new Owner must be an
active member who is not a contractor; they get the ``owner`` role, the previous Owner person
gets ``admin``, and the organization names the new one, all in one transaction.

API keys are not bound to people yet, so a transfer changes no key: an Owner key stays an Owner
key until it is revoked. Once keys act for a person, a key of the previous Owner should follow
that person's new role.

Creating one (an operator command or bootstrap: no caller inside the tenant yet) records
``organization.created`` as the system; changing its plan, profile, branding or settings records
``organization.updated`` with the caller. Both carry the organization's own id as their organization, so its audit trail
starts with its creation."""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import attrs

from ..kernel.directory import Directory, DirectoryPerson
from ..kernel.errors import Conflict, NotFound, ValidationError, require
from ..kernel.events import Event
from ..kernel.operations import operation
from ..kernel.permissions import MANAGERS, MEMBERS, OWNERS, Action, Actor, Role, authorize
from ..kernel.ratelimit import RateLimitPolicy
from ..kernel.records import changed
from ..kernel.registry import Area, Repo, Route
from ..kernel.rendering import WireView
from ..kernel.uow import Tx, UnitOfWork
from ..kernel.validation import Checked, Patch, Unset, boolean, choice, patch_field, register_schema, text, url

__all__ = [
    "Plan",
    "PLAN_LIMITS",
    "ENTERPRISE_DEFAULT",
    "Organization",
    "OrganizationRepository",
    "OrganizationService",
    "check_limits",
    "NewOrganization",
    "OrganizationPatch",
    "OwnerChange",
    "OwnershipTransfer",
    "ORGANIZATIONS",
    "ORGANIZATION_READ",
    "ORGANIZATION_UPDATE",
    "ORGANIZATION_EDIT",
    "ORGANIZATION_TRANSFER",
    "OrganizationCreated",
    "OrganizationUpdated",
    "OwnershipTransferred",
    "MemberRoleChanged",
    "AREA",
]


class Plan(enum.StrEnum):
    FREE = "free"
    STARTER = "starter"
    PROFESSIONAL = "professional"
    ENTERPRISE = "enterprise"


PLAN_LIMITS = {
    Plan.FREE: RateLimitPolicy(30, 60),
    Plan.STARTER: RateLimitPolicy(60, 120),
    Plan.PROFESSIONAL: RateLimitPolicy(300, 600),
}
# Used for an Enterprise organization until its negotiated figures are set.
ENTERPRISE_DEFAULT = RateLimitPolicy(1200, 2400)


def _rate_limit(organization: Organization, _: dt.datetime) -> dict[str, Any]:
    limit = organization.rate_limit
    return {"rateLimit": {"requestsPerMinute": limit.requests_per_minute, "burst": limit.burst}}


@attrs.frozen(kw_only=True)
class Organization:
    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"rate_limit_rpm", "rate_limit_burst"}), extra=_rate_limit)
    """Shows the effective limits, whatever plan they come from."""

    id: str
    name: str
    plan: Plan
    rate_limit_rpm: int | None = None
    rate_limit_burst: int | None = None
    slug: str | None = None
    """Unique among organizations (lower-case letters, digits and hyphens)."""
    website: str | None = None
    logo: str | None = None
    """The URL of the organization's logo."""
    primary_color: str | None = None
    """The brand colour, ``#rrggbb``."""
    evidence_approval_enabled: bool = False
    device_agent_step_enabled: bool = True
    security_training_step_enabled: bool = True
    advanced_mode_enabled: bool = False
    owner_person_id: str | None = None
    """The person who owns the organization (``transfer_ownership``); None until one is named."""
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def rate_limit(self) -> RateLimitPolicy:
        if self.plan is Plan.ENTERPRISE:
            return RateLimitPolicy(
                self.rate_limit_rpm or ENTERPRISE_DEFAULT.requests_per_minute,
                self.rate_limit_burst or ENTERPRISE_DEFAULT.burst,
            )
        return PLAN_LIMITS[self.plan]


@attrs.frozen(kw_only=True)
class NewOrganization:
    name: str = attrs.field(converter=text(200))
    plan: Plan = attrs.field(default=Plan.PROFESSIONAL, converter=choice(Plan))


_SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def _slug(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is None or isinstance(value, Unset):
        return value
    if not isinstance(value, str) or not 2 <= len(value) <= 64 or not _SLUG.fullmatch(value):
        raise ValidationError.field(
            "slug", value, "must be 2 to 64 lower-case letters, digits and single hyphens (acme-eu)"
        )
    return value


slug = register_schema(
    Checked(_slug, takes_field=True),
    {
        "type": "string",
        "minLength": 2,
        "maxLength": 64,
        "pattern": f"^{_SLUG.pattern}$",
        "nullable": True,
        "description": "unique among organizations",
    },
)
_COLOR = re.compile(r"#[0-9a-fA-F]{6}")


def _color(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is None or isinstance(value, Unset):
        return value
    if not isinstance(value, str) or not _COLOR.fullmatch(value):
        raise ValidationError.field("primaryColor", value, "must be a colour in the form #rrggbb")
    return value.lower()


color = register_schema(
    Checked(_color, takes_field=True),
    {
        "type": "string",
        "pattern": f"^{_COLOR.pattern}$",
        "nullable": True,
        "description": "a colour #rrggbb, stored in lower case",
    },
)


@attrs.frozen(kw_only=True)
class OrganizationPatch(Patch):
    """Profile, branding and settings (the plan changes through ``set_plan``, the Owner through
    ``transfer_ownership``)."""

    name: str | Unset = patch_field(text(200))
    slug: str | None | Unset = patch_field(slug)
    website: str | None | Unset = patch_field(url)
    logo: str | None | Unset = patch_field(url)
    primary_color: str | None | Unset = patch_field(color)
    evidence_approval_enabled: bool | Unset = patch_field(boolean)
    device_agent_step_enabled: bool | Unset = patch_field(boolean)
    security_training_step_enabled: bool | Unset = patch_field(boolean)
    advanced_mode_enabled: bool | Unset = patch_field(boolean)


@attrs.frozen(kw_only=True)
class OwnerChange:
    """One person's role before and after a transfer of ownership."""

    person_id: str
    previous_role: Role
    role: Role


@attrs.frozen(kw_only=True)
class OwnershipTransfer:
    """What a transfer did: the organization as it is now, the previous Owner person (None when
    none was named) and the new one, and the role of each: the previous Owner's first."""

    organization: Organization
    previous_owner_id: str | None
    new_owner_id: str
    roles: tuple[OwnerChange, ...]


class OrganizationRepository(Protocol):
    def add(self, organization: Organization) -> None: ...

    def get(self, organization_id: str) -> Organization | None: ...

    def find_slug(self, slug: str) -> Organization | None:
        """The organization with this slug, if any (slugs are unique)."""
        ...

    def update(self, organization: Organization) -> None: ...

    def count(self) -> int: ...

    def list_all(self) -> list[Organization]:
        """Every organization, oldest first (operators: ``compliance org list``)."""
        ...


ORGANIZATIONS: Repo[OrganizationRepository] = Repo("organizations")
ORGANIZATION_READ = Action("organization:read", MEMBERS)
ORGANIZATION_UPDATE = Action("organization:update", OWNERS)
"""The plan and its limits."""
ORGANIZATION_EDIT = Action("organization:edit", MANAGERS)
"""Profile, branding and settings."""
ORGANIZATION_TRANSFER = Action("organization:transfer_ownership", OWNERS)


class OwnershipTransferred(Event):
    """Ownership moved to another person (``transfer_ownership``); ``previous`` holds the previous
    ``ownerPersonId``. Each role it changed is a ``person.role_changed`` in the same transaction."""

    type = "organization.ownership_transferred"


class MemberRoleChanged(Event):
    """A person's role changed by a transfer of ownership; ``previous`` holds the old role. (The
    people area records ``person.updated`` for its own edits.)"""

    type = "person.role_changed"


class OrganizationCreated(Event):
    """An organization was created (bootstrap, or an operator's ``compliance org create``)."""

    type = "organization.created"


class OrganizationUpdated(Event):
    """An organization's plan, negotiated rate limits, profile, branding or settings changed."""

    type = "organization.updated"


def check_limits(plan: Plan, rpm: int | None, burst: int | None) -> tuple[int | None, int | None]:
    """Negotiated figures belong to Enterprise only; burst may never be below the rate."""
    for field, value in (("rpm", rpm), ("burst", burst)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
            raise ValidationError.field(field, value, "must be an integer from 1 to 1000000")
        if plan is not Plan.ENTERPRISE:
            raise ValidationError.field(field, value, "only the enterprise plan takes negotiated limits")
    if plan is Plan.ENTERPRISE:
        rpm = rpm or ENTERPRISE_DEFAULT.requests_per_minute
        burst = burst or 2 * rpm  # the published plans all allow twice their rate as burst
        if burst < rpm:
            raise ValidationError.field("burst", burst, "must be at least the requests per minute")
    return rpm, burst


_ONE = "/v1/organization"


@attrs.define
class OrganizationService:
    uow: UnitOfWork
    plan_changed: Callable[[], None] = lambda: None
    """Lets admission drop the rate-limit leases it holds under the old plan."""

    def create(
        self, name: str, plan: Plan | str = Plan.PROFESSIONAL, *, rpm: int | None = None, burst: int | None = None
    ) -> Organization:
        """Operator action (CLI, embedding app): there is no caller inside the tenant yet, so the
        write is the system's."""
        with self.uow.write(None) as tx:
            organization = self.new(name, plan, rpm=rpm, burst=burst)
            tx[ORGANIZATIONS].add(organization)
            tx.record(OrganizationCreated(organization_id=organization.id, subject=organization))
        return organization

    def new(self, name: str, plan: Plan | str, *, rpm: int | None, burst: int | None) -> Organization:
        data = NewOrganization(name=name, plan=plan)
        rpm, burst = check_limits(data.plan, rpm, burst)
        now = self.uow.clock.now()
        return Organization(
            id=self.uow.ids.new("org"),
            name=data.name,
            plan=data.plan,
            rate_limit_rpm=rpm,
            rate_limit_burst=burst,
            created_at=now,
            updated_at=now,
        )

    @operation(ORGANIZATION_READ, Route("GET", _ONE, "The calling key's organization"), result=Organization)
    def get(self, actor: Actor) -> Organization:
        with self.uow.read() as session:
            return require(session[ORGANIZATIONS].get(actor.organization_id), "organization", actor.organization_id)

    @operation(
        ORGANIZATION_EDIT,
        Route("PATCH", _ONE, "Change the organization's profile, branding or settings"),
        body=OrganizationPatch,
        result=Organization,
        example={"website": "https://acme.example", "primaryColor": "#0a7c5a"},
    )
    def update(self, actor: Actor, patch: OrganizationPatch) -> Organization:
        """Change the profile, branding or settings; a slug another organization holds is a
        ``Conflict``."""
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = require(tx[ORGANIZATIONS].get(actor.organization_id), "organization", actor.organization_id)
            previous = changed(current, changes)
            if not previous:
                return current
            if changes.get("slug") is not None and "slug" in previous:
                holder = tx[ORGANIZATIONS].find_slug(changes["slug"])
                if holder is not None and holder.id != current.id:
                    raise Conflict(
                        "another organization has this slug",
                        {"field": "slug", "value": changes["slug"], "reason": "already taken"},
                    )
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[ORGANIZATIONS].update(updated)
            tx.record(OrganizationUpdated(organization_id=current.id, subject=updated, previous=previous))
        return updated

    @operation(
        ORGANIZATION_TRANSFER,
        Route(
            "POST",
            _ONE + "/transfer-ownership/{person_id}",
            "Make a member the Owner; the previous Owner becomes an Admin (Owner only, one transaction)",
        ),
        result=OwnershipTransfer,
    )
    def transfer_ownership(self, actor: Actor, person_id: str) -> OwnershipTransfer:
        """Make the person the Owner, in one transaction: they get the ``owner`` role, the
        previous Owner person (if any) gets ``admin``, and the organization names the new one.

        The new Owner must be a person of the organization (else ``NotFound``), active and not a
        contractor (else ``Conflict``). Transferring to the current Owner changes nothing.
        """
        with self.uow.write(actor) as tx:
            current = require(tx[ORGANIZATIONS].get(actor.organization_id), "organization", actor.organization_id)
            target = Directory(tx).person(current.id, person_id)
            if target is None:
                raise NotFound.resource("person", person_id)
            if not target.is_active or target.role is Role.CONTRACTOR:
                raise Conflict(
                    "only an active member who is not a contractor can own the organization",
                    {
                        "field": "personId",
                        "value": person_id,
                        "reason": "is inactive" if not target.is_active else "is a contractor",
                    },
                )
            if current.owner_person_id == person_id and target.role is Role.OWNER:
                unchanged = OwnerChange(person_id=person_id, previous_role=Role.OWNER, role=Role.OWNER)
                return OwnershipTransfer(
                    organization=current, previous_owner_id=person_id, new_owner_id=person_id, roles=(unchanged,)
                )
            now = self.uow.clock.now()
            roles = []
            if current.owner_person_id is not None and current.owner_person_id != person_id:
                before = Directory(tx).person(current.id, current.owner_person_id)
                if before is not None and before.role is Role.OWNER:
                    roles.append(self._set_role(tx, current.id, before, Role.ADMIN, now))
            roles.append(self._set_role(tx, current.id, target, Role.OWNER, now))
            updated = attrs.evolve(current, owner_person_id=person_id, updated_at=now)
            tx[ORGANIZATIONS].update(updated)
            tx.record(
                OwnershipTransferred(
                    organization_id=current.id, subject=updated, previous={"owner_person_id": current.owner_person_id}
                )
            )
        return OwnershipTransfer(
            organization=updated,
            previous_owner_id=current.owner_person_id,
            new_owner_id=person_id,
            roles=tuple(roles),
        )

    @staticmethod
    def _set_role(tx: Tx, organization_id: str, person: DirectoryPerson, role: Role, now: dt.datetime) -> OwnerChange:
        if person.role is not role:
            updated = attrs.evolve(person, role=role, updated_at=now)
            Directory(tx).store_person(updated)
            tx.record(
                MemberRoleChanged(organization_id=organization_id, subject=updated, previous={"role": person.role})
            )
        return OwnerChange(person_id=person.id, previous_role=person.role, role=role)

    def set_plan(
        self, actor: Actor, plan: Plan | str, *, rpm: int | None = None, burst: int | None = None
    ) -> Organization:
        authorize(actor, ORGANIZATION_UPDATE)
        chosen: Plan = NewOrganization(name="-", plan=plan).plan
        rpm, burst = check_limits(chosen, rpm, burst)
        with self.uow.write(actor) as tx:
            current = require(tx[ORGANIZATIONS].get(actor.organization_id), "organization", actor.organization_id)
            previous = changed(current, {"plan": chosen, "rate_limit_rpm": rpm, "rate_limit_burst": burst})
            if not previous:
                return current
            updated = attrs.evolve(
                current,
                plan=chosen,
                rate_limit_rpm=rpm,
                rate_limit_burst=burst,
                updated_at=self.uow.clock.now(),
            )
            tx[ORGANIZATIONS].update(updated)
            tx.record(OrganizationUpdated(organization_id=updated.id, subject=updated, previous=previous))
        self.plan_changed()
        return updated


AREA = Area(
    name="organizations",
    tag="Organization",
    service=lambda context: OrganizationService(context.uow, plan_changed=context.flush_admission),
    api=OrganizationService,
    actions=(ORGANIZATION_READ, ORGANIZATION_UPDATE, ORGANIZATION_EDIT, ORGANIZATION_TRANSFER),
    events=(OrganizationCreated, OrganizationUpdated, OwnershipTransferred, MemberRoleChanged),
)
