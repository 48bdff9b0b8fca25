"""Schemathesis hooks for ``test_fuzz.py``, loaded by the ``st`` process it starts
(``SCHEMATHESIS_HOOKS=fuzz_hooks``). Both hooks are driven by the declared operations, never by an
operation's name.

``before_call`` keeps the fuzzer's own key alive. The fuzzer learns every key id from
``GET /v1/api-keys`` (Schemathesis reuses values it has seen in responses) and could send a write
to the key it authenticates with; the last-owner-key rule (409) does not protect it, because the
fuzzer also creates Owner keys, after which its own is no longer the last. So a write (any method
but GET and HEAD) whose path ids include that key's id is sent to an id that never existed
instead (a 404): the key in use is never revoked, whatever else the fuzzer does with keys.

``filter_failure`` keeps Schemathesis' positive-data check honest about what a schema can say.
A request the document allows may still be refused with a 400 by a rule that relates it to
something a JSON Schema cannot see: another field (``nextReviewDue`` before ``lastReviewedAt``),
another record (an ``assigneeId`` naming no person) or the clock (an ``expiresAt`` in the past).
Every rule about one value lives in core's field converters, which the document is generated
from; rules across fields, records and time live in the services, after the command model is
built. So such a refusal is dropped only when the very converters the server runs accept the
whole request in this process (body through ``Wire``, query through ``Wire.list_query``) and the
400 names a body field or a list's filter: the server then refused it by a rule beyond the schema. A refusal the
converters agree with means the document allowed what the converters forbid, and stays a
failure.

A 503 of an operation declared ``bounded`` (its renderer busy, which the document states) is
dropped too, as ``busy``.

Each redirected write and each dropped refusal is appended to ``$FUZZ_LOG`` (one JSON object a
line) for the test to report.
"""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

import attrs
import orjson
import schemathesis
from schemathesis.core import NOT_SET
from schemathesis.core.failures import ServerError
from schemathesis.openapi.checks import RejectedPositiveData

from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.rendering import wire_name
from compliance_http.routes import Endpoint, default_endpoints
from compliance_http.wire import Wire, decode_cursor

_KEY_ID = os.environ.get("FUZZ_KEY_ID", "")
_NEVER = "key_0never0existed"
_LOG = os.environ.get("FUZZ_LOG", "")
_WIRE = Wire()


def _log(kind: str, case: Any, **fields: Any) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as log:
            record = {"kind": kind, "operation": f"{case.method.upper()} {case.path}", **fields}
            log.write(json.dumps(record, default=str) + "\n")


def _documented(path: str) -> str:
    return re.sub(r"{(\w+)}", lambda m: "{" + re.sub(r"_(\w)", lambda c: c[1].upper(), m[1]) + "}", path)


_ENDPOINTS: dict[tuple[str, str], Endpoint] = {}
for _endpoint in default_endpoints():
    for _path in _endpoint.paths:
        _ENDPOINTS[_endpoint.method, _documented(_path)] = _endpoint
        if _endpoint.method == "GET":
            _ENDPOINTS["HEAD", _documented(_path)] = _endpoint


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if case.method.upper() in ("GET", "HEAD") or not case.path_parameters or not _KEY_ID:
        return
    if _KEY_ID in case.path_parameters.values():
        case.path_parameters = {
            name: (_NEVER if value == _KEY_ID else value) for name, value in case.path_parameters.items()
        }
        _log("redirected", case)


def _converters_accept(endpoint: Endpoint, case: Any) -> bool:
    """Whether core's converters, run here as the server runs them, accept the whole request."""
    operation = endpoint.operation
    try:
        if operation.paged:
            query = {name: _query_text(value) for name, value in (case.query or {}).items()}
            _WIRE.check_query(query, endpoint.query_parameters)
            _WIRE.list_query(query, operation.filters)
        if operation.body is not None:
            if case.body is NOT_SET and operation.optional_body:
                body = {}  # the server takes no body as {} where every field has a default
            else:
                sent = None if case.body is NOT_SET else case.body
                if isinstance(sent, dict):  # a multipart file part: its JSON form is base64 text
                    sent = {key: _file_as_text(value) for key, value in sent.items()}
                body = _WIRE.loads(orjson.dumps(sent))
            if operation.batch is not None:
                for entry in _WIRE.members(body, operation.body, operation.batch):
                    if not isinstance(entry, dict):
                        return False
                    operation.body(**entry)
            else:
                _WIRE.command(body, operation.body)
    except (ValidationError, TypeError):
        return False
    return True


def _file_as_text(value: Any) -> Any:
    """A file part's bytes (``bytes``, or Schemathesis' ``Binary``, an empty ``str`` holding them
    in ``data``) as the base64 text a JSON body carries; any other value as it is."""
    data = value if isinstance(value, bytes) else getattr(value, "data", None)
    return base64.b64encode(data).decode() if isinstance(data, bytes) else value


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _body_fields(endpoint: Endpoint) -> set[str]:
    body = endpoint.operation.body
    if body is None:
        return set()
    if endpoint.operation.batch is not None:
        return {"members"}
    return {wire_name(field.name) for field in attrs.fields(body)}


def _filter_fields(endpoint: Endpoint) -> set[str]:
    """A list's filters by their query names (``entityType``): a rule relating one to records
    (a kind of record that takes comments) is as far beyond the schema as a body field's."""
    filters = endpoint.operation.filters
    if filters is None:
        return set()
    return {wire_name(field.name) for field in attrs.fields(filters)}


def _issued(cursor: str) -> bool:
    """Whether the service would take ``cursor`` (empty: a walk's start)."""
    try:
        if cursor:
            decode_cursor(cursor)
    except ValidationError:
        return False
    return True


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """False drops the failure (see the module's docstring); everything else is kept."""
    endpoint = _ENDPOINTS.get((case.method.upper(), case.path))
    if endpoint is None:
        return True
    if isinstance(failure, ServerError) and response.status_code == 503 and endpoint.operation.bounded:
        # Documented: bounded work (a PDF) answers 503 with Retry-After while the renderer is
        # busy, here with the render of a request the fuzzer gave up on after its timeout.
        _log("busy", case)
        return False
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return True
    query = case.query if isinstance(case.query, dict) else {}
    try:
        details = response.json()["error"]["details"]
    except (ValueError, KeyError, TypeError):
        details = None  # a HEAD answer has no body to read
    if "cursor" in query and "page" in query:
        # ``page`` and ``cursor`` exclude each other: a rule across parameters.
        _log("dropped", case, details={"field": "page", "reason": "cannot be combined with cursor"})
        return False
    if "cursor" in query and (not _issued(str(query["cursor"])) or details is None or details.get("field") == "cursor"):
        # A cursor is opaque and names a row of the list as served (as an id names a record):
        # only one the service issued for this list is valid, which no schema can state.
        _log("dropped", case, details={"field": "cursor", "reason": "only a cursor the service issued for this list"})
        return False
    if details is None:
        return True
    field = str(details.get("field", "")).split("[", 1)[0].split(".", 1)[0]
    if field not in _body_fields(endpoint) | _filter_fields(endpoint) or not _converters_accept(endpoint, case):
        return True
    _log("dropped", case, details=details, body=case.body)
    return False
