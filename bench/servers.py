"""Server processes for a benchmark run: each started in its own session so that stopping it
takes its whole process group (the prefork parent and every worker) down, whatever happens."""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs

from compliance_http.server import DEFAULT_THREADS

__all__ = ["Server", "free_port", "start", "fetch"]

HOST = "127.0.0.1"


def add_load_options(parser: argparse.ArgumentParser, seconds: float) -> None:
    """The options shared by the diagnostics that put live workers under wrk, plus the hidden
    ones a diagnostic uses to re-run itself as the server."""
    parser.add_argument("--seconds", type=float, default=seconds)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="waitress threads per worker")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument(
        "--pages", type=int, default=1, help="cycle through this many different pages (see python -m bench --help)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@attrs.define
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        # Workers of a parent that died first would otherwise linger on the port.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


def fetch(url: str, headers: dict[str, str] | None = None, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    parsed = url.split("://", 1)[1]
    hostport, _, path = parsed.partition("/")
    host, _, port = hostport.partition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("GET", "/" + path, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@contextlib.contextmanager
def start(
    name: str,
    command: list[str],
    port: int,
    log: Path,
    ready_path: str,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Iterator[Server]:
    """Run ``command`` until the block ends; ready once ``ready_path`` answers below 500."""
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            command,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    server = Server(name=name, port=port, process=process, log=log)
    try:
        _wait_ready(server, ready_path, headers or {}, timeout)
        yield server
    finally:
        server.stop()


def _wait_ready(server: Server, path: str, headers: dict[str, str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last_error = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            status, _, _ = fetch(server.base_url + path, headers, timeout=2.0)
            if status < 500:
                return
            last_error = f"HTTP {status}"
        except OSError as error:
            last_error = str(error)
        time.sleep(0.1)
    raise RuntimeError(f"{server.name} not ready after {timeout:.0f}s ({last_error}):\n{server.log_tail()}")


def python() -> str:
    return sys.executable
