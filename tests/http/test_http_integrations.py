"""Integrations over HTTP: the areas' own rules on the wire (the generic suites cover roles, other
organizations and bad bodies): a connection answered without its secrets, the manifest's rules
as ``validation_error`` naming each field, states as 409, runs and their results paged."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from scripted_provider import Scripted, user_result

from compliance_core import FrozenClock, Platform, SequentialIds
from http_support import Api, error

SECRET = "tok_wire_secret"


@pytest.fixture
def provider() -> Scripted:
    return Scripted(answers={"mfa": [user_result("ada", True), user_result("bob", False)]})


@pytest.fixture
def platform(provider: Scripted, store_url: str, clock: FrozenClock) -> Iterator[Platform]:
    settings = {"providers": [provider], "vault": "memory://", "blobs": "memory://"}
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
        yield platform


@pytest.fixture
def connection(api: Api) -> dict:
    made = api.post(
        "/v1/integrations/connections",
        {
            "provider": "scripted",
            "credentials": {"token": SECRET, "account": "acme"},
            "variables": {"url": "https://idp.example"},
        },
    )
    assert made.status_code == 201, made.text
    return made.json


def test_a_connection_answers_without_its_secret_credentials(api: Api, connection: dict) -> None:
    assert connection["status"] == "active" and connection["credentialVersion"] == 1
    assert connection["settings"] == [{"id": "account", "value": "acme"}]
    for answer in (
        api.get(f"/v1/integrations/connections/{connection['id']}"),
        api.get("/v1/integrations/connections"),
    ):
        assert answer.status_code == 200 and SECRET not in answer.text
    assert SECRET not in api.get("/v1/audit-log", query="perPage=100").text


def test_the_manifest_refuses_what_it_does_not_declare(api: Api) -> None:
    refused = api.post(
        "/v1/integrations/connections",
        {
            "provider": "scripted",
            "credentials": {"token": "x"},
            "variables": {"url": "https://idp.example", "days": "soon"},
        },
    )
    details = error(refused, 400, "validation_error", "variables.days")
    assert (details["value"], details["reason"]) == ("soon", "must be a number")
    error(api.post("/v1/integrations/connections", {"provider": "gitlab"}), 400, "validation_error", "provider")
    assert api.get("/v1/integrations/connections/providers/gitlab").status_code == 404


def test_a_paused_connection_runs_nothing_until_resumed(api: Api, connection: dict) -> None:
    base = f"/v1/integrations/connections/{connection['id']}"
    assert api.post(base + "/pause").json["status"] == "paused"
    refused = api.post(f"/v1/integrations/checks/connections/{connection['id']}/run")
    error(refused, 409, "conflict", "status")
    assert api.post(base + "/resume").json["status"] == "active"


def test_a_run_and_its_results_are_paged_and_the_failure_is_a_finding(api: Api, connection: dict) -> None:
    checks = f"/v1/integrations/checks/connections/{connection['id']}"
    run = api.post(checks + "/run", {"checkId": "mfa"})
    assert run.status_code == 201
    assert {key: run.json[key] for key in ("checkId", "status", "passedCount", "failedCount")} == {
        "checkId": "mfa",
        "status": "failed",
        "passedCount": 1,
        "failedCount": 1,
    }
    results = api.get(f"{checks}/runs/{run.json['id']}/results", query="perPage=1")
    assert results.json["meta"]["total"] == 2 and len(results.json["data"]) == 1
    findings = api.get("/v1/findings").json["data"]
    assert [(f["source"], f["severity"]) for f in findings] == [("integration", "high")]
    states = {state["id"]: state["lastStatus"] for state in api.get(checks).json["data"]}
    assert states == {"mfa": "failed", "tls": None}


def test_variables_over_the_wire(api: Api, connection: dict) -> None:
    path = f"/v1/integrations/variables/connections/{connection['id']}"
    set_ = api.post(path, {"values": {"days": 7}})
    assert {v["id"]: v["value"] for v in set_.json["data"]}["days"] == "7"
    assert api.request("DELETE", path + "/url").status_code == 409
    assert api.request("DELETE", path + "/colour").status_code == 404
    assert {v["id"]: v["value"] for v in api.request("DELETE", path + "/days").json["data"]}["days"] == "30"


def test_a_scanner_file_is_imported_as_a_multipart_part(api: Api) -> None:
    scanner = api.post("/v1/integrations/connections", {"provider": "scanner-import", "name": "Semgrep"})
    assert scanner.status_code == 201 and scanner.json["status"] == "active"
    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "Semgrep", "rules": [{"id": "sql-injection"}]}},
                "results": [
                    {
                        "ruleId": "sql-injection",
                        "level": "error",
                        "message": {"text": "User input reaches a query."},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "app/db.py"}}}],
                    }
                ],
            }
        ],
    }
    boundary = "scanfile"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nsarif\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="semgrep.sarif"\r\n'
            "Content-Type: application/json\r\n\r\n"
        ).encode()
        + json.dumps(sarif).encode()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    path = f"/v1/integrations/checks/connections/{scanner.json['id']}/import"
    run = api.request("POST", path, raw=body, content_type=f"multipart/form-data; boundary={boundary}")
    assert run.status_code == 201, run.text
    assert (run.json["checkId"], run.json["trigger"], run.json["failedCount"]) == ("sarif", "import", 1)
    refused = api.post(path, {"format": "ocsf", "content": base64.b64encode(b"[1, 2]").decode()})
    error(refused, 400, "validation_error", "content")
    error(api.post(f"/v1/integrations/checks/connections/{scanner.json['id']}/run"), 409, "conflict", "provider")
