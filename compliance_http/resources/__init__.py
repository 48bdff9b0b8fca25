"""Falcon resources, one module per area.

Each resource is built once in ``create_app`` around the service it calls and stays thin: parse
with ``wire``, call one service method as ``req.context.actor``, render with ``wire``. The
status of a success comes from the route table.
"""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.errors import ValidationError

from ..wire import JSON, Wire

__all__ = ["MAX_BODY_BYTES", "json_body", "send", "idempotency_key"]

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
