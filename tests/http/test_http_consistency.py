"""Issue 18's consistency points over HTTP: the plural finding-templates path
beside the singular alias, findings taking a template's title and severity, transitions taking
an empty body, every bad field of a body reported at once, and a replay saying so."""

from __future__ import annotations

import falcon.testing

from compliance_http.openapi import openapi_document
from http_support import Api, error

TEMPLATES = "/v1/finding-templates"
SINGULAR = "/v1/finding-template"
TEMPLATE = {"category": "evidence_issue", "title": "Evidence is out of date", "content": "Too old.", "severity": "high"}
POLICY = {"name": "Acceptable use", "content": "# Acceptable use\n\nUse devices for work.", "frequency": "monthly"}


def test_the_plural_path_and_the_singular_alias_serve_the_same_templates(api: Api) -> None:
    made = api.post(SINGULAR, TEMPLATE)
    assert made.status_code == 201, made.text
    plural, singular = f"{TEMPLATES}/{made.json['id']}", f"{SINGULAR}/{made.json['id']}"
    assert api.get(plural).json == api.get(singular).json == made.json
    assert api.get(TEMPLATES).json == api.get(SINGULAR).json
    assert api.get(TEMPLATES).json["count"] == 1
    assert api.patch(singular, {"order": 4}).json["order"] == 4
    assert api.get(plural).json["order"] == 4
    head = api.request("HEAD", singular)
    assert head.status_code == 200 and head.content == b""
    assert api.request("DELETE", singular).status_code == 204
    error(api.get(plural), 404, "not_found")
    error(api.get(singular), 404, "not_found")


def test_the_alias_is_documented_as_deprecated_and_the_plural_path_is_not() -> None:
    paths = openapi_document()["paths"]
    for method in ("get", "post", "head"):
        assert paths[SINGULAR][method]["deprecated"] is True
        assert "deprecated" not in paths[TEMPLATES][method]
        assert (
            f"`{method.upper() if method != 'head' else 'GET'} {TEMPLATES}`" in paths[SINGULAR][method]["description"]
        )
    assert {"get", "patch", "delete", "head"} <= set(paths[SINGULAR + "/{templateId}"])
    ids = [op["operationId"] for item in paths.values() for op in item.values()]
    assert len(ids) == len(set(ids))


def test_a_finding_from_a_template_takes_its_title_and_severity(api: Api) -> None:
    template = api.post(TEMPLATES, TEMPLATE).json
    made = api.post("/v1/findings", {"templateId": template["id"]})
    assert made.status_code == 201, made.text
    assert (made.json["title"], made.json["severity"], made.json["content"]) == (
        "Evidence is out of date",
        "high",
        "Too old.",
    )
    own = api.post("/v1/findings", {"templateId": template["id"], "title": "Own", "severity": "low"}).json
    assert (own["title"], own["severity"]) == ("Own", "low")
    details = error(api.post("/v1/findings", {"content": "x"}), 400, "validation_error", "title")
    assert [e["field"] for e in details["errors"]] == ["title", "severity"]
    assert api.get("/v1/findings").json["count"] == 2


def test_a_transition_with_an_optional_body_takes_none_an_empty_one_or_an_empty_object(api: Api) -> None:
    for send in (
        lambda path: falcon.testing.simulate_post(api.app, path, headers={"X-API-Key": str(api.key)}),
        lambda path: api.request("POST", path, raw=b"", content_type="application/json"),
        lambda path: api.request("POST", path, raw=b"", content_type=None),
        lambda path: api.post(path, {}),
    ):
        policy = api.post("/v1/policies", POLICY).json
        one = f"/v1/policies/{policy['id']}"
        submitted = send(f"{one}/submit-for-approval")
        assert submitted.status_code == 200, submitted.text
        approved = send(f"{one}/approve")
        assert approved.status_code == 200, approved.text
        assert (approved.json["status"], approved.json["version"]) == ("published", 1)
    vendor = api.post("/v1/vendors", {"name": "Acme"}).json
    archived = api.post(f"/v1/vendors/{vendor['id']}/archive", {})
    assert archived.status_code == 200 and archived.json["archived"] is True


def test_an_empty_body_where_fields_are_required_names_each_one(api: Api) -> None:
    policy = api.post("/v1/policies", POLICY).json
    api.post(f"/v1/policies/{policy['id']}/submit-for-approval", {})
    details = error(
        api.request("POST", f"/v1/policies/{policy['id']}/reject", raw=b"", content_type=None),
        400,
        "validation_error",
        "comment",
    )
    assert details["reason"] == "is required"
    details = error(api.post(TEMPLATES), 400, "validation_error", "category")
    assert [e["field"] for e in details["errors"]] == ["category", "title"]


def test_every_bad_field_of_a_body_is_reported_at_once(api: Api) -> None:
    details = error(
        api.post(TEMPLATES, {"category": 5, "title": "", "order": 10_001, "colour": "red"}),
        400,
        "validation_error",
        "colour",
    )
    assert details["errors"] == [
        {"field": "colour", "value": "red", "reason": "unknown field"},
        {"field": "category", "value": 5, "reason": "must be a string"},
        {"field": "title", "value": "", "reason": "must not be empty"},
        {"field": "order", "value": 10_001, "reason": "must be an integer from 0 to 10000"},
    ]
    assert (details["value"], details["reason"]) == ("red", "unknown field")
    assert api.get(TEMPLATES).json["count"] == 0
    made = api.post(TEMPLATES, TEMPLATE).json
    details = error(api.patch(f"{TEMPLATES}/{made['id']}", {"title": 1, "severity": "dire"}), 400, "validation_error")
    assert [e["field"] for e in details["errors"]] == ["title", "severity"]


def test_an_idempotent_replay_says_so_in_a_header(api: Api) -> None:
    key = {"Idempotency-Key": "template-1"}
    first = api.request("POST", TEMPLATES, body=TEMPLATE, headers=key)
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    again = api.request("POST", TEMPLATES, body=TEMPLATE, headers=key)
    assert again.status_code == 201 and again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    plain = api.post(TEMPLATES, TEMPLATE)
    assert "Idempotent-Replayed" not in plain.headers
    error(api.request("POST", TEMPLATES, body={**TEMPLATE, "order": 3}, headers=key), 409, "conflict")
    bulk = {"members": [{"name": "Grace Hopper", "email": "grace@example.com"}]}
    made = api.request("POST", "/v1/people/bulk", body=bulk, headers={"Idempotency-Key": "bulk-1"})
    assert made.status_code == 201 and "Idempotent-Replayed" not in made.headers
    replayed = api.request("POST", "/v1/people/bulk", body=bulk, headers={"Idempotency-Key": "bulk-1"})
    assert replayed.status_code == 201 and replayed.headers["Idempotent-Replayed"] == "true"
