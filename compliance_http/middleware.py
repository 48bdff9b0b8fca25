"""Cross-cutting request work: a request id on every response, and admission of API-key requests.

Admission runs after routing (``process_resource``), so an unknown path is a 404 and not a 401;
only requests that reached an operation of the route table are authenticated, and Falcon's own
405 and OPTIONS answers need no key.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Mapping
from typing import Any

import falcon

from compliance_core.access import AccessService
from compliance_core.kernel.errors import RateLimited

from .routes import Endpoint
from .wire import Wire

__all__ = ["RequestContext", "Authenticate"]


class RequestContext:
    """Gives each request an id and puts it, and any rate-limit state, on the response.

    Ids are 96 random bits from a generator seeded from the OS once per process (they need to be
    unique, not unguessable): ``os.urandom`` releases the GIL, and under load each request then
    waited ~50 us to get it back (``bench.profile_load --clock wall``). An app built before a
    fork (a server that preloads it) reseeds in each child, so workers never repeat each other's
    ids.
    """

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._random = random.Random(secrets.randbits(128))

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._random = random.Random(secrets.randbits(128))
        req.context.request_id = f"req_{self._random.getrandbits(96):024x}"
        req.context.rate_headers = None

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool) -> None:
        resp.set_header("X-Request-Id", req.context.request_id)
        if req.context.rate_headers is not None:
            resp.set_headers(req.context.rate_headers)


class Authenticate:
    """Admits the request (key, organization, rate limit, usage: one store transaction), then
    rejects query parameters the route does not take."""

    def __init__(self, access: AccessService, routes: Mapping[tuple[str, str], Endpoint], wire: Wire) -> None:
        self._access = access
        self._routes = routes
        self._wire = wire

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        endpoint = self._routes.get((req.method, req.uri_template or ""))
        if endpoint is None:
            return
        req.context.endpoint = endpoint
        if not endpoint.public:
            try:
                admission = self._access.admit(req.get_header("X-API-Key"), req.get_header("X-Organization-Id") or None)
            except RateLimited as error:
                limit = error.details
                req.context.rate_headers = _rate_headers(limit["limit"], limit["remaining"], limit["reset"])
                raise
            rate = admission.rate
            req.context.rate_headers = _rate_headers(rate.limit, rate.remaining, rate.reset_at)
            req.context.actor = admission.actor
        self._wire.check_query(req.params, endpoint.query_parameters)


def _rate_headers(limit: int, remaining: int, reset: int) -> dict[str, str]:
    return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(remaining), "X-RateLimit-Reset": str(reset)}
