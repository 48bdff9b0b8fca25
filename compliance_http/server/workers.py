"""Serve a WSGI app from several processes that share one listening socket.

One waitress process cannot use two cores (the GIL): measured here, SQLite-backed handlers fall to
1-2k requests/s with p99 above 30 ms in one process and reach ~10k in two. So the parent binds
host:port once, forks N workers that each build their OWN app (their own store connections: a
SQLite connection must never cross a fork) and run waitress on the inherited socket, and then only
supervises: SIGINT/SIGTERM stop every worker cleanly, and a worker that dies unexpectedly is
replaced, a bounded number of times.

Everything a request shares with other requests (rate-limit buckets, idempotency records, key
usage) lives in the store, so the limits hold whatever the number of workers. Work that must be
done once for all of them (purging expired idempotency records) runs in one worker only, the
lead (see ``WorkerPool``'s ``lead_factory``).

Requests waitress answers itself, before any app sees them (a malformed request line or header, a
body over waitress's limit, an invalid Content-Length), are answered in the spec's error shape too,
with an X-Request-Id: the workers' waitress uses ``SpecChannel``, whose error task writes that body
and which reads what the client is still sending before it closes, so the client gets the answer
rather than a connection reset.

    serve_forever(lambda: make_wsgi_app(), "127.0.0.1", 8000, workers=2)
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

import waitress
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask

from compliance_core import Platform, ValidationError
from compliance_core.access import LEASE_SECONDS

from .app import create_app
from .delivery import delivering
from .errors import code_for_status, new_request_id
from .middleware import ACCESS_LOG, AccessLog, access_line
from .resources import BODY_LIMIT_REASON, MAX_BODY_BYTES
from .wire import JSON, Wire

__all__ = [
    "AppFactory",
    "DEFAULT_THREADS",
    "LINGER_BYTES",
    "LINGER_SECONDS",
    "MAX_REQUEST_BODY",
    "PURGE_EVERY",
    "ServerError",
    "SpecChannel",
    "SpecErrorTask",
    "Purges",
    "RefreshesStatistics",
    "WorkerPool",
    "bind",
    "configure_logging",
    "periodic_purge",
    "serve_forever",
    "serve_platform",
    "url_for",
]

log = logging.getLogger("compliance_http.server")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
AppFactory = Callable[[], WSGIApp | contextlib.AbstractContextManager[WSGIApp]]
"""Runs inside each worker after the fork. It returns the app, or a context manager yielding the
app whose exit releases what the app holds (store connections) when the worker stops."""

DEFAULT_THREADS = 2
"""Request handlers here are CPU-bound under the GIL (the store's writes are batched, its reads
take microseconds), so more threads per process only add GIL hand-offs: measured with wrk at 16
keep-alive connections on 2 processes, 2 threads gave p99 7-10 ms, 4 threads 10-12 ms, 8 threads
13-17 ms, at equal or higher throughput. waitress's event loop still holds every open connection;
``--threads`` raises it for deployments whose handlers wait on slower storage."""
MAX_REQUEST_BODY = MAX_BODY_BYTES + 64 * 1024
"""waitress's own body limit, just above the documented one (``resources.MAX_BODY_BYTES``): a
body up to 64 KiB over ours reaches the app, whose check answers 413; beyond that, waitress
refuses the request as soon as Content-Length announces it (or, chunked, once that much has
arrived), without buffering it, and ``SpecErrorTask`` answers the same 413."""
LINGER_SECONDS = 5.0
"""How long a connection refused by waitress keeps reading (and discarding) what the client still
sends after the answer, before it closes: closing with unread data resets the connection, and a
client still sending its body would lose the answer."""
LINGER_BYTES = 64 * 1024 * 1024
"""The most such a connection discards before it closes anyway."""
PURGE_EVERY = 600.0
"""Seconds between two purges of expired idempotency records (``Platform.purge_idempotency``) by
the lead worker; it also purges once at start-up. A store that keeps planner statistics
(``RefreshesStatistics``: SQLite) has them refreshed at the same times."""
REVIEW_SWEEP_EVERY = 12 * 3600.0
"""Seconds between two policy review sweeps by the lead worker (the reference sweeps every 12
hours); it also sweeps once at start-up."""
WAITRESS_OPTIONS: dict[str, Any] = {
    "ident": "compliance",
    "channel_timeout": 60,  # close idle keep-alive connections after a minute
    "connection_limit": 1000,
    "asyncore_use_poll": True,  # select() breaks above 1024 descriptors
    "clear_untrusted_proxy_headers": True,
    "max_request_body_size": MAX_REQUEST_BODY,
    "expose_tracebacks": False,
}
STOP_TIMEOUT = 10.0
"""Seconds a worker gets to finish its requests after SIGTERM before it is killed."""


class ServerError(Exception):
    """The server could not start, or its workers kept dying."""


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """Bind and listen once, in the parent; port 0 picks a free port (see ``getsockname``)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise ValidationError.field("host", host, f"cannot be resolved: {error.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError as error:
        sock.close()
        raise ValidationError.field("port", port, f"cannot listen on {host}:{port}: {error.strerror}") from None
    return sock


def url_for(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


class WorkerPool:
    """N worker processes serving ``app_factory`` on ``sock``, and their supervision.

    :param app_factory: builds the app inside each worker (see ``AppFactory``)
    :param sock: a bound, listening socket (see ``bind``)
    :param workers: how many processes
    :param threads: waitress threads per process
    :param max_restarts: unexpected deaths tolerated within ``restart_window`` seconds before the
        pool gives up (a worker that crashes at once would otherwise be restarted forever)
    :param lead_factory: builds the app of ONE worker, the lead, instead of ``app_factory``: what
        must run once for the whole server (periodic store maintenance) goes there rather than
        into every worker; a lead that dies is replaced by a new lead
    """

    def __init__(
        self,
        app_factory: AppFactory,
        sock: socket.socket,
        *,
        workers: int,
        threads: int = DEFAULT_THREADS,
        max_restarts: int = 5,
        restart_window: float = 60.0,
        lead_factory: AppFactory | None = None,
    ) -> None:
        if workers < 1:
            raise ValidationError.field("workers", workers, "must be at least 1")
        if threads < 1:
            raise ValidationError.field("threads", threads, "must be at least 1")
        self.app_factory = app_factory
        self.lead_factory = lead_factory
        self.sock = sock
        self.size = workers
        self.threads = threads
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self._context = multiprocessing.get_context("fork")
        self._deaths: list[float] = []
        self.lead: multiprocessing.process.BaseProcess | None = None
        """The worker serving ``lead_factory``'s app (the first one started)."""

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.pid is not None]

    def start(self) -> None:
        """Start every worker and wait until each has built its app and is accepting; raise
        ``ServerError`` with the worker's own message if one fails to start."""
        pending = [self._spawn(lead=index == 0) for index in range(self.size)]
        try:
            for process, ready in pending:
                try:
                    message = ready.recv() if ready.poll(60) else ("error", "did not start within 60 s")
                except EOFError:
                    message = ("error", "exited while starting")
                if message[0] != "ready":
                    raise ServerError(f"worker {process.pid} failed to start: {message[1]}")
        except ServerError:
            self.stop()
            raise
        finally:
            for _, ready in pending:
                ready.close()

    def supervise(self, wakeup: socket.socket | None = None, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Block until ``should_stop()`` (checked whenever ``wakeup`` becomes readable or a worker
        exits), replacing workers that die; raise ``ServerError`` when they die too often."""
        while not should_stop():
            waitables: list[Any] = [p.sentinel for p in self.processes]
            if wakeup is not None:
                waitables.append(wakeup)
            ready = multiprocessing.connection.wait(waitables)
            if wakeup is not None and wakeup in ready:
                with contextlib.suppress(BlockingIOError):
                    wakeup.recv(512)
            if should_stop():
                break
            for process in [p for p in self.processes if p.sentinel in ready]:
                self._replace(process)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM every worker (waitress finishes the requests in flight), then SIGKILL any that
        are still alive after ``timeout`` seconds."""
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        self.processes = []
        self.lead = None

    def _replace(self, process: multiprocessing.process.BaseProcess) -> None:
        process.join()
        self.processes.remove(process)
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if t > now - self.restart_window] + [now]
        if len(self._deaths) > self.max_restarts:
            raise ServerError(f"workers died {len(self._deaths)} times within {self.restart_window:.0f} s; giving up")
        print(
            f"worker {process.pid} exited with code {process.exitcode}; starting a replacement",
            file=sys.stderr,
            flush=True,
        )
        _, ready = self._spawn(lead=process is self.lead)
        ready.close()  # a replacement that fails to start is just another death

    def _spawn(
        self, *, lead: bool
    ) -> tuple[multiprocessing.process.BaseProcess, multiprocessing.connection.Connection]:
        factory = self.lead_factory if lead and self.lead_factory is not None else self.app_factory
        receiver, sender = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_worker_main,
            args=(factory, self.sock, self.threads, sender, os.getpid()),
            name="compliance-lead" if lead else "compliance-worker",
            daemon=False,
        )
        process.start()
        sender.close()
        self.processes.append(process)
        if lead:
            self.lead = process
        return process, receiver


def _worker_main(
    app_factory: AppFactory,
    sock: socket.socket,
    threads: int,
    ready: multiprocessing.connection.Connection,
    parent_pid: int,
) -> None:
    # The parent owns Ctrl-C: it receives SIGINT and stops the workers with SIGTERM, which makes
    # waitress's loop raise SystemExit, finish the requests in flight and return.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    _watch_parent(parent_pid)
    # With keep-alive clients a request often waits for a free thread; waitress logs a warning
    # each time ("Task queue depth is N"), thousands a second under load, at a real cost.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    with contextlib.ExitStack() as stack:
        try:
            app = _enter_app(app_factory(), stack)
            server = _create_server(app, sock, threads)
        except BaseException as error:  # report why, whatever it is, instead of dying silently
            ready.send(("error", _describe(error)))
            ready.close()
            raise
        # What start-up built (app, routes, store catalogue) lives as long as the worker: keep it
        # out of the garbage collector's full passes, which otherwise walk it under load.
        gc.freeze()
        with contextlib.suppress(OSError):  # nobody waits for a replacement's report
            ready.send(("ready", os.getpid()))
        ready.close()
        server.run()


def _create_server(app: WSGIApp, sock: socket.socket, threads: int) -> Any:
    """waitress on ``sock``, answering the requests it refuses itself in the spec's shape."""
    server = waitress.create_server(app, sockets=[sock], threads=threads, **WAITRESS_OPTIONS)
    if not isinstance(server, BaseWSGIServer):  # one socket: waitress returns its server itself
        raise ServerError(f"unexpected waitress server {type(server).__name__}")
    server.channel_class = SpecChannel
    return server


class SpecErrorTask(ErrorTask):
    """waitress's answer to a request it refuses itself (malformed, too large, or an app that
    failed before sending anything), written as the spec's error body with a fresh request id
    instead of waitress's plain text. The status stays waitress's; the code follows it
    (``errors.code_for_status``): 400, 413 and 431 are ``validation_error``, 5xx
    ``internal_error``. Rendering it cannot fail, and a 500 is logged with the request id and the
    traceback of the failure behind it."""

    def execute(self) -> None:
        rid = new_request_id()
        error = self.request.error
        status = f"{error.code} {error.reason}"
        try:
            body = _error_body(self.request, self.channel.server.adj, rid)
        except Exception:
            log.exception("could not describe waitress's error %r (requestId=%s)", error, rid)
            status = "500 Internal Server Error"
            body = Wire.error("internal_error", "internal server error", {}, rid)
        self.status = status
        self.response_headers.extend([("Content-Type", JSON), ("X-Request-Id", rid)])
        self.set_close_on_finish()
        if isinstance(self.channel, SpecChannel):
            self.channel.linger = True
        self.content_length = len(body)
        self.write(body)
        if ACCESS_LOG.isEnabledFor(logging.INFO):
            try:
                ACCESS_LOG.info(
                    access_line(
                        request_id=rid,
                        key_id=None,
                        method=_method_of(self.request),
                        route=None,
                        status=int(error.code),
                        duration_ms=(time.time() - self.start_time) * 1000,
                    )
                )
            except Exception:
                log.exception("could not write the access log (requestId=%s)", rid)


def _method_of(request: Any) -> str | None:
    """The request's method, if waitress got as far as reading one that looks like a method."""
    method = getattr(request, "command", None)
    if isinstance(method, str) and method.isascii() and method.isalpha() and len(method) <= 16:
        return method
    return None


_FIELD_OF_REASON = {
    "Content-Length is invalid": "Content-Length",
    "Invalid header": "headers",
    "Bad URI": "requestLine",
    "Start line is invalid": "requestLine",
    "Malformed HTTP method": "requestLine",
    "Malformed HTTP version": "requestLine",
    "Transfer-Encoding requested is not supported.": "Transfer-Encoding",
}


def _error_body(request: Any, adj: Any, rid: str) -> bytes:
    error = request.error
    status = int(error.code)
    code = code_for_status(status)
    if status == 413:
        declared = request.content_length or request.body_bytes_received or None
        details: dict[str, Any] = {"field": "body", "value": declared, "reason": BODY_LIMIT_REASON}
        return Wire.error(code, f"body: {BODY_LIMIT_REASON}", details, rid)
    if status == 431:
        reason = f"must be at most {adj.max_request_header_size} bytes"
        return Wire.error(code, f"headers: {reason}", {"field": "headers", "reason": reason}, rid)
    if status == 500:  # the app (or waitress) failed before it sent anything
        exc_info = sys.exc_info()
        log.error("unhandled error below the app (requestId=%s)", rid, exc_info=exc_info if exc_info[0] else None)
        return Wire.error(code, "internal server error; retrying with the same Idempotency-Key is safe", {}, rid)
    reason = str(error.body)[:200]  # waitress's own words ("Invalid header"): no request data
    field = _FIELD_OF_REASON.get(reason)
    details = {"reason": reason} if field is None else {"field": field, "reason": reason}
    return Wire.error(code, f"{'malformed' if status == 400 else 'unsupported'} request: {reason}", details, rid)


class SpecChannel(HTTPChannel):
    """waitress's connection, with ``SpecErrorTask`` for the requests it refuses and a lingering
    close after them: the answer goes out, the sending side is shut, and what the client still
    sends (the rest of a body too large) is read and discarded for up to ``LINGER_SECONDS`` or
    ``LINGER_BYTES`` before the connection closes, so the client reads the answer instead of a
    connection reset.

    Only a lingering connection needs other ``readable``/``writable``/read/write behaviour, and
    waitress asks every connection those on every turn of its loop, so a channel becomes a
    ``_LingeringChannel`` when it starts to linger and the ordinary path runs waitress's own
    methods untouched."""

    error_task_class = SpecErrorTask
    linger = False
    """Set by the error task: close with a lingering close."""

    def handle_close(self) -> None:
        if self.linger and self.connected and not self.total_outbufs_len:
            self.linger = False
            try:
                self.socket.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            else:
                self.will_close = False
                self.close_when_flushed = False
                self.__class__ = _LingeringChannel
                self._drain_until = time.monotonic() + LINGER_SECONDS
                self._drained = 0
                return
        self._close_now()

    def _close_now(self) -> None:
        self.linger = False
        if self.socket is not None and self.connected:
            HTTPChannel.handle_close(self)


class _LingeringChannel(SpecChannel):
    """A refused connection draining what its client still sends (see ``SpecChannel``)."""

    _drain_until: float
    _drained: int

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:  # nothing to write: only a time to stop
        return bool(self.will_close) or time.monotonic() >= self._drain_until

    def handle_write(self) -> None:
        self._close_now()

    def handle_read(self) -> None:
        try:
            data = self.socket.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self._drained += len(data)
        if not data or self._drained >= LINGER_BYTES or time.monotonic() >= self._drain_until:
            self._close_now()

    def handle_close(self) -> None:
        self._close_now()


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _watch_parent(parent_pid: int) -> None:
    """Stop this worker if the supervisor disappears (killed with SIGKILL), so no orphan keeps
    serving on the port."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _enter_app(made: Any, stack: contextlib.ExitStack) -> WSGIApp:
    if isinstance(made, contextlib.AbstractContextManager):
        return stack.enter_context(made)
    return made


def _describe(error: BaseException) -> str:
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    details = getattr(error, "details", None)
    return f"{message} {details}" if details else message


@contextlib.contextmanager
def _stop_signals() -> Iterator[tuple[socket.socket, Callable[[], bool]]]:
    """SIGINT/SIGTERM set a flag and wake the supervisor through a socket pair (the signal
    module's wakeup fd), so it can sleep in one ``wait`` on workers and signals alike."""
    received: list[int] = []
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    old_fd = signal.set_wakeup_fd(writer.fileno())
    try:
        for sig in previous:
            signal.signal(sig, lambda signum, frame: received.append(signum))
        yield reader, lambda: bool(received)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(old_fd)
        reader.close()
        writer.close()


def serve_forever(
    app_factory: AppFactory,
    host: str = "127.0.0.1",
    port: int = 3333,
    workers: int | None = None,
    threads: int = DEFAULT_THREADS,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[str], None] | None = None,
    lead_factory: AppFactory | None = None,
) -> None:
    """Serve ``app_factory``'s app from ``workers`` processes (default: one per CPU) until
    SIGINT or SIGTERM. ``on_ready(url)`` runs once every worker accepts (default: print the URL).

    :param sock: an already bound socket to use instead of binding ``host:port``
    :param lead_factory: the app of one worker, which also does the server-wide chores (see
        ``WorkerPool``)
    """
    workers = workers or os.cpu_count() or 1
    sock = sock or bind(host, port)
    pool = WorkerPool(app_factory, sock, workers=workers, threads=threads, lead_factory=lead_factory)
    try:
        with _stop_signals() as (wakeup, stopping):
            pool.start()
            url = url_for(sock)
            if on_ready is None:
                print(f"Serving on {url} ({workers} worker processes, {threads} threads each)", flush=True)
            else:
                on_ready(url)
            try:
                pool.supervise(wakeup, stopping)
            finally:
                pool.stop()
    finally:
        sock.close()


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
) -> None:
    """Serve the /v1 API for the store at ``url``.

    :param prepare: runs in the parent once the socket is bound, with a platform of its own and
        the server URL (first-run bootstrap); that platform is closed before the workers start.
        A ``memory://`` store lives in one process, so it takes ``workers=1``, and that worker
        inherits the prepared platform.
    :param access_log: write one JSON line per request on stderr (``middleware.access_line``);
        the server's own messages (errors with their request id, purges) go to stderr either way
    :param deliver: the lead worker also delivers webhooks (one delivery thread for the whole
        server, never one per worker); False leaves that to ``compliance worker``
    :param settings: the platform's per-area settings (``{"webhooks": WebhookPolicy(...)}``)
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
            factory = lambda: _serving(platform, lead=False, access_log=access_log)  # noqa: E731
            lead = lambda: _serving(platform, lead=True, access_log=access_log, deliver=deliver)  # noqa: E731
        else:
            if prepare is not None:
                with Platform.open(url, settings=settings) as platform:
                    prepare(platform, url_for(sock))
            factory = lambda: _platform_app(url, access_log=access_log, settings=settings)  # noqa: E731
            lead = lambda: _platform_app(  # noqa: E731
                url, lead=True, access_log=access_log, deliver=deliver, settings=settings
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
    if messages.level == logging.NOTSET:  # INFO too (a purge's count), whatever the root's level
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
) -> Iterator[WSGIApp]:
    with (
        Platform.open(url, settings=settings) as platform,
        _serving(platform, lead=lead, access_log=access_log, deliver=deliver) as app,
    ):
        yield app


@contextlib.contextmanager
def _serving(platform: Platform, *, lead: bool, access_log: bool, deliver: bool = False) -> Iterator[WSGIApp]:
    """One worker's app: its access log and periodic flush, and, in the lead, the purge and (unless
    turned off) webhook delivery."""
    sink = AccessLog(sys.stderr) if access_log else None
    purging = periodic_purge(platform) if lead else contextlib.nullcontext()
    sending = delivering(platform) if lead and deliver else contextlib.nullcontext()
    sweeping = periodic_review_sweep(platform) if lead else contextlib.nullcontext()
    with _flushing(platform, sink), purging, sending, sweeping:
        yield create_app(platform, access_log=sink)


class Purges(Protocol):
    """What ``periodic_purge`` needs of a platform."""

    def purge_idempotency(self, now: dt.datetime | None = None) -> int: ...

    def purge_outbox(self, now: dt.datetime | None = None) -> int: ...

    def lapse_risk_acceptances(self, now: dt.datetime | None = None) -> int: ...


@runtime_checkable
class RefreshesStatistics(Protocol):
    """A store whose query planner needs statistics taken by the application (SQLite: see
    ``compliance_store.sqlite.statistics``; PostgreSQL's autovacuum analyses by itself)."""

    def refresh_statistics(self) -> list[str]: ...


def refresh_statistics(store: object) -> list[str] | None:
    """The tables ``store`` analysed again (None: the store keeps no statistics of its own)."""
    return store.refresh_statistics() if isinstance(store, RefreshesStatistics) else None


_ROUNDS: tuple[tuple[str, str, str, bool], ...] = (
    ("purge_idempotency", "purge expired idempotency records", "purged %d expired idempotency record(s)", True),
    (
        "purge_outbox",
        "purge published outbox messages",
        "purged %d outbox message(s) published over a week ago",
        False,
    ),
    (
        "lapse_risk_acceptances",
        "lapse expired risk acceptances",
        "returned %d risk(s) whose acceptance expired to review",
        False,
    ),
)
"""The jobs of each round of ``periodic_purge``: the platform method, what a failure could not
do, the line logged with its count, and whether that line is logged even for 0 (the
idempotency purge's, as the rounds' heartbeat)."""


@contextlib.contextmanager
def periodic_purge(platform: Purges, every: float = PURGE_EVERY) -> Iterator[threading.Thread]:
    """Run the rounds of ``_ROUNDS`` (expired idempotency records, published outbox messages
    past their week, risk acceptances past their expiry) now and then every ``every`` seconds,
    in a thread, while the block runs. A failing job is logged and tried again next round, and
    the others still run. The server runs it in its lead worker only: every worker shares the
    store, so one purger is enough. The platform's store, if it keeps planner statistics, has
    them refreshed after each round (an analysis is logged with the tables it covered).

    >>> with periodic_purge(platform):  # doctest: +SKIP
    ...     server.run()
    """
    stop = threading.Event()

    def run() -> None:
        while True:
            for method, failure, done, always in _ROUNDS:
                try:
                    count = getattr(platform, method)()
                except Exception:  # a busy or failing store must not kill the worker
                    log.exception("could not %s; retrying in %.0f s", failure, every)
                else:
                    if count or always:
                        log.info(done, count)
            try:
                analysed = refresh_statistics(getattr(platform, "store", None))
            except Exception:
                log.exception("could not refresh the planner statistics; retrying in %.0f s", every)
            else:
                if analysed:
                    log.info("refreshed the planner statistics (tables grown or shrunk: %s)", ", ".join(analysed))
            if stop.wait(every):
                return

    purger = threading.Thread(target=run, name="idempotency-purge", daemon=True)
    purger.start()
    try:
        yield purger
    finally:
        stop.set()
        purger.join()


@contextlib.contextmanager
def periodic_review_sweep(platform: Platform, every: float = REVIEW_SWEEP_EVERY) -> Iterator[threading.Thread]:
    """Move overdue published policies to ``needs_review`` now and then every ``every`` seconds
    (``policies.sweep_reviews``), in a thread of the lead worker, while the block runs. A failing
    sweep is logged and tried again next time; sweeping twice moves nothing more."""
    stop = threading.Event()

    def run() -> None:
        while True:
            try:
                moved = platform.policies.sweep_reviews()
            except Exception:  # a busy or failing store must not kill the worker
                log.exception("could not sweep policy reviews; retrying in %.0f s", every)
            else:
                log.info("%d policy(ies) due for review", moved)
            if stop.wait(every):
                return

    sweeper = threading.Thread(target=run, name="policy-review-sweep", daemon=True)
    sweeper.start()
    try:
        yield sweeper
    finally:
        stop.set()
        sweeper.join()


@contextlib.contextmanager
def _flushing(platform: Platform, access_log: AccessLog | None = None, every: float = LEASE_SECONDS) -> Iterator[None]:
    """Write the key usage this worker counted (and give back unspent rate-limit tokens) every
    ``every`` seconds, so a key's usage read through another worker is at most that stale; closing
    the platform writes the rest."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            if access_log is not None:
                access_log.flush()
            try:
                platform.access.flush()
            except Exception:  # a busy or failing store must not kill the worker; retry next time
                log.exception("could not write key usage")

    flusher = threading.Thread(target=run, name="usage-flush", daemon=True)
    flusher.start()
    try:
        yield
    finally:
        stop.set()
        flusher.join()
        if access_log is not None:
            access_log.flush()
