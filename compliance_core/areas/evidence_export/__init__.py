"""Evidence exports: a task's or an organization's evidence as a ZIP an auditor can verify byte
for byte.

Two areas, as the spec groups them: **Evidence Export** (a task's evidence summarised, and its
ZIP) and **Evidence Export (Auditor)** (the organization's ZIP, now or as a job the worker builds
with its progress, the instance's public key and the verification of an export sent back), the
second readable by Auditor, Admin and Owner only. ``bundle`` writes the ZIP (reproducible,
streamed, signed), ``redaction`` takes secrets out of JSON evidence, ``verify`` checks an export,
``pdf`` lays out a task's summary through the PDF port, ``automation_report`` a task automation's
evidence (alone, and inside the task's ZIP). See docs/evidence-export.md and docs/evidence.md.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.registry import Area, Chore
from ...kernel.uow import Context
from .models import (
    EVENTS,
    EVIDENCE_EXPORTS,
    EXPORT_AUDIT,
    EXPORT_KEY,
    EXPORT_READ,
    EvidenceExport,
    EvidenceExportCompleted,
    EvidenceExportFailed,
    EvidenceExportRequested,
    EvidenceExportStarted,
    ExportFilter,
    ExportQuery,
    ExportStatus,
    NewEvidenceExport,
    PublicKey,
    TaskEvidence,
    TaskExportQuery,
    Verification,
    VerifyExport,
)
from .redaction import REDACTED, is_secret_key, redact, redact_json
from .service import AuditorExportService, EvidenceExportService, Exporter

__all__ = [
    "EvidenceExport",
    "ExportStatus",
    "ExportFilter",
    "ExportQuery",
    "TaskExportQuery",
    "NewEvidenceExport",
    "VerifyExport",
    "Verification",
    "PublicKey",
    "TaskEvidence",
    "EvidenceExportService",
    "AuditorExportService",
    "Exporter",
    "EVIDENCE_EXPORTS",
    "EXPORT_READ",
    "EXPORT_AUDIT",
    "EXPORT_KEY",
    "EvidenceExportRequested",
    "EvidenceExportStarted",
    "EvidenceExportCompleted",
    "EvidenceExportFailed",
    "REDACTED",
    "is_secret_key",
    "redact",
    "redact_json",
    "AREA",
    "AUDITOR",
]


def _exporter(context: Context) -> Exporter:
    return context.share("evidence_export", lambda: Exporter(context))


AREA = Area(
    name="evidence_export",
    tag="Evidence Export",
    service=lambda context: EvidenceExportService(context.uow, _exporter(context)),
    api=EvidenceExportService,
    actions=(EXPORT_READ,),
)
"""A task's evidence (``/v1/tasks/{taskId}/evidence...``)."""

AUDITOR = Area(
    name="evidence_export_auditor",
    tag="Evidence Export (Auditor)",
    service=lambda context: AuditorExportService(context.uow, context.pages, _exporter(context)),
    api=AuditorExportService,
    actions=(EXPORT_AUDIT, EXPORT_KEY),
    records=(EVIDENCE_EXPORTS,),
    events=EVENTS,
    chores=(
        Chore(
            name="build evidence exports",
            every=dt.timedelta(seconds=30),
            run=AuditorExportService.build_exports,
            report="builtEvidenceExports",
            done="built %d evidence export(s)",
        ),
    ),
)
"""The organization's evidence (``/v1/evidence-export/...``): Auditor, Admin and Owner."""
