"""``compliance serve``: the /v1 API of one store, served by the worker pool, with the server-wide
work (chores, webhook delivery) in the lead worker."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from compliance_core import Platform, ValidationError

from ..app import create_app
from ..delivery import delivering
from ..middleware import ACCESS_LOG, AccessLog
from ..resources.uploads import FileBodyLimits
from ..routes import endpoints
from .jobs import flushing, running_chores
from .sockets import bind, url_for
from .workers import DEFAULT_THREADS, AppFactory, Served, serve_forever

__all__ = ["configure_logging", "serve_platform"]


def serve_platform(
    url: str,
    host: str = "127.0.0.1",
    port: int = 3333,
    workers: int | None = None,
    threads: int = DEFAULT_THREADS,
    *,
    prepare: Callable[[Platform, str], None] | None = None,
    on_ready: Callable[[str], None] | None = None,
    access_log: bool = True,
    deliver: bool = True,
    settings: Mapping[str, Any] | None = None,
    cors_origins: Sequence[str] = (),
) -> None:
    """Serve the /v1 API for the store at ``url``.

    :param prepare: runs in the parent once the socket is bound, with a platform of its own and
        the server URL (first-run bootstrap); that platform is closed before the workers start.
        A ``memory://`` store lives in one process, so it takes ``workers=1``, and that worker
        inherits the prepared platform.
    :param access_log: write one JSON line per request on stderr (``middleware.access_line``);
        the server's own messages (errors with their request id, chores) go to stderr either way
    :param deliver: the lead worker also delivers webhooks (one delivery thread for the whole
        server, never one per worker); False leaves that to ``compliance worker``
    :param settings: the platform's per-area settings (``{"webhooks": WebhookPolicy(...)}``)
    :param cors_origins: the browser origins allowed to call the API (``create_app``)
    """
    in_memory = url.startswith("memory:")
    if in_memory and workers != 1:
        raise ValidationError.field("workers", workers, "a memory:// store lives in one process: use 1 worker")
    sock = bind(host, port)
    try:
        factory: AppFactory
        lead: AppFactory
        if in_memory:
            platform = Platform.open(url, settings=settings)
            if prepare is not None:
                prepare(platform, url_for(sock))
            factory = lambda: _serving(platform, lead=False, access_log=access_log, cors_origins=cors_origins)  # noqa: E731
            lead = lambda: _serving(  # noqa: E731
                platform, lead=True, access_log=access_log, deliver=deliver, cors_origins=cors_origins
            )
        else:
            if prepare is not None:
                with Platform.open(url, settings=settings) as platform:
                    prepare(platform, url_for(sock))
            factory = lambda: _platform_app(  # noqa: E731
                url, access_log=access_log, settings=settings, cors_origins=cors_origins
            )
            lead = lambda: _platform_app(  # noqa: E731
                url, lead=True, access_log=access_log, deliver=deliver, settings=settings, cors_origins=cors_origins
            )
        configure_logging(access_log=access_log)
    except BaseException:
        sock.close()
        raise
    serve_forever(factory, workers=workers, threads=threads, sock=sock, on_ready=on_ready, lead_factory=lead)


def configure_logging(*, access_log: bool) -> None:
    """Where ``compliance serve`` writes (set in the supervisor, inherited by its workers):
    ``compliance_http``'s messages from INFO up, through the handlers already configured (the
    CLI's, on stderr) or else on stderr; the access log (``middleware.ACCESS_LOG``) as bare JSON
    lines on stderr, or not at all."""
    messages = logging.getLogger("compliance_http")
    if not messages.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
        messages.addHandler(handler)
    if messages.level == logging.NOTSET:  # INFO too (a chore's count), whatever the root's level
        messages.setLevel(logging.INFO)
    if access_log and not ACCESS_LOG.handlers:  # waitress's refusals; the app's requests: AccessLog
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        ACCESS_LOG.addHandler(handler)
    ACCESS_LOG.propagate = False
    ACCESS_LOG.setLevel(logging.INFO if access_log else logging.WARNING)


@contextlib.contextmanager
def _platform_app(
    url: str,
    *,
    lead: bool = False,
    access_log: bool = True,
    deliver: bool = False,
    settings: Mapping[str, Any] | None = None,
    cors_origins: Sequence[str] = (),
) -> Iterator[Served]:
    with (
        Platform.open(url, settings=settings) as platform,
        _serving(platform, lead=lead, access_log=access_log, deliver=deliver, cors_origins=cors_origins) as app,
    ):
        yield app


@contextlib.contextmanager
def _serving(
    platform: Platform, *, lead: bool, access_log: bool, deliver: bool = False, cors_origins: Sequence[str] = ()
) -> Iterator[Served]:
    """One worker's app: its access log and periodic flush, and, in the lead, the chores and
    (unless turned off) webhook delivery."""
    sink = AccessLog(sys.stderr) if access_log else None
    chores = running_chores(platform) if lead else contextlib.nullcontext()
    sending = delivering(platform) if lead and deliver else contextlib.nullcontext()
    with flushing(platform, sink), chores, sending:
        app = create_app(platform, access_log=sink, cors_origins=cors_origins)
        yield Served(app, FileBodyLimits(endpoints(platform.areas), lambda: platform.blobs.max_bytes))
