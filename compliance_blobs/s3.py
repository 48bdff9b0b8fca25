"""Blobs in S3-compatible object storage (AWS S3, MinIO, Ceph, R2, ...) through boto3, at the key
``<prefix><organization>/<sha256>``.

The SHA-256 is known only at the end of a stream, so a file that fits in one part (8 MiB by
default) is held until its end and then written once, straight to its key. A larger one goes up
as a multipart upload to a temporary key under ``<prefix>.incoming/``, one part in memory at a
time; once complete and accepted it is copied to its key inside the storage (no bytes return
through this process) and the temporary object is deleted. A refused or failed upload aborts its
multipart upload, so no part is left behind; a process killed mid-upload leaves an incomplete
upload or a temporary object under ``.incoming/``, which a bucket lifecycle rule on that prefix
expires (docs/blobs.md).

Credentials come from boto3's usual chain (environment, shared files, instance roles), never from
the URL.
"""

from __future__ import annotations

import datetime as dt
import logging
import urllib.parse
import uuid
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
    is_sha256,
)
from compliance_core.kernel.errors import NotFound, ValidationError

from .urls import query_options, size_option

__all__ = ["DEFAULT_PART_BYTES", "INCOMING", "MIN_PART_BYTES", "S3Blobs", "open_blobs", "s3_client"]

MIN_PART_BYTES = 5 * 1024 * 1024
"""S3's smallest part of a multipart upload (all but the last)."""
DEFAULT_PART_BYTES = 8 * 1024 * 1024
INCOMING = ".incoming/"
_MISSING = {"404", "NoSuchKey", "NotFound"}

log = logging.getLogger("compliance_blobs")


def s3_client(*, endpoint_url: str | None = None, region: str | None = None, **credentials: str) -> Any:
    """A boto3 S3 client that retries what S3 documents as transient (500 InternalError, 503
    SlowDown, throttling, dropped connections) up to five attempts with backoff, where boto3's
    default gives up after two: a burst of concurrent uploads must not fail on one busy answer."""
    import boto3  # here, not at import: a platform storing no file never loads boto3
    from botocore.config import Config

    retries = Config(retries={"mode": "standard", "max_attempts": 5})
    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=retries, **credentials)


class S3Blobs:
    """A ``BlobStore`` in ``bucket`` (which must exist).

    :param client: a boto3 S3 client (default: one made from ``endpoint_url`` and ``region``)
    :param prefix: prepended to every key, e.g. ``"compliance/"``, to share a bucket
    :param part_bytes: the size of each part of a multipart upload, and so the memory one upload
        holds (at least 5 MiB)
    """

    def __init__(
        self,
        bucket: str,
        *,
        client: Any = None,
        prefix: str = "",
        endpoint_url: str | None = None,
        region: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        part_bytes: int = DEFAULT_PART_BYTES,
    ) -> None:
        if part_bytes < MIN_PART_BYTES:
            raise ValueError(f"part_bytes must be at least {MIN_PART_BYTES} (S3's smallest part)")
        if client is None:
            client = s3_client(endpoint_url=endpoint_url, region=region)
        self.bucket = bucket
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.part_bytes = part_bytes
        self._client = client

    def __repr__(self) -> str:
        return f"S3Blobs({self.bucket!r}, prefix={self.prefix!r})"

    def key(self, organization_id: str, sha256: str) -> str:
        """The object key of the blob."""
        return f"{self.prefix}{check_organization(organization_id)}/{sha256}"

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
        upload = _Upload(self._client, self.bucket, f"{self.prefix}{INCOMING}{organization}/{uuid.uuid4().hex}")
        held: list[bytes] = []
        size = 0
        try:
            for chunk in intake:
                held.append(chunk)
                size += len(chunk)
                if size >= self.part_bytes:
                    data = b"".join(held)
                    held.clear()
                    while len(data) >= self.part_bytes:
                        upload.send(data[: self.part_bytes])
                        data = data[self.part_bytes :]
                    held.append(data)
                    size = len(data)
            info = intake.info()
            final = f"{self.prefix}{organization}/{info.sha256}"
            if not upload.started:
                self._client.put_object(Bucket=self.bucket, Key=final, Body=b"".join(held))
                return info
            if size:
                upload.send(b"".join(held))
            held.clear()
            upload.complete()
            if not self._exists(final):
                try:
                    self._client.copy({"Bucket": self.bucket, "Key": upload.key}, self.bucket, final)
                except Exception:
                    # Another upload of the same bytes may have copied them to the same key at
                    # the same moment (some servers refuse one of two concurrent copies); its
                    # object is this one, since the key is the content's hash.
                    if not self._exists(final):
                        raise
            return info
        finally:
            upload.discard()

    def open(self, organization_id: str, sha256: str) -> Chunks:
        key = self.key(organization_id, sha256)
        if not is_sha256(sha256):
            raise NotFound.resource("file", sha256)
        try:
            response = self._client.get_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            if _missing(error):
                raise NotFound.resource("file", sha256) from None
            raise
        body = response["Body"]
        return Chunks(_stream(body), body.close)

    def exists(self, organization_id: str, sha256: str) -> bool:
        key = self.key(organization_id, sha256)
        return is_sha256(sha256) and self._exists(key)

    def delete(self, organization_id: str, sha256: str) -> None:
        key = self.key(organization_id, sha256)
        if is_sha256(sha256):
            self._client.delete_object(Bucket=self.bucket, Key=key)

    def sweep(self, before: dt.datetime) -> int:
        """Multipart uploads initiated, and temporary objects written, under ``.incoming/``
        before ``before`` (what a bucket lifecycle rule would also expire)."""
        prefix = f"{self.prefix}{INCOMING}"
        removed = 0
        for page in self._client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket, Prefix=prefix):
            for upload in page.get("Uploads", []):
                if upload["Initiated"] < before:
                    self._client.abort_multipart_upload(
                        Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    removed += 1
        for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                if item["LastModified"] < before:
                    self._client.delete_object(Bucket=self.bucket, Key=item["Key"])
                    removed += 1
        return removed

    def close(self) -> None:
        self._client.close()

    def _exists(self, key: str) -> bool:
        try:
            self._client.head_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            if _missing(error):
                return False
            raise
        return True


class _Upload:
    """A multipart upload to a temporary key, started with its first part; ``discard`` aborts it
    if unfinished, or deletes the temporary object it made."""

    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self._client = client
        self._bucket = bucket
        self.key = key
        self._id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._completed = False

    @property
    def started(self) -> bool:
        return self._id is not None

    def send(self, data: bytes) -> None:
        if self._id is None:
            self._id = self._client.create_multipart_upload(Bucket=self._bucket, Key=self.key)["UploadId"]
        number = len(self._parts) + 1
        answer = self._client.upload_part(
            Bucket=self._bucket, Key=self.key, UploadId=self._id, PartNumber=number, Body=data
        )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def complete(self) -> None:
        self._client.complete_multipart_upload(
            Bucket=self._bucket, Key=self.key, UploadId=self._id, MultipartUpload={"Parts": self._parts}
        )
        self._completed = True

    def discard(self) -> None:
        """Never raises: it runs after the upload's own outcome, which it must not hide. What it
        could not remove is logged (and expired by the bucket's lifecycle rule)."""
        if self._id is None:
            return
        try:
            if self._completed:
                self._client.delete_object(Bucket=self._bucket, Key=self.key)
            else:
                self._client.abort_multipart_upload(Bucket=self._bucket, Key=self.key, UploadId=self._id)
        except Exception:
            log.warning("could not remove the temporary upload %s", self.key, exc_info=True)


def _stream(body: Any) -> Iterator[bytes]:
    try:
        yield from body.iter_chunks(CHUNK_BYTES)
    finally:
        body.close()


def _missing(error: Exception) -> bool:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return False
    return str(response.get("Error", {}).get("Code")) in _MISSING


def open_blobs(url: str, **options: Any) -> S3Blobs:
    """The ``compliance.blobs`` entry point for ``s3://bucket[/prefix]``, with ``endpoint``
    (an S3-compatible server's URL), ``region``, ``max_bytes`` and ``part_bytes`` in the query;
    keyword ``options`` are ``S3Blobs``'s (``client=`` among them)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.username or parts.password:
        raise ValidationError.field("blobs", url, "must look like s3://bucket/prefix (credentials never in the URL)")
    query = query_options(url, {"endpoint", "region", "max_bytes", "part_bytes"})
    prefix = parts.path.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    options.setdefault("prefix", prefix)
    options.setdefault("endpoint_url", query.get("endpoint") or None)
    options.setdefault("region", query.get("region") or None)
    options.setdefault("max_bytes", size_option(query, "max_bytes", url))
    options.setdefault("part_bytes", size_option(query, "part_bytes", url, DEFAULT_PART_BYTES))
    return S3Blobs(parts.netloc, **options)
