"""Serve a WSGI app from several processes that share one listening socket.

One waitress process cannot use two cores (the GIL), so the parent binds host:port once
(``sockets``), forks N workers that each build their own app and run waitress on the inherited
socket (``workers``, with waitress adapted to answer its own refusals in the spec's shape:
``waitress_server``), and then only supervises. Everything a request shares with other requests
(rate-limit buckets, idempotency records, key usage) lives in the store, so the limits hold
whatever the number of workers; work done once for all of them (the declared chores, webhook
delivery) runs in one worker, the lead (``jobs``, ``serving``).

    serve_forever(lambda: make_wsgi_app(), "127.0.0.1", 8000, workers=2)
"""

from __future__ import annotations

from .jobs import RefreshesStatistics, RunsChores, refresh_statistics, running_chores
from .serving import configure_logging, serve_platform
from .sockets import bind, url_for
from .waitress_server import LINGER_BYTES, LINGER_SECONDS, MAX_REQUEST_BODY, SpecChannel, SpecErrorTask
from .workers import DEFAULT_THREADS, AppFactory, Served, ServerError, WorkerPool, serve_forever

__all__ = [
    "AppFactory",
    "DEFAULT_THREADS",
    "LINGER_BYTES",
    "LINGER_SECONDS",
    "MAX_REQUEST_BODY",
    "RefreshesStatistics",
    "RunsChores",
    "Served",
    "ServerError",
    "SpecChannel",
    "SpecErrorTask",
    "WorkerPool",
    "bind",
    "configure_logging",
    "refresh_statistics",
    "running_chores",
    "serve_forever",
    "serve_platform",
    "url_for",
]
