"""The organization's logo in-process (issue 18): a real PNG or JPEG, size-limited and read
before it is stored, one per organization, announced and audited without its bytes, and printed
on every page of the organization's policy PDFs."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pypdf
import pytest

from compliance_core import Forbidden, NotFound, Role, ValidationError
from compliance_core.areas.organization_logos import MAX_LOGO_BYTES, MAX_LOGO_SIDE, LogoUpload, read_image
from compliance_core.areas.policies import NewPolicy
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.pages import PageRequest


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int = 8, height: int = 4, rows: bytes | None = None) -> bytes:
    pixels = rows if rows is not None else b"".join(b"\x00" + b"\xc8\x1e\x1e" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(pixels)) + _chunk(b"IEND", b"")
    )


def jpeg(width: int = 16, height: int = 9) -> bytes:
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return (
        b"\xff\xd8"
        + b"\xff\xe0"
        + struct.pack(">H", 16)
        + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
        + frame
        + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\x12\x34\xff\xd9"
    )


def _events(platform, kind: str):
    with platform.uow.read() as session:
        return [m for m in session[OUTBOX].pending(1000) if m.type == kind]


def test_read_image_gives_type_and_size() -> None:
    assert read_image(png(8, 4)) == ("image/png", 8, 4)
    assert read_image(jpeg(16, 9)) == ("image/jpeg", 16, 9)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"GIF89a" + b"\x00" * 20, "neither a PNG nor a JPEG"),
        (png()[:-6], "cut short"),
        (png()[:40] + b"\x00" + png()[41:], "corrupted"),
        (png(8, 4, rows=b"\x00" * 10), "fewer than its size"),
        (png(MAX_LOGO_SIDE + 1, 1, rows=b"\x00" * (1 + 3 * (MAX_LOGO_SIDE + 1))), "pixels a side"),
        (png() + b"junk", "bytes after it"),
        (jpeg()[:-2], "no end marker"),
        (b"\xff\xd8\xff\xd9", "no baseline or progressive frame"),
    ],
)
def test_what_is_not_a_whole_png_or_jpeg_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(ValidationError) as raised:
        read_image(data)
    assert raised.value.details["field"] == "content" and reason in raised.value.details["reason"]


def test_the_upload_body_is_checked_when_made() -> None:
    with pytest.raises(ValidationError) as raised:
        LogoUpload(content="not base64!")
    assert raised.value.details["field"] == "content"
    too_big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_LOGO_BYTES).decode()
    with pytest.raises(ValidationError, match="at most"):
        LogoUpload(content=too_big)


def test_upload_replace_read_and_remove(platform, owner, clock) -> None:
    first = platform.organization_logos.upload(owner, LogoUpload.of(png()))
    assert (first.media_type, first.width, first.height, first.size) == ("image/png", 8, 4, len(png()))
    image = platform.organization_logos.image(owner)
    assert (image.media_type, b"".join(image.chunks), image.inline) == ("image/png", png(), True)
    assert platform.organization_logos.upload(owner, LogoUpload.of(png())) == first  # the same image: no change
    clock.advance(hours=1)
    second = platform.organization_logos.upload(owner, LogoUpload.of(jpeg()))
    assert (second.id, second.created_at, second.media_type) == (first.id, first.created_at, "image/jpeg")
    assert b"".join(platform.organization_logos.image(owner).chunks) == jpeg()
    updated = _events(platform, "organization.logo_updated")
    assert len(updated) == 2 and updated[1].payload["previous"]["mediaType"] == "image/png"
    assert all("content" not in event.payload["data"] for event in updated)  # the bytes never travel
    platform.organization_logos.remove(owner)
    [removed] = _events(platform, "organization.logo_removed")
    assert removed.payload["data"]["sha256"] == second.sha256
    with pytest.raises(NotFound):
        platform.organization_logos.image(owner)
    with pytest.raises(NotFound):
        platform.organization_logos.remove(owner)


def test_each_change_is_audited(platform, owner) -> None:
    logo = platform.organization_logos.upload(owner, LogoUpload.of(png()))
    platform.organization_logos.remove(owner)
    entries = platform.audit_log.list(owner, AuditFilter(entity_id=logo.id), PageRequest(per_page=10)).items
    assert sorted(entry.action for entry in entries) == ["organization.logo_removed", "organization.logo_updated"]
    assert all("content" not in entry.changes for entry in entries)


def test_only_managers_change_it_and_members_read_it(platform, actor_as) -> None:
    with pytest.raises(Forbidden):
        platform.organization_logos.upload(actor_as(Role.AUDITOR), LogoUpload.of(png()))
    platform.organization_logos.upload(actor_as(Role.ADMIN), LogoUpload.of(png()))
    assert platform.organization_logos.image(actor_as(Role.AUDITOR)).media_type == "image/png"


def test_one_organization_never_sees_anothers_logo(platform, owner, other_org) -> None:
    platform.organization_logos.upload(owner, LogoUpload.of(png()))
    with pytest.raises(NotFound):
        platform.organization_logos.image(other_org)


def test_the_logo_heads_every_page_of_the_policy_pdfs(platform, owner) -> None:
    platform.organization_logos.upload(owner, LogoUpload.of(png()))
    content = "\n\n".join(f"Paragraph {n} of a long policy." for n in range(120))
    policy = platform.policies.create(owner, NewPolicy(name="Backups", content=content, frequency="yearly"))
    platform.policies.publish(owner, policy.id)
    for download in (platform.policies.download(owner, policy.id), platform.policies.download_all(owner)):
        pages = pypdf.PdfReader(io.BytesIO(b"".join(download.chunks))).pages
        assert len(pages) > 1
        for page in pages:
            assert page.extract_text().splitlines()[0].strip() == "Acme" and len(page.images) == 1
