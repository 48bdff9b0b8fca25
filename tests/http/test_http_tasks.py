"""/v1/tasks and /v1/task-management over HTTP: the areas' own rules (the generic
suites cover roles, other organizations and bad bodies)."""

from __future__ import annotations

from compliance_core import FrozenClock, Platform, Role
from compliance_core.platform import Bootstrap
from http_support import Api, error

ROOT = "/v1/tasks"


def _person(api: Api, name: str, role: str = "employee") -> str:
    made = api.post("/v1/people", {"name": name, "email": f"{name.lower()}@acme.example", "role": role})
    assert made.status_code == 201, made.text
    return str(made.json["id"])


def test_create_read_update_delete(api: Api) -> None:
    ada = _person(api, "Ada")
    created = api.post(
        ROOT,
        {"title": "Access review", "assigneeId": ada, "dueDate": "2026-03-31", "frequency": "RRULE:FREQ=MONTHLY"},
    )
    assert created.status_code == 201, created.text
    body = created.json
    assert body["id"].startswith("tsk_")
    assert (body["status"], body["assigneeId"], body["dueDate"], body["frequency"]) == (
        "todo",
        ada,
        "2026-03-31",
        "FREQ=MONTHLY",
    )
    assert {"controlIds", "riskIds", "vendorIds", "policyIds", "previousStatus", "approvedAt", "reviewDate"} <= set(
        body
    )
    one = f"{ROOT}/{body['id']}"
    assert api.get(one).json == body
    changed = api.patch(one, {"status": "in_progress", "department": "it"})
    assert changed.status_code == 200 and changed.json["status"] == "in_progress", changed.text
    listed = api.get(ROOT + "?status=in_progress&assigneeId=" + ada + "&q=access&sort=dueDate")
    assert listed.status_code == 200, listed.text
    assert [item["id"] for item in listed.json["data"]] == [body["id"]]
    assert api.get(ROOT + "?from=2026-04-01").json["count"] == 0
    deleted = api.request("DELETE", one)
    assert deleted.status_code == 204
    error(api.get(one), 404, "not_found")


def test_bad_fields_name_themselves(api: Api) -> None:
    for field, value in (
        ("frequency", "weekly"),
        ("frequency", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"),
        ("status", "blocked"),
        ("assigneeId", "mem_nobody"),
        ("dueDate", "31/12/2026"),
        ("vendorIds", ["vnd_nothing"]),
    ):
        details = error(api.post(ROOT, {"title": "T", field: value}), 400, "validation_error")
        assert details["field"].startswith(field), (field, details)


def test_the_review_over_http(api: Api, app, platform: Platform, boot: Bootstrap) -> None:
    task = api.post(ROOT, {"title": "Backup restore test", "status": "in_progress"}).json
    one = f"{ROOT}/{task['id']}"
    submitted = api.post(one + "/submit-for-review")
    assert submitted.status_code == 200, submitted.text
    assert (submitted.json["status"], submitted.json["previousStatus"]) == ("in_review", "in_progress")
    error(api.post(one + "/submit-for-review", {}), 409, "conflict", "status")
    error(api.post(one + "/reject", {}), 400, "validation_error", "reason")
    rejected = api.post(one + "/reject", {"reason": "The restore log is missing."})
    assert (rejected.json["status"], rejected.json["reviewComment"]) == ("in_progress", "The restore log is missing.")
    error(api.post(one + "/approve"), 409, "conflict", "status")
    api.post(one + "/submit-for-review")
    approved = api.post(one + "/approve", {"comment": "Good."})
    assert approved.status_code == 200 and approved.json["status"] == "done", approved.text
    assert approved.json["approvedAt"] is not None
    error(api.post(one + "/complete"), 409, "conflict", "status")
    activity = api.get(one + "/activity")
    assert activity.status_code == 200, activity.text
    assert activity.json["data"][-1]["action"] == "task.created"
    assert {"task.submitted_for_review", "task.rejected", "task.approved"} <= {
        entry["action"] for entry in activity.json["data"]
    }


def test_completing_recurring_work_gives_its_next_date(api: Api, platform: Platform, clock: FrozenClock) -> None:
    task = api.post(ROOT, {"title": "Firewall review", "frequency": "FREQ=WEEKLY;BYDAY=MO"}).json
    done = api.post(f"{ROOT}/{task['id']}/complete")
    assert done.status_code == 200, done.text
    assert (done.json["status"], done.json["nextDueDate"]) == ("done", "2026-01-05")  # 1 January 2026 is a Thursday
    clock.advance(days=4)
    assert platform.tasks.reopen_due() == 1
    again = api.get(f"{ROOT}/{task['id']}").json
    assert (again["status"], again["dueDate"], again["nextDueDate"]) == ("todo", "2026-01-05", None)


def test_bulk_requests_are_all_or_nothing(api: Api) -> None:
    ids = [api.post(ROOT, {"title": f"T{n}"}).json["id"] for n in range(3)]
    details = error(
        api.patch(ROOT + "/bulk", {"taskIds": [ids[0], "tsk_missing", ids[1], "tsk_gone"], "status": "done"}),
        400,
        "validation_error",
    )
    assert [entry["field"] for entry in details["errors"]] == ["taskIds[1]", "taskIds[3]"]
    assert {api.get(f"{ROOT}/{task_id}").json["status"] for task_id in ids} == {"todo"}
    updated = api.patch(ROOT + "/bulk", {"taskIds": ids, "status": "in_progress", "dueDate": "2026-06-30"})
    assert updated.status_code == 200 and updated.json == {"updatedCount": 3}, updated.text
    ada = _person(api, "Ada")
    assigned = api.patch(ROOT + "/bulk/assignee", {"taskIds": ids[:2], "assigneeId": ada})
    assert assigned.json == {"updatedCount": 2}
    sent = api.post(ROOT + "/bulk/submit-for-review", {"taskIds": ids})
    assert sent.json == {"submittedCount": 3, "skippedIds": []}, sent.text
    too_many = {"taskIds": [f"tsk_{n}" for n in range(501)]}
    error(api.request("DELETE", ROOT + "/bulk", body=too_many), 400, "validation_error", "taskIds")
    deleted = api.request("DELETE", ROOT + "/bulk", body={"taskIds": ids})
    assert deleted.status_code == 200 and deleted.json == {"deletedCount": 3}, deleted.text
    assert api.get(ROOT).json["count"] == 0


def test_task_management_reassign_reschedule_and_stats(api: Api, as_role) -> None:
    lee, sue = _person(api, "Lee"), _person(api, "Sue")
    first = api.post(ROOT, {"title": "Open", "assigneeId": lee, "dueDate": "2026-02-01"}).json
    api.post(ROOT, {"title": "Done", "assigneeId": lee, "status": "done"})
    moved = api.post("/v1/task-management/reassign", {"fromPersonId": lee, "toPersonId": sue})
    assert moved.status_code == 200 and moved.json == {"reassignedCount": 1, "taskIds": [first["id"]]}, moved.text
    error(api.post("/v1/task-management/reassign", {"fromPersonId": lee, "toPersonId": lee}), 400, "validation_error")
    shifted = api.post("/v1/task-management/reschedule", {"taskIds": [first["id"]], "days": 10})
    assert shifted.json == {"rescheduledCount": 1}, shifted.text
    assert api.get(f"{ROOT}/{first['id']}").json["dueDate"] == "2026-02-11"
    stats = as_role(Role.AUDITOR).get("/v1/task-management/stats")
    assert stats.status_code == 200, stats.text
    assert (stats.json["total"], stats.json["open"]) == (2, 1)
    assert {row["status"]: row["count"] for row in stats.json["byStatus"]}["done"] == 1
    assert {row["assigneeId"] for row in stats.json["byAssignee"]} == {lee, sue}
    error(
        as_role(Role.AUDITOR).post("/v1/task-management/reassign", {"fromPersonId": lee, "toPersonId": sue}),
        403,
        "forbidden",
    )


def test_staff_read_their_own_tasks(api: Api, as_role) -> None:
    employee = as_role(Role.EMPLOYEE)
    error(employee.get(ROOT), 403, "forbidden")
    mine = employee.get(ROOT + "/mine")
    assert mine.status_code == 200 and mine.json["count"] == 0, mine.text


def test_enabling_a_framework_makes_its_tasks_once(api: Api) -> None:
    enable = "/v1/frameworks/iso-27001-2022/enable"
    assert api.post(enable).status_code == 201
    templates = api.get("/v1/framework-editor/task-template?frameworkId=iso-27001-2022").json["count"]
    tasks = api.get(ROOT + "?frameworkId=iso-27001-2022&perPage=200").json
    assert templates > 0 and tasks["count"] == templates
    assert any(task["controlIds"] for task in tasks["data"])
    api.post("/v1/frameworks/iso-27001-2022/disable")
    api.post(enable)
    assert api.get(ROOT).json["count"] == templates
    by_framework = api.get("/v1/task-management/stats").json["byFramework"]
    assert by_framework == [{"frameworkId": "iso-27001-2022", "count": templates, "done": 0}]
