"""The two export areas' operations, and the ``Exporter`` they share.

The Evidence Export area answers for one task (its evidence summarised, its ZIP); the Evidence
Export (Auditor) area for the whole organization (its ZIP now, or as a job built by the worker),
the instance's public key and the verification of an export sent back. Tasks and controls are
read through the tables their areas offer as ``Commentable`` (what an export reads of them is
``_task`` and ``_control``), evidence through the ``EvidenceLedger`` port, task automations and
their runs through handles on the automations area's tables (``automation_report``), files from
the blob store and the key from the signing port: no other area is imported.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from ...kernel.blobs import blobs_of
from ...kernel.context_history import port_of
from ...kernel.directory import Directory, every
from ...kernel.errors import InternalError, ServiceUnavailable, ValidationError
from ...kernel.evidence_ledger import EvidenceLedger, LedgerEntry
from ...kernel.operations import Once, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import Records, fetch
from ...kernel.registry import Accepted, Download, Route, Session
from ...kernel.signing import signer_of
from ...kernel.subjects import commentables
from ...kernel.uow import Context, UnitOfWork
from ...kernel.uploads import content_of
from .automation_report import automation_document, automation_of, automations_of
from .bundle import (
    Contents,
    ExportedAutomation,
    ExportedControl,
    ExportedTask,
    automation_path,
    export_chunks,
    summary_path,
    wire_time,
)
from .models import (
    EVIDENCE_EXPORTS,
    EXPORT_AUDIT,
    EXPORT_KEY,
    EXPORT_READ,
    EvidenceExport,
    EvidenceExportCompleted,
    EvidenceExportFailed,
    EvidenceExportRequested,
    EvidenceExportStarted,
    EvidenceSummaryItem,
    EvidenceVersionSummary,
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
from .pdf import SummaryDocument, SummaryPdf, cell, load_renderer, markdown_text
from .verify import spool, verify

__all__ = ["Exporter", "EvidenceExportService", "AuditorExportService", "STALE_AFTER"]

ZIP = "application/zip"
PDF = "application/pdf"
FIXED_DATE = dt.datetime(1980, 1, 1, tzinfo=dt.UTC)
"""The date a summary PDF says it was made when no ``asOf`` was asked for: the export's bytes
must not depend on the moment it is made."""
STALE_AFTER = dt.timedelta(minutes=15)
"""A job running without progress for this long is taken as abandoned (its process died) and
built again by the next sweep."""
_RENDER_TRIES = 30
SYNCHRONOUS_PDFS = 60
RETRY_BUILDING = 30
"""Seconds a caller of an unbuilt large export's download is told to wait."""
"""The most PDFs (task summaries and automation reports) an export renders while its caller
waits: about eight seconds of rendering. A larger export is a job, built in the background."""


@attrs.define
class Exporter:
    """Reads what an export holds and writes it (one per platform, shared by both areas)."""

    context: Context
    renderer: Callable[[], SummaryPdf] = load_renderer
    _pdf: SummaryPdf | None = attrs.field(default=None, init=False)

    def apart(self) -> Exporter:
        """An exporter with a renderer of its own, for a build in the background: its PDFs never
        take the renderer the server's requests use (which would answer them 503, busy)."""
        return Exporter(self.context, self.renderer)

    def close(self) -> None:
        """Stop the renderer's workers, if it started any."""
        close = getattr(self._pdf, "close", None)
        if close is not None:
            close()
        self._pdf = None

    def _table(self, kind: str) -> Records[Any, Any]:
        for port in commentables(self.context.ports):
            if port.kind == kind:
                return port.records
        raise InternalError(f"this platform has no {kind}s to export")

    def task(self, session: Session, organization_id: str, task_id: str) -> ExportedTask:
        return _task(fetch(session, self._table("task"), organization_id, task_id))

    def contents(
        self,
        session: Session,
        organization_id: str,
        tasks: list[ExportedTask],
        scope: Mapping[str, Any],
        *,
        include_json: bool,
        framework_id: str | None = None,
        collected_from: dt.datetime | None = None,
        collected_to: dt.datetime | None = None,
        as_of: dt.datetime | None = None,
        automations: bool = True,
    ) -> Contents:
        """What the export of ``tasks`` holds, read in ``session``; for a framework, only the tasks
        of that framework (made from its templates, or serving one of its controls). Without
        ``automations``, the tasks' automations are not read (a summary does not show them)."""
        controls_table = self._table("control")
        controls: dict[str, ExportedControl] = {}
        for control_id in sorted({c for task in tasks for c in task.control_ids}):
            record = session[controls_table].get(organization_id, control_id)
            if record is not None:
                controls[control_id] = _control(record)
        if framework_id is not None:
            tasks = [
                task
                for task in tasks
                if task.framework_id == framework_id
                or any(framework_id in controls[c].framework_ids for c in task.control_ids if c in controls)
            ]
            kept = {c for task in tasks for c in task.control_ids}
            controls = {key: control for key, control in controls.items() if key in kept}
        frameworks = {task.framework_id for task in tasks if task.framework_id} | {
            f for control in controls.values() for f in control.framework_ids
        }
        if framework_id is not None:
            frameworks &= {framework_id}
        ledger = port_of(self.context.ports, EvidenceLedger)
        entries: list[LedgerEntry] = []
        if ledger is not None:
            entries = [
                entry
                for entry in ledger.versions_of(session, organization_id, [task.id for task in tasks])
                if (as_of is None or entry.uploaded_at <= as_of)
                and (collected_from is None or entry.collected_at >= collected_from)
                and (collected_to is None or entry.collected_at < collected_to)
            ]
        blobs = blobs_of(self.context) if any(e.kind == "file" for e in entries) else None
        missing = frozenset(
            e.sha256
            for e in entries
            if e.kind == "file" and e.sha256 and blobs and not blobs.exists(organization_id, e.sha256)
        )
        organization = Directory(session).organization(organization_id)
        return Contents(
            organization_id=organization_id,
            organization_name=organization.name if organization is not None else organization_id,
            scope=dict(scope),
            include_json=include_json,
            tasks=tuple(sorted(tasks, key=lambda t: t.id)),
            controls=tuple(controls[key] for key in sorted(controls)),
            framework_ids=tuple(sorted(frameworks)),
            evidence=tuple(entries),
            missing=missing,
            automations=automations_of(session, organization_id, tasks, as_of) if automations else (),
        )

    def organization_tasks(
        self, session: Session, organization_id: str, as_of: dt.datetime | None
    ) -> list[ExportedTask]:
        table = self._table("task")
        assert table.filters is not None
        return [
            _task(record)
            for record in every(session[table], organization_id, table.filters())
            if as_of is None or record.created_at <= as_of
        ]

    def chunks(
        self,
        contents: Contents,
        summaries: Mapping[str, bytes] | None = None,
        progress: Callable[[int], None] | None = None,
        *,
        patient: bool = False,
    ) -> Iterator[bytes]:
        """The ZIP; each PDF (a task's summary, an automation's report) from ``summaries`` (by its
        path in the ZIP, rendered beforehand) or rendered as its entry is written (``patient``:
        waiting for a busy renderer instead of failing)."""
        rendered = summaries or {}

        def summary(task: ExportedTask) -> bytes:
            found = rendered.get(summary_path(task.id))
            return found if found is not None else self.summary(contents, task, patient=patient)

        def report(automation: ExportedAutomation) -> bytes:
            found = rendered.get(automation_path(automation))
            return found if found is not None else self.packed_report(contents, automation, patient=patient)

        return export_chunks(
            contents, lambda: blobs_of(self.context), signer_of(self.context), summary, progress, report
        )

    def summaries(self, contents: Contents) -> dict[str, bytes]:
        """Every PDF of the export by its path (each task's summary, each automation's report),
        rendered now (so a busy renderer refuses before the answer starts)."""
        rendered = {summary_path(task.id): self.summary(contents, task) for task in contents.tasks}
        for automation in contents.automations:
            rendered[automation_path(automation)] = self.packed_report(contents, automation)
        return rendered

    def summary(self, contents: Contents, task: ExportedTask, *, patient: bool = False) -> bytes:
        date = contents.scope.get("asOf")
        generated = _export_date(contents)
        document = SummaryDocument(
            name=task.title,
            description=task.description,
            content=_summary_text(contents, task),
            published_at=generated,
            organization=contents.organization_name,
            head=(
                f"Task {task.id}",
                f"Status: {task.status}" + (f", due {task.due_date.isoformat()}" if task.due_date else ""),
                f"Evidence summary of {contents.organization_name}" + (f" as of {date}" if date else ""),
            ),
        )
        return self._render(f"Task {task.id}", document, generated, patient=patient)

    def packed_report(self, contents: Contents, automation: ExportedAutomation, *, patient: bool = False) -> bytes:
        """An automation's PDF inside an export: dated as the export's summaries are."""
        generated = _export_date(contents)
        document = automation_document(
            automation, contents.organization_name, generated, as_of=contents.scope.get("asOf")
        )
        return self._render(f"Automation {automation.id}", document, generated, patient=patient)

    def report(self, automation: ExportedAutomation, organization: str) -> bytes:
        """An automation's PDF on its own: dated by the newest of its records, so the same
        records give the same bytes."""
        generated = automation.latest_change
        document = automation_document(automation, organization, generated)
        return self._render(f"Automation {automation.id}", document, generated, patient=False)

    def _render(self, title: str, document: SummaryDocument, generated: dt.datetime, *, patient: bool) -> bytes:
        if self._pdf is None:
            self._pdf = self.renderer()
        for attempt in range(_RENDER_TRIES if patient else 1):
            try:
                return self._pdf.render(title, [document], generated)
            except ServiceUnavailable:
                if attempt + 1 >= (_RENDER_TRIES if patient else 1):
                    raise
                time.sleep(1)  # the worker's build waits its turn behind the server's renders
        raise AssertionError("unreachable")


def _export_date(contents: Contents) -> dt.datetime:
    """The date an export's PDFs say they were made: its ``asOf``, else ``FIXED_DATE``."""
    date = contents.scope.get("asOf")
    return dt.datetime.fromisoformat(date.replace("Z", "+00:00")) if date else FIXED_DATE


def _task(record: Any) -> ExportedTask:
    """What an export takes of a task (the tasks area's record)."""
    return ExportedTask(
        id=record.id,
        title=record.title,
        description=record.description,
        status=str(record.status),
        assignee_id=record.assignee_id,
        approver_id=record.approver_id,
        due_date=record.due_date,
        frequency=record.frequency,
        framework_id=record.framework_id,
        control_ids=tuple(record.control_ids),
        approved_at=record.approved_at,
    )


def _control(record: Any) -> ExportedControl:
    """What an export takes of a control (the controls area's record)."""
    return ExportedControl(
        id=record.id,
        code=record.code,
        name=record.name,
        status=str(record.status),
        framework_ids=tuple(record.framework_ids),
    )


def _summary_text(contents: Contents, task: ExportedTask) -> str:
    """The task's summary in Markdown: who, when, its controls and each evidence version."""
    lines = [
        "| Field | Value |",
        "|---|---|",
        f"| Assignee | {cell(task.assignee_id)} |",
        f"| Approver | {cell(task.approver_id)} |",
        f"| Approved | {cell(wire_time(task.approved_at))} |",
        f"| Frequency | {cell(task.frequency)} |",
        f"| Framework | {cell(task.framework_id)} |",
        "",
        "## Controls",
        "",
    ]
    controls = [c for c in contents.controls if c.id in task.control_ids]
    if controls:
        lines += ["| Code | Control | Status |", "|---|---|---|"]
        lines += [f"| {cell(c.code)} | {cell(c.name)} | {cell(c.status)} |" for c in controls]
    else:
        lines.append("No control is linked to this task.")
    lines += ["", "## Evidence", ""]
    entries = [e for e in contents.evidence if e.task_id == task.id]
    if entries:
        lines += ["| Evidence | Version | Kind | Collected | Valid until | SHA-256 |", "|---|---|---|---|---|---|"]
        lines += [
            f"| {cell(e.title)} | {e.version} | {cell(e.kind)} | {cell(wire_time(e.collected_at))} "
            f"| {cell(wire_time(e.valid_until))} | {cell(e.sha256[:16] + '...' if e.sha256 else None)} |"
            for e in sorted(entries, key=lambda e: (e.evidence_id, e.version))
        ]
    else:
        lines.append("No evidence in this export.")
    if task.description:
        lines += ["", "## Description", "", markdown_text(task.description)]
    return "\n".join(lines) + "\n"


def _scope(**values: Any) -> dict[str, Any]:
    return {key: wire_time(value) if isinstance(value, dt.datetime) else value for key, value in values.items()}


# -- Evidence Export: one task --------------------------------------------------------------------

_TASK_EVIDENCE = "/v1/tasks/{task_id}/evidence"


@attrs.define
class EvidenceExportService:
    uow: UnitOfWork
    exporter: Exporter

    @operation(
        EXPORT_READ, Route("GET", _TASK_EVIDENCE, "Summarise a task's evidence and its versions"), result=TaskEvidence
    )
    def summary(self, actor: Actor, task_id: str) -> TaskEvidence:
        """Each evidence item of the task with its versions (oldest first), how many, and how many
        have expired."""
        now = self.uow.clock.now()
        with self.uow.read() as session:
            task = self.exporter.task(session, actor.organization_id, task_id)
            contents = self.exporter.contents(
                session, actor.organization_id, [task], {}, include_json=True, automations=False
            )
        items: dict[str, list[LedgerEntry]] = {}
        for entry in contents.evidence:
            items.setdefault(entry.evidence_id, []).append(entry)
        summaries = tuple(_item(versions) for _, versions in sorted(items.items()))
        expired = sum(
            1 for versions in items.values() if versions[-1].valid_until is not None and versions[-1].valid_until <= now
        )
        return TaskEvidence(
            task_id=task.id,
            task_title=task.title,
            organization_id=actor.organization_id,
            organization_name=contents.organization_name,
            evidence=summaries,
            total_items=len(summaries),
            total_versions=len(contents.evidence),
            expired_items=expired,
            exported_at=now,
        )

    @operation(
        EXPORT_READ,
        Route(
            "GET",
            _TASK_EVIDENCE + "/export",
            "A task's evidence as a signed ZIP (manifest, files, summary PDF, a PDF per automation)",
        ),
        filters=TaskExportQuery,
        result=Download,
        media_type=ZIP,
        bounded=True,
    )
    def export(self, actor: Actor, task_id: str, filters: TaskExportQuery | None = None) -> Download:
        """The task's evidence files (JSON redacted), its summary PDF and the signed manifest;
        the same records give the same bytes (see docs/evidence-export.md)."""
        query = filters or TaskExportQuery()
        include_json = query.include_json is not False
        with self.uow.read() as session:
            task = self.exporter.task(session, actor.organization_id, task_id)
            scope = _scope(taskId=task.id, asOf=query.as_of, includeJson=include_json)
            contents = self.exporter.contents(
                session, actor.organization_id, [task], scope, include_json=include_json, as_of=query.as_of
            )
        summaries = self.exporter.summaries(contents)
        return Download(
            filename=f"evidence-{task.id}.zip", media_type=ZIP, chunks=self.exporter.chunks(contents, summaries)
        )

    @operation(
        EXPORT_READ,
        Route(
            "GET",
            _TASK_EVIDENCE + "/automation/{automation_id}/pdf",
            "One automation's evidence as a PDF: its definition and its latest runs, newest first",
        ),
        result=Download,
        media_type=PDF,
        bounded=True,
    )
    def automation_pdf(self, actor: Actor, task_id: str, automation_id: str) -> Download:
        """The automation (name, description, enabled, schedule, current version) and its latest
        ``MAX_RUNS`` runs, each with its times, trigger, verdict, error and what it produced; the
        same records give the same bytes (its date is the newest of theirs). Another task's
        automation is a 404, as one that does not exist."""
        with self.uow.read() as session:
            task = self.exporter.task(session, actor.organization_id, task_id)
            automation = automation_of(session, actor.organization_id, task, automation_id)
            organization = Directory(session).organization(actor.organization_id)
        name = organization.name if organization is not None else actor.organization_id
        return Download(
            filename=f"evidence-{automation.id}.pdf",
            media_type=PDF,
            chunks=iter((self.exporter.report(automation, name),)),
        )


def _item(versions: list[LedgerEntry]) -> EvidenceSummaryItem:
    latest = versions[-1]
    return EvidenceSummaryItem(
        id=latest.evidence_id,
        title=latest.title,
        kind=latest.kind,
        source=latest.source,
        versions=tuple(
            EvidenceVersionSummary(
                id=v.version_id,
                version=v.version,
                kind=v.kind,
                file_name=v.file_name,
                media_type=v.media_type,
                size=v.size,
                sha256=v.sha256,
                url=v.url,
                collected_at=v.collected_at,
                valid_until=v.valid_until,
                uploaded_at=v.uploaded_at,
            )
            for v in versions
        ),
        total_versions=len(versions),
        latest_collected_at=max(v.collected_at for v in versions),
    )


# -- Evidence Export (Auditor): the organization ----------------------------------------------------

_AUDITOR = "/v1/evidence-export"
_JOBS = _AUDITOR + "/jobs"
_JOB = _JOBS + "/{export_id}"


@attrs.define
class AuditorExportService:
    uow: UnitOfWork
    pages: PageCache
    exporter: Exporter

    @operation(
        EXPORT_AUDIT,
        Route("GET", _AUDITOR + "/all", "Every task's evidence of the organization as one signed ZIP"),
        filters=ExportQuery,
        result=Download,
        media_type=ZIP,
        bounded=True,
    )
    def export_all(self, actor: Actor, filters: ExportQuery | None = None) -> Download:
        """The organization's export now (for a framework and a period when asked); a large one
        is better built as a job (``POST /v1/evidence-export/jobs``), which gives the same bytes."""
        query = filters or ExportQuery()
        contents = self._contents(
            actor.organization_id,
            framework_id=query.framework_id,
            collected_from=query.collected_from,
            collected_to=query.collected_to,
            as_of=query.as_of,
            include_json=query.include_json is not False,
        )
        pdfs = len(contents.tasks) + len(contents.automations)
        if pdfs > SYNCHRONOUS_PDFS:
            raise ValidationError.field(
                "frameworkId",
                query.framework_id,
                f"this export would render {pdfs} PDFs, more than the {SYNCHRONOUS_PDFS} a request waits for: "
                "narrow it (frameworkId, collectedFrom, collectedTo) or build it as a job (POST /v1/evidence-export/jobs)",
            )
        summaries = self.exporter.summaries(contents)
        return Download(
            filename=f"evidence-{actor.organization_id}.zip",
            media_type=ZIP,
            chunks=self.exporter.chunks(contents, summaries),
        )

    @operation(
        EXPORT_AUDIT,
        Route("POST", _JOBS, "Start building the organization's export (answers 202 with the job)"),
        body=NewEvidenceExport,
        idempotent=True,
        result=Accepted[EvidenceExport],
        example={"includeJson": True},
    )
    def create(self, actor: Actor, data: NewEvidenceExport, once: Once) -> Accepted[EvidenceExport]:
        """Queue an export for a framework and a period; the worker builds it, and its status
        (with progress) is at the answer's Location."""
        now = self.uow.clock.now()

        def start() -> EvidenceExport:
            job = EvidenceExport(
                id=self.uow.ids.new(EVIDENCE_EXPORTS.prefix),
                organization_id=actor.organization_id,
                framework_id=data.framework_id,
                collected_from=data.collected_from,
                collected_to=data.collected_to,
                as_of=data.as_of,
                include_json=data.include_json,
                requested_by=actor.person_id or actor.key_id or actor.principal,
                created_at=now,
                updated_at=now,
            )
            tx[EVIDENCE_EXPORTS].add(job)
            tx.record(EvidenceExportRequested(organization_id=actor.organization_id, subject=job))
            return job

        with self.uow.write(actor) as tx:
            job = once(tx, data, now, start)
        return Accepted(job=job, status=AuditorExportService.get.name)

    @operation(
        EXPORT_AUDIT,
        Route("GET", _JOBS, "List the organization's export jobs, newest first"),
        filters=ExportFilter,
        paged=True,
        result=EvidenceExport,
        lists=EVIDENCE_EXPORTS,
    )
    def list(
        self, actor: Actor, filters: ExportFilter | None = None, page: PageRequest | None = None
    ) -> Page[EvidenceExport]:
        return page_of(self, EVIDENCE_EXPORTS, actor, filters or ExportFilter(), page)

    @operation(EXPORT_AUDIT, Route("GET", _JOB, "Read an export job: its status and progress"), result=EvidenceExport)
    def get(self, actor: Actor, export_id: str) -> EvidenceExport:
        with self.uow.read() as session:
            return fetch(session, EVIDENCE_EXPORTS, actor.organization_id, export_id)

    @operation(
        EXPORT_AUDIT,
        Route("GET", _JOB + "/download", "Download an export job's ZIP"),
        result=Download,
        media_type=ZIP,
        bounded=True,
    )
    def download(self, actor: Actor, export_id: str) -> Download:
        """The ZIP the job built, streamed from the blob store; a job not built yet is built as it
        is sent (the same bytes the job will store: an export depends only on its records), when
        it is small enough to wait for (``SYNCHRONOUS_PDFS``), else 503 until the worker built it."""
        with self.uow.read() as session:
            job = fetch(session, EVIDENCE_EXPORTS, actor.organization_id, export_id)
        name = f"evidence-{job.id}.zip"
        if job.status is ExportStatus.DONE and job.sha256 is not None:
            blobs = blobs_of(self.exporter.context)
            if blobs.exists(actor.organization_id, job.sha256):
                return Download(filename=name, media_type=ZIP, chunks=blobs.open(actor.organization_id, job.sha256))
        contents = self._job_contents(job)
        if len(contents.tasks) + len(contents.automations) > SYNCHRONOUS_PDFS:
            raise ServiceUnavailable(
                f"export {job.id} is {job.status}: it is too large to build while you wait; retry when it is done",
                RETRY_BUILDING,
                {"status": str(job.status)},
            )
        return Download(
            filename=name, media_type=ZIP, chunks=self.exporter.chunks(contents, self.exporter.summaries(contents))
        )

    @operation(
        EXPORT_KEY,
        Route("GET", _AUDITOR + "/public-key", "The instance's public key exports are signed with"),
        result=PublicKey,
    )
    def public_key(self, actor: Actor) -> PublicKey:
        signer = signer_of(self.exporter.context)
        return PublicKey(
            algorithm=signer.algorithm, public_key_pem=signer.public_key_pem, fingerprint=signer.fingerprint
        )

    @operation(
        EXPORT_AUDIT,
        Route(
            "POST",
            _AUDITOR + "/verify",
            "Check an export: its signature by this instance, every file's SHA-256, nothing added or missing",
        ),
        body=VerifyExport,
        result=Verification,
        example={"fileData": "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=="},
    )
    def verify(self, actor: Actor, data: VerifyExport) -> Verification:
        """Whether the export is exactly one this instance signed; ``problems`` says what is not."""
        with spool(content_of(data.file_data)) as upload:
            return verify(upload, signer_of(self.exporter.context))

    # -- the job's build, by the worker ---------------------------------------------------------

    def build_exports(self, now: dt.datetime) -> int:
        """Build every queued export (and any abandoned by a process that died); returns how many
        were built or failed. Each is claimed inside a write, so two workers never build one twice."""
        with self.uow.read() as session:
            organizations = Directory(session).organization_ids()
            waiting = [
                (job.organization_id, job.id)
                for organization_id in organizations
                for status in (ExportStatus.QUEUED, ExportStatus.RUNNING)
                for job in every(session[EVIDENCE_EXPORTS], organization_id, ExportFilter(status=status))
                if status is ExportStatus.QUEUED or job.updated_at <= now - STALE_AFTER
            ]
        built = 0
        for organization_id, export_id in waiting:
            job = self._claim(organization_id, export_id, now)
            if job is not None:
                self.build(job)
                built += 1
        return built

    def _claim(self, organization_id: str, export_id: str, now: dt.datetime) -> EvidenceExport | None:
        with self.uow.write(None) as tx:
            job = tx[EVIDENCE_EXPORTS].get(organization_id, export_id)
            if job is None or job.status in (ExportStatus.DONE, ExportStatus.FAILED):
                return None
            if job.status is ExportStatus.RUNNING and job.updated_at > now - STALE_AFTER:
                return None
            claimed = attrs.evolve(job, status=ExportStatus.RUNNING, started_at=now, tasks_done=0, updated_at=now)
            tx[EVIDENCE_EXPORTS].update(claimed)
            tx.record(
                EvidenceExportStarted(organization_id=organization_id, subject=claimed, previous={"status": job.status})
            )
        return claimed

    def build(self, job: EvidenceExport) -> EvidenceExport:
        """Build the job's ZIP into the blob store, reporting progress as tasks are packed."""
        try:
            contents = self._job_contents(job)
            total = len(contents.tasks)
            self._progress(job, 0, total)
            step = max(1, total // 20)

            def progress(done: int) -> None:
                if done % step == 0 and done < total:
                    self._progress(job, done, total)

            blobs = blobs_of(self.exporter.context)
            builder = self.exporter.apart()
            try:
                info = blobs.put(
                    job.organization_id,
                    builder.chunks(contents, progress=progress, patient=True),
                    accept=None,
                    field="export",
                )
            finally:
                builder.close()
        except Exception as error:  # recorded on the job, which a caller reads
            return self._finish(job, error=f"{type(error).__name__}: {error}"[:500])
        return self._finish(job, sha256=info.sha256, size=info.size, total=total)

    def _progress(self, job: EvidenceExport, done: int, total: int) -> None:
        with self.uow.write(None) as tx:
            current = fetch(tx, EVIDENCE_EXPORTS, job.organization_id, job.id)
            tx[EVIDENCE_EXPORTS].update(
                attrs.evolve(current, tasks_done=done, tasks_total=total, updated_at=self.uow.clock.now())
            )

    def _finish(
        self,
        job: EvidenceExport,
        *,
        sha256: str | None = None,
        size: int | None = None,
        total: int | None = None,
        error: str | None = None,
    ) -> EvidenceExport:
        now = self.uow.clock.now()
        with self.uow.write(None) as tx:
            current = fetch(tx, EVIDENCE_EXPORTS, job.organization_id, job.id)
            if error is None:
                finished = attrs.evolve(
                    current,
                    status=ExportStatus.DONE,
                    sha256=sha256,
                    size=size,
                    tasks_done=total if total is not None else current.tasks_total,
                    tasks_total=total if total is not None else current.tasks_total,
                    error=None,
                    finished_at=now,
                    updated_at=now,
                )
                event: Any = EvidenceExportCompleted
            else:
                finished = attrs.evolve(
                    current, status=ExportStatus.FAILED, error=error, finished_at=now, updated_at=now
                )
                event = EvidenceExportFailed
            tx[EVIDENCE_EXPORTS].update(finished)
            tx.record(event(organization_id=job.organization_id, subject=finished, previous={"status": current.status}))
        return finished

    def _job_contents(self, job: EvidenceExport) -> Contents:
        return self._contents(
            job.organization_id,
            framework_id=job.framework_id,
            collected_from=job.collected_from,
            collected_to=job.collected_to,
            as_of=job.as_of,
            include_json=job.include_json,
        )

    def _contents(
        self,
        organization_id: str,
        *,
        framework_id: str | None,
        collected_from: dt.datetime | None,
        collected_to: dt.datetime | None,
        as_of: dt.datetime | None,
        include_json: bool,
    ) -> Contents:
        scope = _scope(
            frameworkId=framework_id,
            collectedFrom=collected_from,
            collectedTo=collected_to,
            asOf=as_of,
            includeJson=include_json,
        )
        with self.uow.read() as session:
            tasks = self.exporter.organization_tasks(session, organization_id, as_of)
            return self.exporter.contents(
                session,
                organization_id,
                tasks,
                scope,
                include_json=include_json,
                framework_id=framework_id,
                collected_from=collected_from,
                collected_to=collected_to,
                as_of=as_of,
            )
