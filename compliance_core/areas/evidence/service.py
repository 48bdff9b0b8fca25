"""The operations on evidence: a task's evidence (``/v1/tasks/{taskId}/attachments``, tag Tasks),
the organization's attachments (``/v1/attachments``, tag Attachments), and the two expiry sweeps.

Downloads answer the bytes themselves, streamed from the blob store, where the reference answers
a short-lived signed URL of its object store: a self-hosted platform has no object-store URLs to
hand out (the local directory has none, and an S3 bucket need not be reachable by callers), and
serving the bytes keeps the organization check in one place, the same request.
"""

from __future__ import annotations

import builtins
import datetime as dt

import attrs

from ...kernel.clock import utc
from ...kernel.directory import Directory
from ...kernel.errors import NotFound
from ...kernel.events import Event
from ...kernel.operations import Once, Standard, operation
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import fetch, list_page
from ...kernel.registry import Download, Route
from ...kernel.uow import Context, Tx, UnitOfWork
from .ledger import TASK_DELETED, Ledger, evidence_of, task_of
from .models import (
    EVIDENCE,
    EVIDENCE_READ,
    EVIDENCE_VERSIONS,
    EVIDENCE_WRITE,
    Evidence,
    EvidenceExpired,
    EvidenceExpiring,
    EvidenceFilter,
    EvidencePatch,
    EvidenceSettings,
    EvidenceVersion,
    NewAttachment,
    NewEvidence,
    NewVersion,
    TaskEvidenceFilter,
    VersionFilter,
)

__all__ = ["EvidenceService", "AttachmentService", "SETTINGS_KEY"]

SETTINGS_KEY = "evidence"
"""``Platform(settings={"evidence": EvidenceSettings(...)})``."""

_TASK = "/v1/tasks/{task_id}/attachments"
_ITEM = _TASK + "/{attachment_id}"
_EXAMPLE = {
    "fileName": "access-review.csv",
    "fileType": "text/csv",
    "fileData": "YWNjb3VudCxyb2xlLHJldmlld2VkCmFsaWNlLGFkbWluLHllcwo=",
    "description": "Quarterly access review export",
    "collectedAt": "2026-09-30T12:00:00Z",
    "validUntil": "2027-12-31T00:00:00Z",
}
_BATCH = 200


@attrs.define
class EvidenceService:
    """A task's evidence items and their versions (tag Tasks), and the expiry sweeps."""

    uow: UnitOfWork
    pages: PageCache
    context: Context = attrs.field(repr=False)

    @property
    def ledger(self) -> Ledger:
        return Ledger(self.uow, self.context)

    @operation(
        EVIDENCE_READ,
        Route("GET", _TASK, "List a task's evidence (files, links and notes)"),
        filters=TaskEvidenceFilter,
        paged=True,
        result=Evidence,
        lists=EVIDENCE,
    )
    def list(
        self, actor: Actor, task_id: str, filters: TaskEvidenceFilter | None = None, page: PageRequest | None = None
    ) -> Page[Evidence]:
        with self.uow.read() as session:
            task_of(session, actor.organization_id, task_id)  # first: any odd id is a 404
            chosen = (filters or TaskEvidenceFilter()).under(task_id)
            return list_page(session, EVIDENCE, self.pages, actor.organization_id, chosen, page or PageRequest())

    @operation(
        EVIDENCE_WRITE,
        Route("POST", _TASK, "Add evidence to a task: a file (base64 JSON or multipart), a link or a note", 201),
        body=NewEvidence,
        idempotent=True,
        result=Evidence,
        example=_EXAMPLE,
    )
    def add(self, actor: Actor, task_id: str, data: NewEvidence, once: Once) -> Evidence:
        """Its first version is stored with it; the controls it proves default to the task's."""
        return self.ledger.add(actor, task_id, data, once)

    @operation(EVIDENCE_READ, Route("GET", _ITEM, "Read one evidence item of a task"), result=Evidence)
    def get(self, actor: Actor, task_id: str, attachment_id: str) -> Evidence:
        with self.uow.read() as session:
            return evidence_of(session, actor.organization_id, task_id, attachment_id)

    @operation(
        EVIDENCE_WRITE,
        Route("PATCH", _ITEM, "Change an evidence item's title, description, source or controls"),
        body=EvidencePatch,
        result=Evidence,
        example={"description": "Reviewed by the IT lead", "source": "manual"},
    )
    def update(self, actor: Actor, task_id: str, attachment_id: str, patch: EvidencePatch) -> Evidence:
        with self.uow.write(actor) as tx:
            current = evidence_of(tx, actor.organization_id, task_id, attachment_id)
            return self.ledger.update(tx, current, patch.changes())

    @operation(EVIDENCE_WRITE, Route("DELETE", _ITEM, "Delete an evidence item with all its versions"), result=None)
    def delete(self, actor: Actor, task_id: str, attachment_id: str) -> None:
        """Its files leave the blob store unless another version of the organization holds the
        same bytes."""
        with self.uow.write(actor) as tx:
            self.ledger.delete(tx, evidence_of(tx, actor.organization_id, task_id, attachment_id))

    @operation(
        EVIDENCE_READ,
        Route("GET", _ITEM + "/download", "Download the current version's file (or note)"),
        result=Download,
    )
    def download(self, actor: Actor, task_id: str, attachment_id: str) -> Download:
        """The bytes as stored, streamed (not a signed URL: see the module); a link has no file
        (409)."""
        with self.uow.read() as session:
            evidence = evidence_of(session, actor.organization_id, task_id, attachment_id)
        return self.ledger.download(actor.organization_id, evidence, evidence.title)

    @operation(
        EVIDENCE_READ,
        Route("GET", _ITEM + "/versions", "List an evidence item's versions, newest first"),
        paged=True,
        result=EvidenceVersion,
        lists=EVIDENCE_VERSIONS,
    )
    def versions(
        self, actor: Actor, task_id: str, attachment_id: str, page: PageRequest | None = None
    ) -> Page[EvidenceVersion]:
        with self.uow.read() as session:
            evidence_of(session, actor.organization_id, task_id, attachment_id)
            chosen = VersionFilter(attachment_id=attachment_id)
            return list_page(
                session, EVIDENCE_VERSIONS, self.pages, actor.organization_id, chosen, page or PageRequest()
            )

    @operation(
        EVIDENCE_WRITE,
        Route("POST", _ITEM + "/versions", "Add a new version (a new upload, link or note) to an evidence item", 201),
        body=NewVersion,
        idempotent=True,
        result=Evidence,
        example={k: v for k, v in _EXAMPLE.items() if k != "description"},
    )
    def add_version(self, actor: Actor, task_id: str, attachment_id: str, data: NewVersion, once: Once) -> Evidence:
        """The new version becomes the item's current one (its content, dates and expiry); the
        earlier ones stay listed and downloadable."""
        return self.ledger.add_version(actor, task_id, attachment_id, data, once)

    @operation(
        EVIDENCE_READ,
        Route("GET", _ITEM + "/versions/{version_id}/download", "Download one version's file (or note)"),
        result=Download,
    )
    def download_version(self, actor: Actor, task_id: str, attachment_id: str, version_id: str) -> Download:
        with self.uow.read() as session:
            evidence = evidence_of(session, actor.organization_id, task_id, attachment_id)
            version = fetch(session, EVIDENCE_VERSIONS, actor.organization_id, version_id)
        if version.attachment_id != evidence.id:
            raise NotFound.resource(EVIDENCE_VERSIONS.kind, version_id)
        return self.ledger.download(actor.organization_id, version, f"{evidence.title} v{version.version}")

    # -- what other writes and the clock do to evidence -------------------------------------------

    def react(self, tx: Tx, event: Event) -> None:
        """Inside the write deleting a task: its evidence goes with it (and the blobs only it held)."""
        if event.type == TASK_DELETED:
            self.ledger.delete_task_evidence(tx, event.organization_id, event.subject_id)

    def expire(self, now: dt.datetime | None = None) -> int:
        """Mark the evidence whose ``validUntil`` has passed as expired, in every organization,
        recording ``evidence.expired`` once per item: the controls it proves turn stale in the
        same write. Each batch is read inside its write, so a second run (or one in another
        process) finds nothing left to mark."""
        now = utc(now) if now is not None else self.uow.clock.now()
        due = PageRequest(per_page=_BATCH, until=now + dt.timedelta(microseconds=1))
        marked = 0
        for organization_id in self._organizations():
            while True:
                with self.uow.write(None) as tx:
                    items, _ = tx[EVIDENCE].list(organization_id, EvidenceFilter(expired=False), due)
                    items = [item for item in items if item.valid_until is not None and item.valid_until <= now]
                    for item in items:
                        expired = attrs.evolve(item, expired=True, updated_at=now)
                        tx[EVIDENCE].update(expired)
                        tx.record(
                            EvidenceExpired(
                                organization_id=organization_id, subject=expired, previous={"expired": False}
                            )
                        )
                marked += len(items)
                if len(items) < _BATCH:
                    break
        return marked

    def warn_expiring(self, now: dt.datetime | None = None) -> int:
        """Record ``evidence.expiring`` for each current version whose ``validUntil`` falls within
        the configured days, once per version: the version is marked in the same write as the
        event, and a version already marked is skipped, so restarts and concurrent workers record
        no second one."""
        now = utc(now) if now is not None else self.uow.clock.now()
        days = self._settings().expiring_days
        warned = 0
        for organization_id in self._organizations():
            with self.uow.write(None) as tx:
                number = 1
                while True:
                    window = PageRequest(page=number, per_page=_BATCH, since=now, until=now + dt.timedelta(days=days))
                    items, total = tx[EVIDENCE].list(organization_id, EvidenceFilter(expired=False), window)
                    for item in items:
                        version = tx[EVIDENCE_VERSIONS].get(organization_id, item.version_id)
                        if version is None or version.expiry_warned_at is not None:
                            continue
                        tx[EVIDENCE_VERSIONS].update(attrs.evolve(version, expiry_warned_at=now, updated_at=now))
                        tx.record(EvidenceExpiring(organization_id=organization_id, subject=item))
                        warned += 1
                    if not items or number * _BATCH >= total:
                        break
                    number += 1
        return warned

    def _organizations(self) -> builtins.list[str]:
        with self.uow.read() as session:
            return Directory(session).organization_ids()

    def _settings(self) -> EvidenceSettings:
        chosen = self.context.settings.get(SETTINGS_KEY)
        if chosen is None:
            return EvidenceSettings()
        if isinstance(chosen, EvidenceSettings):
            return chosen
        return EvidenceSettings(**dict(chosen))


_ALL = "/v1/attachments"
_TABLE = Standard(EVIDENCE, id="attachment_id")


@attrs.define
class AttachmentService:
    """The organization's attachments, whatever their task (tag Attachments)."""

    uow: UnitOfWork
    pages: PageCache
    context: Context = attrs.field(repr=False)

    list = _TABLE.list(EVIDENCE_READ, Route("GET", _ALL, "List the organization's evidence and attachments"))

    @operation(
        EVIDENCE_WRITE,
        Route("POST", _ALL, "Upload an attachment to a task (base64 JSON or multipart)", 201),
        body=NewAttachment,
        idempotent=True,
        result=Evidence,
        example={"taskId": "tsk_...", **_EXAMPLE},
    )
    def create(self, actor: Actor, data: NewAttachment, once: Once) -> Evidence:
        """The same as adding evidence to the task ``taskId`` names."""
        return Ledger(self.uow, self.context).add(actor, data.task_id, data, once, field="taskId")

    @operation(
        EVIDENCE_READ,
        Route("GET", _ALL + "/{attachment_id}/download", "Download an attachment's current file (or note)"),
        result=Download,
    )
    def download(self, actor: Actor, attachment_id: str) -> Download:
        """Any attachment of the caller's organization; another organization's id is a 404."""
        with self.uow.read() as session:
            evidence = evidence_of(session, actor.organization_id, None, attachment_id)
        return Ledger(self.uow, self.context).download(actor.organization_id, evidence, evidence.title)
