"""Findings: the unified gaps view fed by audits, penetration tests, the device agent and
integrations. Creation and severity changes are events (webhooks announce them).

A finding's review is role-gated: only an Auditor, Admin or Owner closes one (``close``) or asks
for a revision (``request_revision``, always with a note); fixing it and marking it
``ready_for_review`` is a change the Owner or an Admin makes (``update``), never an auditor.
Links: the task and the control it was raised against (identifiers, not checked until those
areas exist) and the template it was made from (checked through ``TemplateLookup``). A finding made
from a template takes the template's content, title and severity wherever the body leaves them
out. A finding's history is its slice of the audit trail, newest first."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, Protocol

import attrs

from ..kernel.audit import AUDIT_LOG, AuditEntry, AuditFilter
from ..kernel.errors import Conflict, NotFound, ValidationError
from ..kernel.events import Event
from ..kernel.ids import IdGenerator
from ..kernel.links import Linkable, LinkState
from ..kernel.operations import Once, Standard, operation, page_of
from ..kernel.outcomes import FailedCheck, FindingRaiser
from ..kernel.page_cache import PageCache
from ..kernel.pages import Page, PageRequest
from ..kernel.permissions import EVERYONE, MANAGERS, READERS, Action, Actor
from ..kernel.records import Filter, Records, changed, fetch
from ..kernel.registers import Register
from ..kernel.registry import Area, Repo, Route, Session
from ..kernel.rendering import wire_name
from ..kernel.severities import Severity
from ..kernel.uow import Tx, UnitOfWork
from ..kernel.validation import (
    Patch,
    Unset,
    blank_text,
    choice,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    text,
)

__all__ = [
    "Severity",
    "FindingStatus",
    "FindingType",
    "FindingSource",
    "Finding",
    "NewFinding",
    "FindingPatch",
    "FindingFilter",
    "RevisionRequest",
    "FindingService",
    "FINDINGS",
    "FINDING_READ",
    "FINDING_CREATE",
    "FINDING_UPDATE",
    "FINDING_CLOSE",
    "FINDING_REVIEW",
    "FINDING_HISTORY",
    "FindingCreated",
    "FindingUpdated",
    "FindingSeverityChanged",
    "AREA",
]


class FindingStatus(enum.StrEnum):
    OPEN = "open"
    READY_FOR_REVIEW = "ready_for_review"
    NEEDS_REVISION = "needs_revision"
    CLOSED = "closed"


class FindingType(enum.StrEnum):
    """The framework the finding is raised against."""

    SOC2 = "soc2"
    ISO27001 = "iso27001"
    PCI_DSS = "pci_dss"
    HIPAA = "hipaa"
    GDPR = "gdpr"
    ISO9001 = "iso9001"
    ISO42001 = "iso42001"


class FindingSource(enum.StrEnum):
    AUDIT = "audit"
    PENETRATION_TEST = "penetration_test"
    DEVICE_AGENT = "device_agent"
    INTEGRATION = "integration"


@attrs.frozen(kw_only=True)
class Finding:
    id: str
    organization_id: str
    title: str
    severity: Severity
    status: FindingStatus = FindingStatus.OPEN
    type: FindingType = FindingType.SOC2
    source: FindingSource = FindingSource.AUDIT
    content: str = ""
    revision_note: str | None = None
    template_id: str | None = None
    task_id: str | None = None
    """The task the finding was raised against (not checked yet: no tasks area exists)."""
    control_id: str | None = None
    """The control it concerns: a control of the organization."""
    created_by: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    closed_at: dt.datetime | None = None


_TITLE = text(255)
_SEVERITY = choice(Severity)


@attrs.frozen(kw_only=True)
class NewFinding:
    title: str | None = attrs.field(default=None, converter=text(255, optional=True))
    """Required, unless ``template_id`` names a template: its title is taken then."""
    severity: Severity | None = attrs.field(default=None, converter=optional_choice(Severity))
    """Required, unless ``template_id`` names a template with a severity: that one is taken then."""
    type: FindingType = attrs.field(default=FindingType.SOC2, converter=choice(FindingType))
    source: FindingSource = attrs.field(default=FindingSource.AUDIT, converter=choice(FindingSource))
    content: str = attrs.field(default="", converter=blank_text(5000))
    template_id: str | None = attrs.field(default=None, converter=optional_id)
    """A finding template of the organization; its content is copied when ``content`` is empty."""
    task_id: str | None = attrs.field(default=None, converter=optional_id)
    control_id: str | None = attrs.field(default=None, converter=optional_id)


_NEW = attrs.fields(NewFinding)


@attrs.frozen(kw_only=True)
class FindingPatch(Patch):
    title: str | Unset = patch_field(_TITLE)
    severity: Severity | Unset = patch_field(_SEVERITY)
    type: FindingType | Unset = patch_field(_NEW.type.converter)
    status: FindingStatus | Unset = patch_field(choice(FindingStatus))
    content: str | None | Unset = patch_field(_NEW.content.converter)
    revision_note: str | None | Unset = patch_field(optional_text(2000))
    """Goes with ``status: needs_revision`` (required then); any other status clears it."""
    template_id: str | None | Unset = patch_field(_NEW.template_id.converter)
    task_id: str | None | Unset = patch_field(_NEW.task_id.converter)
    control_id: str | None | Unset = patch_field(_NEW.control_id.converter)


@attrs.frozen(kw_only=True)
class RevisionRequest:
    """The body of ``request_revision``: what has to change."""

    note: str = attrs.field(converter=text(2000))


@attrs.frozen(kw_only=True)
class FindingFilter(Filter):
    status: FindingStatus | None = attrs.field(default=None, converter=optional_choice(FindingStatus))
    severity: Severity | None = attrs.field(default=None, converter=optional_choice(Severity))
    type: FindingType | None = attrs.field(default=None, converter=optional_choice(FindingType))
    source: FindingSource | None = attrs.field(default=None, converter=optional_choice(FindingSource))
    task_id: str | None = attrs.field(default=None, converter=optional_id)
    control_id: str | None = attrs.field(default=None, converter=optional_id)


FINDINGS: Records[Finding, FindingFilter] = Records(
    "findings",
    model=Finding,
    filters=FindingFilter,
    kind="finding",
    prefix="fnd",
    cached=True,
    facets=("status", "severity", "type", "source"),
    searchable=("title", "content"),
    sortable=("title", "updated_at", "closed_at"),
    ranged="created_at",
)


class TemplateLookup(Protocol):
    """The port to the finding-templates area: a template's text and severity by id."""

    def get(self, organization_id: str, template_id: str) -> _Template | None: ...


class _Template(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def severity(self) -> Severity | None: ...


TEMPLATES: Repo[TemplateLookup] = Repo("finding_templates")
FINDING_READ = Action("finding:read", EVERYONE)
FINDING_CREATE = Action("finding:create", MANAGERS)
FINDING_UPDATE = Action("finding:update", MANAGERS)
FINDING_CLOSE = Action("finding:close", READERS)
"""Auditors close findings too (the reference's rule): closing is a verdict on the evidence."""
FINDING_REVIEW = Action("finding:request_revision", READERS)
FINDING_HISTORY = Action("finding_history:read", READERS)
"""A slice of the audit trail, which only Owners, Admins and Auditors read."""


class FindingCreated(Event):
    """A finding was raised. One of the spec's webhook occasions."""

    type = "finding.created"


class FindingUpdated(Event):
    """Some of a finding's fields changed (closing it included); ``previous`` holds their old values."""

    type = "finding.updated"


class FindingSeverityChanged(Event):
    """A finding's severity changed (recorded beside ``finding.updated``). One of the spec's
    webhook occasions; ``previous`` holds the old severity."""

    type = "finding.severity_changed"


_TABLE = Standard(FINDINGS, id="finding_id")
_REGISTER = Register(FINDINGS)
_ALL = "/v1/findings"
_ONE = "/v1/findings/{finding_id}"


@attrs.define
class FindingService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(FINDING_READ, Route("GET", _ALL, "List findings"))

    @operation(
        FINDING_CREATE,
        Route("POST", _ALL, "Raise a finding", 201),
        body=NewFinding,
        idempotent=True,
        result=Finding,
        example={"title": "TLS 1.0 enabled on the edge", "severity": "high"},
    )
    def create(self, actor: Actor, data: NewFinding, once: Once) -> Finding:
        now = self.uow.clock.now()

        def create() -> Finding:
            fields = attrs.asdict(data, recurse=False)
            if data.template_id is not None:
                template = _template(tx, actor.organization_id, data.template_id)
                fields["content"] = data.content or template.content
                fields["title"] = data.title if data.title is not None else template.title
                fields["severity"] = data.severity if data.severity is not None else template.severity
            missing = [
                ValidationError.field(wire_name(name), None, "is required unless templateId names a template giving it")
                for name in ("title", "severity")
                if fields[name] is None
            ]
            if missing:
                raise ValidationError.every(missing)
            finding = Finding(
                id=self.uow.ids.new(FINDINGS.prefix),
                organization_id=actor.organization_id,
                created_by=actor.principal,
                created_at=now,
                updated_at=now,
                **fields,
            )
            tx[FINDINGS].add(finding)
            tx.record(FindingCreated(organization_id=actor.organization_id, subject=finding))
            return finding

        with self.uow.write(actor) as tx:
            return once(tx, data, now, create)

    get = _TABLE.get(FINDING_READ, Route("GET", _ONE, "Read one finding"))
    export_csv, export_xlsx = _REGISTER.exports(FINDING_READ, _ALL, "findings")

    @operation(
        FINDING_UPDATE,
        Route("PATCH", _ONE, "Change a finding's status, severity, type, text or links"),
        body=FindingPatch,
        result=Finding,
        example={"severity": "critical"},
    )
    def update(self, actor: Actor, finding_id: str, patch: FindingPatch) -> Finding:
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = fetch(tx, FINDINGS, actor.organization_id, finding_id)
            if not changes:
                return current
            return self._apply(tx, actor, current, changes)

    @operation(
        FINDING_HISTORY,
        Route("GET", _ONE + "/history", "The finding's history: its audit trail, newest first"),
        paged=True,
        result=AuditEntry,
        lists=AUDIT_LOG,
    )
    def history(self, actor: Actor, finding_id: str, page: PageRequest | None = None) -> Page[AuditEntry]:
        """Every write to the finding (created, each change with its old and new values, closed),
        newest first, with who made it: the audit trail's entries of this finding."""
        try:
            history = AuditFilter(entity_type="finding", entity_id=finding_id)
        except ValidationError:  # no id of a finding is one the audit log's filter refuses
            raise NotFound.resource("finding", finding_id) from None
        return page_of(self, AUDIT_LOG, actor, history, page, under=(FINDINGS, finding_id))

    @operation(
        FINDING_CLOSE, Route("POST", _ONE + "/close", "Close a finding (auditor, admin or owner)"), result=Finding
    )
    def close(self, actor: Actor, finding_id: str) -> Finding:
        with self.uow.write(actor) as tx:
            current = fetch(tx, FINDINGS, actor.organization_id, finding_id)
            if current.status is FindingStatus.CLOSED:
                return current
            return self._apply(tx, actor, current, {"status": FindingStatus.CLOSED})

    @operation(
        FINDING_REVIEW,
        Route(
            "POST",
            _ONE + "/request-revision",
            "Send a finding back with a note on what must change (auditor, admin or owner)",
        ),
        body=RevisionRequest,
        result=Finding,
        example={"note": "The screenshot predates the audit period; attach a current one."},
    )
    def request_revision(self, actor: Actor, finding_id: str, data: RevisionRequest) -> Finding:
        """Send the finding back with a note saying what must change (``needs_revision``).
        Asking again replaces the note; a closed finding is reopened with ``update`` first."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, FINDINGS, actor.organization_id, finding_id)
            if current.status is FindingStatus.CLOSED:
                raise Conflict(
                    "a closed finding cannot be sent back; reopen it first",
                    {"field": "status", "value": current.status.value, "reason": "reopen the finding first"},
                )
            return self._apply(tx, actor, current, {"status": FindingStatus.NEEDS_REVISION, "revision_note": data.note})

    def _apply(self, tx: Tx, actor: Actor, current: Finding, changes: dict[str, Any]) -> Finding:
        now = self.uow.clock.now()
        status = changes.get("status", current.status)
        if changes.get("revision_note") is not None and status is not FindingStatus.NEEDS_REVISION:
            raise ValidationError.field(
                "revisionNote", changes["revision_note"], "only applies while status is needs_revision"
            )
        if status is not FindingStatus.NEEDS_REVISION:
            changes["revision_note"] = None  # a note answers one revision request, no more
        else:
            kept = current.revision_note if current.status is FindingStatus.NEEDS_REVISION else None
            if not changes.get("revision_note", kept):  # a revision request always says what to change
                raise ValidationError.field(
                    "revisionNote", changes.get("revision_note"), "is required while status is needs_revision"
                )
        if changes.get("template_id") is not None and changes["template_id"] != current.template_id:
            _template(tx, actor.organization_id, changes["template_id"])
        if status is not current.status:
            changes["closed_at"] = now if status is FindingStatus.CLOSED else None
        previous = changed(current, changes)
        if not previous:
            return current
        updated = attrs.evolve(current, **changes, updated_at=now)
        tx[FINDINGS].update(updated)
        tx.record(FindingUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        if "severity" in previous:
            tx.record(
                FindingSeverityChanged(
                    organization_id=actor.organization_id, subject=updated, previous={"severity": current.severity}
                )
            )
        return updated


def _template(session: Session, organization_id: str, template_id: str) -> _Template:
    template = session[TEMPLATES].get(organization_id, template_id)
    if template is None:
        raise ValidationError.field("templateId", template_id, "is not a finding template of this organization")
    return template


def _raise_for_check(tx: Tx, ids: IdGenerator, check: FailedCheck) -> str:
    """The finding of a failed automated check (``kernel.outcomes``): the one its earlier
    failures opened while that is not closed, else a new one (source ``integration``)."""
    if check.open_finding_id is not None:
        known = tx[FINDINGS].get(check.organization_id, check.open_finding_id)
        if known is not None and known.status is not FindingStatus.CLOSED:
            return known.id
    finding = Finding(
        id=ids.new(FINDINGS.prefix),
        organization_id=check.organization_id,
        title=check.title,
        severity=check.severity,
        source=FindingSource.INTEGRATION,
        content=check.content,
        task_id=check.task_id,
        created_by=check.created_by,
        created_at=check.at,
        updated_at=check.at,
    )
    tx[FINDINGS].add(finding)
    tx.record(FindingCreated(organization_id=check.organization_id, subject=finding))
    return finding.id


def _resolve_for_check(tx: Tx, organization_id: str, finding_id: str, now: dt.datetime) -> None:
    """Close the finding a check opened, now that the check passes (``kernel.outcomes``)."""
    finding = tx[FINDINGS].get(organization_id, finding_id)
    if finding is None or finding.status is FindingStatus.CLOSED:
        return
    closed = attrs.evolve(finding, status=FindingStatus.CLOSED, closed_at=now, revision_note=None, updated_at=now)
    tx[FINDINGS].update(closed)
    tx.record(
        FindingUpdated(
            organization_id=organization_id,
            subject=closed,
            previous=changed(finding, {"status": FindingStatus.CLOSED, "closed_at": now, "revision_note": None}),
        )
    )


AREA = Area(
    name="findings",
    tag="Findings",
    service=lambda context: FindingService(context.uow, context.pages),
    api=FindingService,
    actions=(FINDING_READ, FINDING_CREATE, FINDING_UPDATE, FINDING_CLOSE, FINDING_REVIEW, FINDING_HISTORY),
    records=(FINDINGS,),
    events=(FindingCreated, FindingUpdated, FindingSeverityChanged),
    links=(
        Linkable(
            kind="finding",
            records=FINDINGS,
            state=lambda finding, now: LinkState.CONTEXT,
            updated=FindingUpdated,
            field="control_id",
        ),
    ),
    ports=(FindingRaiser(raise_=_raise_for_check, resolve=_resolve_for_check),),
)
"""A finding names the control it concerns; it tells about the control and implements nothing."""
