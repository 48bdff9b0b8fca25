"""The OpenAPI document: valid, committed without drift, and true to what the app answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from openapi_spec_validator import validate

from compliance_core.kernel.pages import MAX_PAGE, MAX_PER_PAGE
from compliance_core.kernel.rendering import wire_name
from compliance_core.kernel.validation import schema_of
from compliance_http.openapi import openapi_document
from compliance_http.resources import MAX_BODY_BYTES
from compliance_http.routes import Endpoint, default_endpoints
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
    served = [(endpoint, path) for endpoint in default_endpoints() for path in endpoint.paths]  # aliases too
    gets = sum(1 for endpoint, _ in served if endpoint.method == "GET")
    assert len(operations) == len(served) + gets  # HEAD wherever GET
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
    assert schemas["NewFindingTemplate"]["required"] == ["category", "title"]
    assert "required" not in schemas["NewFinding"]  # a template may give title and severity
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


def _documented(endpoint: Endpoint) -> str:
    return re.sub(r"{(\w+)}", lambda m: "{" + wire_name(m[1]) + "}", endpoint.path)


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _holds(documented: dict[str, Any], rules: dict[str, Any]) -> None:
    """Every keyword the converter enforces is in the documented schema (null aside)."""
    for keyword, value in rules.items():
        if keyword in ("items", "description"):
            continue
        if keyword == "enum":
            assert [v for v in documented["enum"] if v is not None] == [v for v in value if v is not None]
        elif keyword == "nullable":
            assert documented.get("nullable") is value or not value, documented
        else:
            assert documented.get(keyword) == value, (keyword, documented, rules)
    if "description" in rules:
        assert rules["description"] in documented.get("description", ""), documented


@pytest.mark.parametrize(
    "endpoint", [e for e in default_endpoints() if e.operation.body is not None], ids=lambda e: e.operation.name
)
def test_every_body_field_documents_what_its_converter_enforces(document: dict[str, Any], endpoint: Endpoint) -> None:
    body = document["paths"][_documented(endpoint)][endpoint.method.lower()]["requestBody"]["content"]
    schema = _resolve(document, body["application/json"]["schema"])
    if endpoint.operation.batch is not None:
        schema = _resolve(document, schema["properties"]["members"]["items"])
    assert schema["additionalProperties"] is False
    model = endpoint.operation.body
    assert model is not None
    for field in attrs.fields(model):
        rules = schema_of(field.converter)
        if field.converter is not None:
            assert rules, f"{model.__name__}.{field.name}: its converter describes no rule (validation.schema_of)"
        _holds(schema["properties"][wire_name(field.name)], rules)


@pytest.mark.parametrize(
    "endpoint", [e for e in default_endpoints() if e.operation.filters is not None], ids=lambda e: e.operation.name
)
def test_every_filter_documents_what_its_converter_enforces(document: dict[str, Any], endpoint: Endpoint) -> None:
    parameters = document["paths"][_documented(endpoint)][endpoint.method.lower()]["parameters"]
    by_name = {p["name"]: p for p in parameters if "name" in p}
    assert endpoint.operation.filters is not None
    for field in attrs.fields(endpoint.operation.filters):
        parameter = by_name[wire_name(field.name)]
        rules = {k: v for k, v in schema_of(field.converter).items() if k not in ("nullable", "description")}
        _holds(parameter["schema"], rules)
        assert "nullable" not in parameter["schema"] and None not in parameter["schema"].get("enum", [])


def test_the_rules_of_text_numbers_addresses_and_dates_are_documented(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    vendor = schemas["NewVendor"]["properties"]
    assert vendor["name"]["minLength"] == 1 and vendor["name"]["maxLength"] == 255
    assert "control characters" in vendor["name"]["description"]
    assert "visible character" in vendor["name"]["description"]
    assert vendor["description"]["maxLength"] == 5000 and "minLength" not in vendor["description"]
    assert vendor["website"]["format"] == "uri" and re.match(vendor["website"]["pattern"], "https://x.example")
    assert not re.match(vendor["website"]["pattern"], "ftp://x.example")
    assert (
        vendor["dpaSignedAt"]["format"] == "date" and vendor["dpaSignedAt"]["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )
    assert vendor["country"]["nullable"] is True
    assert "pattern" in vendor["country"] or "enum" in vendor["country"]
    assert vendor["assigneeId"]["pattern"].startswith("^[a-z]")
    category = vendor["category"]
    assert category["type"] == "string" and "enum" not in category
    assert "cloud" in category["description"] and category["maxLength"] == 100
    assert schemas["NewPerson"]["properties"]["email"]["format"] == "email"
    order = schemas["NewFindingTemplate"]["properties"]["order"]
    assert (order["type"], order["minimum"], order["maximum"]) == ("integer", 0, 10_000)
    assert schemas["Vendor"]["properties"]["category"] == {"type": "string"}
    parameters = document["components"]["parameters"]
    assert parameters["page"]["schema"]["maximum"] == MAX_PAGE == 10_000_000
    assert parameters["perPage"]["schema"]["maximum"] == MAX_PER_PAGE
    assert parameters["IdempotencyKey"]["schema"]["maxLength"] == 255


def test_a_public_health_answer_needs_only_status_version_and_time(document: dict[str, Any]) -> None:
    health = document["components"]["schemas"]["Health"]
    assert health["required"] == ["status", "version", "timestamp"]
    assert {"uptimeSeconds", "store"} <= health["properties"].keys()


@pytest.mark.parametrize("endpoint", default_endpoints(), ids=lambda e: f"{e.method} {e.path}")
def test_every_status_an_operation_can_answer_is_documented_with_the_error_shape(
    document: dict[str, Any], endpoint: Endpoint
) -> None:
    operation = endpoint.operation
    expected = {"400", "500"} if endpoint.public else {"400", "401", "403", "429", "500"}
    if endpoint.path_params or operation.given:  # a record named by the path, or another operation's effect
        expected.add("404")
    if not endpoint.public and (operation.idempotent or operation.body is not None or endpoint.method != "GET"):
        expected.add("409")
    if operation.body is not None:
        expected.add("413")
    methods = ["get", "head"] if endpoint.method == "GET" else [endpoint.method.lower()]
    for method in methods:
        responses = document["paths"][_documented(endpoint)][method]["responses"]
        errors = {status for status in responses if int(status) >= 400 and status != "503"}
        assert errors == expected, (method, sorted(errors))
        for status in errors:
            shared = document["components"]["responses"][responses[status]["$ref"].rsplit("/", 1)[1]]
            assert shared["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    too_large = document["components"]["responses"]["PayloadTooLarge"]
    assert str(MAX_BODY_BYTES) in too_large["description"]


def test_every_create_links_to_the_routes_of_the_record_it_made(document: dict[str, Any]) -> None:
    endpoints = default_endpoints()
    operation_ids = {op["operationId"] for item in document["paths"].values() for op in item.values()}
    creates = [e for e in endpoints if e.status == 201]
    assert {e.operation.area for e in creates} >= {"vendors", "people", "findings", "finding_templates", "api_keys"}
    for create in creates:
        ids = create.operation.ids
        readers = [
            e
            for e in endpoints
            if e.method == "GET"
            and e.operation.area == create.operation.area
            and e.operation.result is create.operation.result
            and not e.operation.paged
            and e.operation.ids[:-1] == ids
            and len(e.operation.ids) == len(ids) + 1
        ]
        answered = document["paths"][_documented(create)]["post"]["responses"]["201"]
        if not readers:  # nothing reads what it made by id (enabling a framework, an import's report)
            assert "links" not in answered, create.operation.name
            continue
        links = answered["links"]
        items = [
            e
            for e in endpoints
            if e.operation.area == create.operation.area and e.operation.ids == readers[0].operation.ids
        ]
        expected = set()
        for item in items:
            name = wire_name(item.operation.name.replace(".", "_"))
            expected.add(name)
            if item.method == "GET":
                expected.add(name + "Head")
        assert set(links) == expected, create.operation.name
        source = "$response.body#/data/0/id" if create.operation.batch is not None else "$response.body#/id"
        for name, link in links.items():
            assert link["operationId"] == name and name in operation_ids
            assert source in link["parameters"].values()


def test_page_and_cursor_are_documented_as_exclusive_and_refused_together(document: dict[str, Any], api: Api) -> None:
    parameters = document["components"]["parameters"]
    assert "`cursor`" in parameters["page"]["description"] and "400" in parameters["page"]["description"]
    assert "`page`" in parameters["cursor"]["description"]
    for path, item in document["paths"].items():
        names = {p.get("$ref", "").rsplit("/", 1)[-1] for p in item.get("get", {}).get("parameters", [])}
        if "cursor" in names and "{" not in path:
            answer = api.get(path, query="cursor=&page=1")
            assert answer.status_code == 400 and answer.json["error"]["details"]["field"] == "page", path


def test_the_idempotency_key_says_where_it_is_refused(document: dict[str, Any]) -> None:
    description = document["components"]["parameters"]["IdempotencyKey"]["description"]
    assert "400" in description and "Only the operations that list this header" in description


def test_a_new_risk_offers_exactly_the_statuses_a_create_takes(document: dict[str, Any], api: Api) -> None:
    offered = document["components"]["schemas"]["NewRisk"]["properties"]["status"]["enum"]
    assert "accepted" not in offered
    for status in offered:
        created = api.post("/v1/risks", {"title": f"Risk {status}", "status": status})
        assert created.status_code == 201 and created.json["status"] == status
    refused = api.post("/v1/risks", {"title": "Accepted at birth", "status": "accepted"})
    assert refused.status_code == 400 and refused.json["error"]["details"]["field"] == "status"
    # a patch may still name accepted (of a risk already accepted: a rule about the record)
    assert "accepted" in document["components"]["schemas"]["RiskPatch"]["properties"]["status"]["enum"]


def test_webhook_events_are_an_enum_of_the_event_catalogue(document: dict[str, Any], platform: Any, api: Api) -> None:
    catalogue = sorted({event.type for area in platform.areas for event in area.events})
    for name in ("NewWebhook", "WebhookPatch"):
        items = document["components"]["schemas"][name]["properties"]["events"]["items"]
        assert items == {"type": "string", "enum": ["*", *catalogue]}, name
    # the server takes every name the document offers, and the document is what the app serves
    created = api.post("/v1/webhooks", {"url": "https://93.184.216.34/in", "events": catalogue})
    assert created.status_code == 201, created.json
    served = api.get("/v1/openapi.json").json["components"]["schemas"]["NewWebhook"]["properties"]["events"]
    assert served["items"]["enum"] == ["*", *catalogue]


def test_an_app_with_more_areas_documents_their_events_too() -> None:
    document = openapi_document(event_types=["zeta.happened", "alpha.happened"])
    items = document["components"]["schemas"]["NewWebhook"]["properties"]["events"]["items"]
    assert items["enum"] == ["*", "alpha.happened", "zeta.happened"]
