"""What the risk register stores and answers: the risk, its commands and filter, its table,
actions and events."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, MANAGERS, Action
from ...kernel.records import Filter, Records
from ...kernel.scales import Impact, Likelihood, RiskLevel, rated_filter, rating
from ...kernel.validation import (
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
    "EVENTS",
    "MAX_LINKS",
    "accept_through_accept",
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
    likelihood: Likelihood | None = None
    """None until rated: an unassessed risk is not the lowest risk."""
    impact: Impact | None = None
    residual_likelihood: Likelihood | None = None
    residual_impact: Impact | None = None
    inherent_score: int | None = None
    """likelihood x impact, 1 to 25, None while either is unrated; set by the service."""
    inherent_level: RiskLevel | None = None
    residual_score: int | None = None
    """residual likelihood x residual impact, 1 to 25, None while either is unrated; set by the service."""
    residual_level: RiskLevel | None = None
    rated: bool = False
    """Whether likelihood and impact are both rated (the inherent score exists); set by the
    service, so a list can find the unassessed risks (``rated=false``)."""
    treatment_strategy: Treatment = Treatment.ACCEPT
    treatment_strategy_description: str = ""
    owner_id: str | None = None
    """A person of the organization."""
    control_ids: tuple[str, ...] = ()
    """The controls that treat the risk: controls of the organization."""
    task_ids: tuple[str, ...] = ()
    """Links to tasks; not checked yet (no tasks area exists)."""
    accepted_by: str | None = None
    """Who accepted last (the key or user that called ``accept``)."""
    accepted_by_person_id: str | None = None
    """The person behind that key, if it is bound to one."""
    accepted_by_person_name: str | None = None
    """That person's name when they accepted."""
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


def _created_as(value: Any, field: attrs.Attribute[Any]) -> RiskStatus:
    """A new risk's status: any but ``accepted``, which only ``accept`` sets (it records who
    accepted, when, and until when). A rule about this one value, so it lives here, where the
    OpenAPI document reads it, and the document offers exactly the values a create takes."""
    if isinstance(value, RiskStatus) and value is not RiskStatus.ACCEPTED:
        return value
    if value == RiskStatus.ACCEPTED.value:
        raise accept_through_accept()
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
    likelihood: Likelihood | None = attrs.field(default=None, converter=rating(Likelihood))
    impact: Impact | None = attrs.field(default=None, converter=rating(Impact))
    residual_likelihood: Likelihood | None = attrs.field(default=None, converter=rating(Likelihood))
    residual_impact: Impact | None = attrs.field(default=None, converter=rating(Impact))
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
    likelihood: Likelihood | None | Unset = patch_field(_NEW.likelihood.converter)
    impact: Impact | None | Unset = patch_field(_NEW.impact.converter)
    residual_likelihood: Likelihood | None | Unset = patch_field(_NEW.residual_likelihood.converter)
    residual_impact: Impact | None | Unset = patch_field(_NEW.residual_impact.converter)
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
    rated: bool | None = attrs.field(
        default=None,
        converter=rated_filter(
            "false: the unassessed risks (likelihood or impact not rated, so no inherent score or level); "
            "true: the rated ones"
        ),
    )
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
    searchable=("title", "description"),
    sortable=("title", "inherent_score", "residual_score", "acceptance_expires_on", "updated_at"),
    ranged="created_at",
)
RISK_READ = Action("risk:read", EVERYONE)
RISK_CREATE = Action("risk:create", MANAGERS)
RISK_UPDATE = Action("risk:update", MANAGERS)
RISK_ARCHIVE = Action("risk:archive", MANAGERS)
RISK_ACCEPT = Action("risk:accept", MANAGERS)


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


EVENTS = (
    RiskCreated,
    RiskUpdated,
    RiskArchived,
    RiskRestored,
    RiskScoreChanged,
    RiskAccepted,
    RiskAcceptanceLapsed,
)


def accept_through_accept() -> ValidationError:
    return ValidationError.field(
        "status", RiskStatus.ACCEPTED.value, "is set by POST /v1/risks/{riskId}/accept, which records the acceptance"
    )
