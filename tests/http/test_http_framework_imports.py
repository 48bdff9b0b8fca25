"""Framework imports over HTTP: a sheet imported, enabled and exported as
OSCAL, a profile round-tripped, errors named inside the file, 409 while enabled."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_http.app import create_app
from http_support import Api

SHEET = b"id,title,group\nSUP-1,Keep a register of suppliers,sup\nSUP-2,Review suppliers yearly,sup\n"
PROFILE = json.dumps(
    {
        "profile": {
            "uuid": "00000000-0000-4000-8000-0000000000b2",
            "metadata": {
                "title": "Access rules",
                "last-modified": "2026-01-01T00:00:00Z",
                "version": "1",
                "oscal-version": "1.1.2",
            },
            "imports": [{"href": "iso-27001-2022.json", "include-controls": [{"with-ids": ["a.5.15", "a.5.18"]}]}],
        }
    }
).encode()


@pytest.fixture
def api(store_url: str) -> Iterator[Api]:
    with Platform.open(store_url, clock=FrozenClock(), ids=SequentialIds()) as platform:
        boot = platform.bootstrap("Acme")
        yield Api(create_app(platform), boot.owner_key.secret)


def _body(raw: bytes, file_format: str, **fields: object) -> dict:
    return {"format": file_format, "content": base64.b64encode(raw).decode(), **fields}


def test_a_sheet_is_imported_enabled_exported_and_deleted(api: Api) -> None:
    made = api.post("/v1/framework-imports", _body(SHEET, "csv", name="Supplier rules", frameworkId="suppliers"))
    assert made.status_code == 201, made.text
    assert (made.json["frameworkId"], made.json["requirementCount"], made.json["format"]) == ("suppliers", 2, "csv")
    listed = api.get("/v1/frameworks", query="perPage=200").json["data"]
    assert {"id": "suppliers", "imported": True} in [{"id": f["id"], "imported": f["imported"]} for f in listed]
    assert api.post("/v1/frameworks/suppliers/enable", {}).status_code == 201
    rows = api.get("/v1/frameworks/suppliers/controls").json
    assert rows["meta"]["total"] == 2
    exported = api.get("/v1/frameworks/suppliers/export.oscal.json")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/oscal+json")
    assert json.loads(exported.content)["catalog"]["metadata"]["title"] == "Supplier rules"
    refused = api.request("DELETE", f"/v1/framework-imports/{made.json['id']}")
    assert refused.status_code == 409 and refused.json["error"]["details"]["frameworkId"] == "suppliers"
    assert api.post("/v1/frameworks/suppliers/disable", {}).status_code == 204
    assert api.request("DELETE", f"/v1/framework-imports/{made.json['id']}").status_code == 204
    assert api.get("/v1/frameworks/suppliers").status_code == 404


def test_a_profile_round_trips_over_http(api: Api) -> None:
    made = api.post("/v1/framework-imports", _body(PROFILE, "oscal_profile", frameworkId="access-rules"))
    assert made.status_code == 201, made.text
    assert (made.json["baseFramework"], made.json["requirementCount"]) == ("iso-27001-2022", 2)
    exported = api.get(f"/v1/framework-imports/{made.json['id']}/export.oscal.json")
    assert exported.content == PROFILE
    again = api.post("/v1/framework-imports", _body(exported.content, "oscal_profile", frameworkId="access-rules-2"))
    assert again.status_code == 201 and again.json["catalogSha256"] == made.json["catalogSha256"]


def test_errors_are_named_inside_the_file(api: Api) -> None:
    bad = b"id,title\n9-x,Starts with a digit\nA-1,\n"
    answer = api.post("/v1/framework-imports", _body(bad, "csv", name="Rules"))
    assert answer.status_code == 400 and answer.json["error"]["code"] == "validation_error"
    fields = {entry["field"]: entry["value"] for entry in answer.json["error"]["details"]["errors"]}
    assert fields == {"content.rows[2].id": "9-x", "content.rows[3].title": None}
    assert api.get("/v1/framework-imports").json["meta"]["total"] == 0
