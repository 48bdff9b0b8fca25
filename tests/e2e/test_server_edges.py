"""What only a real server shows at the edges: requests waitress refuses itself answered in the
spec's error shape (raw sockets), the body limit, the access log on stderr, the purge done by one
process, and the lead worker's replacement."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compliance_http.resources import MAX_BODY_BYTES
from compliance_http.server import MAX_REQUEST_BODY, WorkerPool, bind, url_for
from e2e_support import ServerProcess, chunked, exchange, spec_error, start_server, startup_key

pytestmark = pytest.mark.slow

REASON = f"must be at most {MAX_BODY_BYTES} bytes"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    running = start_server(tmp_path_factory.mktemp("edges") / "edges.db", workers=2)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def owner_key(server: ServerProcess) -> str:
    return startup_key(server)


POST = b"POST /v1/vendors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
CASES = {
    "nul-in-header": (b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Note: a\x00b\r\n\r\n", 400, "headers"),
    "non-ascii-request-line": ("GET /v1/h\u00e9alth HTTP/1.1\r\nHost: x\r\n\r\n".encode(), 400, "requestLine"),
    "non-ascii-method": ("G\u00c9T /v1/health HTTP/1.1\r\nHost: x\r\n\r\n".encode(), 400, "requestLine"),
    "negative-content-length": (POST + b"Content-Length: -1\r\n\r\n", 400, "Content-Length"),
    "headers-too-large": (
        b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 300_000 + b"\r\n\r\n",
        431,
        "headers",
    ),
    "announced-100-mb": (POST + b"Content-Length: 100000000\r\n\r\n" + b"x" * 1000, 413, "body"),
    "sent-20-mb": (POST + b"Content-Length: 20000000\r\n\r\n" + b"x" * 20_000_000, 413, "body"),
    "chunked-over-the-limit": (POST + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(MAX_REQUEST_BODY), 413, "body"),
}


@pytest.mark.parametrize("case", CASES)
def test_requests_waitress_refuses_get_the_spec_error_shape(server: ServerProcess, case: str) -> None:
    data, expected, field = CASES[case]
    failure = spec_error(*exchange(server.url, data), expected)
    assert failure["code"] == "validation_error"
    assert failure["details"]["field"] == field
    if expected == 413:
        assert failure["details"]["reason"] == REASON and failure["message"] == f"body: {REASON}"
    if case == "announced-100-mb":
        assert failure["details"]["value"] == 100_000_000


def test_an_unsupported_transfer_encoding_is_answered_in_the_shape_too(server: ServerProcess) -> None:
    failure = spec_error(*exchange(server.url, POST + b"Transfer-Encoding: gzip\r\n\r\n"), 501)
    assert failure["code"] == "internal_error" and failure["details"]["field"] == "Transfer-Encoding"


@pytest.mark.parametrize("extra", [1, 10_000], ids=["one-byte-over", "10-kB-over"])
def test_a_body_just_over_our_limit_is_refused_by_the_app_alike(
    server: ServerProcess, owner_key: str, extra: int
) -> None:
    answer = httpx.post(
        f"{server.url}/v1/vendors",
        content=b" " * (MAX_BODY_BYTES + extra),
        headers={"X-API-Key": owner_key, "Content-Type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 413
    body = answer.json()
    assert body["error"]["details"] == {"field": "body", "value": MAX_BODY_BYTES + extra, "reason": REASON}
    assert body["requestId"] == answer.headers["X-Request-Id"]
    assert answer.headers["X-RateLimit-Limit"]  # the app answered, after admitting the key


def test_a_deeply_nested_body_is_a_400_on_the_real_server(server: ServerProcess, owner_key: str) -> None:
    body = b'{"name":' + b"[" * 1000 + b"]" * 1000 + b"}"
    answer = httpx.post(
        f"{server.url}/v1/vendors", content=body, headers={"X-API-Key": owner_key, "Content-Type": "application/json"}
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "validation_error"
    assert answer.headers["content-type"] == "application/json"


def test_public_health_does_not_reveal_the_database_path(server: ServerProcess, owner_key: str) -> None:
    public = httpx.get(f"{server.url}/v1/health")
    assert public.status_code == 200 and set(public.json()) == {"status", "version", "timestamp"}
    assert "edges.db" not in public.text
    detailed = httpx.get(f"{server.url}/v1/health", headers={"X-API-Key": owner_key}).json()
    assert detailed["store"]["path"].endswith("edges.db")


def _access_lines(server: ServerProcess) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.stderr().splitlines() if line.startswith('{"time"')]


def _wait_for(condition: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_every_request_gets_one_json_access_line_on_stderr(server: ServerProcess, owner_key: str) -> None:
    listed = httpx.get(f"{server.url}/v1/vendors?perPage=2&country=FR", headers={"X-API-Key": owner_key})
    refused = exchange(server.url, POST + b"Content-Length: -1\r\n\r\n")
    ids = {listed.headers["X-Request-Id"], refused[1]["x-request-id"]}
    _wait_for(lambda: ids <= {line["requestId"] for line in _access_lines(server)})
    lines = {line["requestId"]: line for line in _access_lines(server)}
    app_line, refused_line = lines[listed.headers["X-Request-Id"]], lines[refused[1]["x-request-id"]]
    assert app_line["route"] == "/v1/vendors" and app_line["status"] == 200 and app_line["method"] == "GET"
    assert app_line["keyId"].startswith("key_") and app_line["durationMs"] >= 0
    assert refused_line == {**refused_line, "route": None, "status": 400, "keyId": None, "method": "POST"}
    stderr = server.stderr()
    assert owner_key not in stderr and "country=FR" not in stderr and "perPage=2" not in stderr
    # one line per request: no request id appears twice
    every = [line["requestId"] for line in _access_lines(server)]
    assert len(every) == len(set(every))


def test_expired_idempotency_records_are_purged_by_one_process_only(server: ServerProcess) -> None:
    _wait_for(lambda: "purged" in server.stderr())
    purges = re.findall(
        r"^.* (\d+) INFO compliance_http\.server[.\w]*: purged (\d+) expired idempotency", server.stderr(), re.M
    )
    assert len(purges) == 1, server.stderr()  # two workers, one purge at start-up


SERVE_QUIET = textwrap.dedent(
    """
    import sys
    from compliance_http.server import serve_platform

    serve_platform(f"sqlite:///{sys.argv[1]}", port=0, workers=1, access_log=False,
                   on_ready=lambda url: print(url, flush=True))
    """
)


def test_the_access_log_can_be_turned_off(tmp_path: Path) -> None:
    errors = (tmp_path / "stderr").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_QUIET, str(tmp_path / "quiet.db")],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://")
        for _ in range(3):
            assert httpx.get(f"{url}/v1/health").status_code == 200
        assert spec_error(*exchange(url, POST + b"Content-Length: -1\r\n\r\n"), 400)
        _wait_for(lambda: "purged" in (tmp_path / "stderr").read_text())  # the server's messages stay
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        errors.close()
    assert '{"time"' not in (tmp_path / "stderr").read_text()


# -- the process machinery, with small WSGI apps ---------------------------------------------------


def _failing_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    raise RuntimeError("exploded before any answer")


def _logging_factory(log_file: str) -> Any:
    def factory() -> Any:
        import logging

        handler = logging.FileHandler(log_file)
        logging.getLogger("compliance_http").addHandler(handler)
        return _failing_app

    return factory


@contextlib.contextmanager
def supervised(pool: WorkerPool) -> Iterator[None]:
    reader, writer = socket.socketpair()
    stopping = threading.Event()
    pool.start()
    thread = threading.Thread(target=pool.supervise, args=(reader, stopping.is_set))
    thread.start()
    try:
        yield
    finally:
        stopping.set()
        writer.send(b"x")
        thread.join(10)
        pool.stop()
        reader.close()
        writer.close()


def test_an_app_failing_before_it_answers_gets_a_json_500_logged_with_its_request_id(tmp_path: Path) -> None:
    log_file = tmp_path / "worker.log"
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(_logging_factory(str(log_file)), sock, workers=1, threads=1)
    with supervised(pool):
        answer = httpx.get(f"{url_for(sock)}/anything", headers={"Connection": "close"})
        assert answer.status_code == 500 and answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert body["error"]["code"] == "internal_error" and "exploded" not in answer.text
        rid = answer.headers["X-Request-Id"]
        assert body["requestId"] == rid
        _wait_for(lambda: rid in log_file.read_text())
    logged = log_file.read_text()
    assert "Traceback" in logged and "exploded before any answer" in logged
    sock.close()


def _marking_app_factory(directory: str, role: str) -> Any:
    def factory() -> Any:
        Path(directory, f"{role}-{os.getpid()}").touch()

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [role.encode()]

        return app

    return factory


def test_exactly_one_worker_is_the_lead_and_a_dead_lead_is_replaced_by_a_lead(tmp_path: Path) -> None:
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(
        _marking_app_factory(str(tmp_path), "worker"),
        sock,
        workers=3,
        threads=1,
        lead_factory=_marking_app_factory(str(tmp_path), "lead"),
    )

    def started(role: str) -> set[int]:
        return {int(p.name.split("-")[1]) for p in tmp_path.glob(f"{role}-*")}

    with supervised(pool):
        assert pool.lead is not None and len(started("lead")) == 1 and len(started("worker")) == 2
        [first] = started("lead")
        assert pool.lead.pid == first
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: len(started("lead")) == 2 and len(pool.pids) == 3)
        assert pool.lead.pid in started("lead") - {first}
        assert len(started("worker")) == 2  # the other workers were left alone
    sock.close()
