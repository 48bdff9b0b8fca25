"""Serve a WSGI app from several processes that share one listening socket.

One waitress process cannot use two cores (the GIL): measured here, SQLite-backed handlers fall to
1-2k requests/s with p99 above 30 ms in one process and reach ~10k in two. So the parent binds
host:port once, forks N workers that each build their OWN app (their own store connections: a
SQLite connection must never cross a fork) and run waitress on the inherited socket, and then only
supervises: SIGINT/SIGTERM stop every worker cleanly, and a worker that dies unexpectedly is
replaced, a bounded number of times.

Everything a request shares with other requests (rate-limit buckets, idempotency records, key
usage) lives in the store, so the limits hold whatever the number of workers.

    serve_forever(lambda: make_wsgi_app(), "127.0.0.1", 8000, workers=2)
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import waitress

from compliance_core import Platform, ValidationError
from compliance_core.access import LEASE_SECONDS

from .app import create_app

__all__ = [
    "AppFactory",
    "DEFAULT_THREADS",
    "ServerError",
    "WorkerPool",
    "bind",
    "serve_forever",
    "serve_platform",
    "url_for",
]

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
WAITRESS_OPTIONS: dict[str, Any] = {
    "ident": "compliance",
    "channel_timeout": 60,  # close idle keep-alive connections after a minute
    "connection_limit": 1000,
    "asyncore_use_poll": True,  # select() breaks above 1024 descriptors
    "clear_untrusted_proxy_headers": True,
    "max_request_body_size": 10 * 1024 * 1024,
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
    ) -> None:
        if workers < 1:
            raise ValidationError.field("workers", workers, "must be at least 1")
        if threads < 1:
            raise ValidationError.field("threads", threads, "must be at least 1")
        self.app_factory = app_factory
        self.sock = sock
        self.size = workers
        self.threads = threads
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self._context = multiprocessing.get_context("fork")
        self._deaths: list[float] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.pid is not None]

    def start(self) -> None:
        """Start every worker and wait until each has built its app and is accepting; raise
        ``ServerError`` with the worker's own message if one fails to start."""
        pending = [self._spawn() for _ in range(self.size)]
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
        _, ready = self._spawn()
        ready.close()  # a replacement that fails to start is just another death

    def _spawn(self) -> tuple[multiprocessing.process.BaseProcess, multiprocessing.connection.Connection]:
        receiver, sender = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_worker_main,
            args=(self.app_factory, self.sock, self.threads, sender, os.getpid()),
            name="compliance-worker",
            daemon=False,
        )
        process.start()
        sender.close()
        self.processes.append(process)
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
            server = waitress.create_server(app, sockets=[sock], threads=threads, **WAITRESS_OPTIONS)
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
) -> None:
    """Serve ``app_factory``'s app from ``workers`` processes (default: one per CPU) until
    SIGINT or SIGTERM. ``on_ready(url)`` runs once every worker accepts (default: print the URL).

    :param sock: an already bound socket to use instead of binding ``host:port``
    """
    workers = workers or os.cpu_count() or 1
    sock = sock or bind(host, port)
    pool = WorkerPool(app_factory, sock, workers=workers, threads=threads)
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
) -> None:
    """Serve the /v1 API for the store at ``url``.

    :param prepare: runs in the parent once the socket is bound, with a platform of its own and
        the server URL (first-run bootstrap); that platform is closed before the workers start.
        A ``memory://`` store lives in one process, so it takes ``workers=1``, and that worker
        inherits the prepared platform.
    """
    in_memory = url.startswith("memory:")
    if in_memory and workers != 1:
        raise ValidationError.field("workers", workers, "a memory:// store lives in one process: use 1 worker")
    sock = bind(host, port)
    try:
        if in_memory:
            platform = Platform.open(url)
            if prepare is not None:
                prepare(platform, url_for(sock))
            factory: AppFactory = lambda: create_app(platform)  # noqa: E731
        else:
            if prepare is not None:
                with Platform.open(url) as platform:
                    prepare(platform, url_for(sock))
            factory = lambda: _platform_app(url)  # noqa: E731
    except BaseException:
        sock.close()
        raise
    serve_forever(factory, workers=workers, threads=threads, sock=sock, on_ready=on_ready)


@contextlib.contextmanager
def _platform_app(url: str) -> Iterator[WSGIApp]:
    with Platform.open(url) as platform, _flushing(platform):
        yield create_app(platform)


@contextlib.contextmanager
def _flushing(platform: Platform, every: float = LEASE_SECONDS) -> Iterator[None]:
    """Write the key usage this worker counted (and give back unspent rate-limit tokens) every
    ``every`` seconds, so a key's usage read through another worker is at most that stale; closing
    the platform writes the rest."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            try:
                platform.access.flush()
            except Exception:  # a busy or failing store must not kill the worker; retry next time
                logging.getLogger(__name__).exception("could not write key usage")

    flusher = threading.Thread(target=run, name="usage-flush", daemon=True)
    flusher.start()
    try:
        yield
    finally:
        stop.set()
        flusher.join()
