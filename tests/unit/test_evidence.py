"""Evidence in-process: the items and their versions, the content each kind holds, the blobs a
write stores and a delete releases, the controls evidence proves (stale once it expires, flipped
once by the sweep), ``evidence.expiring`` once per version, comments on evidence, and a task's
deletion taking its evidence along."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib

import pytest

from compliance_core import Conflict, FrozenClock, NotFound, Platform, SequentialIds, ValidationError
from compliance_core.areas.comments import NewComment
from compliance_core.areas.evidence import (
    EvidenceFilter,
    EvidenceKind,
    EvidencePatch,
    EvidenceSettings,
    NewAttachment,
    NewEvidence,
    NewVersion,
)
from compliance_core.areas.frameworks.control_models import ControlStatus, NewControl
from compliance_core.areas.tasks import NewTask
from compliance_core.kernel.errors import TooLarge
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.uploads import Upload
from compliance_store.memory import MemoryStore

CSV = b"account,role\nalice,admin\n"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _types(platform: Platform) -> list[str]:
    with platform.uow.read() as session:
        return [message.type for message in session[OUTBOX].pending(10_000)]


@pytest.fixture
def task(platform: Platform, owner) -> str:
    return platform.tasks.create(owner, NewTask(title="Access review")).id


def _file(platform: Platform, owner, task: str, data: bytes = CSV, **fields) -> object:
    return platform.evidence.add(owner, task, NewEvidence(file_name="review.csv", file_data=_b64(data), **fields))


def test_a_file_is_content_addressed_and_dated_by_what_it_shows(platform: Platform, owner, task: str) -> None:
    collected = dt.datetime(2025, 12, 1, tzinfo=dt.UTC)
    item = _file(platform, owner, task, collected_at=collected, source="device", description="From the MDM")
    assert item.kind is EvidenceKind.FILE and item.title == "review.csv" and item.media_type == "text/csv"
    assert item.sha256 == hashlib.sha256(CSV).hexdigest() and item.size == len(CSV)
    assert item.collected_at == collected and item.uploaded_at == platform.clock.now()
    assert item.uploaded_by == "local:owner"
    assert platform.evidence.ledger.blobs.open(owner.organization_id, item.sha256).read_all() == CSV
    untimed = _file(platform, owner, task)
    assert untimed.collected_at == platform.clock.now()  # collected now, unless said otherwise


def test_each_kind_holds_its_own_content_only(platform: Platform, owner, task: str) -> None:
    with pytest.raises(ValidationError) as refused:
        platform.evidence.add(owner, task, NewEvidence(kind="note", url="https://example.com", file_name="a.txt"))
    fields = [entry["field"] for entry in refused.value.details["errors"]]
    assert fields == ["note", "url", "fileName"]
    with pytest.raises(ValidationError) as no_name:
        platform.evidence.add(owner, task, NewEvidence(file_data=_b64(CSV)))
    assert no_name.value.details["field"] == "fileName"
    with pytest.raises(ValidationError) as backwards:
        platform.evidence.add(
            owner,
            task,
            NewEvidence(
                kind="link",
                url="https://example.com/a",
                collected_at="2026-01-01T00:00:00Z",
                valid_until="2025-01-01T00:00:00Z",
            ),
        )
    assert backwards.value.details["field"] == "validUntil"
    link = platform.evidence.add(owner, task, NewEvidence(kind="link", url="https://wiki.example.com/dr-test"))
    assert link.title == "https://wiki.example.com/dr-test" and link.sha256 is None
    with pytest.raises(Conflict):
        platform.evidence.download(owner, task, link.id)
    assert platform.attachments.list(owner).total == 1


def test_versions_keep_every_upload(platform: Platform, owner, task: str) -> None:
    first = _file(platform, owner, task)
    second = platform.evidence.add_version(
        owner,
        task,
        first.id,
        NewVersion(file_name="review.pdf", file_data=_b64(PDF), valid_until="2027-01-01T00:00:00Z"),
    )
    assert second.version == 2 and second.media_type == "application/pdf" and second.title == "review.csv"
    assert second.valid_until == dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    versions = platform.evidence.versions(owner, task, first.id).items
    assert [(v.version, v.file_name) for v in versions] == [(2, "review.pdf"), (1, "review.csv")]
    assert platform.evidence.download_version(owner, task, first.id, versions[1].id).read() == CSV
    assert platform.evidence.download(owner, task, first.id).read() == PDF
    assert _types(platform)[-2:] == ["evidence.created", "evidence.version_added"]
    with pytest.raises(ValidationError):  # a file item takes files
        platform.evidence.add_version(owner, task, first.id, NewVersion(note="text"))
    other_task = platform.tasks.create(owner, NewTask(title="Other")).id
    with pytest.raises(NotFound):
        platform.evidence.get(owner, other_task, first.id)


def test_a_streamed_upload_over_the_limit_stores_nothing(clock: FrozenClock, tmp_path) -> None:
    platform = Platform(
        MemoryStore(), clock=clock, ids=SequentialIds(), settings={"blobs": f"{tmp_path.as_uri()}?max_bytes=1000"}
    )
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="Backups")).id
    chunks = iter([PDF] + [bytes(300)] * 5)
    with pytest.raises(TooLarge):
        platform.evidence.add(owner, task, NewEvidence(file_data=Upload(chunks, file_name="backup.pdf")))
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []
    assert platform.attachments.list(owner).total == 0
    small = platform.evidence.add(owner, task, NewEvidence(file_data=Upload(iter([PDF]), file_name="dir/backup.pdf")))
    assert small.file_name == "backup.pdf"


def test_the_same_key_replays_an_upload(platform: Platform, owner, task: str) -> None:
    data = NewEvidence(file_name="a.csv", file_data=_b64(CSV))
    first = platform.evidence.add(owner, task, data, idempotency_key="upload-1")
    again = platform.evidence.add(owner, task, data, idempotency_key="upload-1")
    assert again == first and platform.attachments.list(owner).total == 1
    with pytest.raises(Conflict):
        platform.evidence.add(
            owner, task, NewEvidence(file_name="a.csv", file_data=_b64(PDF)), idempotency_key="upload-1"
        )
    assert platform.evidence.ledger.blobs.exists(owner.organization_id, hashlib.sha256(PDF).hexdigest()) is False


def test_an_attachment_names_its_task_in_the_body(platform: Platform, owner, task: str) -> None:
    with pytest.raises(ValidationError) as missing:
        platform.attachments.create(owner, NewAttachment(task_id="tsk_404", kind="note", note="x"))
    assert missing.value.details["field"] == "taskId"
    note = platform.attachments.create(owner, NewAttachment(task_id=task, kind="note", note="## Walkthrough\nok"))
    assert note.title == "Walkthrough" and note.task_id == task
    assert platform.attachments.download(owner, note.id).read() == b"## Walkthrough\nok"


def test_controls_count_valid_evidence_and_go_stale_once_it_expires(
    platform: Platform, owner, clock: FrozenClock
) -> None:
    control = platform.controls.create(owner, NewControl(name="Backups are tested", code="OPS-1"))
    task = platform.tasks.create(owner, NewTask(title="Restore test", control_ids=[control.id]))
    item = platform.evidence.add(
        owner, task.id, NewEvidence(kind="note", note="Restored on 2 Jan", valid_until="2026-03-01T00:00:00Z")
    )
    assert item.control_ids == (control.id,)  # the task's controls
    platform.tasks.complete(owner, task.id)
    assert platform.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED
    clock.advance(days=30)
    assert platform.evidence.expire() == 0
    clock.advance(days=40)
    before = _types(platform).count("control.status_changed")
    assert platform.run_chores().counts["expiredEvidence"] == 1
    assert platform.controls.get(owner, control.id).status is ControlStatus.STALE
    assert platform.evidence.get(owner, task.id, item.id).expired is True
    assert platform.evidence.expire() == 0 and platform.run_chores().counts["expiredEvidence"] == 0
    assert _types(platform).count("control.status_changed") == before + 1
    assert platform.attachments.list(owner, EvidenceFilter(expired=True)).total == 1
    renewed = platform.evidence.add_version(owner, task.id, item.id, NewVersion(note="Restored again"))
    assert renewed.expired is False and renewed.valid_until is None
    assert platform.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED


def test_evidence_names_its_own_controls_and_leaves_them_when_deleted(platform: Platform, owner, task: str) -> None:
    control = platform.controls.create(owner, NewControl(name="Access is reviewed", code="IAM-1"))
    with pytest.raises(ValidationError) as unknown:
        platform.evidence.add(owner, task, NewEvidence(kind="note", note="x", control_ids=["ctl_404"]))
    assert unknown.value.details["field"] == "controlIds"
    item = platform.evidence.add(owner, task, NewEvidence(kind="note", note="x", control_ids=[control.id]))
    assert platform.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED
    platform.evidence.update(owner, task, item.id, EvidencePatch(title="Access review notes"))
    platform.evidence.delete(owner, task, item.id)
    assert platform.controls.get(owner, control.id).status is ControlStatus.NOT_STARTED


def test_evidence_expiring_is_recorded_once_per_version(
    platform: Platform, owner, task: str, clock: FrozenClock
) -> None:
    item = platform.evidence.add(
        owner, task, NewEvidence(kind="note", note="DR test", valid_until="2026-03-01T00:00:00Z")
    )
    assert platform.evidence.warn_expiring() == 0  # 59 days ahead: not yet
    clock.advance(days=35)
    assert platform.evidence.warn_expiring() == 1
    assert platform.evidence.warn_expiring() == 0 and platform.run_chores().counts["expiringEvidence"] == 0
    assert platform.evidence.versions(owner, task, item.id).items[0].expiry_warned_at == clock.now()
    platform.evidence.add_version(
        owner, task, item.id, NewVersion(note="DR test again", valid_until="2026-03-02T00:00:00Z")
    )
    assert platform.evidence.warn_expiring() == 1  # the new version has its own warning
    assert _types(platform).count("evidence.expiring") == 2


def test_the_warning_comes_as_many_days_ahead_as_configured(clock: FrozenClock) -> None:
    platform = Platform(
        MemoryStore(), clock=clock, ids=SequentialIds(), settings={"evidence": EvidenceSettings(expiring_days=7)}
    )
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="Pen test")).id
    platform.evidence.add(owner, task, NewEvidence(kind="note", note="x", valid_until="2026-01-20T00:00:00Z"))
    assert platform.evidence.warn_expiring() == 0
    clock.advance(days=14)
    assert platform.evidence.warn_expiring() == 1
    with pytest.raises(ValueError):
        EvidenceSettings(expiring_days=-1)


def test_evidence_is_commented_on(platform: Platform, owner, task: str) -> None:
    item = _file(platform, owner, task)
    comment = platform.comments.create(
        owner, NewComment(content="Looks complete", entity_type="evidence", entity_id=item.id)
    )
    assert comment.entity_id == item.id


def test_a_deleted_task_takes_its_evidence_and_blobs(platform: Platform, owner, task: str) -> None:
    kept = platform.tasks.create(owner, NewTask(title="Other")).id
    item = _file(platform, owner, task)
    shared = _file(platform, owner, kept, data=CSV)
    alone = _file(platform, owner, task, data=PDF)
    platform.tasks.delete(owner, task)
    assert [e.id for e in platform.attachments.list(owner).items] == [shared.id]
    blobs = platform.evidence.ledger.blobs
    assert blobs.exists(owner.organization_id, item.sha256)  # the other task's evidence holds it
    assert not blobs.exists(owner.organization_id, alone.sha256)
    assert "evidence.deleted" in _types(platform)


def test_another_organization_sees_none_of_it(platform: Platform, owner, other_org, task: str) -> None:
    item = _file(platform, owner, task)
    with pytest.raises(NotFound):
        platform.attachments.download(other_org, item.id)
    with pytest.raises(NotFound):
        platform.evidence.list(other_org, task)
    assert not platform.evidence.ledger.blobs.exists(other_org.organization_id, item.sha256)
