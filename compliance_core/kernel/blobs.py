"""The file storage port: evidence files and attachments, content-addressed.

A file is stored under the SHA-256 of its bytes, once per organization: two uploads of the same
report by one organization share one blob, and another organization's identical file is a blob of
its own, so nothing one organization stores can be found through another. Files stream in and out
in chunks and are never held whole in memory (the memory adapter excepted, which is memory).

Adapters live outside core (``compliance_blobs``: a local directory, S3-compatible object storage,
memory) and are found by URL scheme through the ``compliance.blobs`` entry points, as stores are.
What every adapter must do the same way (the size limit, hashing, the type check) is here, in
``Intake``, so an adapter only moves bytes: it writes what ``Intake`` yields somewhere temporary
and moves it into place under ``Intake.info().sha256`` once the stream ended without an error.
A refused upload therefore leaves nothing behind in any adapter.

The type check reads the content, not the name or the declared type: the first bytes are matched
against a table of magic numbers (``sniff``), and text must be UTF-8 to its last byte. The table is
ours and small on purpose: core imports the standard library only, and the allow-list is a dozen
formats whose signatures are fixed by their specifications.
"""

from __future__ import annotations

import codecs
import datetime as dt
import hashlib
import re
import struct
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any, Protocol, cast

import attrs

from .errors import TooLarge, ValidationError
from .plugged import beside_database, open_by_scheme, opened_once

__all__ = [
    "BLOBS_ENTRY_POINTS",
    "SETTINGS_KEY",
    "CHUNK_BYTES",
    "DEFAULT_MAX_BYTES",
    "SNIFF_BYTES",
    "UNKNOWN",
    "EMPTY",
    "TEXT_TYPES",
    "EVIDENCE_TYPES",
    "BlobInfo",
    "BlobStore",
    "Chunks",
    "Intake",
    "Source",
    "blobs_of",
    "check_organization",
    "default_blobs_url",
    "is_sha256",
    "open_blobs",
    "sniff",
]

BLOBS_ENTRY_POINTS = "compliance.blobs"
SETTINGS_KEY = "blobs"
"""``Platform(settings={"blobs": ...})``: a ``BlobStore``, or a URL ``open_blobs`` understands."""
CHUNK_BYTES = 1024 * 1024
"""What adapters read and write at a time."""
DEFAULT_MAX_BYTES = 1024**3
"""The largest file a blob store takes unless configured otherwise (1 GiB)."""
SNIFF_BYTES = 64 * 1024
"""How much of the start of a file the type check reads before deciding. Office files are ZIP
archives whose part names tell Word from Excel; 64 KiB holds the first entries of any ordinary one."""
UNKNOWN = "application/octet-stream"
EMPTY = "application/x-empty"

PDF = "application/pdf"
PNG = "image/png"
JPEG = "image/jpeg"
GIF = "image/gif"
WEBP = "image/webp"
TIFF = "image/tiff"
HEIC = "image/heic"
HEIF = "image/heif"
AVIF = "image/avif"
MP4 = "video/mp4"
ZIP = "application/zip"
GZIP = "application/gzip"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
OFFICE_MACROS = "application/vnd.ms-office.vbaProject"
OLE = "application/x-ole-storage"
EXECUTABLE = "application/x-executable"
TEXT = "text/plain"

TEXT_TYPES = frozenset({TEXT, "text/csv", "text/markdown", "application/json"})
"""What UTF-8 text may be stored as. The bytes cannot tell CSV from Markdown, so text takes the
type the uploader declared when it is one of these, and ``text/plain`` otherwise."""
EVIDENCE_TYPES = frozenset(
    {PDF, PNG, JPEG, GIF, WEBP, TIFF, HEIC, HEIF, AVIF, MP4, ZIP, GZIP, DOCX, XLSX, PPTX, ODT, ODS, ODP} | TEXT_TYPES
)
"""What evidence and attachments may be: documents, screenshots and photos, screen recordings,
archives, office files and UTF-8 text (CSV, JSON, Markdown, logs). Refused, among others:
executables, legacy OLE Office files (.doc/.xls, where macros live), macro-enabled Office files
and anything unrecognised."""

_ORGANIZATION = re.compile(r"[A-Za-z0-9_-]{1,100}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ZIP_ENTRY = b"PK\x03\x04"
_HEIF_BRANDS = {b"heic": HEIC, b"heix": HEIC, b"heim": HEIC, b"heis": HEIC, b"mif1": HEIF, b"msf1": HEIF}
_MP4_BRANDS = {b"isom", b"iso2", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"avc1", b"M4V ", b"qt  "}
_CONTROL = frozenset(range(32)) - {9, 10, 12, 13}
"""Bytes no text file holds (tab, line feed, form feed and carriage return aside)."""

Source = Iterable[bytes] | Any
"""What ``BlobStore.put`` reads: an iterable of byte chunks, or a binary file object (anything
with ``read(n)``)."""


def is_sha256(value: object) -> bool:
    """Whether ``value`` is a SHA-256 as blobs are named: 64 lowercase hex digits."""
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def check_organization(organization_id: str) -> str:
    """``organization_id`` if it is safe as a path segment and an object key prefix. Ids come from
    the platform, never from a caller, so a bad one is a programming error (``ValueError``)."""
    if not isinstance(organization_id, str) or _ORGANIZATION.fullmatch(organization_id) is None:
        raise ValueError(f"not an organization id: {organization_id!r}")
    return organization_id


@attrs.frozen(kw_only=True)
class BlobInfo:
    """A stored file: its name (the SHA-256 of its bytes, hex), its size and its sniffed type."""

    sha256: str
    size: int
    media_type: str


class Chunks(Iterator[bytes]):
    """A stored file's bytes in chunks, to be iterated once; ``close()`` (or leaving a ``with``
    block, or a WSGI server when the response ends) releases the file or connection early."""

    def __init__(self, chunks: Iterator[bytes], close: Callable[[], None] | None = None) -> None:
        self._chunks = chunks
        self._close = close

    def __next__(self) -> bytes:
        return next(self._chunks)

    def close(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            close()

    def __enter__(self) -> Chunks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_all(self) -> bytes:
        """Every byte at once: for small files and tests only."""
        with self:
            return b"".join(self)


class BlobStore(Protocol):
    """Where file contents live. Every method takes the organization first: blobs are kept apart
    per organization, and a blob is found only through the organization that stored it."""

    max_bytes: int
    """The largest file ``put`` takes (``TooLarge`` beyond)."""

    def put(
        self,
        organization_id: str,
        source: Source,
        *,
        limit: int | None = None,
        accept: Collection[str] | None = EVIDENCE_TYPES,
        declared_type: str | None = None,
        field: str = "file",
    ) -> BlobInfo:
        """Store ``source``'s bytes, read in chunks, and say what was stored.

        :param limit: a lower size limit than ``max_bytes`` for this file
        :param accept: the media types taken (``None``: any bytes, typed ``UNKNOWN`` when not
            recognised); another sniffed type is a ``ValidationError`` on ``field``
        :param declared_type: what the uploader said the file is; only used to tell CSV, JSON and
            Markdown from plain text, which their bytes cannot
        :param field: the body field errors name

        Raises ``TooLarge`` (a ``ValidationError`` on ``field``, HTTP 413) past the limit; either
        error, or any failure of ``source`` or of the storage, leaves no blob and no temporary
        object behind. The same content stored twice is one blob (the second put overwrites
        nothing and returns the same ``sha256``).
        """
        ...

    def open(self, organization_id: str, sha256: str) -> Chunks:
        """The blob's bytes in chunks; ``NotFound`` when this organization has no such blob
        (whether or not another organization has)."""
        ...

    def exists(self, organization_id: str, sha256: str) -> bool: ...

    def delete(self, organization_id: str, sha256: str) -> None:
        """Remove the blob if it is there. Content is shared by every record of the organization
        that names the same SHA-256: delete only when no record names it any more."""
        ...

    def sweep(self, before: dt.datetime) -> int:
        """Remove what uploads started before ``before`` left behind when their process was
        killed (temporary files, unfinished multipart uploads) and return how many; uploads
        started since are untouched. A chore runs it with ``before`` well in the past (a day),
        so no upload still running is swept."""
        ...

    def close(self) -> None: ...


def capped(limit: int | None, most: int) -> int:
    """The limit one upload runs under: the caller's, never above the store's ``most``."""
    return most if limit is None else min(limit, most)


class Intake:
    """One upload on its way into a store: iterating yields ``source``'s chunks while hashing and
    counting them, and raises before yielding anything past ``limit`` or anything the type check
    refuses. ``info()`` is the stored file once iteration ended without an error.

    >>> intake = Intake([b"%PDF-1.7\\n", b"..."], limit=100)
    >>> b"".join(intake)
    b'%PDF-1.7\\n...'
    >>> intake.info().media_type, intake.info().size
    ('application/pdf', 12)
    """

    def __init__(
        self,
        source: Source,
        *,
        limit: int,
        accept: Collection[str] | None = EVIDENCE_TYPES,
        declared_type: str | None = None,
        field: str = "file",
    ) -> None:
        self._source = source
        self.limit = limit
        self._accept = accept
        self._declared = declared_type
        self._field = field
        self._hash = hashlib.sha256()
        self._size = 0
        self._media_type: str | None = None
        self._text: codecs.IncrementalDecoder | None = None
        self._done = False

    def __iter__(self) -> Iterator[bytes]:
        head: list[bytes] = []
        held = 0
        for chunk in _chunks_of(self._source):
            self._count(chunk)
            if self._media_type is None:
                head.append(chunk)
                held += len(chunk)
                if held < SNIFF_BYTES:
                    continue
                yield from self._decide(head, final=False)
                head = []
                continue
            self._check_text(chunk, final=False)
            yield chunk
        if self._media_type is None:
            yield from self._decide(head, final=True)
        else:
            self._check_text(b"", final=True)
        self._done = True

    def info(self) -> BlobInfo:
        if not self._done or self._media_type is None:
            raise RuntimeError("the upload has not been read to its end")
        return BlobInfo(sha256=self._hash.hexdigest(), size=self._size, media_type=self._media_type)

    def _count(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self.limit:
            raise TooLarge(
                f"{self._field}: must be at most {self.limit} bytes",
                {"field": self._field, "value": self._size, "reason": f"must be at most {self.limit} bytes"},
            )
        self._hash.update(chunk)

    def _decide(self, head: list[bytes], *, final: bool) -> Iterator[bytes]:
        data = b"".join(head)
        # The first SNIFF_BYTES exactly, however the source cut its chunks: the same file gets
        # the same answer from every uploader.
        sniffed = sniff(data[:SNIFF_BYTES], complete=final and len(data) <= SNIFF_BYTES)
        if sniffed == TEXT:
            self._text = codecs.getincrementaldecoder("utf-8")("strict")
            if self._declared is not None and self._declared in TEXT_TYPES:
                sniffed = self._declared
        self._refuse_unless_accepted(sniffed)
        self._media_type = sniffed
        self._check_text(data, final=final)
        if data:
            yield data

    def _refuse_unless_accepted(self, sniffed: str) -> None:
        if self._accept is not None and sniffed not in self._accept:
            if sniffed == EMPTY:
                reason = "is empty"
            else:
                reason = "is not a file type evidence may be: " + ", ".join(sorted(self._accept))
            raise ValidationError(
                f"{self._field}: {reason}",
                {"field": self._field, "value": sniffed, "reason": reason, "sniffedType": sniffed},
            )

    def _check_text(self, chunk: bytes, *, final: bool) -> None:
        """Text is checked to its last byte, not only its start, so a file that turns binary
        past the sniffed head is refused rather than stored as text."""
        if self._text is None:
            return
        try:
            self._text.decode(chunk, final)
            if b"\x00" in chunk:
                raise ValueError("NUL byte")
        except ValueError:
            self._text = None
            reason = "is not UTF-8 text to its end (a text file must be UTF-8 throughout)"
            raise ValidationError(
                f"{self._field}: {reason}",
                {"field": self._field, "value": "binary data", "reason": reason, "sniffedType": UNKNOWN},
            ) from None


def _chunks_of(source: Source) -> Iterator[bytes]:
    read = getattr(source, "read", None)
    if callable(read):
        while True:
            chunk = read(CHUNK_BYTES)
            if not chunk:
                return
            yield bytes(chunk)
        return
    for chunk in cast(Iterable[bytes], source):
        if chunk:
            yield bytes(chunk) if not isinstance(chunk, bytes) else chunk


def sniff(head: bytes, *, complete: bool = False) -> str:
    """The media type of a file starting with ``head`` (its first ``SNIFF_BYTES``, or all of it
    when ``complete``), from magic numbers; ``TEXT`` for UTF-8 text, ``EMPTY`` for no bytes and
    ``UNKNOWN`` when nothing matches.

    >>> sniff(b"\\x89PNG\\r\\n\\x1a\\n...."), sniff(b"id,name\\n1,A\\n", complete=True), sniff(b"MZ\\x90\\x00")
    ('image/png', 'text/plain', 'application/x-executable')
    """
    if not head:
        return EMPTY
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return TIFF
    if b"%PDF-" in head[:1024]:
        return PDF  # readers accept a PDF header anywhere in the first kilobyte
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in _HEIF_BRANDS:
            return _HEIF_BRANDS[brand]
        if brand in (b"avif", b"avis"):
            return AVIF
        if brand in _MP4_BRANDS:
            return MP4
        return UNKNOWN
    if head.startswith(b"\x1f\x8b"):
        return GZIP
    if head.startswith((_ZIP_ENTRY, b"PK\x05\x06")):
        return _zip_type(head)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return OLE
    if head.startswith((b"MZ", b"\x7fELF", b"\xfe\xed\xfa", b"\xcf\xfa\xed\xfe", b"#!")):
        return EXECUTABLE
    if _is_text(head, complete=complete):
        return TEXT
    return UNKNOWN


def _is_text(head: bytes, *, complete: bool) -> bool:
    if any(byte in _CONTROL for byte in head[:SNIFF_BYTES]):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, complete)
    except ValueError:
        return False
    return True


def _zip_type(head: bytes) -> str:
    """Which ZIP it is, from the names of the local entries in ``head``: an OpenDocument file
    starts with an uncompressed ``mimetype`` entry holding its type; Office Open XML files hold
    ``word/``, ``xl/`` or ``ppt/`` parts. A VBA project makes it a macro-enabled file (refused)."""
    names: list[bytes] = []
    start = 0
    while (at := head.find(_ZIP_ENTRY, start)) >= 0 and at + 30 <= len(head):
        name_length, extra_length = struct.unpack_from("<HH", head, at + 26)
        name = head[at + 30 : at + 30 + name_length]
        if not names and name == b"mimetype":
            body = head[at + 30 + name_length + extra_length :][:80]
            for kind in (ODT, ODS, ODP):
                if body.startswith(kind.encode()) and body[len(kind) : len(kind) + 1] in (b"", b"P"):
                    return kind
        names.append(name)
        start = at + 4
    if any(name.endswith(b"vbaProject.bin") for name in names):
        return OFFICE_MACROS
    for prefix, kind in ((b"word/", DOCX), (b"xl/", XLSX), (b"ppt/", PPTX)):
        if any(name.startswith(prefix) for name in names):
            return kind
    return ZIP


def open_blobs(url: str, **options: Any) -> BlobStore:
    """The blob store at ``url``, from the adapter installed for its scheme (``compliance.blobs``
    entry points): ``file:///var/lib/compliance/blobs``, ``memory://``,
    ``s3://bucket?endpoint=https://...&region=...``; ``options`` go to the adapter."""
    return cast(BlobStore, open_by_scheme(BLOBS_ENTRY_POINTS, "blobs", "blob store", url, **options))


def default_blobs_url(store_url: str) -> str | None:
    """Where a platform keeps files when nobody said: beside a SQLite database, in a directory
    named after it with ``-blobs`` appended (as SQLite names its ``-wal`` and ``-shm`` files, so
    a copy of ``compliance.db*`` takes the files along); in memory for a store in memory; nowhere
    for PostgreSQL, whose servers share no directory (configure one).

    >>> default_blobs_url("sqlite:////srv/compliance.db")
    'file:///srv/compliance.db-blobs'
    >>> default_blobs_url("memory://"), default_blobs_url("postgresql://db/compliance")
    ('memory://', None)
    """
    return beside_database(store_url, "-blobs")


def blobs_of(context: Any) -> BlobStore:
    """The platform's blob store, opened on first use and kept for the platform's lifetime (in
    ``context.shared``): ``settings["blobs"]`` (a ``BlobStore`` or a URL), else the default
    beside the store (``default_blobs_url``). Opening it lazily keeps platforms that store no
    file from loading an adapter at all."""
    found = opened_once(
        context,
        SETTINGS_KEY,
        default_blobs_url,
        open_blobs,
        "blob store",
        "(COMPLIANCE_BLOBS_URL or COMPLIANCE_BLOBS_DIR for the server)",
    )
    return cast(BlobStore, found)
