"""/v1/soa over HTTP: the statement of applicability's own rules on the wire (the generic suites
cover the rest): the justification an exclusion needs, the approver, the 409s of a version that
is not a draft, the frozen rows and the files."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from urllib.parse import urlencode

import openpyxl
import pypdf
import pytest
from trestle.oscal import ssp

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas import AREAS
from compliance_core.areas.frameworks import soa
from compliance_core.areas.frameworks.control_models import (
    CONTROL_REQUIREMENTS,
    CONTROLS,
    ENABLED_FRAMEWORKS,
    Control,
    ControlRequirement,
    EnabledFramework,
)
from compliance_core.areas.people import NewPerson
from compliance_core.platform import Bootstrap
from compliance_store.memory import MemoryStore
from http_support import Api, error, issue_key

ROOT = "/v1/soa"
FRAMEWORK = "iso-27001-2022"
LABELS = ("A.5.1", "A.5.2", "A.7.1")

if not any(area.name == "soa" for area in AREAS):  # until the lead registers the area: memory only

    @pytest.fixture
    def platform(clock: FrozenClock) -> Iterator[Platform]:
        areas = (*AREAS, soa.AREA)
        with Platform(MemoryStore(areas), clock=clock, ids=SequentialIds(), areas=areas) as platform:
            yield platform


def _enable(platform: Platform, organization_id: str) -> None:
    """The framework's working rows, written directly (how controls are made is not tested here)."""
    now = platform.clock.now()
    with platform.uow.write(None) as tx:
        tx[ENABLED_FRAMEWORKS].add(
            EnabledFramework(
                id=platform.ids.new("frm"),
                organization_id=organization_id,
                framework_id=FRAMEWORK,
                name="ISO/IEC 27001:2022",
                requirement_count=len(LABELS),
                created_at=now,
            )
        )
        for label in LABELS:
            control_id = platform.ids.new("ctl")
            tx[CONTROLS].add(
                Control(id=control_id, organization_id=organization_id, name=label, created_at=now, updated_at=now)
            )
            tx[CONTROL_REQUIREMENTS].add(
                ControlRequirement(
                    id=platform.ids.new("req"),
                    organization_id=organization_id,
                    framework_id=FRAMEWORK,
                    requirement_id=label.lower(),
                    label=label,
                    title=f"Requirement {label}",
                    control_id=control_id,
                    created_at=now,
                    updated_at=now,
                )
            )


@pytest.fixture
def draft(api: Api, platform: Platform, boot: Bootstrap) -> str:
    _enable(platform, boot.organization.id)
    created = api.post(ROOT, {"frameworkId": FRAMEWORK})
    assert created.status_code == 201, created.text
    return str(created.json["id"])


def test_a_version_is_created_once_and_reads_its_working_rows(api: Api, draft: str) -> None:
    one = api.get(f"{ROOT}/{draft}").json
    assert (one["version"], one["status"], one["frameworkId"]) == (1, "draft", FRAMEWORK)
    newer = api.post(ROOT, {"frameworkId": FRAMEWORK})
    assert (newer.status_code, newer.json["version"]) == (201, 2)
    assert api.get(f"{ROOT}/{draft}").json["status"] == "superseded"
    draft = newer.json["id"]
    missing = error(api.post(ROOT, {"frameworkId": "soc2-tsc-2017"}), 400, "validation_error", "frameworkId")
    assert missing["value"] == "soc2-tsc-2017"
    error(api.post(ROOT, {"frameworkId": FRAMEWORK, "color": "red"}), 400, "validation_error", "color")
    rows = api.get(f"{ROOT}/{draft}/rows", query="perPage=2")
    assert (rows.json["count"], rows.json["meta"]["totalPages"]) == (3, 2)
    assert [row["label"] for row in rows.json["data"]] == ["A.5.1", "A.5.2"]
    assert set(rows.json["data"][0]) >= {"requirementId", "controlStatus", "applicable", "justification", "riskIds"}
    assert api.get(f"{ROOT}/{draft}/rows/a.7.1").json["title"] == "Requirement A.7.1"
    assert api.get(ROOT, query=f"frameworkId={FRAMEWORK}&status=draft").json["count"] == 1
    error(api.get(f"{ROOT}/{draft}/rows", query="colour=red"), 400, "validation_error")


def test_an_exclusion_without_a_justification_is_refused_naming_it(api: Api, draft: str) -> None:
    path = f"{ROOT}/{draft}/rows/a.7.1/not-applicable"
    for body in ({}, {"justification": ""}, {"justification": "   "}, {"justification": None}):
        error(api.post(path, body), 400, "validation_error", "justification")
    excluded = api.post(path, {"justification": "We have no premises."})
    assert excluded.status_code == 200, excluded.text
    assert (excluded.json["applicable"], excluded.json["justification"]) == (False, "We have no premises.")
    applicable = f"{ROOT}/{draft}/rows/a.5.2/applicable"
    error(api.post(applicable, {"drivers": ["best_practice"]}), 400, "validation_error", "justification")
    error(api.post(applicable, {"drivers": []}), 400, "validation_error", "justification")
    error(api.post(applicable, {}), 400, "validation_error", "drivers")
    error(api.post(applicable, {"drivers": ["vibes"]}), 400, "validation_error", "drivers[0]")
    marked = api.post(applicable, {"drivers": ["legal", "contract"]})
    assert marked.status_code == 200 and marked.json["drivers"] == ["legal", "contract"]
    justified = api.post(f"{ROOT}/{draft}/rows/a.5.2/justify", {"justification": "GDPR article 32."})
    assert justified.json["justification"] == "GDPR article 32."
    error(api.post(f"{ROOT}/{draft}/rows/a.99/justify", {"justification": "x"}), 404, "not_found")


def test_approval_by_the_named_approver_freezes_the_version(
    api: Api, app, platform: Platform, boot: Bootstrap, draft: str, as_role
) -> None:
    organization_id = boot.organization.id
    owner = platform.actor(organization_id)
    employee = platform.people.create(owner, NewPerson(name="Eve", email="eve@acme.example", role=Role.EMPLOYEE))
    admin = platform.people.create(owner, NewPerson(name="Ada Admin", email="ada@acme.example", role=Role.ADMIN))
    other = platform.people.create(owner, NewPerson(name="Otto Owner", email="otto@acme.example", role=Role.OWNER))
    api.post(f"{ROOT}/{draft}/rows/a.7.1/not-applicable", {"justification": "We have no premises."})
    submit = f"{ROOT}/{draft}/submit"
    refused = error(api.post(submit, {"approverId": employee.id}), 400, "validation_error", "approverId")
    assert refused["value"] == employee.id
    submitted = api.post(submit, {"approverId": admin.id})
    assert (submitted.status_code, submitted.json["status"]) == (200, "needs_review")
    error(api.post(submit, {"approverId": admin.id}), 409, "conflict", "status")
    error(api.post(f"{ROOT}/{draft}/rows/a.5.1/justify", {"justification": "x"}), 409, "conflict", "status")
    error(as_role(Role.AUDITOR).post(f"{ROOT}/{draft}/approve", {"comment": "ok"}), 403, "forbidden")
    as_other = Api(app, issue_key(platform, organization_id, Role.OWNER, person_id=other.id))
    error(as_other.post(f"{ROOT}/{draft}/approve", {"comment": "ok"}), 403, "forbidden")
    as_admin = Api(app, issue_key(platform, organization_id, Role.ADMIN, person_id=admin.id))
    error(as_admin.post(f"{ROOT}/{draft}/approve", {}), 400, "validation_error", "comment")
    api.post("/v1/context", {"question": "How does your team work?", "answer": "Fully remote."})
    snapshot = api.get("/v1/context/snapshots").json["data"][0]["id"]
    approved = as_admin.post(f"{ROOT}/{draft}/approve", {"comment": "Agreed."})
    assert approved.status_code == 200, approved.text
    assert (approved.json["status"], approved.json["contextSnapshotId"], approved.json["decidedByName"]) == (
        "approved",
        snapshot,
        "Ada Admin",
    )
    assert (approved.json["rowCount"], approved.json["applicableCount"]) == (3, 2)
    error(api.post(f"{ROOT}/{draft}/rows/a.7.1/justify", {"justification": "x"}), 409, "conflict", "status")
    error(as_admin.post(f"{ROOT}/{draft}/decline", {"reason": "Late."}), 409, "conflict", "status")
    frozen = api.get(f"{ROOT}/{draft}/rows", query="applicable=false").json["data"]
    assert [(row["label"], row["justification"]) for row in frozen] == [("A.7.1", "We have no premises.")]
    assert frozen[0]["id"].startswith("soar_")
    second = api.post(ROOT, {"frameworkId": FRAMEWORK})
    assert (second.status_code, second.json["version"]) == (201, 2)


def test_a_decline_returns_the_version_to_draft_with_its_reason(api: Api, draft: str) -> None:
    api.post(f"{ROOT}/{draft}/submit", {})
    error(api.post(f"{ROOT}/{draft}/decline", {}), 400, "validation_error", "reason")
    declined = api.post(f"{ROOT}/{draft}/decline", {"reason": "Justify A.7.1."})
    assert (declined.json["status"], declined.json["declineReason"], declined.json["approverId"]) == (
        "draft",
        "Justify A.7.1.",
        None,
    )
    error(api.post(f"{ROOT}/{draft}/approve", {"comment": "ok"}), 409, "conflict", "status")


def test_the_files_of_an_approved_version(api: Api, draft: str) -> None:
    api.post(f"{ROOT}/{draft}/rows/a.7.1/not-applicable", {"justification": "We have no premises."})
    error(api.get(f"{ROOT}/{draft}/export.pdf"), 404, "not_found")
    api.post(f"{ROOT}/{draft}/submit", {})
    api.post(f"{ROOT}/{draft}/approve", {"comment": "Agreed."})
    sheet = api.get(f"{ROOT}/{draft}/export.csv")
    assert sheet.status_code == 200 and sheet.headers["Content-Type"].startswith("text/csv")
    header, *rows = list(csv.reader(io.StringIO(sheet.content.decode("utf-8-sig"))))
    assert [row[header.index("label")] for row in rows] == list(LABELS)
    workbook = api.get(f"{ROOT}/{draft}/export.xlsx")
    lines = list(
        openpyxl.load_workbook(io.BytesIO(workbook.content), read_only=True).active.iter_rows(values_only=True)
    )
    assert len(lines) == 1 + len(LABELS)
    plan = api.get(f"{ROOT}/{draft}/export.oscal.json")
    assert plan.headers["Content-Type"] == "application/oscal+json"
    validated = ssp.Model.model_validate(json.loads(plan.content)).system_security_plan
    assert len(validated.control_implementation.implemented_requirements) == len(LABELS)
    pdf = api.get(f"{ROOT}/{draft}/export.pdf")
    assert pdf.status_code == 200 and pdf.headers["Content-Type"] == "application/pdf", pdf.text
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    assert "We have no premises." in text and "A.5.2" in text


def test_another_organization_sees_no_statement(draft: str, other: Api) -> None:
    error(other.get(f"{ROOT}/{draft}"), 404, "not_found")
    error(other.get(f"{ROOT}/{draft}/rows"), 404, "not_found")
    error(other.post(f"{ROOT}/{draft}/rows/a.5.1/justify", {"justification": "x"}), 404, "not_found")


def _walk(api: Api, path: str) -> list[str]:
    labels: list[str] = []
    cursor: str | None = ""
    while cursor is not None:
        body = api.get(path, query=urlencode({"cursor": cursor, "perPage": "2"})).json
        labels += [row["label"] for row in body["data"]]
        cursor = body["meta"]["nextCursor"]
    return labels


def test_a_cursor_walks_the_working_rows_and_the_frozen_ones(api: Api, draft: str) -> None:
    rows = f"{ROOT}/{draft}/rows"
    assert _walk(api, rows) == list(LABELS)
    api.post(f"{ROOT}/{draft}/submit", {})
    api.post(f"{ROOT}/{draft}/approve", {"comment": "Agreed."})
    assert _walk(api, rows) == list(LABELS)
    assert [row["label"] for row in api.get(rows, query="sort=-label").json["data"]] == list(reversed(LABELS))
    assert api.get(rows, query="q=A.7").json["count"] == 1
