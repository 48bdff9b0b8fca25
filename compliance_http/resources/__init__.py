"""Falcon resources: one generic resource serves every core operation; health and the OpenAPI
document are the only hand-written ones.

An ``OperationResource`` holds the endpoints of one path and a responder per method (``HEAD``
answers wherever ``GET`` does). Each responder stays thin: check the operation's permission
(before reading the query or the body, so a role without it gets 403 and learns nothing of the
route's parameters or the body's rules), check the query's parameter names, parse the path ids,
the list query and the body with ``wire``, call the one service method as ``req.context.actor``,
and render the result by its kind: a page, a batch, a model, nothing (204), a file (streamed,
with Content-Disposition) or accepted work (202 with a Location).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import falcon
import orjson

from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.idempotency import IdempotencyKey
from compliance_core.kernel.permissions import authorize
from compliance_core.kernel.registry import Accepted, Download

from ..errors import PayloadTooLarge
from ..routes import Endpoint
from ..wire import JSON, Wire
from .uploads import is_multipart, multipart_body

__all__ = ["MAX_BODY_BYTES", "json_body", "send", "OperationResource"]

MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body, in bytes: room for a full bulk-create of 1000 people with long
fields. A bigger one is refused with 413 (code ``validation_error``, details ``{"field": "body",
"reason": "must be at most 8388608 bytes"}``) before any of it is read when Content-Length
announces it, and after reading at most one byte more when it does not (a chunked body).
``compliance serve`` sets waitress's own limit just above this one (``server.MAX_REQUEST_BODY``),
so this check answers first and waitress refuses anything beyond without buffering it, in the
same shape."""
BODY_LIMIT_REASON = f"must be at most {MAX_BODY_BYTES} bytes"

Responder = Callable[..., None]


def json_body(req: falcon.Request, wire: Wire) -> Any:
    """The parsed JSON body of a POST, PUT or PATCH (Content-Type must be application/json). An
    empty body, with or without a Content-Type, is taken as ``{}``: a transition whose body is
    optional (an approval's comment) is called with none, and an operation that needs fields
    names each one missing."""
    if not req.content_length:
        return {}
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != JSON:
        raise ValidationError.field("Content-Type", req.content_type, "must be application/json")
    declared = req.content_length
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _too_large(declared)
    raw = req.bounded_stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise _too_large(declared)
    return wire.loads(raw)


def refuse_idempotency_key(req: falcon.Request) -> None:
    """Refuse an Idempotency-Key sent to an operation that does not keep one: ignoring it would
    let a client believe a retry is safe when it would run the operation again."""
    key = req.get_header("Idempotency-Key")
    if key is not None:
        raise ValidationError.field(
            "Idempotency-Key",
            key[:_ECHO_BYTES],
            "is not taken by this operation (only the creating POSTs that document the header keep "
            "one); send the request without it",
        )


def refuse_body(req: falcon.Request) -> None:
    """Refuse a non-empty body sent to an operation that takes none: a client that sent one
    meant something by it, and silently dropping it would hide the mistake. An empty body is
    fine, with or without a Content-Type (as for ``json_body``, a request without Content-Length
    has no body here: the WSGI server gives one to every body it passes on), and so is an empty
    JSON object ``{}``, which clients that always send a body send to a transition."""
    declared = req.content_length
    if not declared:
        return
    sample = req.bounded_stream.read(min(declared, _ECHO_BYTES))
    if req.method not in ("GET", "HEAD") and declared <= _ECHO_BYTES and _is_empty_object(sample):
        return
    raise ValidationError.field(
        "body",
        sample[:_ECHO_BYTES].decode("utf-8", "replace"),
        "this operation takes no request body; send none",
    )


_ECHO_BYTES = 200
"""Most characters of a refused header or body echoed in the error's details."""


def _is_empty_object(raw: bytes) -> bool:
    try:
        return bool(orjson.loads(raw) == {})
    except orjson.JSONDecodeError:
        return False


def _too_large(declared: int | None) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"body: {BODY_LIMIT_REASON}", {"field": "body", "value": declared, "reason": BODY_LIMIT_REASON}
    )


def send(req: falcon.Request, resp: falcon.Response, data: bytes, status: int | None = None) -> None:
    resp.status = status or req.context.endpoint.status
    resp.content_type = JSON
    resp.data = data


class OperationResource:
    """The responders of one path, each calling its endpoint's operation on ``services``.

    :param endpoints: the endpoints of this path (one per method)
    :param services: the platform's services by area name
    :param wire: the app's encoder and decoder
    :param locate: the path of an operation's endpoint for given ids (Location of a 202)
    """

    def __init__(
        self,
        endpoints: Iterable[Endpoint],
        services: Mapping[str, Any],
        wire: Wire,
        locate: Callable[[str, tuple[str, ...]], str],
    ) -> None:
        self._wire = wire
        self._locate = locate
        for endpoint in endpoints:
            responder = self._responder(endpoint, services[endpoint.operation.area])
            setattr(self, f"on_{endpoint.method.lower()}", responder)
            if endpoint.method == "GET":
                self.on_head = responder

    def _responder(self, endpoint: Endpoint, service: Any) -> Responder:
        operation = endpoint.operation
        method = operation.method
        wire = self._wire
        action = operation.action
        ids = operation.ids
        if action is None:
            raise RuntimeError(f"{operation.name}: public operations need a resource of their own")

        query_parameters = endpoint.query_parameters

        def respond(req: falcon.Request, resp: falcon.Response, **params: str) -> None:
            actor = req.context.actor
            authorize(actor, action)
            wire.check_query(req.params, query_parameters)
            arguments: dict[str, Any] = {name: params[name] for name in ids}
            if operation.paged:
                # check_query has refused repeated parameters: every value is one string
                filters, page = wire.list_query(
                    cast("Mapping[str, str]", req.params), operation.filters, operation.listing
                )
                if operation.filters is not None:
                    arguments["filters"] = filters
                arguments["page"] = page
            elif operation.filters is not None:  # a report over a list's records: its filters, no page
                arguments["filters"], search = wire.list_query(
                    cast("Mapping[str, str]", req.params), operation.filters, operation.listing
                )
                if operation.listing is not None:  # an export: the list's search, sort and range too
                    arguments["search"] = search
            if not operation.idempotent:
                refuse_idempotency_key(req)
            if operation.body is None:
                refuse_body(req)
            else:
                # A body with a file field may come as multipart/form-data, the file streamed
                body = (
                    multipart_body(req, operation.body) if is_multipart(req, operation.body) else json_body(req, wire)
                )
                if operation.batch is not None:
                    arguments["members"] = wire.members(body, operation.body, operation.batch)
                else:
                    arguments[operation.body_argument or "data"] = wire.command(body, operation.body)
            key = None
            if operation.idempotent:
                sent = req.get_header("Idempotency-Key")
                key = None if sent is None else IdempotencyKey(sent)
                arguments["idempotency_key"] = key
            result = getattr(service, method)(actor, **arguments)
            self._render(endpoint, req, resp, result)
            if key is not None and key.replayed:
                resp.set_header("Idempotent-Replayed", "true")

        respond.__name__ = f"on_{endpoint.method.lower()}"
        return respond

    def _render(self, endpoint: Endpoint, req: falcon.Request, resp: falcon.Response, result: Any) -> None:
        operation = endpoint.operation
        wire = self._wire
        if operation.paged:
            send(req, resp, wire.page(result, req.context.actor))
        elif operation.batch is not None:
            send(req, resp, wire.batch(result))
        elif operation.result is None:
            resp.status = endpoint.status
        elif isinstance(result, Download):
            resp.status = endpoint.status
            resp.content_type = result.media_type
            if result.inline:
                resp.viewable_as = result.filename
            else:
                resp.downloadable_as = result.filename
            if req.method == "HEAD":
                # Headers only, as GET sends them (no Content-Length: the size is not known
                # before the file is produced); the content is never produced.
                close = getattr(result.chunks, "close", None)
                if close is not None:
                    close()
                resp.stream = iter(())
            else:  # sent chunk by chunk; the WSGI server closes the iterator when done
                resp.stream = iter(result.chunks)
        elif isinstance(result, Accepted):
            resp.location = self._locate(result.status, result.location_ids)
            send(req, resp, wire.dumps(result.job))
        else:
            send(req, resp, wire.dumps(result))
