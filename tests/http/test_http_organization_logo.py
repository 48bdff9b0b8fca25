"""The organization's logo and Unicode policy PDFs over HTTP (issue 18):
``PUT /v1/organization/logo`` takes a PNG or JPEG in base64, ``GET`` answers the image, and each
page of the policy PDFs carries the organization's name and logo; Polish, Greek, Cyrillic and
Arabic text and a Markdown table come back out of the PDF through pypdf."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import httpx
import pypdf
import pytest

from compliance_core import Client, NotFound
from compliance_core.areas.organization_logos import LogoUpload
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport
from http_support import Api, error

LOGO = "/v1/organization/logo"
LANGUAGES = (
    "Zażółć gęślą jaźń: polityka bezpieczeństwa",
    "Η πολιτική ασφαλείας ισχύει για όλους",
    "Политика безопасности действует для всех",
    "يجب على جميع الموظفين حماية البيانات الشخصية",
)


def _png(width: int = 6, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x10\x80\xf0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _put(api: Api, data: bytes):
    return api.request("PUT", LOGO, body={"content": base64.b64encode(data).decode()})


def test_upload_read_and_remove_the_logo(api: Api) -> None:
    error(api.get(LOGO), 404, "not_found")
    stored = _put(api, _png())
    assert stored.status_code == 200, stored.text
    body = stored.json
    assert (body["mediaType"], body["width"], body["height"], body["size"]) == ("image/png", 6, 3, len(_png()))
    assert "content" not in body
    image = api.get(LOGO)
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/png" and image.content == _png()
    assert image.headers["Content-Disposition"].startswith("inline")
    assert api.request("DELETE", LOGO).status_code == 204
    error(api.get(LOGO), 404, "not_found")


def test_what_is_not_an_image_is_a_validation_error(api: Api) -> None:
    details = error(_put(api, b"GIF89a not ours"), 400, "validation_error", "content")
    assert "neither a PNG nor a JPEG" in details["reason"]
    error(api.request("PUT", LOGO, body={"content": "@@@"}), 400, "validation_error", "content")
    error(api.get(LOGO), 404, "not_found")  # nothing half-written


def test_an_auditor_reads_but_does_not_change_it(api: Api, as_role) -> None:
    auditor = as_role("auditor")
    error(_put(auditor, _png()), 403, "forbidden")
    _put(api, _png())
    assert auditor.get(LOGO).content == _png()


def test_unicode_policies_print_with_the_name_and_logo_on_every_page(api: Api) -> None:
    _put(api, _png())
    table = "| Control | Owner |\n|---|---|\n| Kopie zapasowe | Ελένη |\n| Резервные копии | أحمد |"
    filler = "\n\n".join(f"Paragraph {n}." for n in range(80))
    content = "\n\n".join(("# Zasady", *LANGUAGES, table, filler))
    policy = api.post("/v1/policies", {"name": "Polityka", "content": content, "frequency": "yearly"}).json
    api.post(f"/v1/policies/{policy['id']}/versions/publish", {})
    for path in (f"/v1/policies/{policy['id']}/pdf", "/v1/policies/download-all"):
        answer = api.get(path)
        assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/pdf"
        pages = pypdf.PdfReader(io.BytesIO(answer.content)).pages
        assert len(pages) > 1
        for page in pages:
            assert page.extract_text().splitlines()[0].strip() == "Acme" and len(page.images) == 1
        lines = [line.strip() for page in pages for line in page.extract_text().splitlines()]
        assert all(sentence in lines for sentence in LANGUAGES), lines
        assert "Kopie zapasowe Ελένη" in lines and "Control Owner" in lines


def test_the_client_uploads_and_reads_the_logo_over_http(platform, boot) -> None:
    """The same calls in-process and over HTTP: the client's methods come from the operations."""
    client = Client(
        HTTPTransport(
            "http://testserver", boot.owner_key.secret, transport=httpx.WSGITransport(app=create_app(platform))
        )
    )
    logo = client.organization_logos.upload(LogoUpload.of(_png()))
    assert (logo.media_type, logo.width, logo.height) == ("image/png", 6, 3)
    image = client.organization_logos.image()
    assert image.media_type == "image/png" and b"".join(image.chunks) == _png()
    client.organization_logos.remove()
    with pytest.raises(NotFound):
        client.organization_logos.image()
