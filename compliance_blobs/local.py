"""Blobs in a local directory: ``<root>/<organization>/<aa>/<sha256>``, ``aa`` being the first two
hex digits, so no directory holds more than a 256th of an organization's files.

An upload is written to a temporary file in ``<root>/<organization>/.incoming/`` (the same file
system as its destination), flushed to disk with fsync, and then hard-linked under its SHA-256:
the link is atomic and never replaces an existing file, so a reader sees a whole file or none,
two uploads of the same content race harmlessly, and a crash leaves at most a temporary file
(never a partial blob). The temporary file is removed whatever happens, including a refused type
or an upload over the limit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Collection, Generator
from pathlib import Path
from typing import Any, BinaryIO

from compliance_core.kernel.blobs import (
    CHUNK_BYTES,
    DEFAULT_MAX_BYTES,
    EVIDENCE_TYPES,
    BlobInfo,
    Chunks,
    Intake,
    Source,
    capped,
    check_organization,
    is_sha256,
)
from compliance_core.kernel.errors import NotFound, ValidationError

from .urls import query_options, size_option

__all__ = ["INCOMING", "LocalBlobs", "open_blobs"]

INCOMING = ".incoming"
"""Each organization's directory of uploads in progress."""


class LocalBlobs:
    """A ``BlobStore`` in the directory ``root`` (created on first use).

    :param max_bytes: the largest file taken
    :param fsync: flush each file and its directory to disk before answering (turn off only for
        throwaway stores: a power cut may then lose a file the platform recorded)
    """

    def __init__(self, root: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES, fsync: bool = True) -> None:
        self.root = Path(root).absolute()
        self.max_bytes = max_bytes
        self._fsync = fsync

    def __repr__(self) -> str:
        return f"LocalBlobs({str(self.root)!r})"

    def path(self, organization_id: str, sha256: str) -> Path:
        """Where the blob is (or would be) stored."""
        return self.root / check_organization(organization_id) / sha256[:2] / sha256

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
        organization = self.root / check_organization(organization_id)
        intake = Intake(
            source,
            limit=capped(limit, self.max_bytes),
            accept=accept,
            declared_type=declared_type,
            field=field,
        )
        incoming = organization / INCOMING
        incoming.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=incoming, suffix=".part")
        try:
            with os.fdopen(descriptor, "wb") as file:
                for chunk in intake:
                    file.write(chunk)
                file.flush()
                if self._fsync:
                    os.fsync(file.fileno())
            info = intake.info()
            final = organization / info.sha256[:2] / info.sha256
            final.parent.mkdir(exist_ok=True)
            _link(temporary, final)
            if self._fsync:
                _fsync_directory(final.parent)
            return info
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def open(self, organization_id: str, sha256: str) -> Chunks:
        if not is_sha256(sha256):
            raise NotFound.resource("file", sha256)
        try:
            file = open(self.path(organization_id, sha256), "rb")  # noqa: SIM115 (closed by the Chunks)
        except FileNotFoundError:
            raise NotFound.resource("file", sha256) from None
        reader = _read(file)

        def close() -> None:
            reader.close()
            file.close()

        return Chunks(reader, close)

    def exists(self, organization_id: str, sha256: str) -> bool:
        return is_sha256(sha256) and self.path(organization_id, sha256).is_file()

    def delete(self, organization_id: str, sha256: str) -> None:
        if is_sha256(sha256):
            self.path(organization_id, sha256).unlink(missing_ok=True)

    def sweep(self, before: dt.datetime) -> int:
        """Temporary files last written before ``before`` (a killed process's)."""
        cutoff = before.timestamp()
        removed = 0
        for temporary in self.root.glob(f"*/{INCOMING}/*.part"):
            with contextlib.suppress(FileNotFoundError):
                if temporary.stat().st_mtime < cutoff:
                    temporary.unlink()
                    removed += 1
        return removed

    def close(self) -> None:
        """Nothing to release: files are opened per call."""


def _read(file: BinaryIO) -> Generator[bytes, None, None]:
    with file:
        while chunk := file.read(CHUNK_BYTES):
            yield chunk


def _link(temporary: str, final: Path) -> None:
    """Put the finished file in place without ever replacing one: a file already there has the
    same bytes (its name is their hash). A file system without hard links gets an atomic rename."""
    try:
        os.link(temporary, final)
    except FileExistsError:
        pass
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        os.replace(temporary, final)


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def open_blobs(url: str, **options: Any) -> LocalBlobs:
    """The ``compliance.blobs`` entry point for ``file:///absolute/directory`` (options in the
    query: ``max_bytes``; keyword ``options`` are ``LocalBlobs``'s)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or not parts.path:
        raise ValidationError.field("blobs", url, "must look like file:///absolute/directory")
    query = query_options(url, {"max_bytes"})
    options.setdefault("max_bytes", size_option(query, "max_bytes", url))
    return LocalBlobs(urllib.request.url2pathname(parts.path), **options)
