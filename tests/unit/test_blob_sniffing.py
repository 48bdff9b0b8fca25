"""The type check of uploads: magic numbers, the ZIP-based office formats told apart by their part
names, UTF-8 text checked to its end, and the size limit, all through ``Intake`` as every adapter
uses it."""

from __future__ import annotations

import io
import zipfile

import openpyxl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_core.kernel import blobs
from compliance_core.kernel.blobs import (
    EMPTY,
    EVIDENCE_TYPES,
    SNIFF_BYTES,
    TEXT_TYPES,
    UNKNOWN,
    Intake,
    default_blobs_url,
    is_sha256,
    sniff,
)
from compliance_core.kernel.errors import TooLarge, ValidationError


def _zip(*entries: tuple[str, bytes], stored_first: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for index, (name, data) in enumerate(entries):
            method = zipfile.ZIP_STORED if stored_first and index == 0 else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buffer.getvalue()


def _office(folder: str) -> bytes:
    return _zip(
        ("[Content_Types].xml", b"<Types/>" * 200),
        ("_rels/.rels", b"<Relationships/>"),
        (f"{folder}/document.xml", b"<document/>"),
    )


def _xlsx() -> bytes:
    book = openpyxl.Workbook()
    book.active.append(["control", "status"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _odf(kind: str) -> bytes:
    return _zip(("mimetype", kind.encode()), ("content.xml", b"<office/>"), stored_first=True)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", blobs.PDF),
        (b"\r\n\r\n%PDF-2.0\n", blobs.PDF),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", blobs.PNG),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", blobs.JPEG),
        (b"GIF89a\x01\x00\x01\x00", blobs.GIF),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", blobs.WEBP),
        (b"II*\x00\x08\x00\x00\x00", blobs.TIFF),
        (b"MM\x00*\x00\x00\x00\x08", blobs.TIFF),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", blobs.HEIC),
        (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00", blobs.HEIF),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", blobs.AVIF),
        (b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00", blobs.MP4),
        (b"\x00\x00\x00\x20ftypXXXX\x00\x00\x02\x00", UNKNOWN),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", blobs.GZIP),
        (_office("word"), blobs.DOCX),
        (_office("xl"), blobs.XLSX),
        (_office("ppt"), blobs.PPTX),
        (_xlsx(), blobs.XLSX),
        (_odf(blobs.ODT), blobs.ODT),
        (_odf(blobs.ODS), blobs.ODS),
        (_odf(blobs.ODP), blobs.ODP),
        (_zip(("logs/app.log", b"line\n"), ("report.csv", b"a,b\n")), blobs.ZIP),
        (b"PK\x05\x06" + b"\x00" * 18, blobs.ZIP),
        (_zip(("[Content_Types].xml", b"<Types/>"), ("xl/vbaProject.bin", b"\x00")), blobs.OFFICE_MACROS),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", blobs.OLE),
        (b"MZ\x90\x00\x03\x00", blobs.EXECUTABLE),
        (b"\x7fELF\x02\x01\x01", blobs.EXECUTABLE),
        (b"#!/bin/sh\nrm -rf /\n", blobs.EXECUTABLE),
        (b"id,name\n1,Acme\n", blobs.TEXT),
        ("\ufeffcontr\u00f4le;statut\n".encode(), blobs.TEXT),
        (b'{"passed": true}', blobs.TEXT),
        (b"line one\r\n\tindented\x0c\n", blobs.TEXT),
        (b"\xff\xfeh\x00i\x00", UNKNOWN),  # UTF-16: not the UTF-8 text evidence may be
        (b"text with a \x00 NUL", UNKNOWN),
        (b"text with an escape \x1b[31m", UNKNOWN),
        (b"\xc3\x28 invalid UTF-8", UNKNOWN),
        (b"", EMPTY),
    ],
)
def test_sniff(content: bytes, expected: str) -> None:
    assert sniff(content[:SNIFF_BYTES], complete=len(content) <= SNIFF_BYTES) == expected


def test_the_allow_list() -> None:
    refused = {blobs.OLE, blobs.OFFICE_MACROS, blobs.EXECUTABLE, UNKNOWN, EMPTY}
    assert not refused & EVIDENCE_TYPES
    assert TEXT_TYPES <= EVIDENCE_TYPES


def test_a_character_cut_by_the_end_of_the_head_is_still_text() -> None:
    head = ("a" * (SNIFF_BYTES - 1) + "\u00e9").encode()[:SNIFF_BYTES]
    assert sniff(head, complete=False) == blobs.TEXT
    assert sniff(head, complete=True) == UNKNOWN


def _run(chunks: list[bytes], **options: object) -> tuple[bytes, blobs.BlobInfo]:
    intake = Intake(chunks, **{"limit": 10**9, **options})  # type: ignore[arg-type]
    data = b"".join(intake)
    return data, intake.info()


def test_text_takes_a_declared_text_type_and_nothing_else() -> None:
    assert _run([b"a,b\n"], declared_type="text/csv")[1].media_type == "text/csv"
    assert _run([b"# Title\n"], declared_type="text/markdown")[1].media_type == "text/markdown"
    assert _run([b"{}"], declared_type="application/json")[1].media_type == "application/json"
    assert _run([b"<svg/>"], declared_type="image/svg+xml")[1].media_type == "text/plain"
    assert _run([b"%PDF-1.7"], declared_type="text/csv")[1].media_type == blobs.PDF


def test_text_is_checked_to_its_last_byte() -> None:
    good = "\u00e9".encode()
    data, info = _run([b"x" * (SNIFF_BYTES + 1), good[:1], good[1:], b"\n"])
    assert info.media_type == blobs.TEXT and data.endswith(good + b"\n")
    for tail in ([b"\x00"], [b"\xff"], [good[:1]]):
        with pytest.raises(ValidationError) as raised:
            _run([b"x" * (SNIFF_BYTES + 1), *tail])
        assert raised.value.details["field"] == "file"


def test_a_refused_type_names_the_field_and_the_sniffed_type() -> None:
    with pytest.raises(ValidationError) as raised:
        _run([b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100], field="content")
    details = raised.value.details
    assert (details["field"], details["value"], details["sniffedType"]) == ("content", blobs.OLE, blobs.OLE)
    assert raised.value.message.startswith("content: is not a file type evidence may be")


def test_an_empty_upload_is_refused_as_evidence() -> None:
    with pytest.raises(ValidationError) as raised:
        _run([])
    assert raised.value.details["reason"] == "is empty"
    assert _run([], accept=None)[1].media_type == EMPTY


def test_any_type_when_nothing_is_refused() -> None:
    assert _run([b"MZ\x00"], accept=None)[1].media_type == blobs.EXECUTABLE
    assert _run([b"\x00\x01\x02"], accept=None)[1].media_type == UNKNOWN


def test_the_limit_is_inclusive_and_refused_before_the_bytes_past_it_are_yielded() -> None:
    assert _run([b"%PDF-", b"12345"], limit=10)[1].size == 10
    seen: list[bytes] = []
    intake = Intake([b"%PDF-1.7" + b"x" * SNIFF_BYTES, b"more", b"never read"], limit=SNIFF_BYTES + 9)
    with pytest.raises(TooLarge) as raised:
        for chunk in intake:
            seen.append(chunk)
    assert sum(map(len, seen)) == SNIFF_BYTES + 8
    assert raised.value.details == {
        "field": "file",
        "value": SNIFF_BYTES + 12,
        "reason": f"must be at most {SNIFF_BYTES + 9} bytes",
    }


def test_info_is_only_known_at_the_end() -> None:
    intake = Intake([b"%PDF-1.7", b"x" * SNIFF_BYTES], limit=10**6)
    iterator = iter(intake)
    next(iterator)
    with pytest.raises(RuntimeError):
        intake.info()


@given(data=st.binary(max_size=3 * 1024), cuts=st.lists(st.integers(min_value=1, max_value=700), min_size=1))
def test_the_decision_does_not_depend_on_how_the_bytes_are_cut(data: bytes, cuts: list[int]) -> None:
    chunks, start = [], 0
    while start < len(data):
        size = cuts[len(chunks) % len(cuts)]
        chunks.append(data[start : start + size])
        start += size
    whole = _outcome([data])
    assert _outcome(chunks) == whole


def _outcome(chunks: list[bytes]) -> object:
    try:
        return _run(chunks)
    except ValidationError as error:
        return error.details.get("sniffedType")


def test_sha256_names() -> None:
    assert is_sha256("a" * 64) and not is_sha256("A" * 64) and not is_sha256("a" * 65) and not is_sha256(None)


def test_where_files_go_when_nobody_said() -> None:
    assert default_blobs_url("sqlite:////srv/data/compliance.db") == "file:///srv/data/compliance.db-blobs"
    assert default_blobs_url("sqlite:///:memory:") == "memory://"
    assert default_blobs_url("memory://") == "memory://"
    assert default_blobs_url("postgresql://db/compliance") is None


@given(cut=st.integers(min_value=1, max_value=3 * SNIFF_BYTES))
def test_a_zip_whose_telling_part_lies_past_the_sniffed_start_is_a_zip_however_it_is_cut(cut: int) -> None:
    import os

    data = _zip(("media/a.bin", os.urandom(SNIFF_BYTES)), ("word/document.xml", b"<document/>"))
    chunks = [data[start : start + cut] for start in range(0, len(data), cut)]
    assert _run(chunks)[1].media_type == blobs.ZIP
