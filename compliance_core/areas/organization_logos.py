"""The organization's logo: an uploaded PNG or JPEG image, printed at the head of every page of
its policy PDFs (the organization's ``logo`` field stays what the reference has: a URL, which a
PDF renderer cannot be trusted to fetch).

``PUT /v1/organization/logo`` takes the image's bytes in base64 (JSON carries no bytes, as an
import's file), at most ``MAX_LOGO_BYTES``, and refuses anything but a whole PNG or baseline or
progressive JPEG of at most ``MAX_LOGO_SIDE`` pixels a side: the image is read here, with the
standard library (a PNG's chunks and their checksums, its compressed pixels inflated to the size
its header gives; a JPEG's segments up to its frame header and its end marker), so a renderer is
never handed a file that claims to be an image and is not. ``GET`` answers the image itself,
``DELETE`` removes it. Each change records ``organization.logo_updated`` or
``organization.logo_removed`` (the event and the audit entry show the image's type, size,
dimensions and SHA-256, never its bytes).

One logo per organization: a row of the ``organization_logos`` table, replaced in place.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import struct
import zlib
from typing import Any, ClassVar

import attrs

from ..kernel.errors import NotFound, ValidationError
from ..kernel.events import Event
from ..kernel.operations import operation
from ..kernel.pages import PageRequest
from ..kernel.permissions import MANAGERS, MEMBERS, Action, Actor
from ..kernel.records import Filter, Records
from ..kernel.registry import Area, Download, Route
from ..kernel.rendering import WireView
from ..kernel.uow import UnitOfWork
from ..kernel.validation import Checked, register_schema

__all__ = [
    "MAX_LOGO_BYTES",
    "MAX_LOGO_SIDE",
    "OrganizationLogo",
    "LogoSummary",
    "LogoUpload",
    "ORGANIZATION_LOGOS",
    "LOGO_READ",
    "LOGO_EDIT",
    "LogoUpdated",
    "LogoRemoved",
    "OrganizationLogoService",
    "read_image",
    "AREA",
]

MAX_LOGO_BYTES = 512 * 1024
"""The largest logo file: a page header is about 30 mm wide, which no more than this needs."""
MAX_LOGO_SIDE = 4096
"""The most pixels of a logo's width or height (bounds what decoding it may cost)."""
_MAX_CHARS = 4 * ((MAX_LOGO_BYTES + 2) // 3)
PNG, JPEG = "image/png", "image/jpeg"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples per pixel by PNG colour type (grey, RGB, palette, grey + alpha, RGBA)."""
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2})
"""Baseline, extended sequential and progressive Huffman-coded frames: what PDF readers show."""


@attrs.frozen(kw_only=True)
class OrganizationLogo:
    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"content"}))
    """The bytes are answered by ``GET /v1/organization/logo`` alone, never in a JSON body, an
    event or an audit entry."""

    id: str
    organization_id: str
    media_type: str
    """``image/png`` or ``image/jpeg``."""
    width: int
    height: int
    size: int
    """Bytes."""
    sha256: str
    content: str
    """The image's bytes in base64."""
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def data(self) -> bytes:
        return base64.b64decode(self.content)


@attrs.frozen(kw_only=True)
class LogoSummary:
    """What an upload answers: the stored logo without its bytes (``GET`` answers those)."""

    id: str
    media_type: str
    width: int
    height: int
    size: int
    sha256: str
    created_at: dt.datetime
    updated_at: dt.datetime

    @classmethod
    def of(cls, logo: OrganizationLogo) -> LogoSummary:
        return cls(**{field.name: getattr(logo, field.name) for field in attrs.fields(cls)})


def _image(value: Any, field: attrs.Attribute[Any]) -> str:
    """Base64 text within the size limit. Whether its bytes are a whole PNG or JPEG is the
    upload's to find (``read_image``), as an import reads its file's rows: a rule about the
    file, which the schema cannot state."""
    if not isinstance(value, str) or not value:
        raise ValidationError.field("content", value, "must be a PNG or JPEG image's bytes in base64")
    if len(value) > _MAX_CHARS:
        raise ValidationError.field("content", len(value), f"must be an image of at most {MAX_LOGO_BYTES} bytes")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError.field("content", value, "must be a PNG or JPEG image's bytes in base64") from None
    return value


_CONTENT = register_schema(
    Checked(_image, takes_field=True),
    {
        "type": "string",
        "format": "byte",
        "minLength": 1,
        "maxLength": _MAX_CHARS,
        "description": f"a PNG or JPEG image's bytes in base64, at most {MAX_LOGO_BYTES} bytes and "
        f"{MAX_LOGO_SIDE} pixels a side",
    },
)


@attrs.frozen(kw_only=True)
class LogoUpload:
    """The new logo: a PNG or JPEG image's bytes in base64."""

    content: str = attrs.field(converter=_CONTENT)

    @classmethod
    def of(cls, data: bytes) -> LogoUpload:
        """The upload of ``data`` (the image's bytes), for in-process callers."""
        return cls(content=base64.b64encode(data).decode("ascii"))


def read_image(data: bytes) -> tuple[str, int, int]:
    """The media type, width and height of a whole PNG or JPEG image; ``ValidationError`` (on
    ``content``) for anything else: another format, a cut or corrupted file, too large a one."""
    if len(data) > MAX_LOGO_BYTES:
        raise ValidationError.field("content", len(data), f"must be an image of at most {MAX_LOGO_BYTES} bytes")
    if data.startswith(_PNG_SIGNATURE):
        media_type, (width, height) = PNG, _png(data)
    elif data.startswith(b"\xff\xd8\xff"):
        media_type, (width, height) = JPEG, _jpeg(data)
    else:
        raise _refused("is neither a PNG nor a JPEG image")
    if not (1 <= width <= MAX_LOGO_SIDE and 1 <= height <= MAX_LOGO_SIDE):
        raise _refused(f"must be at most {MAX_LOGO_SIDE} pixels a side, not {width}x{height}")
    return media_type, width, height


def _refused(reason: str) -> ValidationError:
    return ValidationError("the logo is not a usable image", {"field": "content", "value": "(image)", "reason": reason})


def _png(data: bytes) -> tuple[int, int]:
    """Every chunk whole and its CRC right, IHDR first and IEND last, and the IDAT stream
    inflating to exactly the bytes the header's size, depth and colour type give."""
    position, chunks, idat = len(_PNG_SIGNATURE), [], bytearray()
    header: tuple[int, int, int, int, int] | None = None
    while position < len(data):
        if position + 12 > len(data):
            raise _refused("the PNG is cut short")
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        crc = data[position + 8 + length : position + 12 + length]
        if len(body) < length or len(crc) < 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise _refused(f"the PNG's {kind.decode('latin-1')!r} chunk is cut short or corrupted")
        chunks.append(kind)
        if kind == b"IHDR" and length == 13:
            header = struct.unpack(">IIBBBBB", body)[:5]
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
        if kind == b"IEND":
            break
    if header is None or chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or not idat or position != len(data):
        raise _refused("the PNG lacks its header, its pixels or its end, or has bytes after it")
    width, height, depth, colour, _ = header
    if colour not in _PNG_CHANNELS or depth not in (1, 2, 4, 8, 16):
        raise _refused("the PNG's colour type or bit depth is not one PNG defines")
    if not (1 <= width <= MAX_LOGO_SIDE and 1 <= height <= MAX_LOGO_SIDE):
        raise _refused(f"must be at most {MAX_LOGO_SIDE} pixels a side, not {width}x{height}")
    expected = height * (1 + (width * depth * _PNG_CHANNELS[colour] + 7) // 8)
    inflater = zlib.decompressobj()
    try:
        pixels = inflater.decompress(bytes(idat), expected + 1)  # never more than the image holds
    except zlib.error:
        raise _refused("the PNG's pixels do not inflate") from None
    if len(pixels) < expected:  # interlaced images hold more (per pass): at least as much
        raise _refused("the PNG's pixels are fewer than its size gives")
    return width, height


def _jpeg(data: bytes) -> tuple[int, int]:
    """The segments from the start marker to a baseline or progressive frame header, whose size
    is the image's, and the end marker closing the file."""
    if not data.rstrip(b"\x00").endswith(b"\xff\xd9"):
        raise _refused("the JPEG is cut short (no end marker)")
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            raise _refused("the JPEG's segments are corrupted")
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if length < 2 or position + 2 + length > len(data):
            raise _refused("the JPEG's segments are corrupted")
        if marker in _JPEG_FRAMES:
            if length < 8:
                raise _refused("the JPEG's frame header is corrupted")
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            if not (width and height):
                raise _refused("the JPEG gives no size")
            return width, height
        if marker == 0xDA or 0xC3 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            break  # pixels before a frame we show, or a lossless or arithmetic-coded frame
        position += 2 + length
    raise _refused("the JPEG has no baseline or progressive frame")


@attrs.frozen
class LogoFilter(Filter):
    """No filter: an organization has one logo at most, found by listing its own."""


ORGANIZATION_LOGOS: Records[OrganizationLogo, LogoFilter] = Records(
    "organization_logos", model=OrganizationLogo, filters=LogoFilter, kind="organization logo", prefix="logo"
)
LOGO_READ = Action("organization_logo:read", MEMBERS)
LOGO_EDIT = Action("organization_logo:edit", MANAGERS)


class LogoUpdated(Event):
    """The organization's logo was uploaded or replaced; ``previous`` holds the old image's type,
    size, dimensions and SHA-256 when there was one."""

    type = "organization.logo_updated"


class LogoRemoved(Event):
    """The organization's logo was removed; ``data`` is what it was (without its bytes)."""

    type = "organization.logo_removed"


_PATH = "/v1/organization/logo"
_EXAMPLE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGPgqokCAAF0AOHsk8xnAAAAAElFTkSuQmCC"
"""A PNG of one pixel in the brand green, #0a7c5a."""
_ONE = PageRequest(page=1, per_page=1)


def _current(session: Any, organization_id: str) -> OrganizationLogo | None:
    items, _ = session[ORGANIZATION_LOGOS].list(organization_id, LogoFilter(), _ONE)
    return items[0] if items else None


def _missing(organization_id: str) -> NotFound:
    return NotFound(
        "the organization has no logo",
        {"resource": ORGANIZATION_LOGOS.kind, "organizationId": organization_id, "reason": "no logo is uploaded"},
    )


@attrs.define
class OrganizationLogoService:
    uow: UnitOfWork

    @operation(
        LOGO_EDIT,
        Route("PUT", _PATH, "Upload the organization's logo (a PNG or JPEG in base64), printed on its policy PDFs"),
        body=LogoUpload,
        result=LogoSummary,
        example={"content": _EXAMPLE},
    )
    def upload(self, actor: Actor, data: LogoUpload) -> LogoSummary:
        """Set or replace the logo; uploading the same image again changes nothing."""
        content = data.content
        image = base64.b64decode(content)
        media_type, width, height = read_image(image)
        digest = hashlib.sha256(image).hexdigest()
        with self.uow.write(actor) as tx:
            current = _current(tx, actor.organization_id)
            if current is not None and current.sha256 == digest:
                return LogoSummary.of(current)
            now = self.uow.clock.now()
            logo = OrganizationLogo(
                id=current.id if current else self.uow.ids.new("logo"),
                organization_id=actor.organization_id,
                media_type=media_type,
                width=width,
                height=height,
                size=len(image),
                sha256=digest,
                content=content,
                created_at=current.created_at if current else now,
                updated_at=now,
            )
            previous = None
            if current is None:
                tx[ORGANIZATION_LOGOS].add(logo)
            else:
                tx[ORGANIZATION_LOGOS].update(logo)
                fields = ("media_type", "width", "height", "size", "sha256")
                previous = {
                    name: getattr(current, name) for name in fields if getattr(current, name) != getattr(logo, name)
                }
            tx.record(LogoUpdated(organization_id=actor.organization_id, subject=logo, previous=previous))
        return LogoSummary.of(logo)

    @operation(
        LOGO_READ,
        Route("GET", _PATH, "The organization's logo image"),
        result=Download,
        media_type="image/*",
        given=(upload,),
    )
    def image(self, actor: Actor) -> Download:
        """The image as uploaded (``image/png`` or ``image/jpeg``), shown inline."""
        with self.uow.read() as session:
            logo = _current(session, actor.organization_id)
        if logo is None:
            raise _missing(actor.organization_id)
        extension = "png" if logo.media_type == PNG else "jpg"
        return Download(filename=f"logo.{extension}", media_type=logo.media_type, chunks=[logo.data], inline=True)

    @operation(LOGO_EDIT, Route("DELETE", _PATH, "Remove the organization's logo"), result=None, given=(upload,))
    def remove(self, actor: Actor) -> None:
        with self.uow.write(actor) as tx:
            logo = _current(tx, actor.organization_id)
            if logo is None:
                raise _missing(actor.organization_id)
            tx[ORGANIZATION_LOGOS].delete(actor.organization_id, logo.id)
            tx.record(LogoRemoved(organization_id=actor.organization_id, subject=logo))


AREA = Area(
    name="organization_logos",
    tag="Organization",
    service=lambda context: OrganizationLogoService(context.uow),
    api=OrganizationLogoService,
    actions=(LOGO_READ, LOGO_EDIT),
    events=(LogoUpdated, LogoRemoved),
    records=(ORGANIZATION_LOGOS,),
)
