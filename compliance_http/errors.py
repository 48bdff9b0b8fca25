"""Every failure becomes the spec's error body, with the spec's status.

Core's errors carry a stable ``code``; Falcon's own errors (no route, wrong method) and
unexpected exceptions are answered in the same shape, so a client parses one format only.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Mapping
from typing import Any

import falcon

from compliance_core.kernel.errors import ComplianceError, RateLimited

from .wire import JSON, Wire

__all__ = ["STATUS_BY_CODE", "install", "request_id"]

log = logging.getLogger("compliance_http")

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


def request_id(req: falcon.Request) -> str:
    return getattr(req.context, "request_id", "")


def install(app: falcon.App, wire: Wire) -> None:
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
        if isinstance(error, RateLimited):
            resp.set_header("Retry-After", str(error.retry_after))
        send(req, resp, STATUS_BY_CODE.get(error.code, 500), error.code, error.message, error.details)

    def falcon_error(
        req: falcon.Request, resp: falcon.Response, error: falcon.HTTPError, params: dict[str, Any]
    ) -> None:
        status = error.status_code
        code = _CODE_BY_STATUS.get(status) or ("internal_error" if status >= 500 else _slug(status))
        details: dict[str, Any] = {}
        if isinstance(error, falcon.HTTPRouteNotFound):
            message = f"no resource at {req.path}"
            details = {"path": req.path}
        elif isinstance(error, falcon.HTTPMethodNotAllowed):
            allowed = dict(error.headers or {}).get("Allow", "")
            message = f"{req.method} is not allowed on {req.path}"
            details = {"method": req.method, "allowed": [m.strip() for m in allowed.split(",") if m.strip()]}
        else:
            message = error.description or error.title or http.HTTPStatus(status).phrase
        if error.headers:
            resp.set_headers(error.headers)
        send(req, resp, status, code, message, details)

    def unexpected(req: falcon.Request, resp: falcon.Response, error: Exception, params: dict[str, Any]) -> None:
        log.error("unhandled error in %s %s (requestId=%s)", req.method, req.path, request_id(req), exc_info=error)
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
