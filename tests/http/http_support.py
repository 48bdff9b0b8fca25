"""What the HTTP tests share: an ``Api`` over ``falcon.testing`` acting with one key, and checks
of the spec's error body."""

from __future__ import annotations

import copy
import secrets
from typing import Any

import falcon.testing
import pytest
from jsonschema.exceptions import ValidationError as SchemaError
from openapi_schema_validator import OAS30Validator

from compliance_core import Actor, Platform, Role
from compliance_core.areas.api_keys import PERSON_BOUND_ROLES, NewApiKey
from compliance_core.areas.people import NewPerson


class Api:
    """Requests as one API key (``key=None``: no X-API-Key header at all)."""

    def __init__(self, app: falcon.App, key: str | None) -> None:
        self.app = app
        self.key = key

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        raw: bytes | None = None,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        query: str | None = None,
    ) -> falcon.testing.Result:
        sent = {} if self.key is None else {"X-API-Key": self.key}
        sent.update(headers or {})
        if raw is not None:
            sent["Content-Type"] = content_type or "application/json"
            return falcon.testing.simulate_request(self.app, method, path, body=raw, headers=sent, query_string=query)
        return falcon.testing.simulate_request(self.app, method, path, json=body, headers=sent, query_string=query)

    def get(self, path: str, **options: Any) -> falcon.testing.Result:
        return self.request("GET", path, **options)

    def post(self, path: str, body: Any = None, **options: Any) -> falcon.testing.Result:
        return self.request("POST", path, body=body, **options)

    def patch(self, path: str, body: Any = None, **options: Any) -> falcon.testing.Result:
        return self.request("PATCH", path, body=body, **options)


def error(result: falcon.testing.Result, status: int, code: str, field: str | None = None) -> dict[str, Any]:
    """Assert the spec's error body and return its details."""
    assert result.status_code == status, result.text
    body = result.json
    assert set(body) == {"error", "requestId"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["requestId"] == result.headers["X-Request-Id"]
    if field is not None:
        assert body["error"]["details"]["field"] == field, body
    return body["error"]["details"]  # type: ignore[no-any-return]


def issue_key(platform: Platform, organization_id: str, role: Role | str, **options: Any) -> str:
    """A new key of ``role`` in the organization, issued by its owner in-process. Staff keys
    (employee, contractor) act as a person: a new one of that role unless ``person_id`` is given."""
    owner = Actor(organization_id=organization_id, role=Role.OWNER, auth_type="local")
    if Role.parse(role) in PERSON_BOUND_ROLES and "person_id" not in options:
        serial = secrets.token_hex(6)
        person = platform.people.create(
            owner, NewPerson(name=f"{role} person", email=f"{serial}@staff.example", role=role)
        )
        options["person_id"] = person.id
    issued = platform.api_keys.create(owner, NewApiKey(name=f"{role} key", role=role, **options))
    assert issued.secret is not None
    return issued.secret


def _strict(document: dict[str, Any]) -> dict[str, Any]:
    """The components with undocumented keys forbidden, to catch the wire and the document
    drifting apart (a schema an ``allOf`` extends, such as IssuedKey's ApiKey, cannot be strict
    and is left as is)."""
    components = copy.deepcopy(document["components"])
    extended = {
        part["$ref"].rsplit("/", 1)[1]
        for schema in components["schemas"].values()
        for part in schema.get("allOf", ())
        if "$ref" in part
    }
    for name, schema in components["schemas"].items():
        if schema.get("type") == "object" and "properties" in schema and name not in extended:
            schema.setdefault("additionalProperties", False)
    return components


_VALIDATORS: dict[int, tuple[dict[str, Any], dict[str, Any], dict[tuple[str, str, str], Any]]] = {}
"""Per document checked (by identity, the document kept alive with it): its strict components
and the validator of each answer, made once; copying the large document for every answer took
most of the suites' time."""


def _validator(document: dict[str, Any], path: str, method: str, status: str, schema: Any) -> Any:
    held = _VALIDATORS.get(id(document))
    if held is None or held[0] is not document:
        held = _VALIDATORS[id(document)] = (document, _strict(document), {})
    _, components, made = held
    key = (path, method, status)
    if key not in made:
        made[key] = OAS30Validator({**schema, "components": components})
    return made[key]


def check_answer(document: dict[str, Any], path: str, method: str, status: int, body: Any) -> None:
    """Assert that the OpenAPI document lists ``status`` for the operation and that ``body``
    (parsed JSON, or None when there is none) fits the documented schema."""
    operation = document["paths"][path][method.lower()]
    assert str(status) in operation["responses"], f"{method} {path}: {status} is not documented"
    response = operation["responses"][str(status)]
    if "$ref" in response:
        response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    content = response.get("content", {}).get("application/json")
    if content is None:
        assert body is None, f"{method} {path} {status}: a body where none is documented"
        return
    try:
        _validator(document, path, method.lower(), str(status), content["schema"]).validate(body)
    except SchemaError as error:  # pragma: no cover - the message is the point
        pytest.fail(f"{method} {path} {status}: {error.message} at {list(error.absolute_path)}")


def with_records(api: Api, example: Any) -> Any:
    """A create's example body with each placeholder id (``rsk_...``) replaced by a new record of
    the table with that prefix, made through ``api`` by its area's create example (a comment's
    example names a risk; the generic suites' world does the same for every body)."""
    from compliance_core.areas import AREAS
    from compliance_http.routes import default_endpoints

    if isinstance(example, dict):
        return {key: with_records(api, value) for key, value in example.items()}
    if isinstance(example, list):
        return [with_records(api, value) for value in example]
    if not (isinstance(example, str) and example.endswith("_...")):
        return example
    prefix = example[: -len("_...")]
    area = next(area.name for area in AREAS for table in area.records if table.prefix == prefix)
    create = next(e for e in default_endpoints() if e.operation.area == area and e.operation.method == "create")
    made = api.post(create.path, with_records(api, copy.deepcopy(dict(create.operation.example or {}))))
    assert made.status_code == create.status, made.text
    return made.json["id"]
