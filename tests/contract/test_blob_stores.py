"""One contract for every blob store adapter: a local directory, memory, and S3 as spoken by moto's
server mode (a real HTTP server on 127.0.0.1, in its own process so that the memory measured here
is the adapter's alone: tracemalloc counts every thread of a process, and a threaded server would
hold the uploaded parts in ours).

After each refusal or failure the storage itself is listed (the directory walked, the bucket's
objects and multipart uploads listed), so "leaves nothing behind" is checked where it matters.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_blobs.local import LocalBlobs
from compliance_blobs.memory import MemoryBlobs
from compliance_blobs.s3 import MIN_PART_BYTES, S3Blobs, s3_client
from compliance_core.kernel.blobs import SNIFF_BYTES, BlobStore, Chunks, open_blobs
from compliance_core.kernel.errors import NotFound, TooLarge, ValidationError

ORG = "org_alpha"
OTHER = "org_beta"
PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
MiB = 1024 * 1024


@attrs.frozen
class Harness:
    """A store and a way to list everything its storage holds, temporary objects included."""

    kind: str
    store: BlobStore
    objects: Callable[[], list[str]]
    name: Callable[[str, str], str]
    abandon: Callable[[], int]
    """Leave what a process killed mid-upload leaves (returns how many things)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/moto-api/", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _s3_client(url: str) -> Any:
    return s3_client(endpoint_url=url, region="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")


def _local(tmp_path: Path) -> Harness:
    root = tmp_path / "blobs"
    store = LocalBlobs(root)

    def objects() -> list[str]:
        return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())

    def abandon() -> int:
        (root / ORG / ".incoming").mkdir(parents=True, exist_ok=True)
        (root / ORG / ".incoming" / "tmpkilled.part").write_bytes(b"%PDF-half")
        return 1

    return Harness("local", store, objects, lambda org, sha: f"{org}/{sha[:2]}/{sha}", abandon)


def _memory() -> Harness:
    store = MemoryBlobs()
    return Harness(
        "memory", store, lambda: [f"{org}/{sha}" for org, sha in store.stored()], lambda o, s: f"{o}/{s}", lambda: 0
    )


def _s3(url: str) -> Harness:
    client = _s3_client(url)
    bucket = f"evidence-{secrets.token_hex(6)}"
    client.create_bucket(Bucket=bucket)
    store = S3Blobs(bucket, client=client, prefix="tenant/", part_bytes=MIN_PART_BYTES)

    def objects() -> list[str]:
        keys = [
            item["Key"]
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for item in page.get("Contents", [])
        ]
        uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
        return sorted(keys + [f"upload:{upload['Key']}" for upload in uploads])

    def abandon() -> int:
        client.create_multipart_upload(Bucket=bucket, Key=f"tenant/.incoming/{ORG}/killed")
        client.put_object(Bucket=bucket, Key=f"tenant/.incoming/{ORG}/killed-after-completing", Body=b"%PDF-")
        return 2

    return Harness("s3", store, objects, lambda org, sha: f"tenant/{org}/{sha}", abandon)


@pytest.fixture(params=["local", "memory", "s3"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    if request.param == "local":
        return _local(tmp_path)
    if request.param == "memory":
        return _memory()
    return _s3(request.getfixturevalue("moto_url"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _pdf_stream(chunks: int, chunk_bytes: int = MiB) -> Iterator[bytes]:
    """A PDF header and then ``chunks`` fresh random chunks: generated as read, never held."""
    yield b"%PDF-1.7\n"
    for _ in range(chunks):
        yield os.urandom(chunk_bytes)


def test_round_trip(blobs: Harness) -> None:
    info = blobs.store.put(ORG, [PDF[:10], PDF[10:]])
    assert (info.sha256, info.size, info.media_type) == (_sha(PDF), len(PDF), "application/pdf")
    assert blobs.store.exists(ORG, info.sha256)
    with blobs.store.open(ORG, info.sha256) as chunks:
        assert b"".join(chunks) == PDF
    assert blobs.objects() == [blobs.name(ORG, info.sha256)]


def test_a_file_object_is_read_in_chunks(blobs: Harness) -> None:
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(3 * MiB + 17)
    info = blobs.store.put(ORG, io.BytesIO(data))
    assert (info.sha256, info.size, info.media_type) == (_sha(data), len(data), "image/png")
    chunks = list(blobs.store.open(ORG, info.sha256))
    assert b"".join(chunks) == data
    assert max(len(chunk) for chunk in chunks) <= MiB


def test_the_same_content_is_stored_once(blobs: Harness) -> None:
    first = blobs.store.put(ORG, [PDF])
    second = blobs.store.put(ORG, io.BytesIO(PDF))
    assert first == second
    assert blobs.objects() == [blobs.name(ORG, first.sha256)]


def test_organizations_are_kept_apart(blobs: Harness) -> None:
    info = blobs.store.put(ORG, [PDF])
    assert not blobs.store.exists(OTHER, info.sha256)
    with pytest.raises(NotFound):
        blobs.store.open(OTHER, info.sha256)
    blobs.store.delete(OTHER, info.sha256)
    assert blobs.store.open(ORG, info.sha256).read_all() == PDF
    again = blobs.store.put(OTHER, [PDF])
    assert again.sha256 == info.sha256
    assert blobs.objects() == sorted([blobs.name(ORG, info.sha256), blobs.name(OTHER, info.sha256)])


def test_delete(blobs: Harness) -> None:
    info = blobs.store.put(ORG, [PDF])
    blobs.store.delete(ORG, info.sha256)
    blobs.store.delete(ORG, info.sha256)
    assert not blobs.store.exists(ORG, info.sha256)
    with pytest.raises(NotFound):
        blobs.store.open(ORG, info.sha256)
    assert [name for name in blobs.objects() if info.sha256 in name] == []


@pytest.mark.parametrize("name", ["", "0" * 63, "A" * 64, "../" + "0" * 61, "0" * 64])
def test_an_unknown_or_malformed_name_is_not_found(blobs: Harness, name: str) -> None:
    with pytest.raises(NotFound):
        blobs.store.open(ORG, name)
    assert not blobs.store.exists(ORG, name)
    blobs.store.delete(ORG, name)


@pytest.mark.parametrize("organization", ["", "../org", "org/x", "org x", "o" * 101])
def test_an_organization_id_that_is_no_id_is_a_programming_error(blobs: Harness, organization: str) -> None:
    with pytest.raises(ValueError):
        blobs.store.put(organization, [PDF])
    assert blobs.objects() == []


def test_over_the_limit_leaves_nothing(blobs: Harness) -> None:
    with pytest.raises(TooLarge) as raised:
        blobs.store.put(ORG, _pdf_stream(4, 1000), limit=2500)
    assert isinstance(raised.value, ValidationError)
    assert raised.value.details == {"field": "file", "value": 3009, "reason": "must be at most 2500 bytes"}
    assert blobs.objects() == []


def test_over_the_limit_after_parts_were_sent_leaves_nothing(blobs: Harness) -> None:
    """Past the first multipart part on S3 (and past the type check everywhere)."""
    with pytest.raises(TooLarge):
        blobs.store.put(ORG, _pdf_stream(16), limit=12 * MiB, field="content")
    assert blobs.objects() == []


def test_the_store_maximum_bounds_any_limit(blobs: Harness) -> None:
    store = blobs.store
    maximum = store.max_bytes
    try:
        store.max_bytes = 100  # type: ignore[misc]  # the adapters' maximum is a plain attribute
        with pytest.raises(TooLarge):
            store.put(ORG, [PDF * 3], limit=10**9)
    finally:
        store.max_bytes = maximum  # type: ignore[misc]
    assert blobs.objects() == []


def test_a_refused_type_leaves_nothing(blobs: Harness) -> None:
    with pytest.raises(ValidationError) as raised:
        blobs.store.put(ORG, [b"MZ\x90\x00\x03" + os.urandom(100_000)])
    assert raised.value.details["field"] == "file"
    assert raised.value.details["sniffedType"] == "application/x-executable"
    assert not isinstance(raised.value, TooLarge)
    assert blobs.objects() == []


def test_text_that_turns_binary_past_the_sniffed_start_is_refused(blobs: Harness) -> None:
    start = b"id,name\n" * (SNIFF_BYTES // 8 + 10)
    with pytest.raises(ValidationError) as raised:
        blobs.store.put(ORG, [start, b"\x00\xff\xfe binary"], declared_type="text/csv")
    assert raised.value.details["field"] == "file"
    assert blobs.objects() == []


def test_text_takes_the_declared_text_type(blobs: Harness) -> None:
    csv = blobs.store.put(ORG, [b"id,name\n1,Acme\n"], declared_type="text/csv")
    claimed = blobs.store.put(ORG, [b"# Notes\n"], declared_type="image/png")
    assert (csv.media_type, claimed.media_type) == ("text/csv", "text/plain")


def test_an_empty_file_is_refused_as_evidence_but_stored_when_any_bytes_are(blobs: Harness) -> None:
    with pytest.raises(ValidationError):
        blobs.store.put(ORG, [])
    assert blobs.objects() == []
    info = blobs.store.put(ORG, [b""], accept=None)
    assert (info.sha256, info.size) == (_sha(b""), 0)
    assert blobs.store.open(ORG, info.sha256).read_all() == b""


def test_a_failing_source_leaves_nothing(blobs: Harness) -> None:
    def broken() -> Iterator[bytes]:
        yield from _pdf_stream(7)
        raise ConnectionResetError("the client went away")

    with pytest.raises(ConnectionResetError):
        blobs.store.put(ORG, broken())
    assert blobs.objects() == []


def test_concurrent_puts_of_the_same_content(blobs: Harness) -> None:
    data = b"%PDF-1.7\n" + os.urandom(6 * MiB)
    results: list[Any] = []
    barrier = threading.Barrier(6)

    def put() -> None:
        barrier.wait()
        try:
            results.append(blobs.store.put(ORG, io.BytesIO(data)))
        except Exception as error:  # reported below
            results.append(error)

    threads = [threading.Thread(target=put) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {getattr(result, "sha256", result) for result in results} == {_sha(data)}
    assert blobs.objects() == [blobs.name(ORG, _sha(data))]
    assert hashlib.sha256(blobs.store.open(ORG, _sha(data)).read_all()).hexdigest() == _sha(data)


def test_a_large_upload_streams_in_flat_memory(blobs: Harness) -> None:
    """50 MiB in and out, generated and checked as it flows: the adapter holds a bounded buffer
    (one S3 part, one chunk on disk), never the file."""
    if blobs.kind == "memory":
        pytest.skip("the memory adapter keeps files in memory by design")
    bound = 3 * MIN_PART_BYTES if blobs.kind == "s3" else 4 * MiB
    tracemalloc.start()
    try:
        info = blobs.store.put(ORG, _pdf_stream(50))
        _, put_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        digest = hashlib.sha256()
        size = 0
        with blobs.store.open(ORG, info.sha256) as chunks:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
        _, read_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (digest.hexdigest(), size) == (info.sha256, 50 * MiB + 9)
    assert put_peak < bound, f"put peaked at {put_peak / MiB:.1f} MiB"
    assert read_peak < bound, f"read peaked at {read_peak / MiB:.1f} MiB"
    assert blobs.objects() == [blobs.name(ORG, info.sha256)]


def test_closing_a_reader_early_releases_it(blobs: Harness) -> None:
    info = blobs.store.put(ORG, _pdf_stream(3))
    chunks: Chunks = blobs.store.open(ORG, info.sha256)
    assert next(chunks).startswith(b"%PDF-")
    chunks.close()
    chunks.close()
    blobs.store.delete(ORG, info.sha256)
    assert blobs.objects() == []


def test_sweep_removes_what_killed_uploads_left_and_nothing_newer(blobs: Harness) -> None:
    kept = blobs.store.put(ORG, [PDF])
    left = blobs.abandon()
    now = dt.datetime.now(dt.UTC)
    # moto answers every multipart upload as initiated on 2010-11-10 (a fixed value in its
    # ListMultipartUploads response), so there the abandoned upload is always old enough.
    early = 1 if blobs.kind == "s3" else 0
    assert blobs.store.sweep(now - dt.timedelta(hours=1)) == early
    assert len(blobs.objects()) == 1 + left - early
    assert blobs.store.sweep(now + dt.timedelta(minutes=1)) == left - early
    assert blobs.objects() == [blobs.name(ORG, kept.sha256)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096), cut=st.integers(min_value=1, max_value=4097))
def test_any_bytes_round_trip_under_their_sha256(blobs: Harness, data: bytes, cut: int) -> None:
    chunks = [data[start : start + cut] for start in range(0, len(data), cut)]
    info = blobs.store.put(ORG, chunks, accept=None)
    assert (info.sha256, info.size) == (_sha(data), len(data))
    assert blobs.store.open(ORG, info.sha256).read_all() == data


def test_open_blobs_finds_each_adapter_by_its_url(
    tmp_path: Path, moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = open_blobs(f"{tmp_path.as_uri()}/files?max_bytes=1000")
    assert isinstance(local, LocalBlobs) and local.max_bytes == 1000 and local.root == tmp_path / "files"
    assert isinstance(open_blobs("memory://"), MemoryBlobs)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    bucket = f"evidence-{secrets.token_hex(6)}"
    _s3_client(moto_url).create_bucket(Bucket=bucket)
    s3 = open_blobs(f"s3://{bucket}/deep/prefix?endpoint={moto_url}&region=us-east-1&part_bytes={6 * MiB}")
    assert isinstance(s3, S3Blobs) and (s3.prefix, s3.part_bytes) == ("deep/prefix/", 6 * MiB)
    info = s3.put(ORG, [PDF])
    assert s3.open(ORG, info.sha256).read_all() == PDF
    s3.close()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://host/x",
        "file://remote-host/x",
        "memory://somewhere",
        "memory://?max_bytes=0",
        "file:///tmp/x?size=5",
        "file:///tmp/x?max_bytes=1&max_bytes=2",
        "s3://",
        "s3://key:secret@bucket",
        "s3://bucket?part_bytes=1024",
    ],
)
def test_a_url_no_adapter_takes_is_refused(url: str) -> None:
    with pytest.raises((ValidationError, ValueError)):
        open_blobs(url)
