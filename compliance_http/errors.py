"""Every failure becomes the spec's error body, with the spec's status.

Core's errors carry a stable ``code``; Falcon's own errors (no route, wrong method) and
unexpected exceptions are answered in the same shape, so a client parses one format only.
"""

from __future__ import annotations

import http
import logging
import secrets
from collections.abc import Mapping
from typing import Any

import falcon

from compliance_core.kernel.errors import ComplianceError, RateLimited, ServiceUnavailable, TooLarge

from .wire import JSON, Wire

__all__ = [
    "MAX_ECHOED_PATH",
    "STATUS_BY_CODE",
    "PayloadTooLarge",
    "code_for_status",
    "install",
    "new_request_id",
    "request_id",
]

log = logging.getLogger("compliance_http")

MAX_ECHOED_PATH = 200
"""Longest request path echoed in the message and details of a 404 or 405 (cut beyond)."""

STATUS_BY_CODE: dict[str, int] = {
    "validation_error": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "rate_limited": 429,
    "internal_error": 500,
}
_CODE_BY_STATUS = {status: code for code, status in STATUS_BY_CODE.items()}


class PayloadTooLarge(TooLarge):
    """A request body over the documented limit: the spec's ``validation_error``, answered with
    HTTP's own status for it, 413 (a client reads the code; a proxy or a log reads the status)."""


def new_request_id() -> str:
    """A request id for a request the middleware has not seen (an error answered below the app,
    or a failure before the id was given); the middleware's own ids come faster, in bulk."""
    return f"req_{secrets.randbits(96):024x}"


def request_id(req: falcon.Request) -> str:
    """The request's id, given here if nothing gave it one yet (a middleware failed first)."""
    found = getattr(req.context, "request_id", None)
    if found is None:
        found = req.context.request_id = new_request_id()
    return found


def code_for_status(status: int) -> str:
    """The spec's code for an HTTP status that has no core error behind it: its own where the spec
    names one, ``internal_error`` for 5xx, and ``validation_error`` for the other client errors
    (the request itself is wrong: its size, its headers, its syntax)."""
    return _CODE_BY_STATUS.get(status) or ("internal_error" if status >= 500 else "validation_error")


def _clip(text: str, limit: int = MAX_ECHOED_PATH) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def install(app: falcon.App[Any, Any], wire: Wire) -> None:
    """Register the handlers; Falcon picks the most specific one for each exception."""

    def send(
        req: falcon.Request, resp: falcon.Response, status: int, code: str, message: str, details: Mapping[str, Any]
    ) -> None:
        resp.status = status
        resp.content_type = JSON
        resp.data = wire.error(code, message, details, request_id(req))

    def compliance_error(
        req: falcon.Request, resp: falcon.Response, error: ComplianceError, params: dict[str, Any]
    ) -> None:
        if isinstance(error, (RateLimited, ServiceUnavailable)):
            resp.set_header("Retry-After", str(error.retry_after))
        status = getattr(error, "status", None) or STATUS_BY_CODE.get(error.code, 500)
        if isinstance(error, TooLarge):
            status = 413  # core's size limits (a body, an uploaded file): HTTP's own status for them
        if isinstance(error, ServiceUnavailable):
            status = 503  # the spec's internal_error, with HTTP's status for "busy, come back later"
        send(req, resp, status, error.code, error.message, error.details)

    def falcon_error(
        req: falcon.Request, resp: falcon.Response, error: falcon.HTTPError, params: dict[str, Any]
    ) -> None:
        status = error.status_code
        code = _CODE_BY_STATUS.get(status) or ("internal_error" if status >= 500 else _slug(status))
        details: dict[str, Any] = {}
        path = _clip(req.path)
        if isinstance(error, falcon.HTTPRouteNotFound):
            message = f"no resource at {path}"
            details = {"path": path}
        elif isinstance(error, falcon.HTTPMethodNotAllowed):
            allowed = dict(error.headers or {}).get("Allow", "")
            message = f"{req.method} is not allowed on {path}"
            details = {"method": req.method, "allowed": [m.strip() for m in allowed.split(",") if m.strip()]}
        else:
            message = error.description or error.title or http.HTTPStatus(status).phrase
        if error.headers:
            resp.set_headers(error.headers)
        send(req, resp, status, code, message, details)

    def unexpected(req: falcon.Request, resp: falcon.Response, error: Exception, params: dict[str, Any]) -> None:
        # whether a responder or a middleware raised it (Falcon hands both to the error handlers)
        log.error(
            "unhandled error in %s %s (requestId=%s)", req.method, _clip(req.path), request_id(req), exc_info=error
        )
        send(
            req,
            resp,
            500,
            "internal_error",
            "internal server error; retrying with the same Idempotency-Key is safe",
            {},
        )

    app.add_error_handler(Exception, unexpected)
    app.add_error_handler(falcon.HTTPError, falcon_error)
    app.add_error_handler(ComplianceError, compliance_error)


def _slug(status: int) -> str:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        return "error"
    return phrase.lower().replace(" ", "_").replace("-", "_")
