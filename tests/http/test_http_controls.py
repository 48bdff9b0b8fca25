"""Frameworks enabled, controls and readiness over HTTP: the area's own rules (the
generic suites cover the rest)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from http_support import Api, error

ISO = "/v1/frameworks/iso-27001-2022"


def test_enable_read_the_rows_and_the_readiness(api: Api) -> None:
    enabled = api.post(ISO + "/enable", {})
    assert enabled.status_code == 201, enabled.text
    assert (enabled.json["frameworkId"], enabled.json["requirementCount"]) == ("iso-27001-2022", 93)
    again = api.post(ISO + "/enable", {})
    assert (again.status_code, again.json) == (201, enabled.json)
    assert [item["frameworkId"] for item in api.get("/v1/frameworks/enabled").json["data"]] == ["iso-27001-2022"]
    rows = api.get(ISO + "/controls", query="perPage=100")
    assert rows.json["count"] == 93
    assert api.get(ISO + "/controls", query="controlStatus=implemented").json["count"] == 0
    readiness = api.get(ISO + "/readiness").json
    assert (readiness["applicable"], readiness["implemented"], readiness["share"]) == (93, 0, 0.0)
    picture = api.get(ISO + "/readiness.svg")
    assert picture.status_code == 200 and picture.headers["content-type"].startswith("image/svg+xml")
    assert ET.fromstring(picture.content).tag == "{http://www.w3.org/2000/svg}svg"
    error(api.get("/v1/frameworks/soc2-tsc-2017/readiness"), 404, "not_found")


def test_a_published_policy_implements_its_control(api: Api) -> None:
    api.post(ISO + "/enable", {})
    row = api.get(ISO + "/controls", query="q=A.5.1&perPage=100").json["data"]
    control_id = next(item["controlId"] for item in row if item["label"] == "A.5.1")
    policy = api.post("/v1/policies", {"name": "Security policy", "content": "We protect.", "controlIds": [control_id]})
    assert policy.status_code == 201, policy.text
    assert api.get(f"/v1/controls/{control_id}").json["status"] == "in_progress"
    assert api.post(f"/v1/policies/{policy.json['id']}/versions/publish", {}).status_code == 200
    assert api.get(f"/v1/controls/{control_id}").json["status"] == "implemented"
    links = api.get(f"/v1/controls/{control_id}/links").json["data"]
    assert [(link["kind"], link["targetId"], link["state"]) for link in links if link["kind"] == "policy"] == [
        ("policy", policy.json["id"], "done")
    ]
    assert {link["state"] for link in links if link["kind"] == "task"} == {"planned"}  # the framework's to-dos
    assert api.get(ISO + "/readiness").json["implemented"] == 1


def test_custom_controls_link_and_unlink_and_refuse_unknown_ids(api: Api) -> None:
    control = api.post("/v1/controls", {"name": "Clean desk", "code": "ORG-1"})
    assert control.status_code == 201, control.text
    one = f"/v1/controls/{control.json['id']}"
    risk = api.post("/v1/risks", {"title": "Papers left out"}).json
    linked = api.post(one + "/link", {"kind": "risk", "targetId": risk["id"]})
    assert linked.status_code == 200 and linked.json["status"] == "not_started"
    assert api.get(f"/v1/risks/{risk['id']}").json["controlIds"] == [control.json["id"]]
    details = error(
        api.post(one + "/link", {"kind": "rocket", "targetId": risk["id"]}), 400, "validation_error", "kind"
    )
    assert details["value"] == "rocket"
    missing = error(
        api.post(one + "/link", {"kind": "risk", "targetId": "rsk_missing"}), 400, "validation_error", "targetId"
    )
    assert missing["value"] == "rsk_missing"
    assert api.post(one + "/unlink", {"kind": "risk", "targetId": risk["id"]}).json["status"] == "not_started"
    assert api.get(f"/v1/risks/{risk['id']}").json["controlIds"] == []
    refused = error(
        api.post("/v1/risks", {"title": "R", "controlIds": ["ctl_missing"]}), 400, "validation_error", "controlIds"
    )
    assert refused["value"] == "ctl_missing"
    assert api.request("DELETE", one).status_code == 204
    error(api.get(one), 404, "not_found")


def test_auditors_read_and_cannot_enable(api: Api, as_role) -> None:
    auditor = as_role("auditor")
    error(auditor.post(ISO + "/enable", {}), 403, "forbidden")
    api.post(ISO + "/enable", {})
    assert auditor.get("/v1/controls").json["count"] == 93


def test_a_framework_exports_as_its_oscal_catalog_and_as_one_json_document(api: Api) -> None:
    from trestle.oscal.catalog import Catalog

    oscal = api.get(ISO + "/export.oscal.json")
    assert oscal.status_code == 200 and oscal.headers["content-type"].startswith("application/oscal+json")
    catalog = Catalog.model_validate(oscal.json["catalog"])
    assert sum(len(group.controls or []) for group in catalog.groups or []) == 23 + 93
    whole = api.get(ISO + "/export.json").json
    assert (whole["framework"]["controlCount"], len(whole["requirements"])) == (93, 116)
    assert {pair["targetFramework"] for pair in whole["mappings"]} == {"soc2-tsc-2017"}
    error(api.get("/v1/frameworks/nothing/export.oscal.json"), 404, "not_found")
