"""Evidence: what a task's work leaves to show an auditor, as files, links or notes, each
versioned and dated by what it speaks of (``collectedAt``), with an expiry (``validUntil``).

Two areas share the ledger: ``evidence`` (tag Tasks) holds a task's evidence under
``/v1/tasks/{taskId}/attachments`` as the reference has it, and ``attachments`` (tag Attachments)
the organization's whole list, the upload naming its task in the body and the download by id.

Files live in the blob store (``kernel.blobs``), content-addressed and streamed; the records hold
what they are. Evidence names the controls it proves in its own ``controlIds`` (its task's,
unless given): valid evidence implements them, expired evidence makes them stale
(``kernel.links``), and keeping the link on the evidence lets the controls area link and unlink it
like any linkable record. Two chores keep expiry exact: ``expire`` marks evidence whose
``validUntil`` passed (its controls turn stale once), ``warn_expiring`` records
``evidence.expiring`` once per version some days before. See docs/evidence.md.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import attrs

from ...kernel.evidence_ledger import EvidenceLedger
from ...kernel.ids import IdGenerator
from ...kernel.links import Linkable, LinkState
from ...kernel.outcomes import EvidenceCollector, PassedCheck
from ...kernel.records import changed
from ...kernel.registry import Area, Chore
from ...kernel.subjects import Commentable
from ...kernel.uow import Context, Tx
from .ledger import NOTE_TYPE, task_of
from .models import (
    EVENTS,
    EVIDENCE,
    EVIDENCE_READ,
    EVIDENCE_VERSIONS,
    EVIDENCE_WRITE,
    MAX_INLINE_BYTES,
    Evidence,
    EvidenceCreated,
    EvidenceDeleted,
    EvidenceExpired,
    EvidenceExpiring,
    EvidenceFilter,
    EvidenceKind,
    EvidencePatch,
    EvidenceSettings,
    EvidenceSource,
    EvidenceUpdated,
    EvidenceVersion,
    EvidenceVersionAdded,
    NewAttachment,
    NewEvidence,
    NewVersion,
    TaskEvidenceFilter,
    VersionFilter,
)
from .service import SETTINGS_KEY, AttachmentService, EvidenceService

__all__ = [
    "EvidenceKind",
    "EvidenceSource",
    "Evidence",
    "EvidenceVersion",
    "NewEvidence",
    "NewAttachment",
    "NewVersion",
    "EvidencePatch",
    "EvidenceFilter",
    "TaskEvidenceFilter",
    "VersionFilter",
    "EvidenceSettings",
    "EvidenceService",
    "AttachmentService",
    "EVIDENCE",
    "EVIDENCE_VERSIONS",
    "EVIDENCE_READ",
    "EVIDENCE_WRITE",
    "MAX_INLINE_BYTES",
    "SETTINGS_KEY",
    "EvidenceCreated",
    "EvidenceUpdated",
    "EvidenceDeleted",
    "EvidenceVersionAdded",
    "EvidenceExpired",
    "EvidenceExpiring",
    "AREA",
    "ATTACHMENTS",
]


def _proves(evidence: Evidence, now: dt.datetime) -> LinkState:
    """Valid evidence implements its controls; evidence past its ``validUntil`` no longer does."""
    if evidence.expired or (evidence.valid_until is not None and evidence.valid_until <= now):
        return LinkState.EXPIRED
    return LinkState.DONE


def _collect(tx: Tx, ids: IdGenerator, check: PassedCheck) -> str:
    """Evidence a passing automated check collected (``kernel.outcomes``): a note of what it saw,
    source ``automation``, the next version of the check's earlier note while that exists."""
    organization_id, body = check.organization_id, check.note.encode()
    content: dict[str, Any] = {
        "note": check.note,
        "media_type": NOTE_TYPE,
        "size": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    earlier = tx[EVIDENCE].get(organization_id, check.evidence_id) if check.evidence_id is not None else None
    attachment_id = earlier.id if earlier is not None else ids.new(EVIDENCE.prefix)
    version = EvidenceVersion(
        id=ids.new(EVIDENCE_VERSIONS.prefix),
        organization_id=organization_id,
        attachment_id=attachment_id,
        task_id=check.task_id,
        version=earlier.version + 1 if earlier is not None else 1,
        kind=EvidenceKind.NOTE,
        **content,
        collected_at=check.collected_at,
        uploaded_by=check.created_by,
        uploaded_at=check.collected_at,
        created_at=check.collected_at,
        updated_at=check.collected_at,
    )
    tx[EVIDENCE_VERSIONS].add(version)
    fields: dict[str, Any] = {
        "version": version.version,
        "version_id": version.id,
        **content,
        "collected_at": check.collected_at,
    }
    fields |= {
        "valid_until": None,
        "expired": False,
        "uploaded_by": check.created_by,
        "uploaded_at": check.collected_at,
    }
    if earlier is not None:
        updated = attrs.evolve(earlier, **fields, updated_at=check.collected_at)
        tx[EVIDENCE].update(updated)
        previous = changed(earlier, fields)
        tx.record(EvidenceVersionAdded(organization_id=organization_id, subject=updated, previous=previous))
        return updated.id
    evidence = Evidence(
        id=attachment_id,
        organization_id=organization_id,
        task_id=check.task_id,
        kind=EvidenceKind.NOTE,
        title=check.title,
        description=check.reference,
        source=EvidenceSource.AUTOMATION,
        control_ids=task_of(tx, organization_id, check.task_id).control_ids,
        **fields,
        created_at=check.collected_at,
        updated_at=check.collected_at,
    )
    tx[EVIDENCE].add(evidence)
    tx.record(EvidenceCreated(organization_id=organization_id, subject=evidence))
    return evidence.id


def _service(context: Context) -> EvidenceService:
    service = EvidenceService(context.uow, context.pages, context)
    context.uow.react(service.react)
    return service


AREA = Area(
    name="evidence",
    tag="Tasks",
    service=_service,
    api=EvidenceService,
    actions=(EVIDENCE_READ, EVIDENCE_WRITE),
    records=(EVIDENCE, EVIDENCE_VERSIONS),
    events=EVENTS,
    links=(Linkable(kind="evidence", records=EVIDENCE, state=_proves, updated=EvidenceUpdated),),
    ports=(
        Commentable(kind="evidence", records=EVIDENCE, read=EVIDENCE_READ),
        EvidenceCollector(collect=_collect),
        EvidenceLedger(items=EVIDENCE, versions=EVIDENCE_VERSIONS),  # what an export reads
    ),
    chores=(
        Chore(
            name="mark expired evidence",
            every=dt.timedelta(minutes=10),
            run=EvidenceService.expire,
            report="expiredEvidence",
            done="marked %d evidence item(s) expired (their controls are stale)",
        ),
        Chore(
            name="warn of expiring evidence",
            every=dt.timedelta(hours=1),
            run=EvidenceService.warn_expiring,
            report="expiringEvidence",
            done="recorded evidence.expiring for %d evidence version(s)",
        ),
    ),
)
"""A task's evidence (``/v1/tasks/{taskId}/attachments``)."""

ATTACHMENTS = Area(
    name="attachments",
    tag="Attachments",
    service=lambda context: AttachmentService(context.uow, context.pages, context),
    api=AttachmentService,
    actions=(EVIDENCE_READ, EVIDENCE_WRITE),
)
"""The organization's attachments (``/v1/attachments``), over the same table."""
