"""Cross-origin access for the browser apps an operator names (``compliance serve --cors-origin``).

Only the listed origins get ``Access-Control-Allow-Origin``; any other origin gets no CORS header
at all, so its browser keeps the response from its script. A preflight (OPTIONS with
Access-Control-Request-Method) is answered from the route's own OPTIONS responder: the methods it
serves, the request headers asked for, cached for a day. Falcon's ``CORSMiddleware`` does the
work; this adds what a shared cache needs (``Vary: Origin``, as the answer depends on it) and the
headers a script must be allowed to read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import falcon
import falcon.asgi

from compliance_core import ValidationError

__all__ = ["EXPOSED_HEADERS", "Cors", "cors_origins"]

EXPOSED_HEADERS = (
    "X-Request-Id",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
    "Location",
    "Content-Disposition",
    "Idempotent-Replayed",
)
"""Response headers a cross-origin script may read (beyond the CORS-safelisted ones)."""

_ORIGIN = re.compile(r"https?://[^/?#@\s]+")


class Cors(falcon.CORSMiddleware[falcon.asgi.Request, falcon.asgi.Response]):
    """Falcon's CORS policy for ``origins``, plus ``Vary: Origin`` and the exposed headers."""

    def __init__(self, origins: Iterable[str]) -> None:
        super().__init__(allow_origins=list(origins), expose_headers=list(EXPOSED_HEADERS))

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool) -> None:
        super().process_response(req, resp, resource, req_succeeded)
        if req.get_header("Origin") is not None:
            resp.append_header("Vary", "Origin")


def cors_origins(values: Iterable[str], field: str = "cors_origin") -> tuple[str, ...]:
    """The origins of ``values`` (each may hold several, separated by commas or white space, as
    ``COMPLIANCE_CORS_ORIGINS`` does), each as a browser sends it: ``scheme://host[:port]``
    without a path (a trailing slash is dropped). Anything else is a ``validation_error`` naming
    ``field``: a browser never sends a path or a wildcard as its origin, so such an entry would
    silently match nothing.

    >>> cors_origins(["https://app.example.com/", "http://localhost:5173 http://127.0.0.1:5173"])
    ('https://app.example.com', 'http://localhost:5173', 'http://127.0.0.1:5173')
    """
    found: list[str] = []
    for value in values:
        for origin in value.replace(",", " ").split():
            origin = origin.rstrip("/")
            if not _ORIGIN.fullmatch(origin):
                raise ValidationError.field(
                    field, origin, "must be an origin: http:// or https://, a host and maybe a port, no path"
                )
            if origin not in found:
                found.append(origin)
    return tuple(found)
