"""The statement of applicability's files: CSV and XLSX hold every row with its version's head,
the OSCAL plan validates with compliance-trestle's models, the PDF prints an approved version."""

from __future__ import annotations

import csv
import io
import json

import openpyxl
import pypdf
import pytest
from test_soa import _AREAS, FRAMEWORK, LABELS, enable, link
from trestle.oscal import ssp

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.frameworks.control_models import ControlStatus, Driver
from compliance_core.areas.frameworks.soa import (
    ApproveSoa,
    MarkApplicable,
    MarkNotApplicable,
    NewSoaDocument,
    SubmitSoa,
)
from compliance_core.areas.people import NewPerson
from compliance_core.kernel.errors import NotFound
from compliance_core.kernel.permissions import Role
from compliance_pdf import FpdfPolicies
from compliance_store.memory import MemoryStore


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return Platform(MemoryStore(_AREAS), clock=clock, ids=SequentialIds(), areas=_AREAS)


@pytest.fixture
def approved(platform: Platform, owner):
    """An approved version: A.7.1 excluded, A.5.2 applied for a contract with a formula-like
    justification, A.5.1 implemented, a risk linked to A.8.25's control; approved by a named admin."""
    enable(platform, owner.organization_id, statuses={"A.5.1": ControlStatus.IMPLEMENTED})
    document = platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK))
    platform.soa.mark_not_applicable(owner, document.id, "a.7.1", MarkNotApplicable(justification="No premises."))
    platform.soa.mark_applicable(
        owner, document.id, "a.5.2", MarkApplicable(drivers=[Driver.CONTRACT], justification="=1+1 | *clause 4*")
    )
    link(platform, owner.organization_id, platform.soa.row(owner, document.id, "a.8.25").control_id, "risk", "rsk_9")
    admin = platform.people.create(owner, NewPerson(name="Ada Admin", email="ada@acme.example", role=Role.ADMIN))
    platform.soa.submit(owner, document.id, SubmitSoa(approver_id=admin.id))
    as_admin = platform.actor(owner.organization_id, Role.ADMIN, person_id=admin.id)
    return platform.soa.approve(as_admin, document.id, ApproveSoa(comment="Agreed at the management review."))


def _bytes(download) -> bytes:
    return b"".join(download.chunks)


def test_the_csv_holds_every_row_under_its_version_s_head(platform: Platform, owner, approved) -> None:
    download = platform.soa.export_csv(owner, approved.id)
    assert download.media_type == "text/csv"
    assert download.filename == "statement-of-applicability-iso-27001-2022-v1.csv"
    header, *rows = list(csv.reader(io.StringIO(_bytes(download).decode("utf-8-sig"))))
    assert header[:6] == ["framework", "frameworkId", "version", "status", "approvedAt", "approvedBy"]
    assert [row[header.index("label")] for row in rows] == list(LABELS)
    assert {tuple(row[:6]) for row in rows} == {
        ("ISO/IEC 27001:2022", FRAMEWORK, "1", "approved", approved.decided_at.isoformat(), "Ada Admin")
    }
    by_label = {row[header.index("label")]: dict(zip(header, row)) for row in rows}
    assert (by_label["A.7.1"]["applicable"], by_label["A.7.1"]["justification"]) == ("false", "No premises.")
    assert by_label["A.5.2"]["justification"] == "'=1+1 | *clause 4*", "a formula is never run"
    assert by_label["A.5.2"]["drivers"] == "contract"
    assert by_label["A.8.25"]["riskIds"] == "rsk_9"
    assert by_label["A.5.1"]["controlStatus"] == "implemented"


def test_the_xlsx_holds_every_row(platform: Platform, owner, approved) -> None:
    download = platform.soa.export_xlsx(owner, approved.id)
    assert download.filename.endswith("-v1.xlsx")
    sheet = openpyxl.load_workbook(io.BytesIO(_bytes(download)), read_only=True).active
    header, *rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert len(rows) == len(LABELS)
    assert [row[header.index("label")] for row in rows] == list(LABELS)
    assert {row[header.index("approvedBy")] for row in rows} == {"Ada Admin"}
    assert [row[header.index("applicable")] for row in rows] == [True, True, False, True]


def test_an_open_version_exports_its_working_rows(platform: Platform, owner, approved) -> None:
    second = platform.soa.create(owner, NewSoaDocument(framework_id=FRAMEWORK))
    platform.soa.mark_applicable(owner, second.id, "a.7.1", MarkApplicable(drivers=[Driver.LEGAL]))
    header, *rows = list(csv.reader(io.StringIO(_bytes(platform.soa.export_csv(owner, second.id)).decode("utf-8-sig"))))
    assert {(row[2], row[3], row[4], row[5]) for row in rows} == {("2", "draft", "", "")}
    assert [row[header.index("applicable")] for row in rows] == ["true"] * 4
    with pytest.raises(NotFound) as raised:
        platform.soa.export_pdf(owner, second.id)
    assert raised.value.details["status"] == "draft"


def test_the_oscal_plan_validates_with_trestle_and_has_a_requirement_per_row(
    platform: Platform, owner, approved
) -> None:
    download = platform.soa.export_oscal(owner, approved.id)
    assert download.media_type == "application/oscal+json"
    document = json.loads(_bytes(download))
    validated = ssp.Model.model_validate(document).system_security_plan
    assert len(validated.control_implementation.implemented_requirements) == len(LABELS)
    plan = document["system-security-plan"]
    assert (plan["metadata"]["oscal-version"], plan["metadata"]["version"]) == ("1.1.2", "1")
    requirements = plan["control-implementation"]["implemented-requirements"]
    assert [item["control-id"] for item in requirements] == [label.lower() for label in LABELS]
    states = {item["control-id"]: item["by-components"][0]["implementation-status"]["state"] for item in requirements}
    assert states == {"a.5.1": "implemented", "a.5.2": "planned", "a.7.1": "not-applicable", "a.8.25": "planned"}
    excluded = next(item for item in requirements if item["control-id"] == "a.7.1")
    assert excluded["remarks"] == "No premises."
    assert excluded["by-components"][0]["implementation-status"]["remarks"] == "No premises."
    props = {item["control-id"]: [(prop["name"], prop["value"]) for prop in item["props"]] for item in requirements}
    assert ("risk-id", "rsk_9") in props["a.8.25"] and ("driver", "contract") in props["a.5.2"]
    assert [party["name"] for party in plan["metadata"]["parties"]] == ["Acme", "Ada Admin"]
    assert _bytes(platform.soa.export_oscal(owner, approved.id)) == _bytes(download), "the same version, the same file"


def test_the_pdf_prints_an_approved_version(platform: Platform, owner, approved) -> None:
    platform.soa.renderer = FpdfPolicies
    download = platform.soa.export_pdf(owner, approved.id)
    assert (download.media_type, download.filename) == (
        "application/pdf",
        "statement-of-applicability-iso-27001-2022-v1.pdf",
    )
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(_bytes(download))).pages)
    assert "Statement of applicability: ISO/IEC 27001:2022" in text
    assert "Ada Admin" in text and "Agreed at the management review." in text
    for label in LABELS:
        assert label in text
    assert "=1+1 | *clause 4*" in text, "row text prints as written, not as Markdown"
    assert "No premises." in text
