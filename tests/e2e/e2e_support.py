"""What the end-to-end tests share: scenario contexts over three transports and two kinds of
store, and real `compliance serve` processes.

Every scenario gets a fresh organization and a ``Client`` acting with its Owner key, over:
``local`` (LocalTransport, memory store), ``wsgi`` (HTTPTransport over httpx.WSGITransport, SQLite,
no socket) and ``server`` (HTTPTransport to `compliance serve --workers 2`, SQLite); and over the
same three transports on PostgreSQL (``local+postgresql``, ``wsgi+postgresql``,
``server+postgresql``: one schema of the run's server, shared by the three).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import attrs
import httpx
import pytest

from compliance_core import Actor, Client, LocalTransport, Platform
from compliance_core.areas.api_keys import IssuedKey, NewApiKey
from compliance_core.areas.organizations import Plan

COMPLIANCE = str(Path(sys.executable).with_name("compliance"))
LISTENING = re.compile(r"listening on (http://\S+)/v1")


@attrs.define
class Context:
    """What a scenario works with; ``record`` builds the transcript compared across transports."""

    kind: str
    client: Client
    organization_id: str
    owner_key: IssuedKey
    connect: Callable[[IssuedKey], Client]
    """A client acting with another key of the same organization."""
    operator: Callable[[NewApiKey], IssuedKey]
    """A key issued by the operator (in-process, outside the API): how an owner or admin gets
    the first key bound to them."""
    transcript: list[tuple[str, Any]] = attrs.Factory(list)

    def record(self, label: str, value: Any) -> Any:
        self.transcript.append((label, value))
        return value

    def fails(
        self, label: str, error_class: type[Exception], call: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> Any:
        """Assert ``call`` raises exactly ``error_class``, record the error, return it."""
        with pytest.raises(error_class) as raised:
            call(*args, **kwargs)
        assert type(raised.value) is error_class, f"{label}: got {type(raised.value).__name__}"
        return self.record(label, raised.value)

    @property
    def over_http(self) -> bool:
        return self.kind != "local"


@attrs.define
class Harness:
    kind: str
    """The transport: ``local``, ``wsgi`` or ``server``."""
    platform: Platform
    """Where organizations are created (the server's own database for ``server``)."""
    client_for: Callable[[str], Client]
    """A client for an API key's secret."""
    server: ServerProcess | None = None
    """The real server (``server`` only)."""
    store: str = "default"
    """``default`` (memory for ``local``, SQLite for the others) or ``postgresql``."""

    def context(self, plan: Plan = Plan.PROFESSIONAL) -> Context:
        boot = self.platform.bootstrap("E2E Org", plan)
        return Context(
            kind=self.kind,
            client=self.connect(boot.owner_key),
            organization_id=boot.organization.id,
            owner_key=boot.owner_key,
            connect=self.connect,
            operator=lambda data: self.platform.api_keys.create(self.platform.actor(boot.organization.id), data),
        )

    def connect(self, issued: IssuedKey) -> Client:
        if self.kind == "local":
            key = issued.key
            return Client(
                LocalTransport(
                    self.platform,
                    Actor(
                        organization_id=key.organization_id,
                        role=key.role,
                        key_id=key.id,
                        person_id=key.person_id,
                        key_issued_by=key.created_by,
                        key_issued_by_person_id=key.issued_by_person_id,
                        self_issued=key.self_issued,
                    ),
                )
            )
        assert issued.secret is not None
        return self.client_for(issued.secret)


def local_harness(url: str = "memory://") -> Harness:
    platform = Platform.open(url)
    return Harness("local", platform, client_for=lambda secret: pytest.fail("no secrets in-process"))


@attrs.define
class ServerProcess:
    """A running `compliance serve` subprocess and what it printed while starting."""

    process: subprocess.Popen[str]
    url: str
    startup: str
    errors: IO[str]
    """Its stderr (a file, so a chatty server can never block on a full pipe)."""

    def stop(self) -> str:
        """Stop with SIGTERM, as a supervisor would; return the rest of its output (nothing when
        it was already stopped)."""
        assert self.process.stdout is not None
        if self.process.stdout.closed:
            return ""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        rest = self.process.stdout.read()
        self.process.stdout.close()
        self.errors.close()
        return rest

    def stderr(self) -> str:
        self.errors.seek(0)
        return self.errors.read()


def start_server(
    db: Path | str, *, workers: int = 2, env: dict[str, str] | None = None, args: Sequence[str] = ()
) -> ServerProcess:
    """`compliance serve` on a free port (``--port 0``; the URL is read from its output), once
    /v1/health answers. ``db`` is a SQLite file or a store URL (``postgresql://...?schema=...``);
    ``args`` are more options (``--no-deliver``)."""
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by ServerProcess.stop)
    process = subprocess.Popen(
        [COMPLIANCE, "serve", "--db", str(db), "--port", "0", "--workers", str(workers), "--threads", "4", *args],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line)
        found = LISTENING.search(line)
        if found:
            url = found.group(1)
            break
    else:
        process.wait()
        errors.seek(0)
        raise AssertionError(f"compliance serve did not start:\n{''.join(lines)}\n{errors.read()}")
    deadline = time.monotonic() + 20
    while httpx.get(f"{url}/v1/health").status_code != 200:
        assert time.monotonic() < deadline, "no /v1/health"
        time.sleep(0.05)
    return ServerProcess(process=process, url=url, startup="".join(lines), errors=errors)


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def exchange(url: str, data: bytes, timeout: float = 20) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes (all of them: a server that stops reading early fails ``sendall`` with a
    reset), then read the answer until the server closes; status, headers, body."""
    with socket.create_connection(_address(url), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def spec_error(status: int, headers: dict[str, str], body: bytes, expected: int) -> dict[str, Any]:
    """Assert the spec's error body with its X-Request-Id; return the error object."""
    assert status == expected, body
    assert headers["content-type"] == "application/json"
    document = json.loads(body)
    assert set(document) == {"error", "requestId"}
    assert set(document["error"]) == {"code", "message", "details"}
    assert document["requestId"].startswith("req_") and document["requestId"] == headers["x-request-id"]
    return document["error"]  # type: ignore[no-any-return]


def chunked(total: int, size: int = 65536) -> bytes:
    chunk = f"{size:x}\r\n".encode() + b"x" * size + b"\r\n"
    return chunk * (total // size + 1) + b"0\r\n\r\n"


def startup_key(server: ServerProcess) -> str:
    """The first Owner API key the server printed when it made its database."""
    found = re.search(r"^\s+API key\s+(comp_[0-9a-f]{64})$", server.startup, re.M)
    assert found, server.startup
    return found.group(1)
