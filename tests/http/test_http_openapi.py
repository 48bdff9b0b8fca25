"""The OpenAPI document: valid, committed without drift, and true to what the app answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from compliance_http.openapi import openapi_document
from compliance_http.routes import ROUTES
from http_support import Api, check_answer

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


def test_document_is_valid_openapi_3_0(document: dict[str, Any]) -> None:
    validate(document)
    assert document["openapi"] == "3.0.3"
    assert document["servers"][0]["url"] == "http://localhost:3333"


def test_committed_document_matches_the_generated_one(document: dict[str, Any]) -> None:
    committed = json.loads(COMMITTED.read_text())
    assert committed == json.loads(json.dumps(document)), (
        "docs/openapi.json is stale: python -m compliance_http.openapi > docs/openapi.json"
    )


def test_every_route_is_documented_once(document: dict[str, Any]) -> None:
    operations = [(path, method) for path, item in document["paths"].items() for method in item]
    gets = sum(1 for route in ROUTES if route.method == "GET")
    assert len(operations) == len(ROUTES) + gets  # HEAD wherever GET
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(set(ids)) == len(ids)
    vendor = document["paths"]["/v1/vendors/{vendorId}"]["patch"]
    assert vendor["parameters"][0] == {"name": "vendorId", "in": "path", "required": True, "schema": {"type": "string"}}


def test_security_and_headers(document: dict[str, Any]) -> None:
    assert document["components"]["securitySchemes"]["ApiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": document["components"]["securitySchemes"]["ApiKey"]["description"],
    }
    assert document["paths"]["/v1/health"]["get"]["security"] == []
    assert document["paths"]["/v1/openapi.json"]["get"]["security"] == []
    listing = document["paths"]["/v1/vendors"]["get"]
    assert "security" not in listing
    refs = [p.get("$ref", p.get("name")) for p in listing["parameters"]]
    assert "#/components/parameters/XOrganizationId" in refs and "#/components/parameters/perPage" in refs
    assert {
        "criticality",
        "processesPersonalData",
        "ictService",
        "category",
        "country",
        "dpaStatus",
        "status",
        "assigneeId",
        "archived",
    } <= set(refs)
    create = document["paths"]["/v1/vendors"]["post"]
    assert {"$ref": "#/components/parameters/IdempotencyKey"} in create["parameters"]
    assert "201" in create["responses"] and "409" in create["responses"]
    assert document["paths"]["/v1/health"]["get"]["responses"].keys() >= {"200", "503"}


def test_schemas_follow_the_models(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    vendor = schemas["Vendor"]["properties"]
    assert vendor["criticality"] == {"type": "string", "enum": ["critical", "important", "standard"]}
    assert vendor["dpaSignedAt"] == {"type": "string", "format": "date", "nullable": True}
    assert vendor["createdAt"] == {"type": "string", "format": "date-time"}
    assert vendor["subProcessors"] == {"type": "array", "items": {"$ref": "#/components/schemas/SubProcessor"}}
    assert schemas["NewVendor"]["required"] == ["name"]
    assert schemas["NewVendor"]["additionalProperties"] is False
    assert "required" not in schemas["VendorPatch"]
    assert "secretHash" not in schemas["ApiKey"]["properties"]
    assert schemas["ApiKey"]["properties"]["status"]["enum"] == ["active", "revoked", "expired"]
    assert schemas["NewFinding"]["required"] == ["title", "severity"]
    assert schemas["BulkNewPerson"]["properties"]["members"]["maxItems"] == 1000


def test_answers_match_the_document(  # every route's answers are checked by test_http_generic too
    document: dict[str, Any], api: Api, as_role: Any, other: Api
) -> None:
    vendor = api.post(
        "/v1/vendors",
        {
            "name": "V",
            "dpaSignedAt": "2025-01-02",
            "subProcessors": [{"name": "S", "country": "DE", "purposeCategory": "hosting"}],
        },
    )
    person = api.post("/v1/people", {"name": "P", "email": "p@example.com"})
    finding = api.post("/v1/findings", {"title": "F", "severity": "low"})
    key = api.post("/v1/api-keys", {"name": "K", "role": "auditor"})
    v, p, f, k = vendor.json["id"], person.json["id"], finding.json["id"], key.json["id"]
    calls = [
        ("/v1/vendors", "POST", vendor),
        ("/v1/people", "POST", person),
        ("/v1/findings", "POST", finding),
        ("/v1/api-keys", "POST", key),
        ("/v1/health", "GET", api.get("/v1/health")),
        ("/v1/organization", "GET", api.get("/v1/organization")),
        ("/v1/vendors", "GET", api.get("/v1/vendors")),
        ("/v1/vendors/{vendorId}", "GET", api.get(f"/v1/vendors/{v}")),
        ("/v1/vendors/{vendorId}", "PATCH", api.patch(f"/v1/vendors/{v}", {"website": "https://v.example"})),
        ("/v1/vendors/{vendorId}/archive", "POST", api.post(f"/v1/vendors/{v}/archive")),
        ("/v1/vendors/{vendorId}/restore", "POST", api.post(f"/v1/vendors/{v}/restore")),
        ("/v1/people", "GET", api.get("/v1/people")),
        ("/v1/people/bulk", "POST", api.post("/v1/people/bulk", {"members": [{"name": "Q", "email": "q@x.io"}]})),
        ("/v1/people/{personId}", "GET", api.get(f"/v1/people/{p}")),
        ("/v1/people/{personId}", "PATCH", api.patch(f"/v1/people/{p}", {"jobTitle": "CTO"})),
        ("/v1/findings", "GET", api.get("/v1/findings")),
        ("/v1/findings/{findingId}", "GET", api.get(f"/v1/findings/{f}")),
        ("/v1/findings/{findingId}", "PATCH", api.patch(f"/v1/findings/{f}", {"severity": "high"})),
        ("/v1/findings/{findingId}/close", "POST", api.post(f"/v1/findings/{f}/close")),
        ("/v1/api-keys", "GET", api.get("/v1/api-keys")),
        ("/v1/api-keys/{keyId}", "GET", api.get(f"/v1/api-keys/{k}")),
        ("/v1/api-keys/{keyId}/usage", "GET", api.get(f"/v1/api-keys/{k}/usage")),
        ("/v1/api-keys/{keyId}/revoke", "POST", api.post(f"/v1/api-keys/{k}/revoke")),
        ("/v1/vendors", "POST", api.post("/v1/vendors", {"name": 5})),
        ("/v1/vendors", "GET", Api(api.app, None).get("/v1/vendors")),
        ("/v1/vendors", "POST", as_role("auditor").post("/v1/vendors", {"name": "x"})),
        ("/v1/vendors/{vendorId}", "GET", other.get(f"/v1/vendors/{v}")),
        ("/v1/people", "POST", api.post("/v1/people", {"name": "P", "email": "p@example.com"})),
    ]
    for path, method, result in calls:
        check_answer(document, path, method, result.status_code, result.json)
    error = api.get("/v1/vendors", query="perPage=500")
    check_answer(document, "/v1/vendors", "GET", 400, error.json)
