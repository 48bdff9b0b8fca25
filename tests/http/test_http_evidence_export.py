"""Evidence exports over HTTP: a task's ZIP and the organization's (auditor, admin
and owner only), opened with zipfile, every SHA-256 checked, the signature checked with
cryptography against GET /v1/evidence-export/public-key, two downloads byte-identical, the job's
202 + Location and progress, verify (base64 and multipart) failing on one byte changed, and one
automation's evidence as a PDF download (text read with pypdf)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import secrets
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pypdf
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from http_support import Api, error

CSV = b"account,role,reviewed\nalice,admin,yes\n"
SECRETS = {
    "endpoint": "https://idp.example",
    "client_secret": "s3cr3t-value",
    "headers": {"Authorization": "Bearer abc"},
}


@pytest.fixture
def platform(store_url: str, clock: FrozenClock, tmp_path: Path) -> Iterator[Platform]:
    settings = {"blobs": (tmp_path / "blobs").as_uri(), "signing": (tmp_path / "signing-key.pem").as_uri()}
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
        yield platform


@pytest.fixture
def task(api: Api) -> str:
    made = api.post("/v1/tasks", {"title": "Quarterly access review"})
    assert made.status_code == 201, made.text
    task_id = str(made.json["id"])
    for body in (
        {"fileName": "access.csv", "fileType": "text/csv", "fileData": base64.b64encode(CSV).decode()},
        {
            "fileName": "idp.json",
            "fileType": "application/json",
            "fileData": base64.b64encode(json.dumps(SECRETS).encode()).decode(),
        },
        {"kind": "link", "url": "https://tickets.example/ACC-12", "collectedAt": "2025-12-01T00:00:00Z"},
    ):
        added = api.post(f"/v1/tasks/{task_id}/attachments", body)
        assert added.status_code == 201, added.text
    return task_id


def _zip(data: bytes) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(data))


def _checked(api: Api, data: bytes) -> dict:
    """The manifest, once every file matches it and its signature checks under the published key."""
    archive = _zip(data)
    manifest = json.loads(archive.read("manifest.json"))
    assert {f["path"] for f in manifest["files"]} | {"manifest.json", "manifest.sig", "public-key.pem"} == set(
        archive.namelist()
    )
    for entry in manifest["files"]:
        assert hashlib.sha256(archive.read(entry["path"])).hexdigest() == entry["sha256"]
    published = api.get("/v1/evidence-export/public-key")
    assert published.status_code == 200, published.text
    assert manifest["signing"]["fingerprint"] == published.json["fingerprint"]
    key = load_pem_public_key(published.json["publicKeyPem"].encode())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(base64.b64decode(archive.read("manifest.sig")), archive.read("manifest.json"))  # raises if not
    return manifest  # type: ignore[no-any-return]


def _changed(data: bytes, name: str) -> bytes:
    """The ZIP with one byte of one entry changed."""
    out = io.BytesIO()
    with _zip(data) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            content = bytearray(source.read(info.filename))
            if info.filename == name:
                content[0] ^= 0x01
            target.writestr(info, bytes(content))
    return out.getvalue()


def _verify(api: Api, data: bytes) -> dict:
    result = api.post("/v1/evidence-export/verify", {"fileData": base64.b64encode(data).decode()})
    assert result.status_code == 200, result.text
    return result.json  # type: ignore[no-any-return]


def test_a_task_export_is_a_signed_zip_that_downloads_byte_identical_twice(api: Api, task: str) -> None:
    got = api.get(f"/v1/tasks/{task}/evidence/export")
    assert got.status_code == 200, got.text
    assert got.headers["Content-Type"] == "application/zip"
    assert (
        "attachment" in got.headers["Content-Disposition"]
        and f"evidence-{task}.zip" in got.headers["Content-Disposition"]
    )
    manifest = _checked(api, got.content)
    assert [t["id"] for t in manifest["tasks"]] == [task]
    assert len(manifest["evidence"]) == 3
    json_entry = next(e for e in manifest["evidence"] if e.get("mediaType") == "application/json")
    redacted = json.loads(_zip(got.content).read(json_entry["path"]))
    assert redacted == {
        "endpoint": "https://idp.example",
        "client_secret": "[redacted]",
        "headers": {"Authorization": "[redacted]"},
    }
    assert api.get(f"/v1/tasks/{task}/evidence/export").content == got.content
    assert _verify(api, got.content) == {
        "valid": True,
        "problems": [],
        "files": 3,
        "fingerprint": manifest["signing"]["fingerprint"],
    }
    without = api.get(f"/v1/tasks/{task}/evidence/export", query="includeJson=false")
    assert all(
        "leftOut" in e
        for e in json.loads(_zip(without.content).read("manifest.json"))["evidence"]
        if e.get("mediaType") == "application/json"
    )
    error(
        api.get(f"/v1/tasks/{task}/evidence/export", query="includeJson=maybe"), 400, "validation_error", "includeJson"
    )


def test_the_task_summary(api: Api, task: str, other: Api) -> None:
    got = api.get(f"/v1/tasks/{task}/evidence")
    assert got.status_code == 200, got.text
    body = got.json
    assert body["taskId"] == task and body["taskTitle"] == "Quarterly access review"
    assert body["organizationName"] == "Acme" and body["totalItems"] == 3 and body["totalVersions"] == 3
    assert {item["kind"] for item in body["evidence"]} == {"file", "link"}
    error(other.get(f"/v1/tasks/{task}/evidence"), 404, "not_found")
    error(other.get(f"/v1/tasks/{task}/evidence/export"), 404, "not_found")


def test_changing_one_byte_makes_verify_fail_base64_and_multipart(api: Api, task: str) -> None:
    data = api.get("/v1/evidence-export/all").content
    manifest = _checked(api, data)
    for name in [f["path"] for f in manifest["files"]] + ["manifest.json", "manifest.sig"]:
        answer = _verify(api, _changed(data, name))
        assert answer["valid"] is False and answer["problems"], name
    boundary = secrets.token_hex(12)
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="fileData"; filename="export.zip"\r\n'
            "Content-Type: application/zip\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    sent = api.request(
        "POST", "/v1/evidence-export/verify", raw=body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert sent.status_code == 200, sent.text
    assert sent.json["valid"] is True


@pytest.mark.parametrize("role", list(Role))
def test_the_organization_export_is_for_auditors_admins_and_owners(
    as_role: Callable[[Role], Api], api: Api, task: str, role: Role
) -> None:
    caller = as_role(role)
    got = caller.get("/v1/evidence-export/all")
    if role in (Role.AUDITOR, Role.ADMIN, Role.OWNER):
        assert got.status_code == 200, got.text
        assert got.content == api.get("/v1/evidence-export/all").content  # whoever asks, the same bytes
        _checked(caller, got.content)
    else:
        error(got, 403, "forbidden")
        error(caller.post("/v1/evidence-export/jobs", {}), 403, "forbidden")
        error(caller.get(f"/v1/tasks/{task}/evidence/export"), 403, "forbidden")
    assert caller.get("/v1/evidence-export/public-key").status_code == 200


def test_an_export_job_answers_202_with_its_location_and_progress(
    api: Api, task: str, platform: Platform, other: Api
) -> None:
    started = api.post("/v1/evidence-export/jobs", {"includeJson": True, "collectedFrom": "2020-01-01T00:00:00Z"})
    assert started.status_code == 202, started.text
    location = started.headers["Location"]
    job = started.json
    assert location == f"/v1/evidence-export/jobs/{job['id']}"
    assert job["status"] == "queued" and job["tasksDone"] == 0
    assert api.get(location).json["status"] == "queued"
    chore = next(c for c in platform.chores if c.name == "build evidence exports")
    assert platform.run_chore(chore) == 1
    done = api.get(location).json
    assert done["status"] == "done" and done["tasksDone"] == done["tasksTotal"] == 1
    data = api.get(location + "/download")
    assert data.status_code == 200 and data.headers["Content-Type"] == "application/zip"
    assert hashlib.sha256(data.content).hexdigest() == done["sha256"] and len(data.content) == done["size"]
    assert data.content == api.get("/v1/evidence-export/all", query="collectedFrom=2020-01-01T00:00:00Z").content
    _checked(api, data.content)
    listed = api.get("/v1/evidence-export/jobs", query="status=done")
    assert listed.status_code == 200 and [j["id"] for j in listed.json["data"]] == [job["id"]]
    error(other.get(location), 404, "not_found")
    error(other.get(location + "/download"), 404, "not_found")
    error(api.post("/v1/evidence-export/jobs", {"includeJson": "yes"}), 400, "validation_error", "includeJson")


def _automation(api: Api, task: str) -> str:
    """An automation of the task, run once now (no URL yet: an ``error`` run, made offline)."""
    made = api.post(f"/v1/tasks/{task}/automations", {"name": "Status page answers", "schedule": "monthly"})
    assert made.status_code == 201, made.text
    automation = str(made.json["id"])
    ran = api.post(f"/v1/tasks/{task}/automations/{automation}/run")
    assert ran.status_code == 201 and ran.json["status"] == "error", ran.text
    return automation


def test_an_automation_pdf_downloads_with_its_runs(api: Api, task: str, other: Api) -> None:
    automation = _automation(api, task)
    path = f"/v1/tasks/{task}/evidence/automation/{automation}/pdf"
    got = api.get(path)
    assert got.status_code == 200, got.text
    assert got.headers["Content-Type"] == "application/pdf"
    disposition = got.headers["Content-Disposition"]
    assert "attachment" in disposition and f"evidence-{automation}.pdf" in disposition
    assert got.content.startswith(b"%PDF-")
    text = " ".join(" ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(got.content)).pages).split())
    assert "Status page answers" in text and "schedule: monthly" in text
    assert "Run 1: error" in text and "Error: the automation has no URL to probe yet" in text
    assert api.get(path).content == got.content  # the same records, the same bytes
    error(other.get(path), 404, "not_found")


def test_an_automation_pdf_is_a_404_under_another_task(api: Api, task: str) -> None:
    automation = _automation(api, task)
    another = api.post("/v1/tasks", {"title": "Another task"})
    assert another.status_code == 201, another.text
    details = error(api.get(f"/v1/tasks/{another.json['id']}/evidence/automation/{automation}/pdf"), 404, "not_found")
    assert details == {"resource": "automation", "id": automation}
    assert error(api.get(f"/v1/tasks/{task}/evidence/automation/aut_missing/pdf"), 404, "not_found") == {
        "resource": "automation",
        "id": "aut_missing",
    }


def test_a_task_export_holds_each_automations_pdf(api: Api, task: str) -> None:
    automation = _automation(api, task)
    got = api.get(f"/v1/tasks/{task}/evidence/export")
    assert got.status_code == 200, got.text
    manifest = _checked(api, got.content)
    path = f"tasks/{task}/automations/{automation}.pdf"
    assert path in {f["path"] for f in manifest["files"]}
    assert [a["pdf"] for a in manifest["tasks"][0]["automations"]] == [path]
    assert _zip(got.content).read(path).startswith(b"%PDF-")
    assert _verify(api, got.content)["valid"] is True
