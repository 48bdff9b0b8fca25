"""The export itself: what it holds, read once, and the ZIP written from it as a stream.

Reproducible: the same records give the same bytes. Every entry has the same fixed time
(1980-01-01, the earliest a ZIP can say), the same permissions and the same compression for its
kind (Deflate at level 6 for text, stored for formats that are compressed already); entries come
in the order of their paths, and ``manifest.json`` is written with its keys sorted. Nothing of the
moment of the export is inside unless the caller asked for a point in time (``asOf``).

Streamed: the ZIP goes out as it is written (entries carry data descriptors, so nothing is
seeked back to), and each evidence file is copied from the blob store chunk by chunk while its
SHA-256 is computed, so an export of gigabytes needs a few MiB of memory. Files come first and
the manifest last: it lists every file with the SHA-256 and size of the bytes in the ZIP.

Signed: ``manifest.sig`` is the base64 Ed25519 signature of the exact bytes of
``manifest.json`` by the instance's key, whose PEM is ``public-key.pem``.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
import posixpath
import re
import zipfile
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from ...kernel.blobs import BlobStore, is_sha256
from ...kernel.evidence_ledger import LedgerEntry
from ...kernel.signing import Signer
from .redaction import MAX_REDACTED_BYTES, redact_json

__all__ = [
    "FORMAT",
    "MANIFEST",
    "SIGNATURE",
    "PUBLIC_KEY",
    "ENTRY_TIME",
    "ExportedTask",
    "ExportedControl",
    "ExportedRun",
    "ExportedAutomation",
    "Contents",
    "export_chunks",
    "manifest_bytes",
    "summary_path",
    "automation_path",
    "wire_time",
]

FORMAT = "compliance-evidence-export/1"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
PUBLIC_KEY = "public-key.pem"
SIGNED_FILES = (MANIFEST, SIGNATURE, PUBLIC_KEY)
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)
_LEVEL = 6
_COMPRESSED = frozenset({"text/plain", "text/csv", "text/markdown", "application/json"})
"""Types worth deflating; the others (PDF, images, video, office files, archives) are stored."""
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@attrs.frozen(kw_only=True)
class ExportedTask:
    id: str
    title: str
    description: str
    status: str
    assignee_id: str | None
    approver_id: str | None
    due_date: dt.date | None
    frequency: str | None
    framework_id: str | None
    control_ids: tuple[str, ...]
    approved_at: dt.datetime | None


@attrs.frozen(kw_only=True)
class ExportedControl:
    id: str
    code: str
    name: str
    status: str
    framework_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class ExportedRun:
    """What an export takes of one run of a task automation (the automations area's record)."""

    id: str
    version: int
    status: str
    triggered_by: str
    triggered_by_id: str | None
    triggered_by_name: str | None
    due_at: dt.datetime | None
    reason: str
    duration_ms: int | None
    started_at: dt.datetime
    completed_at: dt.datetime | None
    evidence_id: str | None
    finding_id: str | None
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class ExportedAutomation:
    """What an export takes of a task automation: its definition's gist, its current version and
    its latest runs, newest first (at most ``MAX_RUNS`` of ``total_runs``)."""

    id: str
    task_id: str
    task_title: str
    name: str
    description: str
    is_enabled: bool
    kind: str
    method: str
    target: str | None
    """The probe's URL, or the callable's name."""
    schedule: str | None
    version: int
    version_published_at: dt.datetime | None
    version_changelog: str
    created_at: dt.datetime
    updated_at: dt.datetime
    runs: tuple[ExportedRun, ...]
    total_runs: int

    @property
    def latest_change(self) -> dt.datetime:
        """The newest time its records hold: the date of its PDF when no ``asOf`` dates it."""
        times = [self.updated_at, *(run.updated_at for run in self.runs)]
        if self.version_published_at is not None:
            times.append(self.version_published_at)
        return max(times)


@attrs.frozen(kw_only=True)
class Contents:
    """Everything an export holds but the bytes of its files, read in one transaction."""

    organization_id: str
    organization_name: str
    scope: Mapping[str, Any]
    """What was asked for (a task, or a framework and a period), as written in the manifest."""
    include_json: bool
    tasks: tuple[ExportedTask, ...]
    controls: tuple[ExportedControl, ...]
    framework_ids: tuple[str, ...]
    evidence: tuple[LedgerEntry, ...]
    missing: frozenset[str] = frozenset()
    """SHA-256 of files the blob store does not have (named in the manifest as left out)."""
    automations: tuple[ExportedAutomation, ...] = ()
    """The tasks' automations, each packed as its own PDF (``automation_path``)."""


def wire_time(value: dt.datetime | dt.date | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def _path(entry: LedgerEntry) -> str:
    name = _SAFE.sub("_", posixpath.basename(entry.file_name or "")).strip("._") or "file"
    if entry.media_type == "application/json" and not name.endswith(".json"):
        name += ".json"
    return f"tasks/{entry.task_id}/evidence/{entry.evidence_id}/v{entry.version}/{name[:120]}"


def summary_path(task_id: str) -> str:
    return f"tasks/{task_id}/summary.pdf"


def automation_path(automation: ExportedAutomation) -> str:
    """Under its task, before the task's evidence in path order (``automations`` < ``evidence``)."""
    return f"tasks/{automation.task_id}/automations/{automation.id}.pdf"


class _Sink(io.RawIOBase):
    """Where ``zipfile`` writes: it keeps what was written until the stream takes it. It can
    tell its position but not seek, so ``zipfile`` writes data descriptors."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


class _ZipStream:
    def __init__(self) -> None:
        self.sink = _Sink()
        self.zip = zipfile.ZipFile(self.sink, "w", allowZip64=True)

    def add(
        self, path: str, chunks: Iterable[bytes], *, compress: bool, size_hint: int = 0
    ) -> Generator[bytes, None, tuple[str, int]]:
        """Write one entry from ``chunks``, yielding the ZIP's bytes as they come; returns the
        entry's SHA-256 and size."""
        info = zipfile.ZipInfo(path, date_time=ENTRY_TIME)
        info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        info._compresslevel = _LEVEL if compress else None  # type: ignore[attr-defined]
        info.create_system = 3
        info.external_attr = 0o100644 << 16
        info.file_size = size_hint  # zipfile decides on ZIP64 fields from it, before the bytes
        digest = hashlib.sha256()
        size = 0
        with self.zip.open(info, "w") as target:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                target.write(chunk)
                data = self.sink.take()
                if data:
                    yield data
        data = self.sink.take()
        if data:
            yield data
        return digest.hexdigest(), size

    def finish(self) -> bytes:
        self.zip.close()
        return self.sink.take()


def _one(data: bytes) -> Iterator[bytes]:
    yield data


def manifest_bytes(manifest: Mapping[str, Any]) -> bytes:
    """The manifest as written: keys sorted, two-space indents, UTF-8, a final newline."""
    return (json.dumps(manifest, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def export_chunks(
    contents: Contents,
    blobs: Callable[[], BlobStore],
    signer: Signer,
    summary: Callable[[ExportedTask], bytes],
    progress: Callable[[int], None] | None = None,
    report: Callable[[ExportedAutomation], bytes] | None = None,
) -> Iterator[bytes]:
    """The export's ZIP, as a stream of chunks.

    :param blobs: the blob store, opened only when a file is to be copied
    :param summary: the PDF summarising a task (rendered when its entry is written)
    :param progress: called with the number of tasks packed so far, after each task
    :param report: the PDF of one of a task's automations (rendered when its entry is written);
        needed when ``contents`` holds automations
    """
    stream = _ZipStream()
    organization = contents.organization_id
    files: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    by_task: dict[str, list[LedgerEntry]] = {}
    for entry in contents.evidence:
        by_task.setdefault(entry.task_id, []).append(entry)
    automations = _automations_by_task(contents)
    for done, task in enumerate(sorted(contents.tasks, key=lambda t: t.id), 1):
        for automation in automations.get(task.id, ()):
            assert report is not None, "an export holding automations needs their report"
            path = automation_path(automation)
            sha256, size = yield from stream.add(path, _one(report(automation)), compress=False)
            files.append({"path": path, "sha256": sha256, "size": size})
        entries = sorted(by_task.get(task.id, ()), key=lambda e: (_path(e), e.evidence_id, e.version))
        for entry in entries:
            described = _described(entry)
            reason = _left_out(entry, contents)
            if reason is None and entry.kind == "file":
                assert entry.sha256 is not None
                path = _path(entry)
                if entry.media_type == "application/json":
                    with blobs().open(organization, entry.sha256) as source:
                        redacted = redact_json(source.read_all())
                    if redacted is None:
                        reason = "not valid JSON: it cannot be redacted, so it is left out"
                    else:
                        sha256, size = yield from stream.add(path, _one(redacted), compress=True)
                        described["redacted"] = True
                else:
                    with blobs().open(organization, entry.sha256) as source:
                        sha256, size = yield from stream.add(
                            path, source, compress=entry.media_type in _COMPRESSED, size_hint=entry.size or 0
                        )
                if reason is None:
                    files.append({"path": path, "sha256": sha256, "size": size})
                    described.update(path=path, sha256=sha256, size=size)
            if reason is not None:
                described["leftOut"] = reason
            evidence.append(described)
        pdf = summary(task)
        sha256, size = yield from stream.add(summary_path(task.id), _one(pdf), compress=False)
        files.append({"path": summary_path(task.id), "sha256": sha256, "size": size})
        if progress is not None:
            progress(done)
    manifest = manifest_bytes(_manifest(contents, signer, files, evidence))
    yield from stream.add(MANIFEST, _one(manifest), compress=True)
    signature = base64.b64encode(signer.sign(manifest)) + b"\n"
    yield from stream.add(SIGNATURE, _one(signature), compress=False)
    yield from stream.add(PUBLIC_KEY, _one(signer.public_key_pem.encode("ascii")), compress=False)
    yield stream.finish()


def _automations_by_task(contents: Contents) -> dict[str, list[ExportedAutomation]]:
    by_task: dict[str, list[ExportedAutomation]] = {}
    for automation in sorted(contents.automations, key=automation_path):
        by_task.setdefault(automation.task_id, []).append(automation)
    return by_task


def _left_out(entry: LedgerEntry, contents: Contents) -> str | None:
    if entry.kind != "file":
        return None
    if entry.sha256 is None or not is_sha256(entry.sha256) or entry.sha256 in contents.missing:
        return "the file's content is missing from the blob store"
    if entry.media_type == "application/json":
        if not contents.include_json:
            return "JSON evidence was not asked for (includeJson=false)"
        if (entry.size or 0) > MAX_REDACTED_BYTES:
            return f"JSON larger than {MAX_REDACTED_BYTES} bytes is not redacted, so it is left out"
    return None


def _described(entry: LedgerEntry) -> dict[str, Any]:
    """The manifest's record of one evidence version (``sha256`` and ``size`` are those of the
    file in the ZIP; ``ledgerSha256`` and ``ledgerSize`` those the ledger recorded at upload,
    which differ for redacted JSON)."""
    described: dict[str, Any] = {
        "evidenceId": entry.evidence_id,
        "versionId": entry.version_id,
        "taskId": entry.task_id,
        "version": entry.version,
        "kind": entry.kind,
        "title": entry.title,
        "source": entry.source,
        "collectedAt": wire_time(entry.collected_at),
        "validUntil": wire_time(entry.valid_until),
        "uploadedAt": wire_time(entry.uploaded_at),
        "controlIds": sorted(entry.control_ids),
    }
    if entry.kind == "file":
        described.update(
            fileName=entry.file_name, mediaType=entry.media_type, ledgerSha256=entry.sha256, ledgerSize=entry.size
        )
    elif entry.kind == "link":
        described["url"] = entry.url
    else:
        described["note"] = entry.note
    return described


def _manifest(
    contents: Contents, signer: Signer, files: Sequence[dict[str, Any]], evidence: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    automations = _automations_by_task(contents)
    return {
        "format": FORMAT,
        "organization": {"id": contents.organization_id, "name": contents.organization_name},
        "scope": dict(contents.scope),
        "signing": {"algorithm": signer.algorithm, "fingerprint": signer.fingerprint, "signature": SIGNATURE},
        "frameworks": [{"id": framework_id} for framework_id in contents.framework_ids],
        "controls": [
            {
                "id": control.id,
                "code": control.code,
                "name": control.name,
                "status": control.status,
                "frameworkIds": sorted(control.framework_ids),
            }
            for control in sorted(contents.controls, key=lambda c: c.id)
        ],
        "tasks": [
            {
                "id": task.id,
                "title": task.title,
                "description": task.description,
                "status": task.status,
                "assigneeId": task.assignee_id,
                "approverId": task.approver_id,
                "dueDate": wire_time(task.due_date),
                "frequency": task.frequency,
                "frameworkId": task.framework_id,
                "controlIds": sorted(task.control_ids),
                "approvedAt": wire_time(task.approved_at),
                "summary": summary_path(task.id),
                "automations": [
                    {
                        "id": automation.id,
                        "name": automation.name,
                        "version": automation.version,
                        "totalRuns": automation.total_runs,
                        "runsInPdf": len(automation.runs),
                        "pdf": automation_path(automation),
                    }
                    for automation in automations.get(task.id, ())
                ],
            }
            for task in sorted(contents.tasks, key=lambda t: t.id)
        ],
        "evidence": sorted(evidence, key=lambda e: (e["taskId"], e["evidenceId"], e["version"])),
        "files": sorted(files, key=lambda f: f["path"]),
    }
