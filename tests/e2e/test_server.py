"""The process supervisor, with a trivial WSGI app: one socket, N workers, clean stops, restarts."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest

from compliance_core import ValidationError
from compliance_http.server import ServerError, WorkerPool, bind, url_for

pytestmark = pytest.mark.slow


def pid_app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(os.getpid()).encode()]


def failing_factory():
    raise ValidationError.field("db", "nowhere://", "no store for this URL scheme")


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


@contextlib.contextmanager
def supervised(pool: WorkerPool):
    """Run ``pool.supervise`` in a thread, as the CLI runs it in the main thread."""
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


def test_workers_share_one_socket():
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(lambda: pid_app, sock, workers=2, threads=2)
    with supervised(pool):
        assert len(set(pool.pids)) == 2
        for _ in range(5):
            assert int(httpx.get(url_for(sock), headers={"Connection": "close"}).text) in pool.pids
    assert pool.pids == []
    sock.close()


def test_a_dead_worker_is_replaced_and_the_replacement_serves():
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(lambda: pid_app, sock, workers=1, threads=2)
    with supervised(pool):
        [victim] = pool.pids
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(pool.pids) == 1 and victim not in pool.pids)
        [replacement] = pool.pids
        # the only worker now is the replacement, accepting on the same socket
        assert int(httpx.get(url_for(sock), headers={"Connection": "close"}).text) == replacement
        assert pool.pids == [replacement]
    sock.close()


def test_a_worker_that_cannot_build_its_app_stops_the_start_with_its_reason():
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(failing_factory, sock, workers=2)
    with pytest.raises(ServerError, match="no store for this URL scheme"):
        pool.start()
    assert pool.pids == []
    sock.close()


def test_workers_that_keep_dying_make_the_supervisor_give_up():
    sock = bind("127.0.0.1", 0)
    pool = WorkerPool(lambda: pid_app, sock, workers=1, max_restarts=2)
    reader, writer = socket.socketpair()
    pool.start()
    errors: list[BaseException] = []

    def supervise():
        try:
            pool.supervise(reader)
        except ServerError as error:
            errors.append(error)

    thread = threading.Thread(target=supervise)
    thread.start()
    for _ in range(3):
        wait_until(lambda: bool(pool.pids) or bool(errors))
        if errors:
            break
        with contextlib.suppress(ProcessLookupError):
            os.kill(pool.pids[0], signal.SIGKILL)
        time.sleep(0.2)
    thread.join(10)
    pool.stop()
    assert errors and "giving up" in str(errors[0])
    for s in (sock, reader, writer):
        s.close()


def test_binding_a_port_in_use_is_a_validation_error_naming_the_port():
    first = bind("127.0.0.1", 0)
    port = first.getsockname()[1]
    try:
        with pytest.raises(ValidationError) as raised:
            bind("127.0.0.1", port)
        assert raised.value.details["field"] == "port"
        assert raised.value.details["value"] == port
    finally:
        first.close()


SERVE_SCRIPT = textwrap.dedent(
    """
    import contextlib, os, sys
    from compliance_http.server import serve_forever

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(os.getpid()).encode()]

    @contextlib.contextmanager
    def factory():
        yield app
        with open(os.path.join(sys.argv[1], f"closed-{os.getpid()}"), "w"):
            pass

    serve_forever(factory, "127.0.0.1", 0, workers=2, threads=2,
                  on_ready=lambda url: print(url, flush=True))
    print("stopped", flush=True)
    """
)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_forever_stops_every_worker_cleanly_on_a_signal(tmp_path: Path, stop_signal):
    process = subprocess.Popen([sys.executable, "-c", SERVE_SCRIPT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        served_by = int(httpx.get(url, headers={"Connection": "close"}).text)
        process.send_signal(stop_signal)
        assert process.wait(20) == 0
        assert process.stdout.read().strip() == "stopped"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # both workers ran their factory's exit (the store would be closed), the one that served too
    closed = {int(p.name.split("-")[1]) for p in tmp_path.glob("closed-*")}
    assert len(closed) == 2 and served_by in closed
    for pid in closed:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
