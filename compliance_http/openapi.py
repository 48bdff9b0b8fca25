"""The OpenAPI 3.0.3 document, generated from the operations core declares and its attrs models.

Nothing here is written by hand twice: paths, methods, statuses, parameters and bodies come from
the operations' declarations (``routes.endpoints``); schemas come from walking the models' attrs fields, and every constraint a
request field has comes from the converter that enforces it (``validation.schema_of``), so the
document is exactly as strict as the server: what it allows is accepted, what it forbids is a
400. docs/openapi.json is this document, committed; regenerate it with
``python -m compliance_http.openapi > docs/openapi.json``.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import ApiKey
from compliance_core.areas.organizations import Organization
from compliance_core.areas.people import MAX_BULK
from compliance_core.areas.webhooks.models import ALL_EVENTS
from compliance_core.kernel.pages import MAX_QUERY, Listing
from compliance_core.kernel.registry import Download
from compliance_core.kernel.rendering import WireView
from compliance_core.kernel.uploads import Upload, upload_field
from compliance_core.kernel.validation import Unset, page_schemas, schema_of, wire_name

from .errors import code_for_status
from .resources import MAX_BODY_BYTES
from .resources.uploads import MULTIPART
from .routes import Endpoint, default_endpoints

__all__ = ["openapi_document", "SERVER_URL", "API_VERSION"]

SERVER_URL = "http://localhost:3333"
API_VERSION = "1.0.0"
_SCHEMAS = "#/components/schemas/"
_ERRORS = {
    400: "ValidationError",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    413: "PayloadTooLarge",
    429: "RateLimited",
    500: "InternalError",
    503: "ServiceUnavailable",
}
_WHEN = {
    400: "The request's parameters, headers or body break a documented rule, or a rule across "
    "fields, records or time (details name the field, the offending value and the reason)",
    401: "No X-API-Key, or a key that is unknown, revoked or expired",
    403: "The key's role lacks the permission, or X-Organization-Id names another organization",
    404: "No such record in the key's organization (another organization's records look the same)",
    409: "The Idempotency-Key was used with a different request or is still in flight, a unique "
    "value is taken, or the record's state forbids the change",
    413: f"The body is larger than {MAX_BODY_BYTES} bytes",
    429: "The key's bucket is empty: wait Retry-After seconds",
    500: "An unexpected error, logged with the request id; retrying with the same Idempotency-Key is safe",
    503: "The work's bounded pool is busy or the work passed its time limit: retry after Retry-After "
    "seconds (details.retryAfter)",
}
_READS = frozenset({"GET", "HEAD"})


def openapi_document(
    endpoints: tuple[Endpoint, ...] | None = None, event_types: Iterable[str] | None = None
) -> dict[str, Any]:
    """The document of ``endpoints`` (default: every registered area's).

    :param event_types: the event catalogue a webhook subscription may name (default: the events
        of every registered area, as ``Platform`` gathers them); a field whose converter marks its
        items ``x-event-catalogue`` lists them (and ``*``) as an enum, so a client generator and a
        fuzzer know the names the server takes instead of a pattern it refuses most of
    """
    endpoints = default_endpoints() if endpoints is None else endpoints
    if event_types is None:
        event_types = (event.type for area in AREAS for event in area.events)
    schemas = _Schemas(sorted(set(event_types)))
    paths: dict[str, dict[str, Any]] = {}
    links = _links(endpoints)
    for route in endpoints:
        path = re.sub(r"{(\w+)}", lambda m: "{" + wire_name(m[1]) + "}", route.path)
        operation = _operation(route, schemas)
        if (route.method, route.path) in links:
            operation["responses"][str(route.status)]["links"] = links[route.method, route.path]
        paths.setdefault(path, {})[route.method.lower()] = operation
        if route.method == "GET":
            head = _operation(route, schemas)
            head["operationId"] += "Head"
            head["summary"] = f"Headers only: {route.summary[0].lower()}{route.summary[1:]}"
            for response in head["responses"].values():
                response.pop("content", None)
            paths[path]["head"] = head
        for number, alias in enumerate(route.aliases, start=1):
            _document_alias(paths, route, alias, number, schemas)
    tags = list(dict.fromkeys(route.tag for route in endpoints))
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Compliance API",
            "version": API_VERSION,
            "description": (
                "Vendors, people, findings and API keys of one organization. Every request except "
                "health and this document carries an X-API-Key; every response carries X-Request-Id; "
                "authenticated responses carry X-RateLimit-Limit, X-RateLimit-Remaining and "
                "X-RateLimit-Reset. Errors are {error: {code, message, details}, requestId}. "
                "Text fields are trimmed of surrounding white space before they are checked; "
                "they must not contain control characters, and required text must contain a "
                "visible character. An unknown body field or query parameter is a 400."
            ),
        },
        "servers": [{"url": SERVER_URL, "description": "local development server"}],
        "tags": [{"name": tag} for tag in tags],
        "security": [{"ApiKey": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "ApiKey": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-API-Key",
                    "description": "A key issued by POST /v1/api-keys (comp_ + 64 hex characters).",
                },
            },
            "parameters": _PARAMETERS,
            "headers": _HEADERS,
            "responses": {name: _error_response(name, status) for status, name in _ERRORS.items()},
            "schemas": dict(sorted(schemas.components.items())),
        },
    }


def _document_alias(
    paths: dict[str, dict[str, Any]], route: Endpoint, alias: str, number: int, schemas: _Schemas
) -> None:
    """The operations of ``route`` again on an earlier path, marked deprecated and naming the path
    to use instead (no links: a client following them lands on the current path)."""
    path = re.sub(r"{(\w+)}", lambda m: "{" + wire_name(m[1]) + "}", alias)
    current = re.sub(r"{(\w+)}", lambda m: "{" + wire_name(m[1]) + "}", route.path)
    methods = [route.method.lower()] + (["head"] if route.method == "GET" else [])
    for method in methods:
        operation = _operation(route, schemas)
        operation["operationId"] += (
            ("Head" if method == "head" else "") + "Deprecated" + ("" if number == 1 else str(number))
        )
        if method == "head":
            operation["summary"] = f"Headers only: {route.summary[0].lower()}{route.summary[1:]}"
            for response in operation["responses"].values():
                response.pop("content", None)
        operation["deprecated"] = True
        operation["description"] = (
            f"Deprecated: an earlier path of `{route.method} {current}`, answered the same; use that path. "
            + operation["description"]
        )
        paths.setdefault(path, {})[method] = operation


def _operation_id(endpoint: Endpoint) -> str:
    return wire_name(endpoint.operation.name.replace(".", "_"))


def _links(endpoints: tuple[Endpoint, ...]) -> dict[tuple[str, str], dict[str, Any]]:
    """OpenAPI links from each create to the routes of the record it made.

    A create is a route answering 201; the routes of its record are those of the same area whose
    ids are the create's ids plus one more: that one is the created record's ``id`` (the first
    entry's, for a batch), the others are the create's own path ids.
    """
    links: dict[tuple[str, str], dict[str, Any]] = {}
    for create in endpoints:
        if create.status != 201:
            continue
        new_id = "$response.body#/data/0/id" if create.operation.batch is not None else "$response.body#/id"
        ids = create.operation.ids
        found: dict[str, Any] = {}
        named = _record_id(create, endpoints)
        for target in endpoints:
            operation = target.operation
            if named is None or operation.area != create.operation.area or operation.ids != (*ids, named):
                continue
            parameters = {wire_name(name): f"$request.path.{wire_name(name)}" for name in ids}
            parameters[wire_name(operation.ids[-1])] = new_id
            targets = [_operation_id(target)] + ([_operation_id(target) + "Head"] if target.method == "GET" else [])
            for operation_id in targets:
                found[operation_id] = {
                    "operationId": operation_id,
                    "parameters": parameters,
                    "description": f"{target.method} {target.path} of the record this call created",
                }
        if found:
            links[create.method, create.path] = found
    return links


def _record_id(create: Endpoint, endpoints: tuple[Endpoint, ...]) -> str | None:
    """The path id naming the record ``create`` makes: the last id of the area's GET answering
    that record's model under the create's own ids (None: nothing reads it by id)."""
    made = create.operation.result
    for reader in endpoints:
        operation = reader.operation
        if (
            reader.method == "GET"
            and operation.area == create.operation.area
            and operation.result is made
            and not operation.paged
            and operation.ids[:-1] == create.operation.ids
            and len(operation.ids) == len(create.operation.ids) + 1
        ):
            return operation.ids[-1]
    return None


def _operation(route: Endpoint, schemas: _Schemas) -> dict[str, Any]:
    core = route.operation
    operation: dict[str, Any] = {
        "operationId": _operation_id(route),
        "tags": [route.tag],
        "summary": route.summary,
    }
    parameters: list[dict[str, Any]] = [
        {"name": wire_name(name), "in": "path", "required": True, "schema": {"type": "string"}}
        for name in route.path_params
    ]
    if core.filters is not None:
        hints = typing.get_type_hints(core.filters)
        for field in attrs.fields(core.filters):
            schema = schemas.field(hints[field.name], field, output=False)
            schema.pop("nullable", None)  # a query parameter is absent, never null
            if "enum" in schema:
                schema["enum"] = [value for value in schema["enum"] if value is not None]
            if field.default not in (None, attrs.NOTHING):
                schema["default"] = field.default
            parameter: dict[str, Any] = {"name": wire_name(field.name), "in": "query", "required": False}
            description = schema.pop("description", None)
            if description:
                parameter["description"] = description
            parameter["schema"] = schema
            parameters.append(parameter)
    if core.paged:
        parameters += [
            {"$ref": "#/components/parameters/page"},
            {"$ref": "#/components/parameters/perPage"},
            {"$ref": "#/components/parameters/cursor"},
        ]
    if core.listing is not None:
        parameters += _search_parameters(core.listing)
    if route.public:
        operation["security"] = []
        operation["description"] = "Public: no API key needed."
    else:
        assert core.action is not None
        roles = [role.value for role in sorted(core.action.roles, key=lambda r: -r.rank)]
        operation["description"] = f"Requires the `{core.action.name}` permission (roles: {', '.join(roles)})."
        parameters.append({"$ref": "#/components/parameters/XOrganizationId"})
    if core.idempotent:
        parameters.append({"$ref": "#/components/parameters/IdempotencyKey"})
    if parameters:
        operation["parameters"] = parameters
    if core.body is not None:
        body = schemas.bulk(core.body) if core.batch is not None else schemas.ref(core.body, output=False)
        content: dict[str, Any] = {"schema": body}
        if core.example is not None:
            content["example"] = dict(core.example)
        operation["requestBody"] = {"required": not core.optional_body, "content": {"application/json": content}}
        upload = upload_field(core.body)
        if upload is not None and core.batch is None:
            operation["requestBody"]["content"][MULTIPART] = {"schema": _multipart(schemas, body, upload)}
    operation["responses"] = _responses(route, schemas)
    return operation


def _multipart(schemas: _Schemas, body: dict[str, Any], upload: str) -> dict[str, Any]:
    """The body as multipart/form-data (``resources.uploads``): the same fields as text parts and
    the file as the part named as the file field, in any order."""
    schema: dict[str, Any] = copy.deepcopy(schemas.components[body["$ref"].rsplit("/", 1)[1]])
    key = wire_name(upload)
    for name, field in schema["properties"].items():  # a form has no null: a part left out
        schema["properties"][name] = {k: v for k, v in field.items() if k != "nullable"}
    schema["properties"][key] = {"type": "string", "format": "binary"}
    schema["description"] = (
        f"The file as the `{key}` part (its filename is the default `fileName`, its Content-Type "
        "the declared type); the other fields as text parts, before or after it."
    )
    return schema


def _search_parameters(listing: Listing) -> list[dict[str, Any]]:
    """``q``, ``sort``, ``from`` and ``to`` of one list, as its ``Listing`` declares them (the
    sortable fields as an enum, the range's bounds in the ranged field's format)."""
    parameters: list[dict[str, Any]] = []
    if listing.searchable:
        fields = ", ".join(f"`{wire_name(name)}`" for name in listing.searchable)
        parameters.append(
            {
                "name": "q",
                "in": "query",
                "required": False,
                "description": f"Text search: records whose {fields} contains this text, ignoring case "
                "(a substring, so the start of a word matches too). Empty: no search.",
                "schema": {
                    "type": "string",
                    "maxLength": MAX_QUERY,
                    "pattern": "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f]*$",
                },
            }
        )
    sorts = [wire_name(name) for name in listing.sorts]
    default = "-createdAt" if listing.newest_first else "createdAt"
    parameters.append(
        {
            "name": "sort",
            "in": "query",
            "required": False,
            "description": f"Order by a field, ascending, or descending with `-` before it (default `{default}`). "
            "Records without a value come last either way; ties go by id in the same direction, so pages are "
            "stable. Text orders by code point. A cursor is good only for the sort it was issued with.",
            "schema": {"type": "string", "enum": [variant for name in sorts for variant in (name, "-" + name)]},
        }
    )
    if listing.ranged is not None:
        field = wire_name(listing.ranged)
        kind = "date" if listing.ranged_date else "date-time"
        parameters += [
            {
                "name": "from",
                "in": "query",
                "required": False,
                "description": f"Only records whose `{field}` is at or after this {kind} (inclusive).",
                "schema": {"type": "string", "format": kind},
            },
            {
                "name": "to",
                "in": "query",
                "required": False,
                "description": f"Only records whose `{field}` is before this {kind} (exclusive).",
                "schema": {"type": "string", "format": kind},
            },
        ]
    return parameters


def _statuses(route: Endpoint) -> list[int]:
    """The error statuses ``route`` can answer.

    Every route: 400 (an unknown or malformed query parameter) and 500. Authenticated routes: 401,
    403 and 429. Routes with path ids, and operations ``given`` another's effect (the logo an
    upload stored): 404. Writes: 409 (an Idempotency-Key reused, a unique value
    taken, a state that forbids the change). Routes with a body: 413. Bounded work: 503.
    """
    core = route.operation
    statuses = [400, 500] if route.public else [400, 401, 403, 429, 500]
    if route.path_params or core.given:
        statuses.append(404)
    if not route.public and (core.idempotent or core.body is not None or route.method not in _READS):
        statuses.append(409)
    if core.body is not None:
        statuses.append(413)
    if core.bounded:
        statuses.append(503)
    return sorted(statuses)


def _responses(route: Endpoint, schemas: _Schemas) -> dict[str, Any]:
    core = route.operation
    headers: dict[str, Any] = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    if not route.public:
        for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            headers[name] = {"$ref": f"#/components/headers/{name}"}
    if core.idempotent:
        headers["Idempotent-Replayed"] = {"$ref": "#/components/headers/Idempotent-Replayed"}
    content: dict[str, Any] | None
    if core.name == "openapi":
        content = {"application/json": {"schema": {"type": "object", "description": "An OpenAPI 3.0.3 document."}}}
    elif core.paged:
        content = {"application/json": {"schema": schemas.page(core.result)}}
    elif core.batch is not None:
        content = {"application/json": {"schema": schemas.batch(core.result)}}
    elif core.result is None:
        content = None
    elif core.result is Download:
        media_type = core.media_type or "application/octet-stream"
        if media_type.endswith(("/json", "+json")):  # a JSON file (an OSCAL document): an object
            content = {media_type: {"schema": {"type": "object", "description": "A JSON document, as a file"}}}
        else:
            content = {media_type: {"schema": {"type": "string", "format": "binary"}}}
        headers["Content-Disposition"] = {"schema": {"type": "string"}, "description": "attachment; filename=..."}
    elif route.accepted is not None:
        content = {"application/json": {"schema": schemas.ref(route.accepted, output=True)}}
        headers["Location"] = {"schema": {"type": "string"}, "description": "Where the work's status is read"}
    else:
        content = {"application/json": {"schema": schemas.ref(core.result, output=True)}}
    success: dict[str, Any] = {"description": route.summary, "headers": headers}
    if content is not None:
        success["content"] = content
    responses: dict[str, Any] = {str(route.status): success}
    if core.name == "health":
        responses["503"] = {"description": "The store is not healthy", "headers": headers, "content": content}
    for status in _statuses(route):
        responses[str(status)] = {"$ref": f"#/components/responses/{_ERRORS[status]}"}
    return responses


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        # An Upload is a file field's streamed form (multipart), never a JSON value
        kept = [arg for arg in typing.get_args(hint) if arg not in (type(None), Unset, Upload)]
        return kept[0] if len(kept) == 1 else typing.Union[tuple(kept)]  # noqa: UP007 (built at run time)
    return hint


def _constrained(schema: dict[str, Any], rules: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a field's type) with the keywords its converter enforces.

    The converter knows best: its keywords replace the type's (its ``items`` replace those walked
    from the model), and its ``nullable`` says whether null is taken (a clearable text field takes
    null and stores "", whatever its type says), so an enum lists null exactly then.
    """
    if not rules or "$ref" in schema or "allOf" in schema:
        return schema
    if "oneOf" in rules or "anyOf" in rules:  # the alternatives are the whole type (a name or a number)
        schema = {key: value for key, value in schema.items() if key not in ("type", "enum")}
    merged = {**schema, **copy.deepcopy(dict(rules))}
    if merged.get("nullable") and "enum" in merged and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    if not merged.get("nullable"):
        merged.pop("nullable", None)
        if "enum" in merged:
            merged["enum"] = [value for value in merged["enum"] if value is not None]
    return merged


class _Schemas:
    """Component schemas, each built on first reference.

    A component is named after its model (``Vendor``), a list envelope after the listed model
    (``VendorPage``), a batch and a bulk body likewise; two different things wanting one name (a
    model called ``NotebookPage`` beside the envelope of ``Notebook``s, or two areas' models of
    one class name) fail here rather than sharing a schema silently.
    """

    def __init__(self, event_types: list[str]) -> None:
        self.event_types = event_types
        """The event catalogue, sorted (see ``openapi_document``)."""
        self.components: dict[str, Any] = {
            "Error": _ERROR_SCHEMA,
            "PageMeta": _PAGE_META,
            "Health": _HEALTH,
        }
        self._owners: dict[str, Any] = {name: name for name in self.components}
        self.components["Organization"] = self._model(Organization, output=True)
        self._owners["Organization"] = Organization

    def _claim(self, name: str, owner: Any) -> None:
        """Reserve ``name`` for ``owner`` (what the schema describes)."""
        found = self._owners.setdefault(name, owner)
        if found != owner:
            raise RuntimeError(
                f"OpenAPI schema name {name!r} would describe both {_describe(found)} "
                f"and {_describe(owner)}: rename one of the models"
            )

    def ref(self, model: type, *, output: bool) -> dict[str, Any]:
        if model is dict:
            return {"$ref": _SCHEMAS + "Health"}
        if model is Organization:
            return {"$ref": _SCHEMAS + "Organization"}
        name = model.__name__
        self._claim(name, model)
        if name not in self.components:
            self.components[name] = {}  # reserves the name while nested models are walked
            self.components[name] = self._model(model, output)
        return {"$ref": _SCHEMAS + name}

    def page(self, model: type) -> dict[str, Any]:
        name = model.__name__ + "Page"
        self._claim(name, ("list", model))
        self.components[name] = {
            "type": "object",
            "required": ["data", "count", "meta", "authType"],
            "properties": {
                "data": {"type": "array", "items": self.ref(model, output=True)},
                "count": {"type": "integer", "description": "Total number of matching records"},
                "meta": {"$ref": _SCHEMAS + "PageMeta"},
                "authType": {"type": "string", "enum": ["api-key", "session"]},
                "authenticatedUser": {
                    "type": "object",
                    "description": "Only for session authentication",
                    "properties": {"id": {"type": "string"}, "email": {"type": "string"}},
                },
            },
        }
        return {"$ref": _SCHEMAS + name}

    def batch(self, model: type) -> dict[str, Any]:
        name = model.__name__ + "Batch"
        self._claim(name, ("batch", model))
        self.components[name] = {
            "type": "object",
            "required": ["data", "count"],
            "properties": {
                "data": {"type": "array", "items": self.ref(model, output=True)},
                "count": {"type": "integer"},
            },
        }
        return {"$ref": _SCHEMAS + name}

    def bulk(self, model: type) -> dict[str, Any]:
        name = "Bulk" + model.__name__
        self._claim(name, ("bulk", model))
        self.components[name] = {
            "type": "object",
            "required": ["members"],
            "additionalProperties": False,
            "description": "All or nothing: any invalid entry rejects the batch and the error lists each one.",
            "properties": {
                "members": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_BULK,
                    "items": self.ref(model, output=False),
                },
            },
        }
        return {"$ref": _SCHEMAS + name}

    def field(self, hint: Any, field: attrs.Attribute[Any], *, output: bool) -> dict[str, Any]:
        """The schema of a model's field: its type and, on the way in, what its converter enforces.

        A converter checking a list of objects with a model of its own registers that model as
        its ``items`` (``{"items": _SubProcessorInput}``): the entries are documented from that
        model's converters, not from the stored model's plain types.
        """
        schema = self.of(hint, output=output)
        if output or field.converter is None:
            return schema
        rules = schema_of(field.converter)
        items = rules.get("items")
        if isinstance(items, type) and attrs.has(items):
            rules["items"] = self._model(items, output=False)
        elif isinstance(items, dict) and items.get(_EVENT_CATALOGUE):
            rules["items"] = {"type": "string", "enum": [ALL_EVENTS, *self.event_types]}
        return _constrained(schema, rules)

    def of(self, hint: Any, *, output: bool = True) -> dict[str, Any]:
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            args = [arg for arg in typing.get_args(hint) if arg is not Unset]
            nullable = type(None) in args
            schema = self.of(_without_none(hint), output=output)
            if not nullable:
                return schema
            if "$ref" in schema:
                return {"allOf": [schema], "nullable": True}
            if "enum" in schema:  # OpenAPI 3.0.3: a nullable enum lists null among its values
                schema["enum"] = [*schema["enum"], None]
            return {**schema, "nullable": True}
        if origin in (tuple, list):
            return {"type": "array", "items": self.of(typing.get_args(hint)[0], output=output)}
        if origin in (dict, Mapping) or hint is dict:
            return {"type": "object", "additionalProperties": True}
        if attrs.has(hint):
            return self.ref(hint, output=output)
        if inspect.isclass(hint) and issubclass(hint, enum.Enum):
            return {"type": "string", "enum": [member.value for member in hint]}
        if hint is bool:
            return {"type": "boolean"}
        if hint is int:
            return {"type": "integer"}
        if hint is float:
            return {"type": "number"}
        if hint is str:
            return {"type": "string"}
        if hint is dt.datetime:
            return {"type": "string", "format": "date-time"}
        if hint is dt.date:
            return {"type": "string", "format": "date"}
        return {}

    def _inlined(self, model: type, view: WireView, hints: dict[str, Any], output: bool) -> dict[str, Any]:
        """A model showing one field's model in place (an issued key or webhook secret beside
        the record it belongs to): that model's schema, plus the other fields, documented by
        their ``description`` metadata."""
        (inner,) = view.inline
        properties = {}
        for f in attrs.fields(model):
            if f.name == inner or f.name in view.omit:
                continue
            schema = self.field(hints[f.name], f, output=output)
            if "description" in f.metadata:
                schema["description"] = f.metadata["description"]
            properties[view.rename.get(f.name, wire_name(f.name))] = schema
        return {
            "allOf": [
                self.ref(hints[inner], output=True),
                {"type": "object", "required": list(properties), "properties": properties},
            ]
        }

    def _model(self, model: type, output: bool) -> dict[str, Any]:
        hints = typing.get_type_hints(model)
        view: WireView = getattr(model, "WIRE_VIEW", WireView())
        fields = [f for f in attrs.fields(model) if f.name not in view.omit]
        if view.inline:
            return self._inlined(model, view, hints, output)
        properties = {wire_name(f.name): self.field(hints[f.name], f, output=output) for f in fields}
        required = [wire_name(f.name) for f in fields if output or f.default is attrs.NOTHING]
        if model is ApiKey:
            properties["status"] = {"type": "string", "enum": ["active", "revoked", "expired"]}
            required.append("status")
        if model is Organization:  # the effective limits, whatever plan they come from
            properties["rateLimit"] = _RATE_LIMIT
            required.append("rateLimit")
        schema: dict[str, Any] = {"type": "object"}
        if model.__doc__ and not model.__doc__.startswith(model.__name__ + "("):
            schema["description"] = inspect.cleandoc(model.__doc__)
        if required:
            schema["required"] = required
        schema["properties"] = properties
        if not output:
            schema["additionalProperties"] = False
        return schema


def _describe(owner: Any) -> str:
    if isinstance(owner, tuple):
        kind, model = owner
        return f"the {kind} of {model.__module__}.{model.__qualname__}"
    if isinstance(owner, type):
        return f"the model {owner.__module__}.{owner.__qualname__}"
    return f"the built-in schema {owner}"


def _error_response(name: str, status: int) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    if status in (429, 503):
        headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
    if status == 429:
        for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            headers[header] = {"$ref": f"#/components/headers/{header}"}
    code = code_for_status(status)
    return {
        "description": f"{name} (error.code {code}): {_WHEN[status]}",
        "headers": headers,
        "content": {"application/json": {"schema": {"$ref": _SCHEMAS + "Error"}}},
    }


_ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "requestId"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {
                    "type": "string",
                    "description": "validation_error, unauthorized, forbidden, not_found, method_not_allowed, "
                    "conflict, rate_limited or internal_error (a body over the size limit is a validation_error "
                    "answered with 413)",
                },
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "additionalProperties": True,
                    "description": "Context such as field, value and reason; an echoed value is cut to a "
                    "bounded size and `truncated: true` says so. A refused request body lists everything "
                    "wrong with it at once in `errors` (each field with its value and reason; field, value "
                    "and reason at the top repeat the first); a refused bulk body lists each bad entry's "
                    "index there too",
                    "properties": {
                        "field": {"type": "string", "nullable": True},
                        "reason": {"type": "string"},
                        "errors": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "additionalProperties": True,
                                "properties": {
                                    "field": {"type": "string", "nullable": True},
                                    "reason": {"type": "string"},
                                    "index": {"type": "integer"},
                                },
                            },
                        },
                    },
                },
            },
        },
        "requestId": {"type": "string"},
    },
}
_PAGE_META = {
    "type": "object",
    "required": ["total", "page", "perPage", "totalPages"],
    "properties": {
        "total": {"type": "integer"},
        "page": {"type": "integer"},
        "perPage": {"type": "integer"},
        "totalPages": {"type": "integer", "description": "At least 1; page through until page equals totalPages"},
        "cursor": {
            "type": "string",
            "nullable": True,
            "description": "Only on a cursor walk (the request had `cursor`): the cursor this page started "
            "after (null on the first page)",
        },
        "nextCursor": {
            "type": "string",
            "nullable": True,
            "description": "Only on a cursor walk: pass it as `cursor` for the next page; null when "
            "there is none (a walk may end with an empty page)",
        },
    },
}
_HEALTH = {
    "type": "object",
    "description": "Anyone gets status, version and timestamp; uptimeSeconds and store only come with a valid X-API-Key.",
    "required": ["status", "version", "timestamp"],
    "properties": {
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "version": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
        "uptimeSeconds": {"type": "number", "description": "Only for an authenticated caller"},
        "store": {
            "type": "object",
            "additionalProperties": True,
            "description": "The store's own report; only for an authenticated caller",
        },
    },
}
_RATE_LIMIT = {
    "type": "object",
    "description": "Per API key: a bucket of `burst` requests refilled at `requestsPerMinute`",
    "required": ["requestsPerMinute", "burst"],
    "properties": {"requestsPerMinute": {"type": "integer"}, "burst": {"type": "integer"}},
}
_EXCLUSIVE = {
    "page": "The page number, from 1. Cannot be combined with `cursor` (a cursor walk numbers its own "
    "pages): both in one request is a 400 (validation_error on page).",
}
"""Descriptions of the list parameters that exclude one another, a rule across parameters that a
JSON Schema of one parameter cannot state: said in words, so a client generator's user reads it."""
_EVENT_CATALOGUE = "x-event-catalogue"
_PARAMETERS = {
    "XOrganizationId": {
        "name": "X-Organization-Id",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "Optional for API keys (the key names its organization); another organization's id is 403.",
    },
    "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]([ -~]*[!-~])?$"},
        "description": "1 to 255 printable characters. Repeat within 24 hours with the same body: the original "
        "result, nothing created twice. The same key with a different body: 409. Only the operations that "
        "list this header take it: sent to any other, it is a 400 (validation_error on Idempotency-Key).",
    },
    **{
        name: {
            "name": name,
            "in": "query",
            "required": False,
            **(
                {"description": _EXCLUSIVE.get(name) or schema["description"]}
                if "description" in schema or name in _EXCLUSIVE
                else {}
            ),
            "schema": {key: value for key, value in schema.items() if key != "description"},
        }
        for name, schema in page_schemas().items()
    },
}
_HEADERS = {
    "X-Request-Id": {"description": "Identifier of this request, for logs", "schema": {"type": "string"}},
    "X-RateLimit-Limit": {"description": "Requests the key's bucket holds", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "Requests left in the bucket", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Epoch seconds when the bucket is full again", "schema": {"type": "integer"}},
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}},
    "Idempotent-Replayed": {
        "description": "`true` when this answer is the stored result of an earlier request with the same "
        "Idempotency-Key (nothing was done again); absent otherwise",
        "schema": {"type": "string", "enum": ["true"]},
    },
}


def main() -> None:
    sys.stdout.write(json.dumps(openapi_document(), indent=2) + "\n")


if __name__ == "__main__":
    main()
