"""Falcon resources, one module per area.

Each resource is built once in ``create_app`` around the service it calls and stays thin: parse
with ``wire``, call one service method as ``req.context.actor``, render with ``wire``. The
status of a success comes from the route table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from compliance_core.errors import ValidationError

from ..wire import JSON, Wire

__all__ = ["MAX_BODY_BYTES", "json_body", "send", "idempotency_key", "Collection", "Item", "Read", "Transition"]

MAX_BODY_BYTES = 8 * 1024 * 1024
"""Room for a full bulk-create of 1000 people with long fields; anything bigger is refused."""


def json_body(req: falcon.Request, wire: Wire) -> Any:
    """The parsed JSON body of a POST or PATCH (Content-Type must be application/json)."""
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != JSON:
        raise ValidationError.field("Content-Type", req.content_type, "must be application/json")
    raw = req.bounded_stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise ValidationError.field("body", req.content_length, f"must be at most {MAX_BODY_BYTES} bytes")
    return wire.loads(raw)


def idempotency_key(req: falcon.Request) -> str | None:
    return req.get_header("Idempotency-Key")


def send(req: falcon.Request, resp: falcon.Response, data: bytes, status: int | None = None) -> None:
    resp.status = status or req.context.route.status
    resp.content_type = JSON
    resp.data = data


class Collection:
    """``GET`` lists with ``filters`` (None: the list takes only a page) and ``POST`` creates from
    ``new``, for any area whose service has ``list`` and ``create``."""

    def __init__(self, service: Any, wire: Wire, new: type, filters: type | None = None) -> None:
        self._service = service
        self._wire = wire
        self._new = new
        self._filters = filters

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters, page = self._wire.list_query(req.params, self._filters)
        arguments = (page,) if self._filters is None else (filters, page)
        send(req, resp, self._wire.page(self._service.list(req.context.actor, *arguments), req.context.actor))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = self._wire.command(json_body(req, self._wire), self._new)
        created = self._service.create(req.context.actor, data, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.dumps(created))


class Read:
    """``GET`` of one thing: ``call(actor, **path parameters)``."""

    def __init__(self, call: Callable[..., Any], wire: Wire) -> None:
        self._call = call
        self._wire = wire

    def on_get(self, req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        send(req, resp, self._wire.dumps(self._call(req.context.actor, **params)))


class Item(Read):
    """``GET`` one record with the service's ``get`` and ``PATCH`` it with ``update``."""

    def __init__(self, service: Any, wire: Wire, patch: type) -> None:
        super().__init__(service.get, wire)
        self._update = service.update
        self._patch = patch

    def on_patch(self, req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        patch = self._wire.command(json_body(req, self._wire), self._patch)
        send(req, resp, self._wire.dumps(self._update(req.context.actor, patch=patch, **params)))


class Transition:
    """``POST .../{id}/<verb>``: a state change, ``call(actor, **path parameters)``."""

    def __init__(self, call: Callable[..., Any], wire: Wire) -> None:
        self._call = call
        self._wire = wire

    def on_post(self, req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        send(req, resp, self._wire.dumps(self._call(req.context.actor, **params)))
