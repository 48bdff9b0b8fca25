"""The statement of applicability: its numbered documents, the rows an approved one froze, the
bodies callers send, the tables, the permissions and the events.

An organization works on one statement per enabled framework. Its working rows are the
framework's ``CONTROL_REQUIREMENTS`` rows (kept by the controls area, which also keeps each row's
control status); a ``SoaDocument`` is a numbered version of that statement moving from ``draft``
through ``needs_review`` to ``approved``. Approval copies the working rows into ``SOA_ROWS``,
which nothing updates again, and pins the organization's context as it was, so an auditor reads
what was decided and on what grounds even after the working rows moved on.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import attrs

from ....kernel.errors import ValidationError
from ....kernel.events import Event
from ....kernel.permissions import MANAGERS, READERS, Action
from ....kernel.records import Filter, Records
from ....kernel.validation import (
    Checked,
    blank_text,
    optional_choice,
    optional_id,
    optional_text,
    register_schema,
    text,
)
from ..control_models import ControlStatus, Driver

__all__ = [
    "SoaStatus",
    "SoaDocument",
    "SoaDocumentFilter",
    "SoaRow",
    "SoaRowFilter",
    "SoaRowQuery",
    "NewSoaDocument",
    "MarkApplicable",
    "MarkNotApplicable",
    "Justify",
    "SubmitSoa",
    "ApproveSoa",
    "DeclineSoa",
    "SOA_DOCUMENTS",
    "SOA_ROWS",
    "SOA_READ",
    "SOA_WRITE",
    "SOA_APPROVE",
    "OPEN",
    "SoaCreated",
    "SoaRowUpdated",
    "SoaSubmitted",
    "SoaApproved",
    "SoaDeclined",
    "EVENTS",
]

MAX_JUSTIFICATION = 5000


class SoaStatus(enum.StrEnum):
    DRAFT = "draft"
    """Being worked on: its rows are the live ones and may be marked."""
    NEEDS_REVIEW = "needs_review"
    """Submitted to a named approver; nothing may be marked until approved or declined."""
    APPROVED = "approved"
    """Decided (the reference platform's ``completed``): its rows are frozen copies."""
    SUPERSEDED = "superseded"
    """Left undecided when a newer version was started: kept for the record, never decided."""


OPEN = frozenset({SoaStatus.DRAFT, SoaStatus.NEEDS_REVIEW})
"""The states of a version not yet decided: a framework has at most one such version (starting
a new one supersedes it)."""


@attrs.frozen(kw_only=True)
class SoaDocument:
    """One numbered version of an organization's statement for one framework."""

    id: str
    organization_id: str
    framework_id: str
    framework_name: str = ""
    """The framework's name when the version was made, so an export reads without the catalogue."""
    version: int
    status: SoaStatus = SoaStatus.DRAFT
    approver_id: str | None = None
    """The person (an active owner or admin) named to decide; cleared by a decline."""
    submitted_at: dt.datetime | None = None
    submitted_by: str | None = None
    """The person who submitted it, or the key when no person acted."""
    decided_at: dt.datetime | None = None
    """When it was last approved or declined."""
    decided_by: str | None = None
    """The person (or key) who approved or declined it."""
    decided_by_name: str | None = None
    """That person's name as it was then (None: a key acting as no person decided)."""
    comment: str | None = None
    """The approver's comment on approving."""
    decline_reason: str | None = None
    """Why the last decline sent it back (kept until the next submission)."""
    context_snapshot_id: str | None = None
    """The organization's context snapshot the approval was decided on (None: no context yet)."""
    context_taken_at: dt.datetime | None = None
    row_count: int = 0
    """Rows of the statement; with the two counts below, set at approval."""
    applicable_count: int = 0
    implemented_count: int = 0
    """Applicable rows whose control was implemented at approval."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class SoaDocumentFilter(Filter):
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    status: SoaStatus | None = attrs.field(default=None, converter=optional_choice(SoaStatus))


@attrs.frozen(kw_only=True)
class SoaRow:
    """One requirement's line of a statement: frozen in ``SOA_ROWS`` for an approved version,
    read from the working rows (with their own id) for an open one."""

    id: str
    organization_id: str
    document_id: str
    framework_id: str
    requirement_id: str
    label: str
    title: str
    control_id: str
    control_status: ControlStatus = ControlStatus.NOT_STARTED
    applicable: bool = True
    justification: str = ""
    drivers: tuple[Driver, ...] = ()
    risk_ids: tuple[str, ...] = ()
    """The risks linked to the row's control (the risk driver an auditor traces)."""
    evidence_ids: tuple[str, ...] = ()
    """The evidence linked to the row's control."""
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class SoaRowFilter(Filter):
    """The store's filter of frozen rows; the service sets ``document_id`` from the path."""

    document_id: str | None = None
    control_status: ControlStatus | None = attrs.field(default=None, converter=optional_choice(ControlStatus))
    applicable: bool | None = None


@attrs.frozen(kw_only=True)
class SoaRowQuery(Filter):
    """The filters a caller gives a statement's rows, open or approved alike."""

    applicable: bool | None = None
    control_status: ControlStatus | None = attrs.field(default=None, converter=optional_choice(ControlStatus))


SOA_DOCUMENTS: Records[SoaDocument, SoaDocumentFilter] = Records(
    "soa_documents",
    model=SoaDocument,
    filters=SoaDocumentFilter,
    kind="statement of applicability",
    prefix="soa",
    newest_first=True,
    sortable=("version", "updated_at"),
)
SOA_ROWS: Records[SoaRow, SoaRowFilter] = Records(
    "soa_rows",
    model=SoaRow,
    filters=SoaRowFilter,
    kind="row of an approved statement of applicability",
    prefix="soar",
    searchable=("label", "title", "justification"),
    sortable=("label", "control_status"),
    indexed=("label", "control_status"),
    within="document_id",
)

SOA_READ = Action("soa:read", READERS)
SOA_WRITE = Action("soa:write", MANAGERS)
SOA_APPROVE = Action("soa:approve", MANAGERS)
"""Approving or declining: Owners and Admins (a person-bound key must be the named approver's)."""


def _drivers(value: Any, field: attrs.Attribute[Any]) -> tuple[Driver, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field("drivers", value, "must be a list of drivers")
    if len(value) > len(Driver):
        raise ValidationError.field("drivers", len(value), f"at most {len(Driver)} entries")
    found: list[Driver] = []
    for index, item in enumerate(value):
        try:
            driver = Driver(item)
        except (ValueError, TypeError):
            allowed = ", ".join(member.value for member in Driver)
            raise ValidationError.field(f"drivers[{index}]", item, f"must be one of {allowed}") from None
        if driver not in found:
            found.append(driver)
    return tuple(found)


drivers = register_schema(
    Checked(_drivers, takes_field=True),
    {
        "type": "array",
        "maxItems": len(Driver),
        "nullable": True,
        "items": {"type": "string", "enum": [member.value for member in Driver]},
        "description": "why the requirement is applied; a repeat is kept once; null means none",
    },
)


@attrs.frozen(kw_only=True)
class NewSoaDocument:
    framework_id: str = attrs.field(converter=text(100))


@attrs.frozen(kw_only=True)
class MarkApplicable:
    drivers: tuple[Driver, ...] = attrs.field(converter=drivers)
    """Sent even when empty: applying a requirement says why, by a driver or a justification."""
    justification: str = attrs.field(default="", converter=blank_text(MAX_JUSTIFICATION))
    """Required when no risk, legal or contractual driver applies (best practice alone, or none)."""


@attrs.frozen(kw_only=True)
class MarkNotApplicable:
    justification: str = attrs.field(converter=text(MAX_JUSTIFICATION))
    """Why the requirement is excluded: an exclusion without one is refused."""


@attrs.frozen(kw_only=True)
class Justify:
    justification: str = attrs.field(converter=text(MAX_JUSTIFICATION))


@attrs.frozen(kw_only=True)
class SubmitSoa:
    approver_id: str | None = attrs.field(default=None, converter=optional_id)
    """The active owner or admin who decides (None: any owner or admin decides)."""


@attrs.frozen(kw_only=True)
class ApproveSoa:
    comment: str = attrs.field(converter=text(2000))


@attrs.frozen(kw_only=True)
class DeclineSoa:
    reason: str = attrs.field(converter=text(2000))
    """What to change: a decline always says."""


class SoaCreated(Event):
    """A new version of a framework's statement was started (a draft), by a caller or by enabling
    the framework."""

    type = "soa.created"


class SoaRowUpdated(Event):
    """A working row of the statement was marked or justified (the subject is the framework's
    requirement row); ``previous`` holds its old applicability, drivers and justification."""

    type = "soa.row_updated"


class SoaSubmitted(Event):
    """A draft statement was submitted to its named approver."""

    type = "soa.submitted"


class SoaApproved(Event):
    """A submitted statement was approved: its rows are frozen and the context pinned."""

    type = "soa.approved"


class SoaDeclined(Event):
    """A submitted statement was sent back to draft with the approver's reason."""

    type = "soa.declined"


class SoaSuperseded(Event):
    """An undecided version was left behind by a newer one; ``previous`` holds its old status."""

    type = "soa.superseded"


EVENTS: tuple[type[Event], ...] = (SoaCreated, SoaRowUpdated, SoaSubmitted, SoaApproved, SoaDeclined, SoaSuperseded)
