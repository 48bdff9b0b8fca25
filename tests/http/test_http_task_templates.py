"""/v1/framework-editor/task-template over HTTP: the area's own rules (the
generic suites cover the rest), on a platform whose catalogue holds the tests' example framework."""

from __future__ import annotations

from collections.abc import Iterator

import falcon
import pytest
from oscal_examples import example_frameworks

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas.frameworks.task_templates import seed_task_templates
from compliance_core.platform import Bootstrap
from http_support import Api, error, issue_key

ROOT = "/v1/framework-editor/task-template"
TEMPLATE = {
    "frameworkId": "example",
    "name": "Review user access rights",
    "frequency": "quarterly",
    "department": "it",
    "requirementIds": ["ex-1", "GV.OC-01"],
}


@pytest.fixture
def platform(store_url: str, clock: FrozenClock) -> Iterator[Platform]:
    """As the suite's platform, with the example framework in the catalogue."""
    settings = {"frameworks": example_frameworks()}
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
        yield platform


def test_create_read_update_delete(api: Api) -> None:
    created = api.post(ROOT, TEMPLATE)
    assert created.status_code == 201, created.text
    body = created.json
    assert body["id"].startswith("ftt")
    assert (body["frequency"], body["department"], body["requirementIds"]) == ("quarterly", "it", ["ex-1", "GV.OC-01"])
    assert (body["source"], body["seedKey"], body["automationStatus"], body["description"]) == (
        "custom",
        None,
        "manual",
        "",
    )
    assert {"createdAt", "updatedAt", "organizationId", "frameworkId", "name"} <= set(body)
    one = f"{ROOT}/{body['id']}"
    assert api.get(one).json == body
    changed = api.patch(one, {"frequency": "RRULE:FREQ=WEEKLY;BYDAY=TU;BYDAY=MO", "automationStatus": "automated"})
    assert changed.status_code == 200, changed.text
    assert (changed.json["frequency"], changed.json["automationStatus"]) == ("FREQ=WEEKLY;BYDAY=MO", "automated")
    deleted = api.request("DELETE", one)
    assert deleted.status_code == 204 and deleted.content == b""
    error(api.get(one), 404, "not_found")
    error(api.request("DELETE", one), 404, "not_found")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("frequency", "weekly"),
        ("frequency", "FREQ=HOURLY"),
        ("frequency", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"),
        ("frequency", "FREQ=MONTHLY;COUNT=2"),
        ("frequency", "Monthly"),
        ("frequency", 12),
        ("department", "sales"),
        ("automationStatus", "sometimes"),
        ("frameworkId", "iso-9999"),
        ("requirementIds", ["ex-1", "ex-404"]),
        ("requirementIds", ["ex-2"]),
    ],
)
def test_bad_values_are_refused_naming_the_field_and_the_value(api: Api, field: str, value: object) -> None:
    details = error(api.post(ROOT, {**TEMPLATE, field: value}), 400, "validation_error", field)
    assert details["value"] in (value, "ex-404", "ex-2")
    assert api.get(ROOT).json["count"] == 0


def test_a_template_keeps_its_framework_and_its_requirements_are_checked(api: Api) -> None:
    one = f"{ROOT}/{api.post(ROOT, TEMPLATE).json['id']}"
    error(api.patch(one, {"frameworkId": "other"}), 400, "validation_error", "frameworkId")
    details = error(api.patch(one, {"requirementIds": ["nope"]}), 400, "validation_error", "requirementIds")
    assert details["value"] == "nope"
    assert api.patch(one, {"requirementIds": None}).json["requirementIds"] == []
    error(api.post(ROOT, {**TEMPLATE, "source": "catalogue"}), 400, "validation_error", "source")


def test_lists_filter_search_and_sort(api: Api, platform: Platform, boot: Bootstrap) -> None:
    with platform.uow.write(None) as tx:
        seed_task_templates(tx, boot.organization.id, "example", [_Seed()], platform.clock.now(), platform.uow.ids)
    api.post(ROOT, {**TEMPLATE, "department": "hr", "name": "Train staff"})
    assert api.get(ROOT, query="source=catalogue").json["data"][0]["seedKey"] == "restore-test"
    assert api.get(ROOT, query="department=hr&frameworkId=example").json["count"] == 1
    assert api.get(ROOT, query="frameworkId=another").json["count"] == 0
    assert api.get(ROOT, query="q=restore").json["count"] == 1
    assert [t["name"] for t in api.get(ROOT, query="sort=-name").json["data"]] == ["Train staff", "Test a restore"]
    error(api.get(ROOT, query="department=sales"), 400, "validation_error", "department")


def test_staff_do_not_read_templates_and_auditors_do_not_write_them(as_role, api: Api) -> None:
    error(as_role(Role.EMPLOYEE).get(ROOT), 403, "forbidden")
    error(as_role(Role.AUDITOR).post(ROOT, TEMPLATE), 403, "forbidden")
    assert as_role(Role.AUDITOR).get(ROOT).status_code == 200
    assert as_role(Role.ADMIN).post(ROOT, TEMPLATE).status_code == 201


def test_another_organization_sees_none_of_them(api: Api, app: falcon.App, platform: Platform) -> None:
    made = api.post(ROOT, TEMPLATE).json
    other = Api(app, issue_key(platform, platform.bootstrap("Globex").organization.id, Role.OWNER))
    assert other.get(ROOT).json["count"] == 0
    error(other.get(f"{ROOT}/{made['id']}"), 404, "not_found")


def test_a_create_replays_under_its_idempotency_key(api: Api) -> None:
    first = api.post(ROOT, TEMPLATE, headers={"Idempotency-Key": "tt-1"})
    again = api.post(ROOT, TEMPLATE, headers={"Idempotency-Key": "tt-1"})
    assert first.status_code == again.status_code == 201 and again.json == first.json
    assert api.get(ROOT).json["count"] == 1


class _Seed:
    key = "restore-test"
    name = "Test a restore"
    description = "Restore a backup and check it."
    frequency = "yearly"
    department = "it"
    requirement_ids = ("ex-1.1",)
