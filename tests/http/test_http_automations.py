"""/v1/tasks/{taskId}/automations over HTTP: define, version, run now against a
real local HTTP server, read the runs, and the errors of the wire (camelCase bodies, nested
assertion fields named in errors, roles, another organization)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.webhooks import WebhookPolicy
from compliance_http.openapi import openapi_document
from http_support import Api, check_answer, error

DOCUMENT = openapi_document()
ALL = "/v1/tasks/{taskId}/automations"
ONE = ALL + "/{automationId}"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(dt.datetime(2026, 6, 1, 12, tzinfo=dt.UTC))


@pytest.fixture
def platform(store_url: str, clock: FrozenClock) -> Iterator[Platform]:
    """As the suite's platform, allowing private targets: the probes reach a server on loopback."""
    settings = {"webhooks": WebhookPolicy(allow_private=True)}
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
        yield platform


class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/health":
            status, body = 200, json.dumps({"status": "ok", "checks": [{"db": True}]}).encode()
        elif self.path == "/binary":
            status, body = 200, b"\x00\x01\xff binary \x00"
        else:
            status, body = 500, b'{"status": "broken"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    running = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{running.server_address[1]}"
    running.shutdown()
    running.server_close()


@pytest.fixture
def task(api: Api) -> str:
    made = api.post("/v1/tasks", {"title": "Health endpoint answers"})
    assert made.status_code == 201, made.text
    return str(made.json["id"])


def _checked(result: Any, path: str, method: str) -> Any:
    check_answer(DOCUMENT, path, method, result.status_code, result.json if result.content else None)
    return result.json if result.content else None


def test_define_version_run_and_read_the_log(api: Api, task: str, server: str) -> None:
    body = {
        "name": "Health",
        "url": f"{server}/health",
        "timeoutSeconds": 3,
        "assertions": [
            {"type": "status_equals", "status": 200},
            {"type": "json_path_equals", "path": "$.checks[0].db", "value": "true"},
            {"type": "header_contains", "header": "Content-Type", "value": "json"},
        ],
        "schedule": "FREQ=WEEKLY;BYDAY=MO",
        "changelog": "First",
    }
    made = api.post(f"/v1/tasks/{task}/automations", body)
    assert made.status_code == 201, made.text
    automation = _checked(made, ALL, "POST")
    assert automation["taskId"] == task and automation["version"] == 1
    assert automation["assertions"][2] == {
        "type": "header_contains",
        "status": None,
        "statuses": [],
        "path": None,
        "header": "content-type",
        "value": "json",
        "days": None,
    }
    assert automation["nextRunAt"] == "2026-06-08T00:00:00Z"  # the next Monday
    one = f"/v1/tasks/{task}/automations/{automation['id']}"
    assert _checked(api.get(one), ONE, "GET") == automation
    listed = _checked(api.get(f"/v1/tasks/{task}/automations"), ALL, "GET")
    assert [item["id"] for item in listed["data"]] == [automation["id"]] and listed["count"] == 1

    changed = api.patch(one, {"assertions": [{"type": "status_in", "statuses": [200, 204]}], "changelog": "204"})
    assert changed.status_code == 200, changed.text
    assert _checked(changed, ONE, "PATCH")["version"] == 2
    versions = _checked(api.get(one + "/versions"), ONE + "/versions", "GET")
    assert [(v["version"], v["changelog"]) for v in versions["data"]] == [(2, "204"), (1, "First")]
    assert versions["data"][1]["definition"]["timeoutSeconds"] == 3

    ran = api.post(one + "/run")
    assert ran.status_code == 201, ran.text
    run = _checked(ran, ONE + "/run", "POST")
    assert (run["status"], run["version"], run["triggeredBy"], run["automationId"]) == (
        "passed",
        2,
        "person",
        automation["id"],
    )
    assert run["output"].startswith("HTTP 200") and run["durationMs"] >= 0 and run["evidenceId"]
    log = _checked(api.get(one + "/runs"), ONE + "/runs", "GET")
    assert [item["id"] for item in log["data"]] == [run["id"]]
    runs = _checked(api.get(f"/v1/tasks/{task}/automations/runs"), ALL + "/runs", "GET")
    assert [item["id"] for item in runs["data"]] == [run["id"]]
    evidence = api.get(f"/v1/tasks/{task}/attachments").json["data"]
    assert [(e["id"], e["source"]) for e in evidence] == [(run["evidenceId"], "automation")]

    assert api.request("DELETE", one).status_code == 204
    error(api.get(one), 404, "not_found")
    assert api.get(f"/v1/tasks/{task}/automations/runs").json["count"] == 0


def test_a_failing_run_fails_the_task_and_opens_a_finding(api: Api, task: str, server: str) -> None:
    made = api.post(f"/v1/tasks/{task}/automations", {"url": f"{server}/broken"}).json
    assert made["name"] == "Health endpoint answers - Evidence Collection"
    run = api.post(f"/v1/tasks/{task}/automations/{made['id']}/run").json
    assert run["status"] == "failed" and "500" in run["reason"]
    assert api.get(f"/v1/tasks/{task}").json["status"] == "failed"
    finding = api.get(f"/v1/findings/{run['findingId']}").json
    assert (finding["taskId"], finding["source"], finding["status"]) == (task, "integration", "open")


def test_a_binary_answer_is_kept_as_text_every_store_holds(api: Api, task: str, server: str) -> None:
    made = api.post(f"/v1/tasks/{task}/automations", {"url": f"{server}/binary"}).json
    run = api.post(f"/v1/tasks/{task}/automations/{made['id']}/run").json
    assert run["status"] == "passed", run
    assert "\x00" not in run["output"] and "\ufffd\x01\ufffd binary \ufffd" in run["output"]


def test_an_unreachable_target_is_a_run_in_error_not_an_error_of_the_call(api: Api, task: str) -> None:
    made = api.post(
        f"/v1/tasks/{task}/automations", {"url": "https://status.example.invalid/health", "timeoutSeconds": 1}
    ).json
    ran = api.post(f"/v1/tasks/{task}/automations/{made['id']}/run")
    assert ran.status_code == 201 and ran.json["status"] == "error", ran.text
    assert api.get(f"/v1/tasks/{task}").json["status"] == "todo"


def test_bad_bodies_name_the_field_inside_the_assertion(api: Api, task: str) -> None:
    path = f"/v1/tasks/{task}/automations"
    error(
        api.post(path, {"assertions": [{"type": "status_equals"}], "url": "https://a.example/"}),
        400,
        "validation_error",
        "assertions[0].status",
    )
    error(
        api.post(
            path, {"url": "https://a.example/", "assertions": [{"type": "status_in", "statuses": [200], "bogus": 1}]}
        ),
        400,
        "validation_error",
        "assertions[0].bogus",
    )
    error(api.post(path, {"timeoutSeconds": "5"}), 400, "validation_error", "timeoutSeconds")
    error(api.post(path, {"unknown": True}), 400, "validation_error", "unknown")
    details = error(
        api.post(path, {"kind": "callable", "callableName": "nobody"}), 400, "validation_error", "callableName"
    )
    assert "installed:" in details["reason"]
    error(api.post(path, {"url": "https://169.254.169.254/"}), 400, "validation_error", "url")


def test_roles_tasks_and_organizations(api: Api, as_role: Any, other: Api, task: str) -> None:
    made = api.post(f"/v1/tasks/{task}/automations", {}).json
    one = f"/v1/tasks/{task}/automations/{made['id']}"
    auditor = as_role("auditor")
    assert auditor.get(one).status_code == 200
    error(auditor.post(one + "/run"), 403, "forbidden")
    error(auditor.patch(one, {"name": "x"}), 403, "forbidden")
    error(as_role("employee").get(one), 403, "forbidden")
    error(other.get(one), 404, "not_found")
    error(other.get(f"/v1/tasks/{task}/automations"), 404, "not_found")
    another = api.post("/v1/tasks", {"title": "Other"}).json["id"]
    error(api.get(f"/v1/tasks/{another}/automations/{made['id']}"), 404, "not_found")
    error(api.post("/v1/tasks/tsk_missing/automations", {}), 404, "not_found")
