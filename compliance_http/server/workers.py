"""Worker processes sharing one listening socket, and their supervision.

The supervisor binds host:port once, forks N workers that each build their OWN app (their own
store connections: a SQLite connection must never cross a fork) and run waitress on the
inherited socket, and then only supervises: SIGINT/SIGTERM stop every worker cleanly, and a worker
that dies unexpectedly is replaced, a bounded number of times. Work done once for all of them
runs in one worker only, the lead (see ``WorkerPool``'s ``lead_factory``).
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
from typing import Any, cast

import attrs
import waitress
from waitress.server import BaseWSGIServer

from compliance_core import ValidationError

from .sockets import bind, url_for
from .waitress_server import WAITRESS_OPTIONS, BodyLimit, SpecChannel, channel_with

__all__ = [
    "AppFactory",
    "DEFAULT_THREADS",
    "STOP_TIMEOUT",
    "ServerError",
    "Served",
    "WSGIApp",
    "WorkerPool",
    "serve_forever",
]

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@attrs.frozen
class Served:
    """An app with what the server in front of it decides before the app sees a request: how
    large a body each route lets through (a file upload's far more than a JSON body's)."""

    app: WSGIApp
    body_limit: BodyLimit


AppFactory = Callable[[], WSGIApp | Served | contextlib.AbstractContextManager[WSGIApp | Served]]
"""Runs inside each worker after the fork. It returns the app (or ``Served``), or a context
manager yielding it whose exit releases what the app holds (store connections) when the worker
stops."""

DEFAULT_THREADS = 2
"""Request handlers here are CPU-bound under the GIL (the store's writes are batched, its reads
take microseconds), so more threads per process only add GIL hand-offs: measured with wrk at 16
keep-alive connections on 2 processes, 2 threads gave p99 7-10 ms, 4 threads 10-12 ms, 8 threads
13-17 ms, at equal or higher throughput. waitress's event loop still holds every open connection;
``--threads`` raises it for deployments whose handlers wait on slower storage."""
STOP_TIMEOUT = 10.0
"""Seconds a worker gets to finish its requests after SIGTERM before it is killed."""


class ServerError(Exception):
    """The server could not start, or its workers kept dying."""


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


def _create_server(app: WSGIApp | Served, sock: socket.socket, threads: int) -> Any:
    """waitress on ``sock``, answering the requests it refuses itself in the spec's shape."""
    served = app.app if isinstance(app, Served) else app
    server = waitress.create_server(served, sockets=[sock], threads=threads, **WAITRESS_OPTIONS)
    if not isinstance(server, BaseWSGIServer):  # one socket: waitress returns its server itself
        raise ServerError(f"unexpected waitress server {type(server).__name__}")
    server.channel_class = channel_with(app.body_limit) if isinstance(app, Served) else SpecChannel
    return server


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


def _enter_app(made: Any, stack: contextlib.ExitStack) -> WSGIApp | Served:
    if isinstance(made, contextlib.AbstractContextManager):
        return cast(WSGIApp | Served, stack.enter_context(made))
    return cast(WSGIApp | Served, made)


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
