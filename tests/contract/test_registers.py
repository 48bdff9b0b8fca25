"""Registers as files on every store: an export imported into another organization gives equal
records (CSV and XLSX); an export takes the list's filters and pages through a register larger
than one page; a dry run lists every row's errors at once and writes nothing; a real import is
all or nothing, with an event and an audit entry per record."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import attrs
import openpyxl
import pytest

from compliance_core import Actor, Platform, ValidationError
from compliance_core.areas.people import NewPerson, PersonFilter
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.kernel.audit import AUDIT_LOG, AuditFilter
from compliance_core.kernel.pages import MAX_PER_PAGE, PageRequest
from compliance_core.kernel.registers import RegisterFile, RowError

NASTY = '=HYPERLINK("http://evil.example","x") said "hi",\nthen; left'

VENDORS = [
    NewVendor(
        name=NASTY,
        description="+1 line one\r\nline two, with ''quotes'' and 'single'",
        category="-cloud",
        status="assessed",
        inherent_probability="likely",
        inherent_impact="major",
        residual_probability=2,
        residual_impact="minor",
        website="https://cloud.example/path?q=1",
        country="IE",
        criticality="critical",
        ict_service=True,
        processes_personal_data=True,
        is_sub_processor=True,
        dpa_status="signed",
        dpa_signed_at=dt.date(2024, 5, 17),
        dpa_url="https://cloud.example/dpa",
        last_reviewed_at=dt.date(2025, 1, 2),
        next_review_due=dt.date(2026, 1, 2),
        sub_processors=[{"name": "@Hosting, Inc.", "country": "US", "purpose_category": "hosting"}],
        transfer_mechanism="standard_contractual_clauses",
    ),
    NewVendor(name="Plain vendor"),
    NewVendor(name="Ünïcödé — 東京 ★", description="tab\there", country="JP"),
]

RISKS = [
    NewRisk(
        title="@Laptop theft",
        description="=1+1",
        category="technology",
        department="it",
        likelihood="possible",
        impact="major",
        residual_likelihood=1,
        residual_impact="moderate",
        treatment_strategy="mitigate",
        treatment_strategy_description='Disk encryption, "always"',
        task_ids=["tsk_9"],
    ),
    NewRisk(title="Unrated risk"),
]

PEOPLE = [
    NewPerson(name="-Ada Lovelace", email="ada@example.com", role="admin", department="it", job_title="+CTO"),
    NewPerson(name="Grace Hopper", email="grace@example.com", is_active=False),
]


def _fields(record: Any, model: type) -> dict[str, Any]:
    return {field.name: getattr(record, field.name) for field in attrs.fields(model)}


def _register(platform: Platform, actor: Actor, area: str) -> list[Any]:
    return list(platform.services[area].list(actor, page=PageRequest(per_page=MAX_PER_PAGE)).items)


CASES = [("vendors", NewVendor, VENDORS), ("risks", NewRisk, RISKS), ("people", NewPerson, PEOPLE)]


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
@pytest.mark.parametrize(("area", "model", "entries"), CASES, ids=[case[0] for case in CASES])
def test_an_export_imported_into_another_organization_gives_equal_records(
    platform: Platform, owner: Actor, outsider: Actor, area: str, model: type, entries: list[Any], file_format: str
) -> None:
    service = platform.services[area]
    before = len(_register(platform, owner, area))  # the owner's own person, for people
    for entry in entries:
        service.create(owner, entry)
    exported = getattr(service, f"export_{file_format}")(owner)
    assert exported.filename == f"{area}.{file_format}"
    data = exported.read()

    dry = service.import_file(outsider, RegisterFile.of(data, file_format, dry_run=True))
    assert (dry.dry_run, dry.rows, dry.created, dry.errors) == (True, len(entries) + before, 0, ())
    taken = [] if area != "people" else [record.email for record in _register(platform, outsider, area)]
    if taken:  # the other organization's owner has an e-mail of its own; the owner row repeats none
        assert all(entry.email not in taken for entry in entries)

    report = service.import_file(outsider, RegisterFile.of(data, file_format))
    assert report.created == len(entries) + before
    originals = sorted((_fields(r, model) for r in _register(platform, owner, area)), key=repr)
    copies = [r for r in _register(platform, outsider, area) if r.id in report.ids]
    assert sorted((_fields(r, model) for r in copies), key=repr) == originals
    assert all(copy.organization_id == outsider.organization_id for copy in copies)


def test_an_import_records_an_event_and_an_audit_entry_per_record(
    platform: Platform, owner: Actor, outsider: Actor
) -> None:
    platform.vendors.create(owner, VENDORS[1])
    data = platform.vendors.export_csv(owner).read()
    report = platform.vendors.import_file(outsider, RegisterFile.of(data, "csv"))
    with platform.uow.read() as session:
        entries, _ = session[AUDIT_LOG].list(
            outsider.organization_id, AuditFilter(action="vendor.created"), PageRequest(per_page=MAX_PER_PAGE)
        )
    assert sorted(entry.entity_id for entry in entries) == sorted(report.ids)


def test_an_export_takes_the_lists_filters_and_reads_every_page(platform: Platform, owner: Actor) -> None:
    total = MAX_PER_PAGE + 3
    for number in range(total):
        platform.vendors.create(
            owner, NewVendor(name=f"v{number}", criticality="critical" if number % 2 else "standard")
        )
    rows = list(csv_rows(platform.vendors.export_csv(owner).read()))
    assert len(rows) == total + 1
    assert len({row[0] for row in rows[1:]}) == total  # every vendor once
    critical = list(csv_rows(platform.vendors.export_csv(owner, VendorFilter(criticality="critical")).read()))
    column = critical[0].index("criticality")
    assert len(critical) - 1 == total // 2 and {row[column] for row in critical[1:]} == {"critical"}
    sheet = openpyxl.load_workbook(io.BytesIO(platform.vendors.export_xlsx(owner).read()), read_only=True)
    assert sum(1 for _ in sheet.worksheets[0].iter_rows()) == total + 1
    people = list(csv_rows(platform.people.export_csv(owner, PersonFilter(role="auditor")).read()))
    assert len(people) == 1  # the header alone


def test_the_audit_log_and_findings_export_their_columns(platform: Platform, owner: Actor) -> None:
    platform.vendors.create(owner, VENDORS[0])
    audit = list(csv_rows(platform.audit_log.export_csv(owner, AuditFilter(action="vendor.created")).read()))
    assert audit[0][:3] == ["id", "createdAt", "actorType"] and len(audit) == 2
    changes = audit[1][audit[0].index("changes")]
    assert changes.startswith("{") and "HYPERLINK" in changes
    findings = list(csv_rows(platform.findings.export_csv(owner).read()))
    assert findings[0][:3] == ["id", "title", "severity"] and len(findings) == 1


def test_a_dry_run_lists_every_rows_errors_and_a_real_import_writes_nothing(platform: Platform, owner: Actor) -> None:
    platform.people.create(owner, NewPerson(name="Taken", email="taken@example.com"))
    data = (
        b"name,email,role,shoeSize\r\n"
        b",nobody@example.com,employee,42\r\n"  # 2: no name
        b"Fine,fine@example.com,employee,\r\n"  # 3: fine
        b"Bad,not-an-email,wizard,\r\n"  # 4: two bad fields
        b"Taken,taken@example.com,,\r\n"  # 5: e-mail of a person already there
        b"Twice,fine@example.com,,\r\n"  # 6: repeats row 3
        b",,,\r\n"  # blank: skipped
    )
    report = platform.people.import_file(owner, RegisterFile.of(data, "csv", dry_run=True))
    assert report.dry_run and report.rows == 5 and report.created == 0
    found = {(error.row, error.field) for error in report.errors}
    assert found == {(1, "shoeSize"), (2, "name"), (4, "email"), (4, "role"), (5, "email"), (6, "email")}
    assert RowError(row=4, field="role", value="wizard", reason=_reason(report, 4, "role")) in report.errors
    assert all(error.reason for error in report.errors)

    before = len(_register(platform, owner, "people"))
    with pytest.raises(ValidationError) as refused:
        platform.people.import_file(owner, RegisterFile.of(data, "csv"))
    listed = refused.value.details["errors"]
    assert {(entry["row"], entry["field"]) for entry in listed} == found
    assert refused.value.details["field"] == "content"
    assert len(_register(platform, owner, "people")) == before  # row 3 was not created either


def test_a_file_that_is_not_one_is_refused_naming_the_content(platform: Platform, owner: Actor) -> None:
    for data, file_format in ((b"PK\x03\x04 no workbook", "xlsx"), (b"\xff\xfe bad", "csv"), (b"", "csv")):
        with pytest.raises(ValidationError) as refused:
            platform.vendors.import_file(owner, RegisterFile.of(data, file_format, dry_run=True))
        assert refused.value.details["field"] == "content"
    with pytest.raises(ValidationError) as refused:
        RegisterFile(format="csv", content="not base64!")
    assert refused.value.details["field"] == "content"


def _reason(report: Any, row: int, field: str) -> str:
    return next(error.reason for error in report.errors if (error.row, error.field) == (row, field))


def csv_rows(data: bytes) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_an_export_takes_the_lists_search_sort_and_range(platform: Platform, owner: Actor, clock) -> None:
    for name in ("Beta cloud", "Alpha cloud", "Gamma mail"):
        platform.vendors.create(owner, NewVendor(name=name))
    search = PageRequest(q="CLOUD", sort="-name")
    rows = csv_rows(platform.vendors.export_csv(owner, VendorFilter(), search).read())
    assert [row[1] for row in rows[1:]] == ["Beta cloud", "Alpha cloud"]
    listed = platform.vendors.list(owner, VendorFilter(), search).items
    assert [row[0] for row in rows[1:]] == [vendor.id for vendor in listed]
    platform.people.create(owner, PEOPLE[0])
    later, earlier = (PageRequest(since=clock.now() + dt.timedelta(seconds=delta)) for delta in (1, -1))
    assert len(csv_rows(platform.people.export_csv(owner, PersonFilter(), later).read())) == 1  # the header
    assert len(csv_rows(platform.people.export_csv(owner, PersonFilter(), earlier).read())) >= 2
