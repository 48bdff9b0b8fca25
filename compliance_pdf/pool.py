"""The ``PolicyPdf`` port on worker processes, with a time limit and a bounded queue.

Why processes: fpdf2 is pure Python and holds the GIL while it lays a page out, so a render on a
server's request thread (or on a thread pool) slows every other request of that process, and a
thread cannot be stopped. A worker process renders beside the server; a render past the time
limit ends with its process, and the request answers 503 (``ServiceUnavailable``).

Why a bounded queue: a request waiting for a worker still holds a server thread. ``compliance
serve`` runs few threads per process (2 by default), so by default one render runs per server
process and a second concurrent one is refused at once (503 with Retry-After) instead of taking
the last thread that health checks and every other request need. Deployments with more threads
raise ``workers`` and ``queue`` (``COMPLIANCE_PDF_WORKERS``, ``COMPLIANCE_PDF_QUEUE``) while
keeping their sum below the thread count.

Workers are started on the first render, in the process that renders (``compliance serve``
forks its server processes first; a pool inherited across a fork leaves the parent's workers to
the parent), are kept for the next render, and stop when the pool is closed or collected, or when
the process that started them exits (their stdin closes). A worker is ``python -m
compliance_pdf.worker`` (a fresh interpreter, not a fork of a threaded server and not a re-import
of the application's ``__main__``).
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import pickle
import selectors
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from compliance_core.areas.policies import PolicyDocument
from compliance_core.kernel.errors import InternalError, ServiceUnavailable, ValidationError

__all__ = [
    "RenderPool",
    "DEFAULT_TIME_LIMIT",
    "DEFAULT_WORKERS",
    "DEFAULT_QUEUE",
    "STARTUP_LIMIT",
    "BUSY_RETRY_AFTER",
    "READY",
    "read_frame",
    "write_frame",
]

log = logging.getLogger("compliance_pdf")

DEFAULT_TIME_LIMIT = 20.0
"""Seconds one render may take (``COMPLIANCE_PDF_TIME_LIMIT``). A 100,000-character policy, the
largest a policy may be, renders in two to four seconds with its fonts embedded; the limit is for
what no policy should be."""
DEFAULT_WORKERS = 1
"""Worker processes per pool, i.e. per server process (``COMPLIANCE_PDF_WORKERS``)."""
DEFAULT_QUEUE = 0
"""Renders that may wait for a busy worker (``COMPLIANCE_PDF_QUEUE``); beyond, 503 at once."""
STARTUP_LIMIT = 30.0
"""Seconds a new worker may take to import its libraries and say it is ready."""
BUSY_RETRY_AFTER = 1
"""Retry-After of a refusal because every worker is busy: renders take about a second."""
FRAME = struct.Struct(">Q")
"""A frame on a worker's pipes: this 8-byte length, then that many bytes."""
MAX_FRAME = 1 << 31
READY = b"ready"
"""A new worker's first frame, once it can render."""
_VARIABLES = ("COMPLIANCE_PDF_TIME_LIMIT", "COMPLIANCE_PDF_WORKERS", "COMPLIANCE_PDF_QUEUE")


def write_frame(stream: BinaryIO, data: bytes) -> None:
    stream.write(FRAME.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame, or None once the stream closed between frames."""
    head = stream.read(FRAME.size)
    if not head:
        return None
    if len(head) < FRAME.size:
        raise EOFError("the stream closed inside a frame")
    (size,) = FRAME.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("the stream closed inside a frame")
    return body


class _Worker:
    """One worker process and its two pipes, read and written with a deadline (a stuck worker
    must not hold the caller past its time limit, whichever way it is stuck)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._in = process.stdin.fileno()
        self._out = process.stdout.fileno()
        os.set_blocking(self._in, False)

    @classmethod
    def start(cls, command: Sequence[str]) -> _Worker:
        process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_environment(), close_fds=True
        )
        worker = cls(process)
        try:
            ready = worker.receive(time.monotonic() + STARTUP_LIMIT)
        except (TimeoutError, EOFError, OSError) as error:
            worker.kill()
            log.error("the PDF worker %s did not start: %r", list(command), error)
            raise InternalError("the PDF renderer could not start", {"reason": "worker did not start"}) from error
        if ready != READY:
            worker.kill()
            raise InternalError("the PDF renderer could not start", {"reason": "worker did not start"})
        return worker

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(FRAME.pack(len(data)) + data)
        with selectors.DefaultSelector() as selector:
            selector.register(self._in, selectors.EVENT_WRITE)
            while view:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError
                try:
                    view = view[os.write(self._in, view) :]
                except BlockingIOError:
                    continue

    def receive(self, deadline: float) -> bytes:
        buffer = bytearray()
        size: int | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(self._out, selectors.EVENT_READ)
            while True:
                if size is None and len(buffer) >= FRAME.size:
                    (size,) = FRAME.unpack_from(buffer)
                    if size > MAX_FRAME:
                        raise EOFError(f"a frame of {size} bytes")
                if size is not None and len(buffer) >= FRAME.size + size:
                    return bytes(buffer[FRAME.size : FRAME.size + size])
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise EOFError("the worker exited")
                buffer += chunk

    def kill(self) -> None:
        self.process.kill()
        self._reap()

    def stop(self) -> None:
        """Close its stdin (it exits between jobs) and wait briefly; kill it if it lingers."""
        try:
            self.process.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._reap()

    def _reap(self) -> None:
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


class _Workers:
    """The idle workers of one pool, owned by the process that started them. Kept apart from the
    pool so the pool's finalizer can stop them without keeping the pool alive."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = tuple(command)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._owner = os.getpid()
        self._closed = False

    def _mine(self) -> bool:
        """Whether this process started the workers; after a fork the child forgets the parent's
        (they are not its children: it may neither reuse nor stop them)."""
        if self._owner != os.getpid():
            self._idle = []
            self._owner = os.getpid()
            return False
        return True

    def run(self, job: bytes, limit: float) -> bytes:
        worker = self._take()
        try:
            deadline = time.monotonic() + limit
            worker.send(job, deadline)
            reply = worker.receive(deadline)
        except TimeoutError:
            worker.kill()
            raise ServiceUnavailable(
                f"the PDF took longer than {limit:g} s to render and was stopped",
                max(1, math.ceil(limit)),
                {"reason": "render time limit", "limitSeconds": limit},
            ) from None
        except (EOFError, OSError) as error:
            worker.kill()
            log.error("the PDF worker stopped during a render: %r", error)
            raise InternalError("the PDF renderer stopped unexpectedly", {"reason": "worker stopped"}) from error
        except BaseException:
            worker.kill()
            raise
        self._give(worker)
        status, payload = pickle.loads(reply)
        if status != "ok":
            log.error("the PDF worker could not render: %s", payload)
            raise InternalError("the PDF could not be rendered", {"reason": "renderer error"})
        data: bytes = payload
        return data

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise ServiceUnavailable("the PDF renderer is shutting down", BUSY_RETRY_AFTER, {"reason": "closed"})
            self._mine()
            if self._idle:
                return self._idle.pop()
        return _Worker.start(self.command)

    def _give(self, worker: _Worker) -> None:
        with self._lock:
            if self._mine() and not self._closed:
                self._idle.append(worker)
                return
        worker.stop()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle = self._idle if self._mine() else []
            self._idle = []
        for worker in idle:
            worker.stop()


class RenderPool:
    """The ``PolicyPdf`` port on up to ``workers`` worker processes.

    :param time_limit: seconds one render may take; past it the worker is ended and the request
        answers 503 (``ServiceUnavailable``, Retry-After the limit)
    :param workers: renders that run at once
    :param queue: renders that may wait for a worker, at most ``time_limit``; beyond, a render is
        refused at once (503, Retry-After ``BUSY_RETRY_AFTER``)
    :param command: the worker's command line (default: this interpreter, ``-m
        compliance_pdf.worker``); it must speak ``compliance_pdf.worker``'s frames

    >>> pool = RenderPool(time_limit=5)
    >>> pool.close()  # no worker was started: workers start on the first render
    """

    def __init__(
        self,
        *,
        time_limit: float = DEFAULT_TIME_LIMIT,
        workers: int = DEFAULT_WORKERS,
        queue: int = DEFAULT_QUEUE,
        command: Sequence[str] | None = None,
    ) -> None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not 0 < time_limit < math.inf:
            raise ValidationError.field("time_limit", time_limit, "must be a positive number of seconds")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValidationError.field("workers", workers, "must be an integer of at least 1")
        if isinstance(queue, bool) or not isinstance(queue, int) or queue < 0:
            raise ValidationError.field("queue", queue, "must be an integer of at least 0")
        self.time_limit = float(time_limit)
        self.workers = workers
        self.queue = queue
        self._workers = _Workers(command or (sys.executable, "-m", "compliance_pdf.worker"))
        self._admission = threading.Lock()
        self._admitted = 0
        self._slots = threading.Semaphore(workers)
        self._finalizer = weakref.finalize(self, self._workers.close)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> RenderPool:
        """A pool set from ``COMPLIANCE_PDF_TIME_LIMIT`` (seconds), ``COMPLIANCE_PDF_WORKERS`` and
        ``COMPLIANCE_PDF_QUEUE``, each defaulting to the module's constant; the renderer the
        ``compliance.pdf`` entry point gives."""
        environ = os.environ if environ is None else environ
        limit, workers, queue = (environ.get(name, "").strip() for name in _VARIABLES)
        return cls(
            time_limit=_seconds(_VARIABLES[0], limit) if limit else DEFAULT_TIME_LIMIT,
            workers=_integer(_VARIABLES[1], workers) if workers else DEFAULT_WORKERS,
            queue=_integer(_VARIABLES[2], queue) if queue else DEFAULT_QUEUE,
        )

    def render(self, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> bytes:
        job = pickle.dumps((title, tuple(documents), generated_at), protocol=pickle.HIGHEST_PROTOCOL)
        with self._admission:
            if self._admitted >= self.workers + self.queue:
                raise self._busy()
            self._admitted += 1
        try:
            if not self._slots.acquire(timeout=self.time_limit):
                raise self._busy()
            try:
                return self._workers.run(job, self.time_limit)
            finally:
                self._slots.release()
        finally:
            with self._admission:
                self._admitted -= 1

    @property
    def admitted(self) -> int:
        """Renders under way or waiting for a worker (what the next render is admitted against)."""
        with self._admission:
            return self._admitted

    def close(self) -> None:
        """Stop the idle workers; a render under way ends first, then its worker stops."""
        self._finalizer()

    def _busy(self) -> ServiceUnavailable:
        return ServiceUnavailable(
            "the PDF renderer is busy; retry shortly",
            BUSY_RETRY_AFTER,
            {"reason": "every PDF worker is busy", "workers": self.workers, "queue": self.queue},
        )


def _seconds(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValidationError.field(name, text, "must be a positive number of seconds") from None


def _integer(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValidationError.field(name, text, "must be an integer") from None


def _environment() -> dict[str, str]:
    """The server's environment, with this package's root first on the path, so the worker
    imports the same code as the server even when it runs from a source tree."""
    environment = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, (root, environment.get("PYTHONPATH"))))
    return environment
