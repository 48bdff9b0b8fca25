"""Cross-cutting request work: a request id on every response, the access log, and admission of
API-key requests.

Admission runs after routing (``process_resource``), so an unknown path is a 404 and not a 401;
only requests that reached a declared operation are authenticated, and Falcon's own
405 and OPTIONS answers need no key. The query of a public route is checked here; the query of
any other route is checked by its resource once the caller's permission is known (a role without
it gets 403 and learns nothing of the route's parameters).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

import falcon
import orjson

from compliance_core.access import AccessService
from compliance_core.kernel.errors import RateLimited

from .errors import request_id
from .routes import Endpoint
from .wire import Wire

__all__ = ["ACCESS_LOG", "AccessLog", "RequestContext", "Authenticate", "access_line", "rate_headers"]

ACCESS_LOG = logging.getLogger("compliance_http.access")
"""Access lines of requests the app never saw (waitress refused them as malformed), at INFO;
``compliance serve`` enables it with the access log. Requests the app answers go to
``AccessLog``."""


class AccessLog:
    """One JSON line per request (``access_line``), kept in memory and written to ``stream`` in
    one go when 64 KiB wait and whenever ``flush`` is called (the server's worker does so about
    once a second, and at exit), so a line appears at most about a second late.

    Not the ``logging`` module: under load its per-record work (a LogRecord, caller lookup, the
    handler's lock, a write and flush of stderr) cost some 20 us of a cached list's 40 us
    in-process, and the list benchmark's server CPU per request rose by a quarter.
    """

    LIMIT = 64 * 1024

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lines: list[str] = []
        self._size = 0
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)
            self._size += len(line) + 1
            if self._size >= self.LIMIT:
                self._write()

    def flush(self) -> None:
        with self._lock:
            self._write()

    def _write(self) -> None:
        if not self._lines:
            return
        text = "\n".join(self._lines) + "\n"
        self._lines, self._size = [], 0
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # the stream is closed or gone: nowhere to show the lines
            pass


def access_line(
    *, request_id: str, key_id: str | None, method: str | None, route: str | None, status: int, duration_ms: float
) -> str:
    """One access-log entry: when, which request, who (the key's id, never the key), the route
    template (never the raw path or its query, which may carry personal data), the outcome and
    how long it took. No header, query string or body is ever logged."""
    return orjson.dumps(
        {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "requestId": request_id,
            "keyId": key_id,
            "method": method,
            "route": route,
            "status": status,
            "durationMs": round(duration_ms, 3),
        }
    ).decode()


class RequestContext:
    """Gives each request an id and puts it, and any rate-limit state, on the response.

    Ids are 96 random bits from a generator seeded from the OS once per process (they need to be
    unique, not unguessable): ``os.urandom`` releases the GIL, and under load each request then
    waited ~50 us to get it back (``bench.profile_load --clock wall``). An app built before a
    fork (a server that preloads it) reseeds in each child, so workers never repeat each other's
    ids.
    """

    def __init__(self, access_log: AccessLog | None = None) -> None:
        self._pid = os.getpid()
        self._random = random.Random(secrets.randbits(128))
        self._access_log = access_log

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.perf_counter()
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._random = random.Random(secrets.randbits(128))
        req.context.request_id = f"req_{self._random.getrandbits(96):024x}"
        req.context.rate_headers = None

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool) -> None:
        context = req.context
        rid = request_id(req)  # given here if a middleware before this one failed
        resp.set_header("X-Request-Id", rid)
        limits = getattr(context, "rate_headers", None)
        if limits is not None:
            resp.set_headers(limits)
        if self._access_log is not None:
            actor = getattr(context, "actor", None)
            started = getattr(context, "started", None)
            self._access_log.write(
                access_line(
                    request_id=rid,
                    key_id=getattr(actor, "key_id", None),
                    method=req.method,
                    route=req.uri_template,
                    status=resp.status_code,
                    duration_ms=0.0 if started is None else (time.perf_counter() - started) * 1000,
                )
            )


class Authenticate:
    """Admits the request (key, organization, rate limit, usage: one store transaction); on a
    public route, rejects query parameters the route does not take."""

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
        if endpoint.public:
            self._wire.check_query(req.params, endpoint.query_parameters)
        else:
            try:
                admission = self._access.admit(req.get_header("X-API-Key"), req.get_header("X-Organization-Id") or None)
            except RateLimited as error:
                limit = error.details
                req.context.rate_headers = rate_headers(limit["limit"], limit["remaining"], limit["reset"])
                raise
            rate = admission.rate
            req.context.rate_headers = rate_headers(rate.limit, rate.remaining, rate.reset_at)
            req.context.actor = admission.actor


def rate_headers(limit: int, remaining: int, reset: int) -> dict[str, str]:
    """The X-RateLimit-* headers of an admission (or of its refusal)."""
    return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(remaining), "X-RateLimit-Reset": str(reset)}
