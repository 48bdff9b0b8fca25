"""Evidence exports in-process: the ZIP's contents and manifest, its signature checked with
``cryptography`` against the published key, reproducibility, redaction, verification (one byte
changed, a file added or missing, another instance's key), the framework/period/asOf scope, the
job and its progress, the key file, who may export, and a task automation's evidence as a PDF
(alone and inside the task's ZIP)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdf
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from compliance_core import Actor, FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas.automations import (
    AUTOMATION_RUNS,
    AutomationPatch,
    AutomationRun,
    NewAutomation,
    RunStatus,
    RunTrigger,
)
from compliance_core.areas.evidence.models import NewEvidence, NewVersion
from compliance_core.areas.evidence_export import (
    REDACTED,
    ExportQuery,
    ExportStatus,
    NewEvidenceExport,
    TaskExportQuery,
    VerifyExport,
    automation_report,
    is_secret_key,
    redact,
    redact_json,
)
from compliance_core.areas.evidence_export.service import SYNCHRONOUS_PDFS
from compliance_core.areas.tasks import NewTask
from compliance_core.kernel.blobs import blobs_of
from compliance_core.kernel.errors import Forbidden, NotFound, ServiceUnavailable, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.signing import default_signing_url
from compliance_store.memory import MemoryStore

REPORT = b"account,role,reviewed\nalice,admin,yes\nbob,viewer,no\n"
CONFIG = {"user": "svc", "password": "hunter2", "nested": [{"API-Key": "k-123", "region": "eu"}], "token_ttl": 30}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return Platform(MemoryStore(), clock=clock, ids=SequentialIds())


@pytest.fixture
def task(platform: Platform, owner: Actor) -> str:
    made = platform.tasks.create(owner, NewTask(title="Quarterly access review", description="Check *every* account"))
    return made.id


@pytest.fixture
def evidence(platform: Platform, owner: Actor, task: str) -> dict[str, str]:
    """A CSV in two versions, a JSON file holding secrets, a link and a note."""
    csv = platform.evidence.add(
        owner, task, NewEvidence(file_name="access.csv", file_type="text/csv", file_data=_b64(REPORT))
    )
    platform.evidence.add_version(
        owner,
        task,
        csv.id,
        NewVersion(file_name="access.csv", file_type="text/csv", file_data=_b64(REPORT + b"carol,admin,yes\n")),
    )
    config = platform.evidence.add(
        owner,
        task,
        NewEvidence(file_name="config.json", file_type="application/json", file_data=_b64(json.dumps(CONFIG).encode())),
    )
    link = platform.evidence.add(owner, task, NewEvidence(kind="link", url="https://tickets.example/ACC-12"))
    note = platform.evidence.add(owner, task, NewEvidence(kind="note", note="Walkthrough held with the IT lead."))
    return {"csv": csv.id, "config": config.id, "link": link.id, "note": note.id}


def _zip(data: bytes) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(data))


def _manifest(data: bytes) -> dict[str, Any]:
    return json.loads(_zip(data).read("manifest.json"))  # type: ignore[no-any-return]


def _rewritten(data: bytes, change: dict[str, bytes | None], add: dict[str, bytes] | None = None) -> bytes:
    """The ZIP with some entries' contents replaced (None: left out) and others added."""
    out = io.BytesIO()
    with _zip(data) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            content = change.get(info.filename, source.read(info.filename))
            if content is not None:
                target.writestr(info, content)
        for name, content in (add or {}).items():
            target.writestr(name, content)
    return out.getvalue()


def _flipped(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x01
    return bytes(flipped)


def _verify(platform: Platform, actor: Actor, data: bytes) -> Any:
    return platform.evidence_export_auditor.verify(actor, VerifyExport(file_data=_b64(data)))


# -- the ZIP --------------------------------------------------------------------------------------


def test_a_task_zip_lists_every_file_with_its_sha256_and_the_signature_verifies(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    data = platform.evidence_export.export(owner, task).read()
    archive = _zip(data)
    names = archive.namelist()
    assert names[-3:] == ["manifest.json", "manifest.sig", "public-key.pem"]
    assert names[:-3] == sorted(names[:-3])
    manifest = _manifest(data)
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(names[:-3])
    for path, entry in listed.items():
        content = archive.read(path)
        assert hashlib.sha256(content).hexdigest() == entry["sha256"]
        assert len(content) == entry["size"]
    assert f"tasks/{task}/summary.pdf" in listed
    assert archive.read(f"tasks/{task}/summary.pdf").startswith(b"%PDF-")
    # the signature checks with cryptography alone, against the key the ZIP and the API publish
    public = load_pem_public_key(archive.read("public-key.pem"))
    assert isinstance(public, Ed25519PublicKey)
    public.verify(base64.b64decode(archive.read("manifest.sig")), archive.read("manifest.json"))
    with pytest.raises(InvalidSignature):
        public.verify(base64.b64decode(archive.read("manifest.sig")), archive.read("manifest.json") + b" ")
    published = platform.evidence_export_auditor.public_key(owner)
    assert published.public_key_pem.encode() == archive.read("public-key.pem")
    assert manifest["signing"] == {
        "algorithm": "Ed25519",
        "fingerprint": published.fingerprint,
        "signature": "manifest.sig",
    }


def test_the_manifest_lists_the_task_its_versions_links_and_notes(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    manifest = _manifest(platform.evidence_export.export(owner, task).read())
    assert manifest["format"] == "compliance-evidence-export/1"
    assert [t["id"] for t in manifest["tasks"]] == [task]
    assert manifest["tasks"][0]["title"] == "Quarterly access review"
    by_item: dict[str, list[dict[str, Any]]] = {}
    for entry in manifest["evidence"]:
        by_item.setdefault(entry["evidenceId"], []).append(entry)
    csv = by_item[evidence["csv"]]
    assert [v["version"] for v in csv] == [1, 2]
    assert csv[1]["sha256"] == hashlib.sha256(REPORT + b"carol,admin,yes\n").hexdigest() == csv[1]["ledgerSha256"]
    assert all(v["collectedAt"] and "validUntil" in v for v in csv)
    assert csv[0]["path"] != csv[1]["path"]
    assert by_item[evidence["link"]][0]["url"] == "https://tickets.example/ACC-12"
    assert by_item[evidence["note"]][0]["note"] == "Walkthrough held with the IT lead."
    assert "path" not in by_item[evidence["link"]][0]
    assert json.loads(_zip(platform.evidence_export.export(owner, task).read()).read("manifest.json")) == manifest


def test_json_evidence_is_exported_with_its_secrets_redacted(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    data = platform.evidence_export.export(owner, task).read()
    entry = next(e for e in _manifest(data)["evidence"] if e["evidenceId"] == evidence["config"])
    exported = json.loads(_zip(data).read(entry["path"]))
    assert exported == {
        "user": "svc",
        "password": REDACTED,
        "nested": [{"API-Key": REDACTED, "region": "eu"}],
        "token_ttl": REDACTED,
    }
    assert entry["redacted"] is True and entry["sha256"] != entry["ledgerSha256"]
    assert b"hunter2" not in data and b"k-123" not in data
    left_out = platform.evidence_export.export(owner, task, TaskExportQuery(include_json=False)).read()
    entry = next(e for e in _manifest(left_out)["evidence"] if e["evidenceId"] == evidence["config"])
    assert "path" not in entry and "includeJson=false" in entry["leftOut"]
    assert _verify(platform, owner, left_out).valid


def test_the_redaction_rule() -> None:
    assert is_secret_key("password") and is_secret_key("DB_PASSWORD") and is_secret_key("x-api-key")
    assert is_secret_key("Authorization") and is_secret_key("private_key_pem") and is_secret_key("clientSecret")
    assert is_secret_key("aws.access_key_id") and is_secret_key("Set-Cookie")
    assert not is_secret_key("username") and not is_secret_key("region") and not is_secret_key("status")
    document = {"a": [{"secret": {"deep": 1}}, 2], "b": {"token": None}, "ok": "password"}
    assert redact(document) == {"a": [{"secret": REDACTED}, 2], "b": {"token": REDACTED}, "ok": "password"}
    assert document["b"] == {"token": None}  # the original is left alone
    deep: Any = "leaf"
    for _ in range(5000):
        deep = {"level": deep}
    assert redact(deep) is not None  # no recursion
    assert redact_json(b"not json") is None
    assert (
        redact_json(b'{"Passwort": "x", "password": "y"}') == b'{\n  "Passwort": "x",\n  "password": "[redacted]"\n}\n'
    )


def test_two_exports_of_the_same_records_are_byte_identical(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str], clock: FrozenClock
) -> None:
    first = platform.evidence_export.export(owner, task).read()
    clock.advance(days=3)  # the moment of the export is not in it
    assert platform.evidence_export.export(owner, task).read() == first
    whole = platform.evidence_export_auditor.export_all(owner).read()
    assert platform.evidence_export_auditor.export_all(owner).read() == whole
    for info in _zip(whole).infolist():
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
    platform.tasks.create(owner, NewTask(title="Another"))  # different records: a different export
    assert platform.evidence_export_auditor.export_all(owner).read() != whole


# -- verify ---------------------------------------------------------------------------------------


def test_verify_accepts_an_export_as_it_was_made(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    data = platform.evidence_export_auditor.export_all(owner).read()
    result = _verify(platform, owner, data)
    assert result.valid and result.problems == ()
    assert result.files == len(_manifest(data)["files"])


def test_changing_one_byte_of_any_file_makes_verify_fail(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    data = platform.evidence_export.export(owner, task).read()
    for name in _zip(data).namelist():
        content = _zip(data).read(name)
        changed = bytearray(content)
        changed[len(changed) // 2] ^= 0x20
        result = _verify(platform, owner, _rewritten(data, {name: bytes(changed)}))
        assert not result.valid, name
        assert any(name in problem for problem in result.problems), (name, result.problems)
    assert not _verify(platform, owner, _flipped(data)).valid  # a byte of the ZIP itself


def test_verify_names_added_and_missing_files(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    data = platform.evidence_export.export(owner, task).read()
    added = _verify(platform, owner, _rewritten(data, {}, {"tasks/extra.txt": b"slipped in"}))
    assert not added.valid and added.problems == ("tasks/extra.txt is in the ZIP but not in the manifest",)
    summary = f"tasks/{task}/summary.pdf"
    missing = _verify(platform, owner, _rewritten(data, {summary: None}))
    assert missing.problems == (f"{summary} is in the manifest but not in the ZIP",)
    unsigned = _verify(platform, owner, _rewritten(data, {"manifest.sig": None}))
    assert unsigned.problems == ("manifest.sig is missing",)
    assert _verify(platform, owner, b"PK\x05\x06" + bytes(18)).problems == (
        "manifest.json is missing",
        "manifest.sig is missing",
        "public-key.pem is missing",
    )
    assert _verify(platform, owner, b"just text").problems == ("the file is not a ZIP archive",)
    with pytest.raises(ValidationError):  # the file is required: the document says so
        VerifyExport(file_data=None)


def test_an_export_signed_by_another_instance_fails_verify(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    elsewhere = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    boot = elsewhere.bootstrap("Acme")
    theirs = elsewhere.actor(boot.organization.id)
    elsewhere.tasks.create(theirs, NewTask(title="Quarterly access review"))
    foreign = elsewhere.evidence_export_auditor.export_all(theirs).read()
    assert _verify(elsewhere, theirs, foreign).valid
    result = _verify(platform, owner, foreign)
    assert not result.valid
    assert any("not this instance's signature" in p for p in result.problems)
    assert any("public-key.pem" in p for p in result.problems)
    # our manifest re-signed with their key and their key put in: still not ours
    ours = platform.evidence_export.export(owner, task).read()
    swapped = _rewritten(
        ours,
        {"manifest.sig": _zip(foreign).read("manifest.sig"), "public-key.pem": _zip(foreign).read("public-key.pem")},
    )
    assert not _verify(platform, owner, swapped).valid


# -- scope ------------------------------------------------------------------------------------------


def test_an_organization_export_for_a_framework_and_a_period(
    platform: Platform, owner: Actor, clock: FrozenClock
) -> None:
    iso = platform.tasks.create(owner, NewTask(title="ISO work", framework_id="iso-27001-2022"))
    other = platform.tasks.create(owner, NewTask(title="Other work", framework_id="soc2"))
    early = dt.datetime(2025, 1, 10, tzinfo=dt.UTC)
    late = dt.datetime(2025, 6, 10, tzinfo=dt.UTC)
    for when in (early, late):
        platform.evidence.add(owner, iso.id, NewEvidence(kind="note", note=f"seen {when:%Y-%m-%d}", collected_at=when))
    platform.evidence.add(owner, other.id, NewEvidence(kind="note", note="other", collected_at=early))
    query = ExportQuery(
        framework_id="iso-27001-2022",
        collected_from=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
        collected_to=dt.datetime(2025, 4, 1, tzinfo=dt.UTC),
    )
    manifest = _manifest(platform.evidence_export_auditor.export_all(owner, query).read())
    assert [t["id"] for t in manifest["tasks"]] == [iso.id]
    assert [e["note"] for e in manifest["evidence"]] == ["seen 2025-01-10"]
    assert manifest["frameworks"] == [{"id": "iso-27001-2022"}]
    assert manifest["scope"] == {
        "frameworkId": "iso-27001-2022",
        "collectedFrom": "2025-01-01T00:00:00Z",
        "collectedTo": "2025-04-01T00:00:00Z",
        "asOf": None,
        "includeJson": True,
    }


def test_as_of_leaves_out_later_versions_and_is_the_only_time_inside(
    platform: Platform, owner: Actor, task: str, clock: FrozenClock
) -> None:
    first = platform.evidence.add(owner, task, NewEvidence(kind="note", note="v1"))
    as_of = clock.now()
    clock.advance(hours=1)
    platform.evidence.add_version(owner, task, first.id, NewVersion(note="v2"))
    data = platform.evidence_export.export(owner, task, TaskExportQuery(as_of=as_of)).read()
    manifest = _manifest(data)
    assert [e["note"] for e in manifest["evidence"]] == ["v1"]
    assert manifest["scope"]["asOf"] == as_of.isoformat().replace("+00:00", "Z")
    assert [e["note"] for e in _manifest(platform.evidence_export.export(owner, task).read())["evidence"]] == [
        "v1",
        "v2",
    ]


def test_a_file_missing_from_the_blob_store_is_named_and_the_export_still_verifies(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str], boot: Any
) -> None:
    blobs_of(platform.services["evidence_export"].exporter.context).delete(
        boot.organization.id, hashlib.sha256(REPORT).hexdigest()
    )
    data = platform.evidence_export.export(owner, task).read()
    first = next(e for e in _manifest(data)["evidence"] if e["evidenceId"] == evidence["csv"] and e["version"] == 1)
    assert first["leftOut"] == "the file's content is missing from the blob store" and "path" not in first
    assert _verify(platform, owner, data).valid


def test_the_summary_answers_each_item_with_its_versions(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str], other_org: Actor
) -> None:
    summary = platform.evidence_export.summary(owner, task)
    assert summary.task_id == task and summary.organization_name == "Acme"
    assert summary.total_items == 4 and summary.total_versions == 5
    csv = next(item for item in summary.evidence if item.id == evidence["csv"])
    assert [v.version for v in csv.versions] == [1, 2] and csv.total_versions == 2
    with pytest.raises(NotFound):
        platform.evidence_export.summary(other_org, task)
    with pytest.raises(NotFound):
        platform.evidence_export.export(other_org, task)


# -- the job ------------------------------------------------------------------------------------------


def test_an_export_job_is_built_by_the_chore_with_its_progress_and_events(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    platform.tasks.create(owner, NewTask(title="Second task"))
    accepted = platform.evidence_export_auditor.create(owner, NewEvidenceExport(), idempotency_key="k-1")
    job = accepted.job
    assert job.status is ExportStatus.QUEUED and accepted.status == "evidence_export_auditor.get"
    again = platform.evidence_export_auditor.create(owner, NewEvidenceExport(), idempotency_key="k-1")
    assert again.job.id == job.id  # replayed
    chore = next(c for c in platform.chores if c.name == "build evidence exports")
    assert platform.run_chore(chore) == 1
    assert platform.run_chore(chore) == 0  # nothing is built twice
    done = platform.evidence_export_auditor.get(owner, job.id)
    assert done.status is ExportStatus.DONE and done.tasks_done == done.tasks_total == 2
    data = platform.evidence_export_auditor.download(owner, job.id).read()
    assert hashlib.sha256(data).hexdigest() == done.sha256 and len(data) == done.size
    assert data == platform.evidence_export_auditor.export_all(owner).read()
    assert _verify(platform, owner, data).valid
    with platform.uow.read() as session:
        types = [m.type for m in session[OUTBOX].pending(1000) if m.type.startswith("evidence_export.")]
    assert types == ["evidence_export.requested", "evidence_export.started", "evidence_export.completed"]
    audit = platform.audit_log.list(owner).items
    assert {"evidence_export.requested", "evidence_export.completed"} <= {entry.action for entry in audit}
    assert [j.id for j in platform.evidence_export_auditor.list(owner).items] == [job.id]


def test_a_queued_job_downloads_the_same_bytes_it_will_store(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str]
) -> None:
    job = platform.evidence_export_auditor.create(owner, NewEvidenceExport(include_json=False)).job
    early = platform.evidence_export_auditor.download(owner, job.id).read()
    platform.run_chores()
    assert platform.evidence_export_auditor.download(owner, job.id).read() == early
    assert hashlib.sha256(early).hexdigest() == platform.evidence_export_auditor.get(owner, job.id).sha256


# -- who may export -------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", list(Role))
def test_the_organization_export_is_for_auditors_admins_and_owners(
    platform: Platform, actor_as: Any, task: str, role: Role
) -> None:
    actor = actor_as(role)
    allowed = role in (Role.AUDITOR, Role.ADMIN, Role.OWNER)
    calls = [
        lambda: platform.evidence_export_auditor.export_all(actor).read(),
        lambda: platform.evidence_export_auditor.create(actor, NewEvidenceExport()),
        lambda: platform.evidence_export_auditor.list(actor),
        lambda: platform.evidence_export.export(actor, task).read(),
        lambda: platform.evidence_export.summary(actor, task),
    ]
    for call in calls:
        if allowed:
            call()
        else:
            with pytest.raises(Forbidden):
                call()
    assert platform.evidence_export_auditor.public_key(actor).algorithm == "Ed25519"  # anyone may check


# -- the key -------------------------------------------------------------------------------------------


def test_the_key_file_is_made_beside_the_database_once_with_mode_0600(tmp_path: Path, migrated_sqlite: Any) -> None:
    url = migrated_sqlite(tmp_path / "c.db")
    with Platform.open(url, clock=FrozenClock(), ids=SequentialIds()) as first:
        boot = first.bootstrap("Acme")
        owner = first.actor(boot.organization.id)
        key = first.evidence_export_auditor.public_key(owner)
        made = first.evidence_export_auditor.export_all(owner).read()
    path = tmp_path / "c.db-signing-key.pem"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with Platform.open(url, clock=FrozenClock(), ids=SequentialIds()) as again:
        assert again.evidence_export_auditor.public_key(owner).fingerprint == key.fingerprint
        assert _verify(again, owner, made).valid
    assert default_signing_url("postgresql://db/x", {}) is None
    assert default_signing_url("postgresql://db/x", {"COMPLIANCE_SIGNING_KEY_FILE": str(path)}) == path.as_uri()


def test_a_large_file_streams_through_the_export_in_flat_memory(tmp_path: Path, clock: FrozenClock) -> None:
    """32 MiB of evidence goes from the local blob store into the ZIP chunk by chunk: the export's
    peak of traced memory stays a few MiB, far below the file."""
    import tracemalloc

    from compliance_core.kernel.uploads import Upload

    size = 32 * 1024 * 1024
    block = b"%PDF-1.7\n" + os.urandom(1024 * 1024 - 9)

    def source() -> Iterator[bytes]:
        yield block
        for _ in range(size // len(block) - 1):
            yield os.urandom(len(block))

    platform = Platform(MemoryStore(), clock=clock, ids=SequentialIds(), settings={"blobs": (tmp_path / "b").as_uri()})
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="Firewall review")).id
    platform.evidence.add(owner, task, NewEvidence(file_name="rules.pdf", file_data=Upload(source())))
    download = platform.evidence_export.export(owner, task)  # its summary PDF is rendered here, before the measure
    tracemalloc.start()
    try:
        digest = hashlib.sha256()
        written = 0
        for chunk in download.chunks:
            digest.update(chunk)
            written += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert written > size
    assert peak < 8 * 1024 * 1024, peak


# -- a task automation's evidence as a PDF -----------------------------------------------------------


def _pdf_text(data: bytes) -> str:
    """The PDF's text, as pypdf extracts it, with its lines joined by single spaces."""
    return " ".join(" ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages).split())


@pytest.fixture
def automation(platform: Platform, owner: Actor, task: str) -> str:
    """An automation in its second version, run three times: now by the owner (its probe has no
    URL: an error), then on its schedule (passed, with evidence; failed, opening a finding)."""
    made = platform.automations.add(
        owner,
        task,
        NewAutomation(name="Status page answers", description="The status page is up.", schedule="monthly"),
    )
    platform.automations.update(owner, task, made.id, AutomationPatch(schedule="quarterly", changelog="Less often."))
    platform.automations.run(owner, task, made.id)
    _add_runs(platform, owner, task, made.id, 2, start=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    return made.id


def _add_runs(platform: Platform, owner: Actor, task: str, automation_id: str, count: int, start: dt.datetime) -> None:
    """``count`` scheduled runs an hour apart from ``start``, alternately passed and failed (as the
    schedule's chore records them), written straight to the automations area's table."""
    with platform.uow.write(None) as tx:
        for n in range(count):
            at = start + dt.timedelta(hours=n)
            passed = n % 2 == 0
            tx[AUTOMATION_RUNS].add(
                AutomationRun(
                    id=f"atr_{automation_id}_{n:04d}",
                    organization_id=owner.organization_id,
                    task_id=task,
                    automation_id=automation_id,
                    automation_name="Status page answers",
                    version=2,
                    status=RunStatus.PASSED if passed else RunStatus.FAILED,
                    triggered_by=RunTrigger.SCHEDULE,
                    due_at=at,
                    reason=f"check {n}: " + ("every assertion held" if passed else "status 503, expected 200"),
                    duration_ms=120,
                    started_at=at,
                    completed_at=at + dt.timedelta(seconds=1),
                    evidence_id="evd_seen" if passed else None,
                    finding_id=None if passed else "fnd_opened",
                    created_at=at,
                    updated_at=at + dt.timedelta(seconds=1),
                )
            )


def test_an_automation_pdf_names_the_automation_and_its_runs_newest_first(
    platform: Platform, owner: Actor, task: str, automation: str
) -> None:
    download = platform.evidence_export.automation_pdf(owner, task, automation)
    assert download.media_type == "application/pdf" and download.filename == f"evidence-{automation}.pdf"
    data = download.read()
    assert data.startswith(b"%PDF-")
    text = _pdf_text(data)
    assert "Status page answers" in text and "The status page is up." in text
    assert f"Automation {automation} of task {task}" in text
    assert "Enabled: yes; schedule: quarterly; definition version 2" in text
    assert "Less often." in text  # the current version's changelog
    assert "All 3 runs, newest first." in text
    newest, middle, oldest = (text.index(f"Run {n}:") for n in (3, 2, 1))
    assert newest < middle < oldest
    assert "Run 3: failed" in text and "Verdict: failed; reason: check 1: status 503, expected 200" in text
    assert "Produced: finding fnd_opened" in text
    assert "Run 2: passed" in text and "Produced: evidence evd_seen added to the task" in text
    assert "Triggered by: the schedule, due 2030-01-01 00:00:00 UTC" in text
    assert "Started 2030-01-01 01:00:00 UTC; completed 2030-01-01 01:00:01 UTC (120 ms)" in text
    assert "Run 1: error" in text and "Verdict: none (the check could not be made)" in text
    assert "Error: the automation has no URL to probe yet" in text
    assert "Triggered by: run now by" in text


def test_an_automation_pdf_lists_the_latest_runs_and_says_how_many_are_left_out(
    platform: Platform, owner: Actor, task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert automation_report.MAX_RUNS == 200
    monkeypatch.setattr(automation_report, "MAX_RUNS", 4)  # the same rule, on a PDF quick to lay out
    made = platform.automations.add(owner, task, NewAutomation(name="Backups ran"))
    _add_runs(platform, owner, task, made.id, 7, start=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    text = _pdf_text(platform.evidence_export.automation_pdf(owner, task, made.id).read())
    assert "The latest 4 of 7 runs, newest first; the 3 older runs are left out" in text
    assert [n for n in range(1, 8) if f"Run {n}:" in text] == [4, 5, 6, 7]
    assert f"atr_{made.id}_0006" in text and f"atr_{made.id}_0002" not in text


def test_an_automation_pdf_is_a_404_for_another_tasks_or_organizations_automation(
    platform: Platform, owner: Actor, task: str, automation: str, other_org: Actor
) -> None:
    other_task = platform.tasks.create(owner, NewTask(title="Another task")).id
    for task_id, automation_id, resource in (
        (other_task, automation, "automation"),  # it exists, but is not this task's
        (task, "aut_missing", "automation"),
        ("tsk_missing", automation, "task"),
    ):
        with pytest.raises(NotFound) as raised:
            platform.evidence_export.automation_pdf(owner, task_id, automation_id)
        assert raised.value.details == {
            "resource": resource,
            "id": automation_id if resource == "automation" else task_id,
        }
    theirs = platform.tasks.create(other_org, NewTask(title="Their task")).id
    with pytest.raises(NotFound):
        platform.evidence_export.automation_pdf(other_org, task, automation)
    with pytest.raises(NotFound):
        platform.evidence_export.automation_pdf(other_org, theirs, automation)


def test_an_automation_pdf_has_the_same_bytes_for_the_same_records(
    platform: Platform, owner: Actor, task: str, automation: str, clock: FrozenClock
) -> None:
    first = platform.evidence_export.automation_pdf(owner, task, automation).read()
    clock.advance(days=3)  # the moment it is asked for is not in it
    assert platform.evidence_export.automation_pdf(owner, task, automation).read() == first
    platform.automations.run(owner, task, automation)  # a new run: new bytes
    again = platform.evidence_export.automation_pdf(owner, task, automation).read()
    assert again != first and "All 4 runs" in _pdf_text(again)


def test_a_task_zip_holds_a_pdf_per_automation_listed_and_signed_in_the_manifest(
    platform: Platform, owner: Actor, task: str, evidence: dict[str, str], automation: str, clock: FrozenClock
) -> None:
    second = platform.automations.add(owner, task, NewAutomation(name="Second check")).id
    data = platform.evidence_export.export(owner, task).read()
    archive = _zip(data)
    names = archive.namelist()
    assert names[:-3] == sorted(names[:-3])
    paths = [f"tasks/{task}/automations/{automation}.pdf", f"tasks/{task}/automations/{second}.pdf"]
    manifest = _manifest(data)
    listed = {f["path"]: f for f in manifest["files"]}
    for path in paths:
        content = archive.read(path)
        assert content.startswith(b"%PDF-") and hashlib.sha256(content).hexdigest() == listed[path]["sha256"]
    assert manifest["tasks"][0]["automations"] == [
        {
            "id": automation,
            "name": "Status page answers",
            "version": 2,
            "totalRuns": 3,
            "runsInPdf": 3,
            "pdf": paths[0],
        },
        {"id": second, "name": "Second check", "version": 1, "totalRuns": 0, "runsInPdf": 0, "pdf": paths[1]},
    ]
    assert "Run 3: failed" in _pdf_text(archive.read(paths[0]))
    assert _verify(platform, owner, data).valid
    clock.advance(days=1)
    assert platform.evidence_export.export(owner, task).read() == data  # still reproducible
    # asOf leaves out the runs made after it (the two scheduled runs are dated 2030)
    as_of = dt.datetime(2029, 1, 1, tzinfo=dt.UTC)
    earlier = _manifest(platform.evidence_export.export(owner, task, TaskExportQuery(as_of=as_of)).read())
    assert [(a["id"], a["totalRuns"], a["runsInPdf"]) for a in earlier["tasks"][0]["automations"]] == [
        (automation, 1, 1),
        (second, 0, 0),
    ]


def test_an_export_larger_than_a_request_waits_for_is_refused_or_left_to_the_worker() -> None:
    """More PDFs than ``SYNCHRONOUS_PDFS``: the export now is a 400 saying how many, and an
    unbuilt job's download a 503 until the worker has built it."""
    with Platform.open("memory://", clock=FrozenClock(), settings={"signing": "memory://"}) as platform:
        owner = Actor(organization_id=platform.bootstrap("Acme").organization.id, role=Role.OWNER, auth_type="local")
        for n in range(SYNCHRONOUS_PDFS + 1):
            platform.tasks.create(owner, NewTask(title=f"Task {n}"))
        with pytest.raises(ValidationError) as refused:
            platform.evidence_export_auditor.export_all(owner)
        assert refused.value.details["field"] == "frameworkId"
        assert f"render {SYNCHRONOUS_PDFS + 1} PDFs" in refused.value.details["reason"]
        job = platform.evidence_export_auditor.create(owner, NewEvidenceExport()).job
        with pytest.raises(ServiceUnavailable):
            platform.evidence_export_auditor.download(owner, job.id)
