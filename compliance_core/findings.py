"""Findings: the unified gaps view fed by audits, penetration tests, the device agent and
integrations. Creation and severity changes are events (webhooks announce them)."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, Protocol

import attrs

from .errors import ValidationError, require
from .events import DomainEvent, jsonable
from .idempotency import run_idempotent
from .pagination import Page, PageCache, PageRequest
from .permissions import Actor, authorize
from .uow import Tx, UnitOfWork
from .validation import Patch, Unset, blank_text, choice, optional_choice, optional_text, patch_field, text

__all__ = [
    "Severity",
    "FindingStatus",
    "FindingType",
    "FindingSource",
    "Finding",
    "NewFinding",
    "FindingPatch",
    "FindingFilter",
    "FindingRepository",
    "FindingService",
    "FINDING_CREATED",
    "FINDING_SEVERITY_CHANGED",
]

FINDING_CREATED = "finding.created"
FINDING_SEVERITY_CHANGED = "finding.severity_changed"


class Severity(enum.StrEnum):
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


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
    created_by: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    closed_at: dt.datetime | None = None


@attrs.frozen(kw_only=True)
class NewFinding:
    title: str = attrs.field(converter=text(255))
    severity: Severity = attrs.field(converter=choice(Severity))
    type: FindingType = attrs.field(default=FindingType.SOC2, converter=choice(FindingType))
    source: FindingSource = attrs.field(default=FindingSource.AUDIT, converter=choice(FindingSource))
    content: str = attrs.field(default="", converter=blank_text(5000))


_NEW = attrs.fields(NewFinding)


@attrs.frozen(kw_only=True)
class FindingPatch(Patch):
    title: str | Unset = patch_field(_NEW.title.converter)
    severity: Severity | Unset = patch_field(_NEW.severity.converter)
    type: FindingType | Unset = patch_field(_NEW.type.converter)
    status: FindingStatus | Unset = patch_field(choice(FindingStatus))
    content: str | None | Unset = patch_field(_NEW.content.converter)
    revision_note: str | None | Unset = patch_field(optional_text(2000))


@attrs.frozen(kw_only=True)
class FindingFilter:
    status: FindingStatus | None = attrs.field(default=None, converter=optional_choice(FindingStatus))
    severity: Severity | None = attrs.field(default=None, converter=optional_choice(Severity))
    type: FindingType | None = attrs.field(default=None, converter=optional_choice(FindingType))
    source: FindingSource | None = attrs.field(default=None, converter=optional_choice(FindingSource))

    def matches(self, finding: Finding) -> bool:
        return all(
            expected is None or getattr(finding, name) == expected
            for name, expected in attrs.asdict(self, recurse=False).items()
        )


class FindingRepository(Protocol):
    def revision(self, organization_id: str) -> int:
        """A number that grows whenever any of the organization's findings is added or changed,
        in the same transaction as the change: list pages are cached against it."""

    def add(self, finding: Finding) -> None: ...

    def get(self, organization_id: str, finding_id: str) -> Finding | None: ...

    def update(self, finding: Finding) -> None: ...

    def list(self, organization_id: str, filters: FindingFilter, page: PageRequest) -> tuple[list[Finding], int]: ...


@attrs.define
class FindingService:
    uow: UnitOfWork
    pages: PageCache = attrs.field(factory=PageCache)

    def list(self, actor: Actor, filters: FindingFilter | None = None, page: PageRequest | None = None) -> Page[Finding]:
        authorize(actor, "finding:read")
        filters = filters or FindingFilter()
        page = page or PageRequest()
        with self.uow.read() as session:
            return self.pages.fetch(session.findings, actor.organization_id, filters, page)

    def get(self, actor: Actor, finding_id: str) -> Finding:
        authorize(actor, "finding:read")
        with self.uow.read() as session:
            return require(session.findings.get(actor.organization_id, finding_id), "finding", finding_id)

    def create(self, actor: Actor, data: NewFinding, *, idempotency_key: str | None = None) -> Finding:
        authorize(actor, "finding:create")
        now = self.uow.clock.now()

        def create() -> Finding:
            finding = Finding(
                id=self.uow.ids.new("fnd"),
                organization_id=actor.organization_id,
                created_by=actor.principal,
                created_at=now,
                updated_at=now,
                **attrs.asdict(data, recurse=False),
            )
            tx.findings.add(finding)
            tx.record(DomainEvent(type=FINDING_CREATED, organization_id=actor.organization_id,
                                  subject_id=finding.id, data={"finding": jsonable(finding)}))
            return finding

        with self.uow.write() as tx:
            return run_idempotent(tx, actor, idempotency_key, "findings.create", data, now, create)

    def update(self, actor: Actor, finding_id: str, patch: FindingPatch) -> Finding:
        authorize(actor, "finding:update")
        changes = patch.changes()
        with self.uow.write() as tx:
            current = require(tx.findings.get(actor.organization_id, finding_id), "finding", finding_id)
            if not changes:
                return current
            return self._apply(tx, actor, current, changes)

    def close(self, actor: Actor, finding_id: str) -> Finding:
        authorize(actor, "finding:close")
        with self.uow.write() as tx:
            current = require(tx.findings.get(actor.organization_id, finding_id), "finding", finding_id)
            if current.status is FindingStatus.CLOSED:
                return current
            return self._apply(tx, actor, current, {"status": FindingStatus.CLOSED})

    def _apply(self, tx: Tx, actor: Actor, current: Finding, changes: dict[str, Any]) -> Finding:
        now = self.uow.clock.now()
        status = changes.get("status", current.status)
        if changes.get("revision_note") is not None and status is not FindingStatus.NEEDS_REVISION:
            raise ValidationError.field("revisionNote", changes["revision_note"],
                                        "only applies while status is needs_revision")
        if status is not FindingStatus.NEEDS_REVISION:
            changes["revision_note"] = None  # a note answers one revision request, no more
        if status is not current.status:
            changes["closed_at"] = now if status is FindingStatus.CLOSED else None
        updated = attrs.evolve(current, **changes, updated_at=now)
        tx.findings.update(updated)
        if updated.severity is not current.severity:
            tx.record(DomainEvent(
                type=FINDING_SEVERITY_CHANGED, organization_id=actor.organization_id, subject_id=updated.id,
                data={"findingId": updated.id, "previousSeverity": current.severity.value,
                      "severity": updated.severity.value, "finding": jsonable(updated)},
            ))
        return updated

