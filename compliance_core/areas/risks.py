"""The risk register: each risk rated before and after treatment, with its treatment, owner and
links, and acceptance that lapses on its own.

Scores are stored beside the ratings they come from (``inherent_score`` = likelihood x impact,
``residual_score`` = residual likelihood x residual impact, 1 to 25, and their levels), set by
the service on every write: a list can then be filtered by level in the store, like any other
column, and every answer, event and export shows them without recomputing.

Accepting a risk is a decision with a shelf life: it records who accepted, when, the residual
score accepted and an expiry date. An acceptance lapses, and the risk returns to
``needs_review`` with a ``risk.acceptance_lapsed`` event, when its expiry date arrives (the sweep
``lapse_expired_acceptances``, run by the server and ``compliance maintenance``) or when a write
changes the residual score away from the one accepted (in that same write).
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, Protocol

import attrs

from ..kernel.errors import Conflict, ValidationError
from ..kernel.events import Event
from ..kernel.operations import Standard, operation
from ..kernel.pagination import MAX_PER_PAGE, PageCache, PageRequest
from ..kernel.permissions import EVERYONE, MANAGERS, Action, Actor
from ..kernel.records import Filter, Records, fetch
from ..kernel.registry import Area, Chore, Repo, Route, Session
from ..kernel.scales import Impact, Likelihood, RiskLevel, level, score
from ..kernel.uow import Tx, UnitOfWork
from ..kernel.validation import (
    Checked,
    Patch,
    Unset,
    blank_text,
    choice,
    id_list,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    required_date,
    text,
)

__all__ = [
    "RiskCategory",
    "RiskDepartment",
    "RiskStatus",
    "Treatment",
    "AcceptanceLapse",
    "Risk",
    "NewRisk",
    "RiskPatch",
    "RiskAcceptance",
    "RiskFilter",
    "RiskService",
    "RISKS",
    "RISK_READ",
    "RISK_CREATE",
    "RISK_UPDATE",
    "RISK_ARCHIVE",
    "RISK_ACCEPT",
    "RiskCreated",
    "RiskUpdated",
    "RiskArchived",
    "RiskRestored",
    "RiskScoreChanged",
    "RiskAccepted",
    "RiskAcceptanceLapsed",
    "MAX_LINKS",
    "AREA",
]

MAX_LINKS = 200
"""Most controls, and most tasks, one risk links to."""


class RiskCategory(enum.StrEnum):
    CUSTOMER = "customer"
    FRAUD = "fraud"
    GOVERNANCE = "governance"
    OPERATIONS = "operations"
    OTHER = "other"
    PEOPLE = "people"
    REGULATORY = "regulatory"
    REPORTING = "reporting"
    RESILIENCE = "resilience"
    TECHNOLOGY = "technology"
    VENDOR_MANAGEMENT = "vendor_management"


class RiskDepartment(enum.StrEnum):
    """The reference's departments (the same values people have)."""

    NONE = "none"
    ADMIN = "admin"
    GOV = "gov"
    HR = "hr"
    IT = "it"
    ITSM = "itsm"
    QMS = "qms"


class RiskStatus(enum.StrEnum):
    """``accepted`` is reached only through ``accept``; ``needs_review`` is where a lapsed
    acceptance lands (and may be set by hand). Archiving is separate (``archived``)."""

    OPEN = "open"
    PENDING = "pending"
    ACCEPTED = "accepted"
    NEEDS_REVIEW = "needs_review"
    CLOSED = "closed"


class Treatment(enum.StrEnum):
    ACCEPT = "accept"
    AVOID = "avoid"
    MITIGATE = "mitigate"
    TRANSFER = "transfer"


class AcceptanceLapse(enum.StrEnum):
    EXPIRED = "expired"
    RESIDUAL_CHANGED = "residual_changed"


@attrs.frozen(kw_only=True)
class Risk:
    id: str
    organization_id: str
    title: str
    description: str = ""
    category: RiskCategory = RiskCategory.OTHER
    department: RiskDepartment | None = None
    status: RiskStatus = RiskStatus.OPEN
    likelihood: Likelihood = Likelihood.VERY_UNLIKELY
    impact: Impact = Impact.INSIGNIFICANT
    residual_likelihood: Likelihood = Likelihood.VERY_UNLIKELY
    residual_impact: Impact = Impact.INSIGNIFICANT
    inherent_score: int = 1
    """likelihood x impact, 1 to 25; set by the service."""
    inherent_level: RiskLevel = RiskLevel.VERY_LOW
    residual_score: int = 1
    """residual likelihood x residual impact, 1 to 25; set by the service."""
    residual_level: RiskLevel = RiskLevel.VERY_LOW
    treatment_strategy: Treatment = Treatment.ACCEPT
    treatment_strategy_description: str = ""
    owner_id: str | None = None
    """A person of the organization."""
    control_ids: tuple[str, ...] = ()
    """Links to controls; not checked yet (no controls area exists)."""
    task_ids: tuple[str, ...] = ()
    """Links to tasks; not checked yet (no tasks area exists)."""
    accepted_by: str | None = None
    """Who accepted last (the key or user that called ``accept``)."""
    accepted_at: dt.datetime | None = None
    accepted_residual_score: int | None = None
    acceptance_expires_on: dt.date | None = None
    acceptance_note: str | None = None
    acceptance_lapsed_at: dt.datetime | None = None
    acceptance_lapse_reason: AcceptanceLapse | None = None
    archived: bool = False
    archived_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


_CREATED_AS = tuple(status for status in RiskStatus if status is not RiskStatus.ACCEPTED)


def _created_as(value: Any, field: attrs.Attribute) -> RiskStatus:
    """A new risk's status: any but ``accepted``, which only ``accept`` sets (it records who
    accepted, when, and until when). A rule about this one value, so it lives here, where the
    OpenAPI document reads it, and the document offers exactly the values a create takes."""
    if isinstance(value, RiskStatus) and value is not RiskStatus.ACCEPTED:
        return value
    if value == RiskStatus.ACCEPTED.value:
        raise _accept_through_accept()
    try:
        status = RiskStatus(value)
    except (ValueError, TypeError):
        raise ValidationError.field(
            "status", value, f"must be one of {', '.join(s.value for s in _CREATED_AS)}"
        ) from None
    return status


created_status = register_schema(
    Checked(_created_as, takes_field=True),
    {"type": "string", "enum": [status.value for status in _CREATED_AS]},
)


@attrs.frozen(kw_only=True)
class NewRisk:
    title: str = attrs.field(converter=text(255))
    description: str = attrs.field(default="", converter=blank_text(5000))
    category: RiskCategory = attrs.field(default=RiskCategory.OTHER, converter=choice(RiskCategory))
    department: RiskDepartment | None = attrs.field(default=None, converter=optional_choice(RiskDepartment))
    status: RiskStatus = attrs.field(default=RiskStatus.OPEN, converter=created_status)
    likelihood: Likelihood = attrs.field(default=Likelihood.VERY_UNLIKELY, converter=choice(Likelihood))
    impact: Impact = attrs.field(default=Impact.INSIGNIFICANT, converter=choice(Impact))
    residual_likelihood: Likelihood = attrs.field(default=Likelihood.VERY_UNLIKELY, converter=choice(Likelihood))
    residual_impact: Impact = attrs.field(default=Impact.INSIGNIFICANT, converter=choice(Impact))
    treatment_strategy: Treatment = attrs.field(default=Treatment.ACCEPT, converter=choice(Treatment))
    treatment_strategy_description: str = attrs.field(default="", converter=blank_text(5000))
    owner_id: str | None = attrs.field(default=None, converter=optional_id)
    control_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))
    task_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))


_NEW = attrs.fields(NewRisk)


@attrs.frozen(kw_only=True)
class RiskPatch(Patch):
    title: str | Unset = patch_field(_NEW.title.converter)
    description: str | None | Unset = patch_field(_NEW.description.converter)
    category: RiskCategory | Unset = patch_field(_NEW.category.converter)
    department: RiskDepartment | None | Unset = patch_field(_NEW.department.converter)
    status: RiskStatus | Unset = patch_field(choice(RiskStatus))
    """``accepted`` only where the risk already is accepted (the service checks): ``accept`` sets it."""
    likelihood: Likelihood | Unset = patch_field(_NEW.likelihood.converter)
    impact: Impact | Unset = patch_field(_NEW.impact.converter)
    residual_likelihood: Likelihood | Unset = patch_field(_NEW.residual_likelihood.converter)
    residual_impact: Impact | Unset = patch_field(_NEW.residual_impact.converter)
    treatment_strategy: Treatment | Unset = patch_field(_NEW.treatment_strategy.converter)
    treatment_strategy_description: str | None | Unset = patch_field(_NEW.treatment_strategy_description.converter)
    owner_id: str | None | Unset = patch_field(_NEW.owner_id.converter)
    control_ids: tuple[str, ...] | None | Unset = patch_field(_NEW.control_ids.converter)
    task_ids: tuple[str, ...] | None | Unset = patch_field(_NEW.task_ids.converter)


@attrs.frozen(kw_only=True)
class RiskAcceptance:
    """The body of ``accept``: until when the acceptance holds, and why."""

    expires_on: dt.date = attrs.field(converter=required_date)
    """The day the acceptance lapses (it holds until the day before); after today."""
    note: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class RiskFilter(Filter):
    """List filters, combined with AND; None means any. ``archived`` defaults to the live
    register; pass True for the archive."""

    status: RiskStatus | None = attrs.field(default=None, converter=optional_choice(RiskStatus))
    category: RiskCategory | None = attrs.field(default=None, converter=optional_choice(RiskCategory))
    department: RiskDepartment | None = attrs.field(default=None, converter=optional_choice(RiskDepartment))
    owner_id: str | None = attrs.field(default=None, converter=optional_id)
    treatment_strategy: Treatment | None = attrs.field(default=None, converter=optional_choice(Treatment))
    inherent_level: RiskLevel | None = attrs.field(default=None, converter=optional_choice(RiskLevel))
    residual_level: RiskLevel | None = attrs.field(default=None, converter=optional_choice(RiskLevel))
    archived: bool = False


RISKS: Records[Risk, RiskFilter] = Records(
    "risks",
    model=Risk,
    filters=RiskFilter,
    kind="risk",
    prefix="rsk",
    partition="archived",
    cached=True,
    facets=("status", "category", "department", "treatment_strategy", "inherent_level", "residual_level"),
)
RISK_READ = Action("risk:read", EVERYONE)
RISK_CREATE = Action("risk:create", MANAGERS)
RISK_UPDATE = Action("risk:update", MANAGERS)
RISK_ARCHIVE = Action("risk:archive", MANAGERS)
RISK_ACCEPT = Action("risk:accept", MANAGERS)


class MemberLookup(Protocol):
    """The port to the people area: whether an id is a person of the organization."""

    def get(self, organization_id: str, person_id: str) -> object | None: ...


class _Tenant(Protocol):
    @property
    def id(self) -> str: ...


class TenantList(Protocol):
    """The port to the organizations: the sweep visits each one."""

    def list_all(self) -> list[_Tenant]: ...


MEMBERS: Repo[MemberLookup] = Repo("people")
TENANTS: Repo[TenantList] = Repo("organizations")


class RiskCreated(Event):
    """A risk was added to the register."""

    type = "risk.created"


class RiskUpdated(Event):
    """Some of a risk's fields changed (``previous`` holds their old values); a score change is
    announced by ``risk.score_changed`` as well."""

    type = "risk.updated"


class RiskArchived(Event):
    """A risk was taken out of the register (kept in the archive)."""

    type = "risk.archived"


class RiskRestored(Event):
    """An archived risk was brought back into the register."""

    type = "risk.restored"


class RiskScoreChanged(Event):
    """One of the spec's webhook occasions: ``previous`` holds the old scores and levels, the
    subject the new ones."""

    type = "risk.score_changed"


class RiskAccepted(Event):
    """A risk was accepted (or its acceptance renewed): who, when, the residual score accepted and
    the expiry are on the risk."""

    type = "risk.accepted"


class RiskAcceptanceLapsed(Event):
    """The acceptance no longer holds (``acceptanceLapseReason``: expired or
    residual_changed); the risk is back in ``needs_review``."""

    type = "risk.acceptance_lapsed"


_SCORES = ("inherent_score", "inherent_level", "residual_score", "residual_level")


def scored(risk: Risk) -> Risk:
    """The risk with its scores and levels worked out from its ratings."""
    inherent = score(risk.likelihood, risk.impact)
    residual = score(risk.residual_likelihood, risk.residual_impact)
    return attrs.evolve(
        risk,
        inherent_score=inherent,
        inherent_level=level(inherent),
        residual_score=residual,
        residual_level=level(residual),
    )


def check_owner(session: Session, organization_id: str, owner_id: str | None) -> None:
    if owner_id is not None and session[MEMBERS].get(organization_id, owner_id) is None:
        raise ValidationError.field("ownerId", owner_id, "is not a person in this organization")


def _differences(current: Risk, updated: Risk) -> dict[str, Any]:
    """The previous values of every field the write changes (``updated_at`` aside)."""
    return {
        field.name: getattr(current, field.name)
        for field in attrs.fields(Risk)
        if field.name != "updated_at" and getattr(current, field.name) != getattr(updated, field.name)
    }


def _lapsed(risk: Risk, reason: AcceptanceLapse, now: dt.datetime) -> Risk:
    return attrs.evolve(
        risk,
        status=RiskStatus.NEEDS_REVIEW,
        acceptance_lapsed_at=now,
        acceptance_lapse_reason=reason,
        updated_at=now,
    )


_TABLE = Standard(RISKS, id="risk_id")
_ALL = "/v1/risks"
_ONE = "/v1/risks/{risk_id}"


@attrs.define
class RiskService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(RISK_READ, Route("GET", _ALL, "List the risk register"))
    create = _TABLE.create(
        RISK_CREATE,
        Route("POST", _ALL, "Register a risk", 201),
        body=NewRisk,
        event=RiskCreated,
        shape=scored,
        check=lambda service, tx, actor, risk: check_owner(tx, actor.organization_id, risk.owner_id),
        example={
            "title": "Laptop theft exposes customer data",
            "category": "technology",
            "likelihood": "possible",
            "impact": "major",
            "residualLikelihood": "unlikely",
            "residualImpact": "moderate",
            "treatmentStrategy": "mitigate",
        },
    )
    get = _TABLE.get(RISK_READ, Route("GET", _ONE, "Read one risk"))

    @operation(
        RISK_UPDATE,
        Route("PATCH", _ONE, "Change some of a risk's fields (scores follow the ratings)"),
        body=RiskPatch,
        result=Risk,
        example={"likelihood": "likely"},
    )
    def update(self, actor: Actor, risk_id: str, patch: RiskPatch) -> Risk:
        """Change some fields. Scores follow the ratings; a change of the residual score of an
        accepted risk lapses its acceptance in this same write."""
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = fetch(tx, RISKS, actor.organization_id, risk_id)
            if changes.get("status") is RiskStatus.ACCEPTED and current.status is not RiskStatus.ACCEPTED:
                raise _accept_through_accept()
            now = self.uow.clock.now()
            updated = scored(attrs.evolve(current, **changes, updated_at=now))
            if not _differences(current, updated):
                return current
            if "owner_id" in changes and updated.owner_id != current.owner_id:
                check_owner(tx, actor.organization_id, updated.owner_id)
            lapse = updated.status is RiskStatus.ACCEPTED and updated.residual_score != current.accepted_residual_score
            if lapse:
                updated = _lapsed(updated, AcceptanceLapse.RESIDUAL_CHANGED, now)
            self._write(tx, current, updated, RiskUpdated)
            if lapse:
                self._record(tx, RiskAcceptanceLapsed, current, updated, ("status", "acceptance_lapsed_at"))
        return updated

    @operation(
        RISK_ACCEPT,
        Route("POST", _ONE + "/accept", "Accept a risk until an expiry date, at its current residual score"),
        body=RiskAcceptance,
        result=Risk,
        example={"expiresOn": "2099-12-31", "note": "Within appetite until the office move"},
    )
    def accept(self, actor: Actor, risk_id: str, data: RiskAcceptance) -> Risk:
        """Accept the risk as it stands: records the caller, the time, the residual score and
        the expiry; the treatment becomes ``accept``. Accepting again renews the acceptance."""
        now = self.uow.clock.now()
        if data.expires_on <= now.date():
            raise ValidationError.field("expiresOn", data.expires_on.isoformat(), "must be after today")
        with self.uow.write(actor) as tx:
            current = fetch(tx, RISKS, actor.organization_id, risk_id)
            if current.archived:
                raise Conflict(
                    "an archived risk cannot be accepted; restore it first",
                    {"field": "archived", "value": True, "reason": "restore the risk before accepting it"},
                )
            if current.status is RiskStatus.CLOSED:
                raise Conflict(
                    "a closed risk cannot be accepted; reopen it first",
                    {"field": "status", "value": current.status.value, "reason": "reopen the risk before accepting it"},
                )
            updated = attrs.evolve(
                current,
                status=RiskStatus.ACCEPTED,
                treatment_strategy=Treatment.ACCEPT,
                accepted_by=actor.principal,
                accepted_at=now,
                accepted_residual_score=current.residual_score,
                acceptance_expires_on=data.expires_on,
                acceptance_note=data.note,
                acceptance_lapsed_at=None,
                acceptance_lapse_reason=None,
                updated_at=now,
            )
            self._write(tx, current, updated, RiskAccepted)
        return updated

    archive = _TABLE.archive(
        RISK_ARCHIVE,
        Route("POST", _ONE + "/archive", "Archive a risk (kept for audits, dropped from the register)"),
        event=RiskArchived,
    )
    restore = _TABLE.restore(
        RISK_ARCHIVE,
        Route("POST", _ONE + "/restore", "Bring an archived risk back into the register"),
        event=RiskRestored,
    )

    def lapse_expired_acceptances(self, now: dt.datetime | None = None) -> int:
        """Return every accepted risk whose acceptance has reached its expiry date to
        ``needs_review`` (one ``risk.acceptance_lapsed`` event each), in every organization,
        archived risks included; returns how many lapsed.

        An operator chore like the idempotency purge, not a caller's operation: the server's lead
        worker runs it periodically and ``compliance maintenance`` on demand. Running it twice,
        or from several processes, lapses each acceptance once: the check is inside the write.

        :param now: the time to judge expiry at (default: the platform's clock)
        """
        now = now or self.uow.clock.now()
        with self.uow.read() as session:
            tenants = [tenant.id for tenant in session[TENANTS].list_all()]
        lapsed = 0
        for organization_id in tenants:
            for archived in (False, True):
                lapsed += self._lapse_expired(organization_id, archived, now)
        return lapsed

    def _lapse_expired(self, organization_id: str, archived: bool, now: dt.datetime) -> int:
        today = now.date()
        filters = RiskFilter(status=RiskStatus.ACCEPTED, archived=archived)
        due: list[str] = []
        with self.uow.read() as session:
            number = 1
            while True:
                items, total = session[RISKS].list(
                    organization_id, filters, PageRequest(page=number, per_page=MAX_PER_PAGE)
                )
                due += [r.id for r in items if r.acceptance_expires_on is not None and r.acceptance_expires_on <= today]
                if number * MAX_PER_PAGE >= total or not items:
                    break
                number += 1
        if not due:
            return 0
        lapsed = 0
        with self.uow.write(None) as tx:  # the system's chore, no caller
            for risk_id in due:
                current = tx[RISKS].get(organization_id, risk_id)
                if (  # another write or sweep may have got there first
                    current is None
                    or current.status is not RiskStatus.ACCEPTED
                    or current.acceptance_expires_on is None
                    or current.acceptance_expires_on > today
                ):
                    continue
                updated = _lapsed(current, AcceptanceLapse.EXPIRED, now)
                tx[RISKS].update(updated)
                self._record(tx, RiskAcceptanceLapsed, current, updated, ("status", "acceptance_lapsed_at"))
                lapsed += 1
        return lapsed

    def _write(self, tx: Tx, current: Risk, updated: Risk, event: type[Event]) -> None:
        """Store the change and record its event, plus ``risk.score_changed`` when a score moved."""
        previous = _differences(current, updated)
        tx[RISKS].update(updated)
        tx.record(event(organization_id=current.organization_id, subject=updated, previous=previous))
        if current.inherent_score != updated.inherent_score or current.residual_score != updated.residual_score:
            self._record(tx, RiskScoreChanged, current, updated, _SCORES)

    @staticmethod
    def _record(tx: Tx, event: type[Event], current: Risk, updated: Risk, fields: tuple[str, ...]) -> None:
        previous = {name: getattr(current, name) for name in fields}
        tx.record(event(organization_id=current.organization_id, subject=updated, previous=previous))


def _accept_through_accept() -> ValidationError:
    return ValidationError.field(
        "status", RiskStatus.ACCEPTED.value, "is set by POST /v1/risks/{riskId}/accept, which records the acceptance"
    )


AREA = Area(
    name="risks",
    tag="Risks",
    service=lambda context: RiskService(context.uow, context.pages),
    api=RiskService,
    actions=(RISK_READ, RISK_CREATE, RISK_UPDATE, RISK_ARCHIVE, RISK_ACCEPT),
    records=(RISKS,),
    events=(
        RiskCreated,
        RiskUpdated,
        RiskArchived,
        RiskRestored,
        RiskScoreChanged,
        RiskAccepted,
        RiskAcceptanceLapsed,
    ),
    chores=(
        Chore(
            name="lapse expired risk acceptances",
            every=dt.timedelta(minutes=10),
            run=RiskService.lapse_expired_acceptances,
            report="lapsedRiskAcceptances",
            done="returned %d risk(s) whose acceptance expired to review",
        ),
    ),
)
