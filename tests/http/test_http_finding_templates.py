"""/v1/finding-templates over HTTP: the area's own rules (the generic suites cover the rest)."""

from __future__ import annotations

from http_support import Api, error

ROOT = "/v1/finding-templates"
TEMPLATE = {"category": "evidence_issue", "title": "Evidence is out of date", "content": "Too old."}


def test_create_read_update_delete(api: Api) -> None:
    created = api.post(ROOT, TEMPLATE)
    assert created.status_code == 201, created.text
    one = f"{ROOT}/{created.json['id']}"
    assert api.get(one).json == created.json
    assert api.patch(one, {"order": 2}).json["order"] == 2
    deleted = api.request("DELETE", one)
    assert deleted.status_code == 204 and deleted.content == b""
    error(api.get(one), 404, "not_found")
    error(api.request("DELETE", one), 404, "not_found")


def test_a_finding_from_a_template_over_http(api: Api) -> None:
    template = api.post(ROOT, TEMPLATE).json
    finding = api.post("/v1/findings", {"title": "Review", "severity": "low", "templateId": template["id"]})
    assert finding.status_code == 201, finding.text
    assert (finding.json["content"], finding.json["templateId"]) == ("Too old.", template["id"])
    details = error(
        api.post("/v1/findings", {"title": "R", "severity": "low", "templateId": "ftp_nope"}),
        400,
        "validation_error",
        "templateId",
    )
    assert details["value"] == "ftp_nope"


def test_category_is_free_text_filtered_by_exact_match(api: Api) -> None:
    api.post(ROOT, TEMPLATE)
    api.post(ROOT, {**TEMPLATE, "category": "Evidence issue"})
    assert api.get(ROOT, query="category=Evidence%20issue").json["count"] == 1
