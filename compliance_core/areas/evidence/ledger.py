"""The evidence ledger: what every write of evidence follows, whichever operation (or area)
makes it.

A file goes into the blob store before the write that records it, outside any transaction: a
1 GB upload must not hold the store's writer for as long as it streams. The write then checks,
holding the writer, that the blob is still there (a concurrent delete of the last version naming
the same bytes removes it inside its own write), and a write that fails releases the blob when no
version names it, checked inside a write too. A refused file (too large, a refused type) never
becomes a blob at all: the blob store refuses it while streaming.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from typing import Any, Protocol

import attrs

from ...kernel.blobs import EVIDENCE_TYPES, BlobStore, blobs_of
from ...kernel.directory import every
from ...kernel.errors import Conflict, InternalError, NotFound, ValidationError
from ...kernel.pages import PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import changed, fetch
from ...kernel.registry import Download, Repo, Session
from ...kernel.uow import Context, Tx, UnitOfWork
from ...kernel.uploads import Upload, content_of
from .models import (
    EVIDENCE,
    EVIDENCE_VERSIONS,
    Evidence,
    EvidenceCreated,
    EvidenceDeleted,
    EvidenceFilter,
    EvidenceKind,
    EvidenceUpdated,
    EvidenceVersion,
    EvidenceVersionAdded,
    NewEvidence,
    NewVersion,
    VersionFilter,
)

__all__ = ["Ledger", "TASK_DELETED"]

TASK_DELETED = "task.deleted"
"""The event type the tasks area records when a task is deleted: its evidence goes with it."""
NOTE_TYPE = "text/markdown"


class _Task(Protocol):
    """What evidence reads of its task (the tasks area's record, through a port)."""

    @property
    def id(self) -> str: ...
    @property
    def control_ids(self) -> tuple[str, ...]: ...


class _Tasks(Protocol):
    def get(self, organization_id: str, item_id: str) -> _Task | None: ...


TASKS: Repo[_Tasks] = Repo("tasks")
_ONE = PageRequest(page=1, per_page=1)


def task_of(session: Session, organization_id: str, task_id: str, field: str | None = None) -> _Task:
    """The task, or a 404 (a path id); ``field`` names the body field when the id came in one,
    which makes a missing task a ``validation_error`` on it."""
    task = session[TASKS].get(organization_id, task_id)
    if task is None:
        if field is not None:
            raise ValidationError.field(field, task_id, "names no task of the organization")
        raise NotFound.resource("task", task_id)
    return task


def evidence_of(session: Session, organization_id: str, task_id: str | None, attachment_id: str) -> Evidence:
    """The evidence item, a 404 when it is not the task's (when a task is named)."""
    evidence = fetch(session, EVIDENCE, organization_id, attachment_id)
    if task_id is not None and evidence.task_id != task_id:
        raise NotFound.resource(EVIDENCE.kind, attachment_id)
    return evidence


def is_expired(valid_until: dt.datetime | None, now: dt.datetime) -> bool:
    return valid_until is not None and valid_until <= now


def _who(actor: Actor) -> str | None:
    return actor.person_id or actor.user_id or actor.key_id or actor.principal


def _check_kind(kind: EvidenceKind, data: NewVersion) -> None:
    """Each kind holds its own content and nothing of the others'."""
    needs = {EvidenceKind.FILE: "file_data", EvidenceKind.LINK: "url", EvidenceKind.NOTE: "note"}
    wire = {"file_data": "fileData", "url": "url", "note": "note", "file_name": "fileName", "file_type": "fileType"}
    errors: list[ValidationError] = []
    if getattr(data, needs[kind]) is None:
        errors.append(ValidationError.field(wire[needs[kind]], None, f"is required for evidence of kind {kind}"))
    foreign = [name for name in ("file_data", "url", "note") if name != needs[kind]]
    if kind is not EvidenceKind.FILE:
        foreign += ["file_name", "file_type"]
    for name in foreign:
        value = getattr(data, name)
        if value is not None:
            shown = "(a file)" if isinstance(value, Upload) else value
            errors.append(ValidationError.field(wire[name], shown, f"is not part of evidence of kind {kind}"))
    if errors:
        raise ValidationError.every(errors)


_TEXT_EXTENSIONS = {"csv": "text/csv", "json": "application/json", "md": "text/markdown", "markdown": "text/markdown"}


def _text_type(file_name: str) -> str | None:
    """The text type a file's name suggests, when the sender declared none: UTF-8 text cannot
    tell CSV from plain text by its bytes, so the name does (the bytes still decide it is text)."""
    return _TEXT_EXTENSIONS.get(file_name.rsplit(".", 1)[-1].lower()) if "." in file_name else None


def _title(kind: EvidenceKind, content: dict[str, Any]) -> str:
    if kind is EvidenceKind.FILE:
        return str(content["file_name"])
    if kind is EvidenceKind.LINK:
        return str(content["url"])[:255]
    first = next((line.strip() for line in str(content["note"]).splitlines() if line.strip()), "Note")
    return first.lstrip("# ").strip()[:255] or "Note"


@attrs.define
class Ledger:
    """The writes and reads of evidence both areas share (the task's evidence, and
    ``/v1/attachments``)."""

    uow: UnitOfWork
    context: Context

    @property
    def blobs(self) -> BlobStore:
        return blobs_of(self.context)

    # -- adding -------------------------------------------------------------------------------

    def add(self, actor: Actor, task_id: str, data: NewEvidence, once: Any, field: str | None = None) -> Evidence:
        """A new evidence item with its first version (the file stored first, see the module)."""
        organization_id = actor.organization_id
        _check_kind(data.kind, data)
        with self.uow.read() as session:
            task_of(session, organization_id, task_id, field)
        content = self._content(organization_id, data.kind, data)
        now = self.uow.clock.now()

        def build(tx: Tx) -> Evidence:
            task = task_of(tx, organization_id, task_id, field)
            evidence_id = self.uow.ids.new(EVIDENCE.prefix)
            version = self._version(actor, evidence_id, task_id, 1, data.kind, content, data, now)
            evidence = Evidence(
                id=evidence_id,
                organization_id=organization_id,
                task_id=task_id,
                kind=data.kind,
                title=data.title or _title(data.kind, content),
                description=data.description,
                source=data.source,
                control_ids=task.control_ids if data.control_ids is None else data.control_ids,
                version=1,
                version_id=version.id,
                **content,
                collected_at=version.collected_at,
                valid_until=version.valid_until,
                expired=is_expired(version.valid_until, now),
                uploaded_by=version.uploaded_by,
                uploaded_at=now,
                created_at=now,
                updated_at=now,
            )
            tx[EVIDENCE_VERSIONS].add(version)
            tx[EVIDENCE].add(evidence)
            tx.record(EvidenceCreated(organization_id=organization_id, subject=evidence))
            return evidence

        return self._recording(actor, data, content, now, once, build)

    def add_version(
        self, actor: Actor, task_id: str | None, attachment_id: str, data: NewVersion, once: Any
    ) -> Evidence:
        """The item's next version: its content and dates become the item's."""
        organization_id = actor.organization_id
        with self.uow.read() as session:
            kind = evidence_of(session, organization_id, task_id, attachment_id).kind
        _check_kind(kind, data)
        content = self._content(organization_id, kind, data)
        now = self.uow.clock.now()

        def build(tx: Tx) -> Evidence:
            current = evidence_of(tx, organization_id, task_id, attachment_id)
            number = current.version + 1
            version = self._version(actor, current.id, current.task_id, number, kind, content, data, now)
            changes = {
                "version": number,
                "version_id": version.id,
                **content,
                "collected_at": version.collected_at,
                "valid_until": version.valid_until,
                "expired": is_expired(version.valid_until, now),
                "uploaded_by": version.uploaded_by,
                "uploaded_at": now,
            }
            previous = changed(current, changes)
            updated = attrs.evolve(current, **changes, updated_at=now)
            tx[EVIDENCE_VERSIONS].add(version)
            tx[EVIDENCE].update(updated)
            tx.record(EvidenceVersionAdded(organization_id=organization_id, subject=updated, previous=previous))
            return updated

        return self._recording(actor, data, content, now, once, build)

    def _recording(
        self,
        actor: Actor,
        data: NewVersion,
        content: dict[str, Any],
        now: dt.datetime,
        once: Any,
        build: Callable[[Tx], Evidence],
    ) -> Evidence:
        """Run ``build`` in a write (idempotent on the content's SHA-256 rather than its bytes),
        releasing the stored blob when the write fails."""
        organization_id = actor.organization_id
        sha256 = content["sha256"] if data.file_data is not None else None
        payload = attrs.evolve(data, file_data=sha256) if sha256 is not None else data
        try:
            with self.uow.write(actor) as tx:

                def create() -> Evidence:
                    made = build(tx)
                    if sha256 is not None and not self.blobs.exists(organization_id, sha256):
                        raise Conflict(
                            "the file was removed while it was being recorded; send it again",
                            {"field": "fileData", "value": sha256, "reason": "removed meanwhile"},
                        )
                    return made

                result: Evidence = once(tx, payload, now, create)
                return result
        except BaseException:
            if sha256 is not None:
                self.release(organization_id, (sha256,))
            raise

    def _content(self, organization_id: str, kind: EvidenceKind, data: NewVersion) -> dict[str, Any]:
        """The fields of one version's content; a file is stored in the blob store here."""
        if kind is EvidenceKind.LINK:
            return {"url": data.url, "file_name": None, "media_type": None, "size": None, "sha256": None, "note": None}
        if kind is EvidenceKind.NOTE:
            body = str(data.note).encode()
            return {
                "note": data.note,
                "media_type": NOTE_TYPE,
                "size": len(body),
                "sha256": hashlib.sha256(body).hexdigest(),
                "file_name": None,
                "url": None,
            }
        value: Any = data.file_data  # base64 text, or an Upload (see NewVersion.file_data)
        assert value is not None  # _check_kind
        upload = value if isinstance(value, Upload) else None
        name = data.file_name or (upload.file_name if upload is not None else None)
        name = (name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
        if not name:
            raise ValidationError.field(
                "fileName", data.file_name, "is required for a file (its name, e.g. report.pdf)"
            )
        declared = data.file_type or (upload.media_type if upload is not None else None) or _text_type(name)
        info = self.blobs.put(
            organization_id, content_of(value), accept=EVIDENCE_TYPES, declared_type=declared, field="fileData"
        )
        return {
            "file_name": name[:255],
            "media_type": info.media_type,
            "size": info.size,
            "sha256": info.sha256,
            "url": None,
            "note": None,
        }

    def _version(
        self,
        actor: Actor,
        attachment_id: str,
        task_id: str,
        number: int,
        kind: EvidenceKind,
        content: dict[str, Any],
        data: NewVersion,
        now: dt.datetime,
    ) -> EvidenceVersion:
        if data.valid_until is not None and data.collected_at is not None and data.valid_until <= data.collected_at:
            raise ValidationError.field("validUntil", data.valid_until, "must be after collectedAt")
        return EvidenceVersion(
            id=self.uow.ids.new(EVIDENCE_VERSIONS.prefix),
            organization_id=actor.organization_id,
            attachment_id=attachment_id,
            task_id=task_id,
            version=number,
            kind=kind,
            **content,
            collected_at=data.collected_at or now,
            valid_until=data.valid_until,
            uploaded_by=_who(actor),
            uploaded_at=now,
            created_at=now,
            updated_at=now,
        )

    # -- changing and deleting -----------------------------------------------------------------

    def update(self, tx: Tx, current: Evidence, changes: dict[str, Any]) -> Evidence:
        previous = changed(current, changes)
        if not previous:
            return current
        updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
        tx[EVIDENCE].update(updated)
        tx.record(EvidenceUpdated(organization_id=current.organization_id, subject=updated, previous=previous))
        return updated

    def delete(self, tx: Tx, evidence: Evidence) -> None:
        """The item and its versions; its controls forget it first (a change of ``controlIds``),
        and each blob no other version names goes too, inside this write."""
        organization_id = evidence.organization_id
        if evidence.control_ids:
            evidence = self.update(tx, evidence, {"control_ids": ()})
        versions = every(tx[EVIDENCE_VERSIONS], organization_id, VersionFilter(attachment_id=evidence.id))
        for version in versions:
            tx[EVIDENCE_VERSIONS].delete(organization_id, version.id)
        tx[EVIDENCE].delete(organization_id, evidence.id)
        tx.record(EvidenceDeleted(organization_id=organization_id, subject=evidence))
        stored = {v.sha256 for v in versions if v.kind is EvidenceKind.FILE and v.sha256 is not None}
        self._drop_unnamed(tx, organization_id, stored)

    def delete_task_evidence(self, tx: Tx, organization_id: str, task_id: str) -> None:
        for evidence in every(tx[EVIDENCE], organization_id, EvidenceFilter(task_id=task_id)):
            self.delete(tx, evidence)

    def release(self, organization_id: str, hashes: tuple[str, ...]) -> None:
        """Delete the blobs no version names (after a failed write), checked inside a write."""
        with self.uow.write(None) as tx:
            self._drop_unnamed(tx, organization_id, set(hashes))

    def _drop_unnamed(self, tx: Tx, organization_id: str, hashes: set[str]) -> None:
        for sha256 in sorted(hashes):
            named, _ = tx[EVIDENCE_VERSIONS].list(organization_id, VersionFilter(sha256=sha256), _ONE)
            if not named:
                self.blobs.delete(organization_id, sha256)

    # -- reading -------------------------------------------------------------------------------

    def download(self, organization_id: str, item: Evidence | EvidenceVersion, title: str) -> Download:
        """A version's content as a file: the stored bytes, or a note as Markdown; a link has none."""
        if item.kind is EvidenceKind.LINK:
            raise Conflict(
                "a link holds no file: its evidence is at its url",
                {"field": "kind", "value": str(item.kind), "reason": "only files and notes are downloaded"},
            )
        if item.kind is EvidenceKind.NOTE:
            note = str(item.note)
            return Download(filename=f"{_safe(title)}.md", media_type=NOTE_TYPE, chunks=[note.encode()])
        assert item.sha256 is not None and item.file_name is not None
        try:
            chunks = self.blobs.open(organization_id, item.sha256)
        except NotFound:
            raise InternalError("the stored file of this evidence is missing from the blob store") from None
        return Download(
            filename=item.file_name, media_type=item.media_type or "application/octet-stream", chunks=chunks
        )


def _safe(title: str) -> str:
    kept = "".join(char if char.isalnum() or char in " -_." else "_" for char in title).strip()
    return kept[:100] or "note"
