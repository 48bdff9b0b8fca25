"""/v1/findings over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from http_support import Api, error

ROOT = "/v1/findings"


def create(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, {"title": "MFA not enforced", "severity": "high", **fields})
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def test_create_get_and_defaults(api: Api) -> None:
    finding = create(api)
    assert finding["id"].startswith("fnd_")
    assert finding["status"] == "open" and finding["type"] == "soc2" and finding["source"] == "audit"
    assert finding["revisionNote"] is None and finding["closedAt"] is None
    assert finding["createdBy"].startswith("key_")
    assert api.get(f"{ROOT}/{finding['id']}").json == finding


def test_list_filters(api: Api) -> None:
    create(api, title="A", severity="low", type="iso27001")
    create(api, title="B", severity="critical", source="penetration_test")
    closed = create(api, title="C")
    api.post(f"{ROOT}/{closed['id']}/close")
    titles = lambda q: {f["title"] for f in api.get(ROOT, query=q).json["data"]}  # noqa: E731
    assert titles("") == {"A", "B", "C"}
    assert titles("severity=critical") == {"B"}
    assert titles("type=iso27001") == {"A"}
    assert titles("source=penetration_test") == {"B"}
    assert titles("status=closed") == {"C"}
    assert titles("status=open&severity=low") == {"A"}
    error(api.get(ROOT, query="severity=urgent"), 400, "validation_error", "severity")


def test_patch_and_revision_note(api: Api) -> None:
    finding = create(api)
    path = f"{ROOT}/{finding['id']}"
    revised = api.patch(path, {"status": "needs_revision", "revisionNote": "attach the policy"})
    assert revised.status_code == 200, revised.text
    assert revised.json["revisionNote"] == "attach the policy"
    error(api.patch(path, {"status": "open", "revisionNote": "x"}), 400, "validation_error", "revisionNote")
    severity = api.patch(path, {"severity": "critical"})
    assert severity.json["severity"] == "critical" and severity.json["status"] == "needs_revision"


def test_close_is_idempotent(api: Api, clock: Any) -> None:
    finding = create(api)
    clock.advance(hours=1)
    first = api.post(f"{ROOT}/{finding['id']}/close")
    clock.advance(hours=1)
    again = api.post(f"{ROOT}/{finding['id']}/close")
    assert first.status_code == again.status_code == 200
    assert first.json == again.json
    assert first.json["status"] == "closed" and first.json["closedAt"] == "2026-01-01T01:00:00Z"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": "x"}, "severity"),
        ({"severity": "low"}, "title"),
        ({"title": "x", "severity": "urgent"}, "severity"),
        ({"title": ["x"], "severity": "low"}, "title"),
        ({"title": "x", "severity": "low", "taskId": "t"}, "taskId"),
        ({"title": "x", "severity": "low", "content": "y" * 5001}, "content"),
    ],
)
def test_create_rejects_bad_fields(api: Api, body: dict[str, Any], field: str) -> None:
    error(api.post(ROOT, body), 400, "validation_error", field)


def test_roles(api: Api, as_role: Any) -> None:
    finding = create(api)
    for role in ("auditor", "employee"):
        caller = as_role(role)
        assert caller.get(ROOT).status_code == 200
        error(caller.post(ROOT, {"title": "x", "severity": "low"}), 403, "forbidden")
        error(caller.patch(f"{ROOT}/{finding['id']}", {"status": "ready_for_review"}), 403, "forbidden")
    error(as_role("employee").post(f"{ROOT}/{finding['id']}/close"), 403, "forbidden")
    error(as_role("contractor").post(f"{ROOT}/{finding['id']}/request-revision", {"note": "x"}), 403, "forbidden")
    assert as_role("admin").post(f"{ROOT}/{finding['id']}/close").status_code == 200


def test_auditors_send_findings_back_with_a_note_and_close_them(api: Api, as_role: Any) -> None:
    auditor = as_role("auditor")
    control = api.post("/v1/controls", {"name": "Access review"}).json["id"]
    finding = create(api, taskId="tsk_1", controlId=control)
    path = f"{ROOT}/{finding['id']}"
    error(auditor.post(path + "/request-revision", {}), 400, "validation_error", "note")
    error(api.patch(path, {"status": "needs_revision"}), 400, "validation_error", "revisionNote")
    asked = auditor.post(path + "/request-revision", {"note": "Attach the access review"})
    assert asked.status_code == 200, asked.text
    assert (asked.json["status"], asked.json["revisionNote"]) == ("needs_revision", "Attach the access review")
    fixed = api.patch(path, {"status": "ready_for_review"}).json
    assert (fixed["status"], fixed["revisionNote"], fixed["taskId"], fixed["controlId"]) == (
        "ready_for_review",
        None,
        "tsk_1",
        control,
    )
    assert auditor.post(path + "/close").json["status"] == "closed"
    error(auditor.post(path + "/request-revision", {"note": "again"}), 409, "conflict", "status")
    assert {f["id"] for f in api.get(ROOT, query="taskId=tsk_1").json["data"]} == {finding["id"]}


def test_other_organizations_finding_is_404(api: Api, other: Api) -> None:
    theirs = create(other)
    for result in (
        api.get(f"{ROOT}/{theirs['id']}"),
        api.patch(f"{ROOT}/{theirs['id']}", {"title": "x"}),
        api.post(f"{ROOT}/{theirs['id']}/close"),
    ):
        assert error(result, 404, "not_found") == {"resource": "finding", "id": theirs["id"]}


def test_history_over_http(api: Api, as_role: Any, other: Api) -> None:
    finding = create(api)
    path = f"{ROOT}/{finding['id']}"
    api.patch(path, {"severity": "critical"})
    api.post(path + "/close")
    result = as_role("auditor").get(path + "/history", query="perPage=2")
    assert result.status_code == 200, result.text
    body = result.json
    assert body["count"] == 4 and body["meta"]["totalPages"] == 2
    assert [e["action"] for e in body["data"]] == ["finding.updated", "finding.severity_changed"]
    assert body["data"][0]["changes"]["status"] == {"old": "open", "new": "closed"}
    error(as_role("employee").get(path + "/history"), 403, "forbidden")
    error(other.get(path + "/history"), 404, "not_found")


def test_a_history_of_an_id_no_finding_could_have_is_a_404(api: Api) -> None:
    error(api.get(f"{ROOT}/%C3%81%11x%02/history"), 404, "not_found")
