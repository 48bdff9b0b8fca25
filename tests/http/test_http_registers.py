"""Registers as files over HTTP and in both formats: an export streams the
records the list's filters match, with the file's media type and name; an import answers a dry
run's row errors, creates every row or (with any bad row) none, listing each bad row; reading
a register's file needs its read permission, importing needs its write permission."""

from __future__ import annotations

import base64
import csv
import io

import httpx
import openpyxl
import pytest

from compliance_core import Role
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.client import Client
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.registers import ImportReport, RegisterFile
from compliance_core.kernel.sheets import FORMATS
from compliance_http.client import HTTPTransport
from http_support import Api, error

VENDORS = [
    {"name": "=cmd|'/C calc'!A0", "criticality": "critical", "country": "IE", "inherentProbability": 4},
    {"name": "Plain", "criticality": "standard", "description": 'line "one"\nline two'},
]


def _rows(data: bytes, file_format: str) -> list[list[str]]:
    """The file's rows as text (an XLSX file's cells as a CSV file would write them)."""
    if file_format == "csv":
        return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    sheet = openpyxl.load_workbook(io.BytesIO(data), read_only=True).worksheets[0]
    shown = {True: "true", False: "false", None: ""}
    return [
        [
            shown.get(cell, cell) if not isinstance(cell, (int, float)) or isinstance(cell, bool) else str(cell)
            for cell in row
        ]
        for row in sheet.iter_rows(values_only=True)
    ]


def _import(api: Api, path: str, data: bytes, file_format: str, **options: object):
    body = {"format": file_format, "content": base64.b64encode(data).decode(), **options}
    return api.post(path, body)


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_an_export_streams_the_filtered_register_and_imports_into_another_organization(
    api: Api, other: Api, file_format: str
) -> None:
    for vendor in VENDORS:
        assert api.post("/v1/vendors", vendor).status_code == 201
    everything = api.get(f"/v1/vendors/export.{file_format}")
    assert everything.status_code == 200, everything.text
    assert everything.headers["content-type"] == FORMATS[file_format]
    assert everything.headers["content-disposition"] == f'attachment; filename="vendors.{file_format}"'
    rows = _rows(everything.content, file_format)
    header = rows[0]
    assert header[:2] == ["id", "name"] and len(rows) == 3
    assert {row[1] for row in rows[1:]} == {"'=cmd|'/C calc'!A0", "Plain"}  # the formula is text

    critical = _rows(api.get(f"/v1/vendors/export.{file_format}", query="criticality=critical").content, file_format)
    assert [row[header.index("criticality")] for row in critical[1:]] == ["critical"]
    searched = _rows(api.get(f"/v1/vendors/export.{file_format}", query="q=PLAIN&sort=-name").content, file_format)
    assert [row[1] for row in searched[1:]] == ["Plain"]
    ordered = _rows(api.get(f"/v1/vendors/export.{file_format}", query="sort=-name").content, file_format)
    assert [row[1] for row in ordered[1:]] == ["Plain", "'=cmd|'/C calc'!A0"]

    dry = _import(other, "/v1/vendors/import", everything.content, file_format, dryRun=True)
    assert dry.status_code == 200, dry.text
    assert dry.json == {"dryRun": True, "rows": 2, "created": 0, "ids": [], "errors": []}
    assert other.get("/v1/vendors").json["count"] == 0

    done = _import(other, "/v1/vendors/import", everything.content, file_format)
    assert done.status_code == 200, done.text
    assert done.json["created"] == 2 and len(done.json["ids"]) == 2
    mine = {v["name"]: v for v in api.get("/v1/vendors").json["data"]}
    theirs = {v["name"]: v for v in other.get("/v1/vendors").json["data"]}
    assert set(theirs) == set(mine) == {VENDORS[0]["name"], "Plain"}
    for name, vendor in theirs.items():
        same = {key for key in vendor if key not in ("id", "organizationId", "createdAt", "updatedAt")}
        assert {key: vendor[key] for key in same} == {key: mine[name][key] for key in same}


def test_an_import_with_bad_rows_lists_each_and_creates_none(api: Api) -> None:
    data = (
        b"title,likelihood,impact,color\r\nGood,possible,major,\r\n,9,major,\r\nAlso good,,,\r\nBad,possible,huge,\r\n"
    )
    dry = _import(api, "/v1/risks/import", data, "csv", dryRun=True)
    assert dry.status_code == 200
    assert [(e["row"], e["field"]) for e in dry.json["errors"]] == [
        (1, "color"),
        (3, "title"),
        (3, "likelihood"),
        (5, "impact"),
    ]
    assert dry.json["errors"][2]["value"] == 9

    refused = _import(api, "/v1/risks/import", data, "csv")
    details = error(refused, 400, "validation_error", "content")
    assert [(e["row"], e["field"]) for e in details["errors"]] == [(e["row"], e["field"]) for e in dry.json["errors"]]
    assert api.get("/v1/risks").json["count"] == 0


def test_an_import_is_idempotent_and_says_when_it_replays(api: Api) -> None:
    data = b"name,email\r\nAda,ada@example.com\r\n"
    first = _import(api, "/v1/people/import", data, "csv")
    headers = {"Idempotency-Key": "import-1"}
    body = {"format": "csv", "content": base64.b64encode(b"name,email\r\nBob,bob@example.com\r\n").decode()}
    once = api.post("/v1/people/import", body, headers=headers)
    again = api.post("/v1/people/import", body, headers=headers)
    assert first.status_code == once.status_code == again.status_code == 200
    assert again.json == once.json and again.headers.get("Idempotent-Replayed") == "true"
    names = [person["name"] for person in api.get("/v1/people", query="perPage=200").json["data"]]
    assert names.count("Ada") == names.count("Bob") == 1


def test_a_body_that_is_no_file_is_refused_naming_the_field(api: Api) -> None:
    error(api.post("/v1/vendors/import", {"format": "csv", "content": "%%%"}), 400, "validation_error", "content")
    error(api.post("/v1/vendors/import", {"format": "ods", "content": ""}), 400, "validation_error", "format")
    broken = base64.b64encode(b"PK\x03\x04 not a workbook").decode()
    error(api.post("/v1/vendors/import", {"format": "xlsx", "content": broken}), 400, "validation_error", "content")
    error(api.get("/v1/vendors/export.csv", query="page=2"), 400, "validation_error", "page")
    error(api.get("/v1/vendors/export.csv", query="sort=colour"), 400, "validation_error", "sort")


def test_exporting_needs_the_read_permission_and_importing_the_write_one(as_role) -> None:
    employee, auditor = as_role(Role.EMPLOYEE), as_role(Role.AUDITOR)
    assert employee.get("/v1/vendors/export.csv").status_code == 200
    assert auditor.get("/v1/audit-log/export.xlsx").status_code == 200
    error(employee.get("/v1/audit-log/export.csv"), 403, "forbidden")
    data = base64.b64encode(b"name\r\nAcme\r\n").decode()
    error(employee.post("/v1/vendors/import", {"format": "csv", "content": data, "dryRun": True}), 403, "forbidden")
    error(auditor.post("/v1/people/import", {"format": "csv", "content": data}), 403, "forbidden")


def test_the_http_client_exports_with_filters_and_imports_as_in_process(app, boot, platform) -> None:
    client = Client(HTTPTransport("http://test", boot.owner_key.secret, transport=httpx.WSGITransport(app=app)))
    client.vendors.create(NewVendor(name="Cloud Co", criticality="critical"))
    client.vendors.create(NewVendor(name="Mail Co"))
    over_http = client.vendors.export_csv(VendorFilter(criticality="critical"))
    assert (over_http.filename, over_http.media_type) == ("vendors.csv", "text/csv")
    actor = platform.actor(boot.organization.id)
    assert over_http.read() == platform.vendors.export_csv(actor, VendorFilter(criticality="critical")).read()
    search = PageRequest(q="co", sort="-name")
    searched = client.vendors.export_csv(VendorFilter(), search).read()
    assert searched == platform.vendors.export_csv(actor, VendorFilter(), search).read()
    assert searched.index(b"Mail Co") < searched.index(b"Cloud Co")
    report = client.vendors.import_file(RegisterFile.of(b"name\r\nBackup Co\r\n", "csv"))
    assert report == ImportReport(dry_run=False, rows=1, created=1, ids=report.ids)
    assert platform.vendors.get(actor, report.ids[0]).name == "Backup Co"
