"""Evidence over HTTP: uploads as base64 JSON and as multipart/form-data (streamed), the size
limit's 413, refused types leaving no blob and no record, versions, downloads with the
organization check, on every store (the blob store a local directory the tests list)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import falcon
import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from http_support import Api, error

pytestmark = pytest.mark.every_store

LIMIT = 2 * 1024 * 1024
"""The blob store's limit in these tests (the server's is 1 GiB)."""
CSV = b"account,role,reviewed\nalice,admin,yes\n"


@pytest.fixture
def platform(store_url: str, clock: FrozenClock, tmp_path: Path) -> Iterator[Platform]:
    blobs = f"{(tmp_path / 'blobs').as_uri()}?max_bytes={LIMIT}"
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings={"blobs": blobs}) as platform:
        yield platform


@pytest.fixture
def blob_dir(tmp_path: Path) -> Path:
    return tmp_path / "blobs"


@pytest.fixture
def task(api: Api) -> str:
    made = api.post("/v1/tasks", {"title": "Quarterly access review"})
    assert made.status_code == 201, made.text
    return str(made.json["id"])


def _stored(blob_dir: Path) -> list[Path]:
    """Every file in the blob store's directory, temporary ones included."""
    return sorted(path for path in blob_dir.rglob("*") if path.is_file()) if blob_dir.exists() else []


def _multipart(
    fields: list[tuple[str, str]], file: tuple[str, str, bytes] | None, after: bool = False
) -> tuple[bytes, str]:
    boundary = secrets.token_hex(12)
    out = bytearray()

    def text(name: str, value: str) -> None:
        out.extend(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())

    for name, value in fields:
        text(name, value)
    if file is not None:
        filename, media_type, data = file
        out.extend(
            f'--{boundary}\r\nContent-Disposition: form-data; name="fileData"; filename="{filename}"\r\n'
            f"Content-Type: {media_type}\r\n\r\n".encode()
        )
        out.extend(data)
        out.extend(b"\r\n")
    if after:
        text("description", "sent after the file")
    out.extend(f"--{boundary}--\r\n".encode())
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def _upload(api: Api, path: str, fields: list[tuple[str, str]], file: tuple[str, str, bytes] | None, **options):
    body, content_type = _multipart(fields, file, **options)
    return api.request("POST", path, raw=body, content_type=content_type)


def test_a_base64_upload_is_stored_once_and_downloaded_as_sent(api: Api, task: str, blob_dir: Path) -> None:
    body = {
        "fileName": "access-review.csv",
        "fileType": "text/csv",
        "fileData": base64.b64encode(CSV).decode(),
        "description": "Exported from the IdP",
        "collectedAt": "2025-12-15T09:00:00Z",
        "validUntil": "2026-12-15T00:00:00Z",
        "source": "integration_check",
    }
    made = api.post(f"/v1/tasks/{task}/attachments", body)
    assert made.status_code == 201, made.text
    item = made.json
    assert item["taskId"] == task and item["kind"] == "file" and item["title"] == "access-review.csv"
    assert item["mediaType"] == "text/csv" and item["size"] == len(CSV)
    assert item["sha256"] == hashlib.sha256(CSV).hexdigest()
    assert item["collectedAt"] == "2025-12-15T09:00:00Z" and item["createdAt"] == "2026-01-01T00:00:00Z"
    assert item["version"] == 1 and item["source"] == "integration_check"
    again = api.post("/v1/attachments", {"taskId": task, **body})
    assert again.status_code == 201, again.text
    assert len(_stored(blob_dir)) == 1  # the same bytes are one blob
    for path in (f"/v1/tasks/{task}/attachments/{item['id']}/download", f"/v1/attachments/{item['id']}/download"):
        got = api.get(path)
        assert got.status_code == 200 and got.content == CSV
        assert got.headers["Content-Type"] == "text/csv"
        assert "access-review.csv" in got.headers["Content-Disposition"]
    listed = api.get(f"/v1/tasks/{task}/attachments")
    assert listed.json["count"] == 2
    assert api.get("/v1/attachments", query=f"taskId={task}&kind=file").json["count"] == 2


def test_a_multipart_upload_streams_a_file_with_its_fields(api: Api, task: str, blob_dir: Path) -> None:
    data = b"%PDF-1.7\n" + secrets.token_bytes(LIMIT - 100)
    made = _upload(
        api,
        f"/v1/tasks/{task}/attachments",
        [("title", "Firewall rules"), ("source", "manual"), ("collectedAt", "2025-11-01T00:00:00Z")],
        ("rules.pdf", "application/pdf", data),
    )
    assert made.status_code == 201, made.text
    item = made.json
    assert item["fileName"] == "rules.pdf" and item["mediaType"] == "application/pdf"
    assert item["title"] == "Firewall rules" and item["size"] == len(data)
    assert item["sha256"] == hashlib.sha256(data).hexdigest()
    got = api.get(f"/v1/attachments/{item['id']}/download")
    assert got.status_code == 200 and got.content == data
    assert [path.name for path in _stored(blob_dir)] == [item["sha256"]]


def test_a_new_upload_is_a_new_version_and_the_old_one_stays_downloadable(api: Api, task: str) -> None:
    first = api.post(
        f"/v1/tasks/{task}/attachments", {"fileName": "v1.csv", "fileData": base64.b64encode(CSV).decode()}
    ).json
    second = _upload(
        api,
        f"/v1/tasks/{task}/attachments/{first['id']}/versions",
        [("validUntil", "2027-01-01T00:00:00Z")],
        ("v2.csv", "text/csv", CSV + b"bob,viewer,yes\n"),
    )
    assert second.status_code == 201, second.text
    assert second.json["version"] == 2 and second.json["fileName"] == "v2.csv"
    assert second.json["title"] == "v1.csv"  # the item keeps its title
    versions = api.get(f"/v1/tasks/{task}/attachments/{first['id']}/versions").json["data"]
    assert [v["version"] for v in versions] == [2, 1]
    old = api.get(f"/v1/tasks/{task}/attachments/{first['id']}/versions/{versions[1]['id']}/download")
    assert old.status_code == 200 and old.content == CSV
    current = api.get(f"/v1/tasks/{task}/attachments/{first['id']}/download")
    assert current.content == CSV + b"bob,viewer,yes\n"


def test_an_upload_over_the_limit_is_413_and_leaves_nothing(api: Api, task: str, blob_dir: Path) -> None:
    result = _upload(
        api, f"/v1/tasks/{task}/attachments", [], ("big.pdf", "application/pdf", b"%PDF-1.7\n" + bytes(LIMIT))
    )
    details = error(result, 413, "validation_error", "fileData")
    assert details["reason"] == f"must be at most {LIMIT} bytes"
    assert _stored(blob_dir) == []
    assert api.get(f"/v1/tasks/{task}/attachments").json["count"] == 0


@pytest.mark.parametrize(
    "data",
    [b"MZ\x90\x00" + bytes(100), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), b"", b"text, then\x00binary"],
    ids=["executable", "legacy-office", "empty", "not-text-to-its-end"],
)
def test_a_refused_type_leaves_no_blob_and_no_record(api: Api, task: str, blob_dir: Path, data: bytes) -> None:
    multipart = _upload(api, f"/v1/tasks/{task}/attachments", [], ("setup.pdf", "application/pdf", data))
    error(multipart, 400, "validation_error", "fileData")
    if data:
        inline = api.post(
            "/v1/attachments", {"taskId": task, "fileName": "x.pdf", "fileData": base64.b64encode(data).decode()}
        )
        error(inline, 400, "validation_error", "fileData")
    assert _stored(blob_dir) == []
    assert api.get("/v1/attachments").json["count"] == 0


def test_a_part_after_the_file_is_a_field_like_one_before_it(api: Api, task: str) -> None:
    """Clients order a form as they please (some alphabetically): a field after the file counts."""
    result = _upload(api, f"/v1/tasks/{task}/attachments", [], ("a.csv", "text/csv", CSV), after=True)
    assert result.status_code == 201, result.text
    assert result.json["description"] == "sent after the file"
    got = api.get(f"/v1/attachments/{result.json['id']}/download")
    assert got.content == CSV


def test_a_second_file_part_is_refused_and_nothing_is_kept(api: Api, task: str, blob_dir: Path) -> None:
    body, content_type = _multipart([], ("a.csv", "text/csv", CSV))
    boundary = content_type.split("boundary=", 1)[1]
    second = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="fileData"; filename="b.csv"\r\n\r\n'.encode()
        + CSV
        + b"\r\n"
    )
    body = body.replace(f"--{boundary}--".encode(), second + f"--{boundary}--".encode())
    result = api.request("POST", f"/v1/tasks/{task}/attachments", raw=body, content_type=content_type)
    error(result, 400, "validation_error", "fileData")
    assert _stored(blob_dir) == []
    assert api.get("/v1/attachments").json["count"] == 0


def test_another_organizations_attachment_is_not_found(api: Api, other: Api, task: str) -> None:
    item = api.post(f"/v1/tasks/{task}/attachments", {"fileName": "a.csv", "fileData": base64.b64encode(CSV).decode()})
    attachment = item.json["id"]
    error(other.get(f"/v1/attachments/{attachment}/download"), 404, "not_found")
    error(other.get(f"/v1/tasks/{task}/attachments/{attachment}/download"), 404, "not_found")
    error(other.get(f"/v1/tasks/{task}/attachments"), 404, "not_found")


def test_links_and_notes(api: Api, task: str) -> None:
    link = api.post(f"/v1/tasks/{task}/attachments", {"kind": "link", "url": "https://tickets.example.com/SEC-12"})
    assert link.status_code == 201 and link.json["title"] == "https://tickets.example.com/SEC-12"
    error(api.get(f"/v1/attachments/{link.json['id']}/download"), 409, "conflict", "kind")
    note = api.post(f"/v1/tasks/{task}/attachments", {"kind": "note", "note": "# Walkthrough\nDone with the IT lead."})
    assert note.status_code == 201 and note.json["title"] == "Walkthrough"
    got = api.get(f"/v1/attachments/{note.json['id']}/download")
    assert got.status_code == 200 and got.text == "# Walkthrough\nDone with the IT lead."
    mixed = api.post(f"/v1/tasks/{task}/attachments", {"kind": "link", "note": "x"})
    details = error(mixed, 400, "validation_error")
    assert [entry["field"] for entry in details["errors"]] == ["url", "note"]


def test_deleting_evidence_removes_its_blob_unless_other_evidence_holds_it(api: Api, task: str, blob_dir: Path) -> None:
    body = {"fileName": "a.csv", "fileData": base64.b64encode(CSV).decode()}
    one = api.post(f"/v1/tasks/{task}/attachments", body).json
    two = api.post(f"/v1/tasks/{task}/attachments", body).json
    assert api.request("DELETE", f"/v1/tasks/{task}/attachments/{one['id']}").status_code == 204
    assert len(_stored(blob_dir)) == 1
    assert api.get(f"/v1/attachments/{two['id']}/download").content == CSV
    assert api.request("DELETE", f"/v1/tasks/{task}/attachments/{two['id']}").status_code == 204
    assert _stored(blob_dir) == []


def test_the_document_offers_multipart_for_uploads(app: falcon.App, api: Api) -> None:
    document = api.get("/v1/openapi.json").json
    for path in (
        "/v1/tasks/{taskId}/attachments",
        "/v1/attachments",
        "/v1/tasks/{taskId}/attachments/{attachmentId}/versions",
    ):
        content = document["paths"][path]["post"]["requestBody"]["content"]
        assert set(content) == {"application/json", "multipart/form-data"}
        schema = content["multipart/form-data"]["schema"]
        assert schema["properties"]["fileData"] == {"type": "string", "format": "binary"}
    assert document["paths"]["/v1/tasks/{taskId}/attachments"]["post"]["tags"] == ["Tasks"]
    assert document["paths"]["/v1/attachments/{attachmentId}/download"]["get"]["tags"] == ["Attachments"]
