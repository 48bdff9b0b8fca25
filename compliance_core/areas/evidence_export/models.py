"""What the evidence export areas store and answer: the export job, its commands and queries,
the summary of a task's evidence, a verification, the public key; the table, actions, events."""

from __future__ import annotations

import datetime as dt
import enum

import attrs

from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.uploads import Upload, file_content
from ...kernel.validation import boolean, optional_choice, optional_text, timestamp

__all__ = [
    "ExportStatus",
    "EvidenceExport",
    "ExportFilter",
    "ExportQuery",
    "TaskExportQuery",
    "NewEvidenceExport",
    "VerifyExport",
    "Verification",
    "PublicKey",
    "TaskEvidence",
    "EvidenceVersionSummary",
    "EvidenceSummaryItem",
    "EVIDENCE_EXPORTS",
    "EXPORT_READ",
    "EXPORT_AUDIT",
    "EXPORT_KEY",
    "MAX_VERIFY_INLINE_BYTES",
    "EvidenceExportRequested",
    "EvidenceExportStarted",
    "EvidenceExportCompleted",
    "EvidenceExportFailed",
    "EVENTS",
]

MAX_VERIFY_INLINE_BYTES = 6 * 1024 * 1024
"""The largest export sent inline (base64) to ``verify``; a larger one is sent as multipart."""


class ExportStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@attrs.frozen(kw_only=True)
class EvidenceExport:
    """An organization's export for a framework and a period, built later by the worker.

    What it holds is fixed by its fields (and the records as they are when it is built): the
    same fields over the same records build the same bytes, so its ``sha256`` is the same."""

    id: str
    organization_id: str
    framework_id: str | None = None
    """Only the tasks of this framework (made from its templates, or serving one of its controls)."""
    collected_from: dt.datetime | None = None
    """Only evidence versions collected at or after this."""
    collected_to: dt.datetime | None = None
    """Only evidence versions collected before this."""
    as_of: dt.datetime | None = None
    """Only evidence versions added at or before this; written in the manifest."""
    include_json: bool = True
    status: ExportStatus = ExportStatus.QUEUED
    tasks_total: int = 0
    tasks_done: int = 0
    """Progress: the tasks packed so far, of ``tasks_total``."""
    sha256: str | None = None
    size: int | None = None
    """Of the ZIP, once built."""
    error: str | None = None
    requested_by: str | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class ExportFilter(Filter):
    status: ExportStatus | None = attrs.field(default=None, converter=optional_choice(ExportStatus))


@attrs.frozen(kw_only=True)
class ExportQuery(Filter):
    """The query of a ZIP download (``includeJson`` as in the reference): an organization's may
    also name a framework, a period of collection and a point in time."""

    include_json: bool | None = None
    """JSON evidence, redacted (default true); false leaves JSON evidence out."""
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    collected_from: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    collected_to: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    as_of: dt.datetime | None = attrs.field(default=None, converter=timestamp)


@attrs.frozen(kw_only=True)
class TaskExportQuery(Filter):
    """The query of a task's ZIP (``includeJson`` as in the reference, and a point in time)."""

    include_json: bool | None = None
    """JSON evidence, redacted (default true); false leaves JSON evidence out."""
    as_of: dt.datetime | None = attrs.field(default=None, converter=timestamp)


@attrs.frozen(kw_only=True)
class NewEvidenceExport:
    """What an organization export covers (every field may be left out: all of it, now)."""

    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    collected_from: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    collected_to: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    as_of: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    include_json: bool = attrs.field(default=True, converter=boolean)


@attrs.frozen(kw_only=True)
class VerifyExport:
    """An export to check: ``fileData`` in base64, or the file part of a multipart request."""

    file_data: str | Upload = attrs.field(converter=file_content(MAX_VERIFY_INLINE_BYTES, required=True))
    file_name: str | None = attrs.field(default=None, converter=optional_text(255))


@attrs.frozen(kw_only=True)
class Verification:
    valid: bool
    problems: tuple[str, ...] = ()
    """Each thing found wrong, in words (empty when valid)."""
    files: int = 0
    """Files the manifest lists."""
    fingerprint: str | None = None
    """Of the key the manifest names; valid only when it is this instance's key."""


@attrs.frozen(kw_only=True)
class PublicKey:
    """The instance's public key, which every export's ``manifest.sig`` is checked against."""

    algorithm: str
    public_key_pem: str
    fingerprint: str


@attrs.frozen(kw_only=True)
class EvidenceVersionSummary:
    id: str
    version: int
    kind: str
    file_name: str | None = None
    media_type: str | None = None
    size: int | None = None
    sha256: str | None = None
    url: str | None = None
    collected_at: dt.datetime
    valid_until: dt.datetime | None = None
    uploaded_at: dt.datetime


@attrs.frozen(kw_only=True)
class EvidenceSummaryItem:
    id: str
    title: str
    kind: str
    source: str
    versions: tuple[EvidenceVersionSummary, ...]
    """Oldest first; the last is the current one."""
    total_versions: int
    latest_collected_at: dt.datetime | None = None


@attrs.frozen(kw_only=True)
class TaskEvidence:
    """A task's evidence at a glance (``GET /v1/tasks/{taskId}/evidence``)."""

    task_id: str
    task_title: str
    organization_id: str
    organization_name: str
    evidence: tuple[EvidenceSummaryItem, ...]
    total_items: int
    total_versions: int
    expired_items: int
    """Items whose current version's ``validUntil`` has passed."""
    exported_at: dt.datetime


EVIDENCE_EXPORTS: Records[EvidenceExport, ExportFilter] = Records(
    "evidence_exports",
    model=EvidenceExport,
    filters=ExportFilter,
    kind="evidence export",
    prefix="exp",
    newest_first=True,
)
EXPORT_READ = Action("evidence_export:read", READERS)
"""A task's evidence, summarised or packed."""
EXPORT_AUDIT = Action("evidence_export:audit", READERS)
"""The organization's evidence in one ZIP, its jobs and the verification: Auditor, Admin, Owner."""
EXPORT_KEY = Action("signing_key:read", EVERYONE)
"""The instance's public key: not a secret; anyone of the organization may check an export."""


class EvidenceExportRequested(Event):
    """An organization export was asked for; the worker builds it (``data`` is the job)."""

    type = "evidence_export.requested"


class EvidenceExportStarted(Event):
    """The worker took up an organization export (or took up again one whose process died):
    ``data`` is the job, ``running``. Its progress that follows is the job's bookkeeping and
    records no event."""

    type = "evidence_export.started"


class EvidenceExportCompleted(Event):
    """An organization export was built; ``data`` holds its ``sha256`` and ``size``."""

    type = "evidence_export.completed"


class EvidenceExportFailed(Event):
    """An organization export could not be built; ``data.error`` says why."""

    type = "evidence_export.failed"


EVENTS: tuple[type[Event], ...] = (
    EvidenceExportRequested,
    EvidenceExportStarted,
    EvidenceExportCompleted,
    EvidenceExportFailed,
)
