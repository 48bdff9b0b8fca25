"""A file upload through the bundled server: waitress lets a route taking a file as
multipart/form-data send as much as the blob store takes, and still refuses, unread, a larger
body there and any body over the JSON limit elsewhere."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator

import httpx
import pytest

from compliance_http.resources import MAX_BODY_BYTES
from compliance_http.resources.uploads import FORM_BYTES
from e2e_support import ServerProcess, chunked, exchange, spec_error, start_server, startup_key

pytestmark = pytest.mark.slow

LARGEST_FILE = MAX_BODY_BYTES + 4 * 1024 * 1024
"""The blob store's largest file here: above the JSON limit, so only the route's own limit lets
an upload of it through."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("uploads")
    blobs = f"{(tmp / 'blobs').as_uri()}?max_bytes={LARGEST_FILE}"
    running = start_server(tmp / "uploads.db", workers=1, env={"COMPLIANCE_BLOBS_URL": blobs})
    yield running
    running.stop()


@pytest.fixture(scope="module")
def owner_key(server: ServerProcess) -> str:
    return startup_key(server)


@pytest.fixture(scope="module")
def task(server: ServerProcess, owner_key: str) -> str:
    made = httpx.post(f"{server.url}/v1/tasks", json={"title": "Firewall review"}, headers={"X-API-Key": owner_key})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _form(data: bytes) -> tuple[bytes, str]:
    boundary = secrets.token_hex(12)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nRules\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="fileData"; filename="rules.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n"
    )
    return head.encode() + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_a_file_larger_than_a_json_body_is_stored_through_the_server(
    server: ServerProcess, owner_key: str, task: str
) -> None:
    data = b"%PDF-1.7\n" + secrets.token_bytes(LARGEST_FILE - 9)
    body, content_type = _form(data)
    made = httpx.post(
        f"{server.url}/v1/tasks/{task}/attachments",
        content=body,
        headers={"X-API-Key": owner_key, "Content-Type": content_type},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    assert made.json()["size"] == len(data) and made.json()["sha256"] == hashlib.sha256(data).hexdigest()


def test_a_body_over_the_file_limit_is_refused_unread(server: ServerProcess, task: str) -> None:
    most = LARGEST_FILE + FORM_BYTES
    head = f"POST /v1/tasks/{task}/attachments HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\n"
    for sent in (
        f"{head}Content-Length: {most + 1}\r\n\r\n".encode() + b"x" * 1000,
        f"{head}Transfer-Encoding: chunked\r\n\r\n".encode() + chunked(most),
    ):
        failure = spec_error(*exchange(server.url, sent, timeout=60), 413)
        assert failure["details"]["field"] == "body"
        assert failure["details"]["reason"] == f"must be at most {most} bytes"


def test_other_routes_keep_the_json_limit(server: ServerProcess) -> None:
    sent = f"POST /v1/vendors HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY_BYTES * 2}\r\n\r\n".encode()
    failure = spec_error(*exchange(server.url, sent), 413)
    assert failure["details"]["reason"] == f"must be at most {MAX_BODY_BYTES} bytes"
