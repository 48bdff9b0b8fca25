"""Blobs in a dictionary, for tests and for an embedded platform over the memory store: the same
limits, hashing and type check as the other adapters (``Intake``), but the files live, whole, in
this process's memory and go with it."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Collection, Iterator
from typing import Any

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
)
from compliance_core.kernel.errors import NotFound, ValidationError

from .urls import query_options, size_option

__all__ = ["MemoryBlobs", "open_blobs"]


class MemoryBlobs:
    """A ``BlobStore`` in memory; safe to share between threads."""

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._blobs: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()

    def stored(self) -> list[tuple[str, str]]:
        """Every stored blob as (organization id, SHA-256)."""
        with self._lock:
            return sorted(self._blobs)

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
        organization = check_organization(organization_id)
        intake = Intake(
            source,
            limit=capped(limit, self.max_bytes),
            accept=accept,
            declared_type=declared_type,
            field=field,
        )
        content = b"".join(intake)
        info = intake.info()
        with self._lock:
            self._blobs.setdefault((organization, info.sha256), content)
        return info

    def open(self, organization_id: str, sha256: str) -> Chunks:
        with self._lock:
            content = self._blobs.get((check_organization(organization_id), sha256))
        if content is None:
            raise NotFound.resource("file", sha256)
        return Chunks(_slices(content))

    def exists(self, organization_id: str, sha256: str) -> bool:
        with self._lock:
            return (check_organization(organization_id), sha256) in self._blobs

    def delete(self, organization_id: str, sha256: str) -> None:
        with self._lock:
            self._blobs.pop((check_organization(organization_id), sha256), None)

    def sweep(self, before: dt.datetime) -> int:
        """Nothing is ever left: an upload that fails is only a list of chunks, collected."""
        return 0

    def close(self) -> None:
        """The files stay until the object goes: a platform closed and reopened on the same
        object finds them."""


def _slices(content: bytes) -> Iterator[bytes]:
    view = memoryview(content)
    for start in range(0, len(content), CHUNK_BYTES):
        yield bytes(view[start : start + CHUNK_BYTES])


def open_blobs(url: str, **options: Any) -> MemoryBlobs:
    """The ``compliance.blobs`` entry point for ``memory://`` (``max_bytes`` in the query)."""
    if not url.startswith("memory://") or url[len("memory://") :].split("?", 1)[0]:
        raise ValidationError.field("blobs", url, "must be memory:// (options in the query)")
    query = query_options(url, {"max_bytes"})
    options.setdefault("max_bytes", size_option(query, "max_bytes", url))
    return MemoryBlobs(**options)
