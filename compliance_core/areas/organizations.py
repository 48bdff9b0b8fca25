"""Organizations and their plans: the tenant every other record belongs to.

Creating one (an operator command or bootstrap: no caller inside the tenant yet) records
``organization.created`` as the system; changing its plan records ``organization.updated`` with
the caller. Both carry the organization's own id as their organization, so its audit trail
starts with its creation."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import attrs

from ..kernel.errors import ValidationError, require
from ..kernel.events import Event
from ..kernel.permissions import MEMBERS, OWNERS, Action, Actor, authorize
from ..kernel.ratelimit import RateLimitPolicy
from ..kernel.records import changed
from ..kernel.registry import Area, Operation, Repo
from ..kernel.rendering import WireView
from ..kernel.uow import UnitOfWork
from ..kernel.validation import choice, text

__all__ = [
    "Plan",
    "PLAN_LIMITS",
    "ENTERPRISE_DEFAULT",
    "Organization",
    "OrganizationRepository",
    "OrganizationService",
    "check_limits",
    "NewOrganization",
    "ORGANIZATIONS",
    "ORGANIZATION_READ",
    "ORGANIZATION_UPDATE",
    "OrganizationCreated",
    "OrganizationUpdated",
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


class OrganizationRepository(Protocol):
    def add(self, organization: Organization) -> None: ...

    def get(self, organization_id: str) -> Organization | None: ...

    def update(self, organization: Organization) -> None: ...

    def count(self) -> int: ...

    def list_all(self) -> list[Organization]:
        """Every organization, oldest first (operators: ``compliance org list``)."""
        ...


ORGANIZATIONS: Repo[OrganizationRepository] = Repo("organizations")
ORGANIZATION_READ = Action("organization:read", MEMBERS)
ORGANIZATION_UPDATE = Action("organization:update", OWNERS)


class OrganizationCreated(Event):
    """An organization was created (bootstrap, or an operator's ``compliance org create``)."""

    type = "organization.created"


class OrganizationUpdated(Event):
    """An organization's plan or negotiated rate limits changed."""

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

    def get(self, actor: Actor) -> Organization:
        authorize(actor, ORGANIZATION_READ)
        with self.uow.read() as session:
            return require(session[ORGANIZATIONS].get(actor.organization_id), "organization", actor.organization_id)

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
    service=lambda context: OrganizationService(context.uow, plan_changed=context.flush_admission),
    actions=(ORGANIZATION_READ, ORGANIZATION_UPDATE),
    events=(OrganizationCreated, OrganizationUpdated),
    operations=(Operation(name="organizations.get", action=ORGANIZATION_READ, result=Organization),),
)
