"""A real webhook receiver on loopback for the tests: an ``http.server`` in a thread that keeps
every request it gets and answers as told (200 unless a scripted answer is queued)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@attrs.frozen
class Answer:
    status: int = 200
    body: bytes = b"ok"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    drip: float = 0.0
    """Seconds between two bytes of the answer, status line and headers included (a receiver
    that answers slowly enough that every single read is quick)."""


class Receiver:
    """``with Receiver() as receiver:`` serves ``receiver.url`` until the block ends."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answers: deque[Answer] = deque()
        self.abandoned = 0
        """Dripping answers the sender stopped reading before their end."""
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                    )
                    answer = receiver.answers.popleft() if receiver.answers else Answer()
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.drip:
                    self._drip(answer)
                    return
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers:
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:  # the sender stopped reading (64 KB read, or its timeout)
                    self.close_connection = True

            def _drip(self, answer: Answer) -> None:
                head = f"HTTP/1.1 {answer.status} Dripping\r\nContent-Length: {len(answer.body)}\r\n"
                raw = head.encode() + b"".join(f"{n}: {v}\r\n".encode() for n, v in answer.headers) + b"\r\n"
                self.close_connection = True
                try:
                    for byte in raw + answer.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(answer.drip)
                except OSError:  # the sender gave up
                    with receiver._lock:
                        receiver.abandoned += 1

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def answer(self, *answers: Answer) -> None:
        with self._lock:
            self.answers.extend(answers)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The requests once at least ``count`` have arrived (fails after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received)} of {count} requests arrived within {timeout} s")

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __iter__(self) -> Iterator[Received]:
        return iter(list(self.received))
