"""Webhooks end to end: real `compliance worker` and `compliance serve` processes delivering to a
loopback receiver. Nothing is lost when the delivering process is killed, a 500 comes back with
the same ``webhook-id`` within 30 s, and several delivering processes on one database (SQLite, or
one PostgreSQL schema) never send one event twice to one endpoint."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs
import httpx
import pytest

from compliance_core import Platform
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.vendors import NewVendor
from compliance_core.areas.webhooks import DeliveryQuery, DeliveryState, NewWebhook, WebhookPolicy
from e2e_support import COMPLIANCE, ServerProcess
from webhook_receiver import Answer, Receiver

pytestmark = pytest.mark.slow

PRIVATE = {"COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS": "1"}


@attrs.define
class Worker:
    process: subprocess.Popen[str]
    errors: IO[str]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.errors.close()


@pytest.fixture
def workers() -> Iterator[Callable[[str], Worker]]:
    started: list[Worker] = []

    def start(db: str) -> Worker:
        errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by Worker.stop)
        process = subprocess.Popen(
            [COMPLIANCE, "worker", "--db", db, "--interval", "0.2"],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, **PRIVATE},
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if "Delivering webhooks" not in line:
            process.wait()
            errors.seek(0)
            raise AssertionError(f"compliance worker did not start: {line}{errors.read()}")
        worker = Worker(process, errors)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@attrs.define
class World:
    platform: Platform
    owner: Any

    def succeeded(self, webhook_id: str, count: int, timeout: float = 10.0) -> None:
        """Wait until ``count`` deliveries to the endpoint are recorded as succeeded."""
        deadline = time.monotonic() + timeout
        done = DeliveryQuery(state=DeliveryState.SUCCEEDED)
        while len(self.platform.webhooks.deliveries(self.owner, webhook_id, done).items) < count:
            assert time.monotonic() < deadline, f"{count} deliveries not recorded within {timeout} s"
            time.sleep(0.02)

    def vendors(self, count: int, prefix: str = "Vendor") -> list[str]:
        return [self.platform.vendors.create(self.owner, NewVendor(name=f"{prefix} {n}")).id for n in range(count)]


def world(url: str) -> World:
    platform = Platform.open(url, settings={"webhooks": WebhookPolicy(allow_private=True)})
    return World(platform, platform.actor(platform.bootstrap("Acme").organization.id))


def _types(receiver: Receiver) -> Counter[tuple[str, str]]:
    """(path, webhook-id) -> how many times it arrived."""
    return Counter((r.path, r.headers["webhook-id"]) for r in receiver.received)


def test_killing_the_worker_loses_nothing(tmp_path: Path, workers: Callable[[str], Worker]) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    acme = world(db)
    with Receiver() as receiver:
        endpoint = acme.platform.webhooks.create(
            acme.owner, NewWebhook(url=f"{receiver.url}/a", events=["vendor.created"])
        )
        first = workers(db)
        acme.vendors(3, "Before")
        receiver.wait_for(3)
        # delivery is at least once: a worker killed between the receiver's answer and its own
        # record of it sends that event again, so kill it only once it has recorded all three
        acme.succeeded(endpoint.webhook.id, 3)
        first.kill()  # SIGKILL: no chance to finish anything
        acme.vendors(5, "While down")  # committed while nobody delivers
        time.sleep(0.5)
        assert len(receiver.received) == 3
        workers(db)
        receiver.wait_for(8)
        time.sleep(0.5)
        arrived = _types(receiver)
        assert len(arrived) == 8 and set(arrived.values()) == {1}
    acme.platform.close()


def test_a_500_comes_back_with_the_same_id_within_30_seconds(tmp_path: Path, workers: Callable[[str], Worker]) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    acme = world(db)
    with Receiver() as receiver:
        acme.platform.webhooks.create(acme.owner, NewWebhook(url=f"{receiver.url}/a", events=["vendor.created"]))
        receiver.answer(Answer(status=500, body=b"not now"))
        workers(db)
        acme.vendors(1)
        first, second = receiver.wait_for(2, timeout=30)
        assert first.headers["webhook-id"] == second.headers["webhook-id"] and first.body == second.body
        assert second.at - first.at < 30
    acme.platform.close()


def _two_workers_deliver_each_event_once(db: str, workers: Callable[[str], Worker]) -> None:
    acme = world(db)
    with Receiver() as receiver:
        for path in ("a", "b"):
            acme.platform.webhooks.create(
                acme.owner, NewWebhook(url=f"{receiver.url}/{path}", events=["vendor.created"])
            )
        workers(db), workers(db)
        events = 30
        acme.vendors(events)
        receiver.wait_for(2 * events, timeout=60)
        time.sleep(1.0)  # anything sent twice would have arrived by now
        arrived = _types(receiver)
        assert len(arrived) == 2 * events and set(arrived.values()) == {1}
    acme.platform.close()


def test_two_workers_on_one_sqlite_file(tmp_path: Path, workers: Callable[[str], Worker]) -> None:
    _two_workers_deliver_each_event_once(f"sqlite:///{tmp_path / 'two.db'}", workers)


def test_two_workers_on_one_postgresql_schema(
    new_postgres_schema: Callable[[], str], workers: Callable[[str], Worker]
) -> None:
    _two_workers_deliver_each_event_once(new_postgres_schema(), workers)


def test_serve_delivers_from_one_worker_unless_told_not_to(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    """Two server processes, one delivery thread: each event arrives once; none with --no-deliver."""
    for deliver in (True, False):
        db = tmp_path / f"serve-{deliver}.db"
        acme = world(f"sqlite:///{db}")
        headers = {"X-API-Key": acme.platform.api_keys.create(acme.owner, NewApiKey(name="e2e", role="owner")).secret}
        acme.platform.close()
        server = serve(db, workers=2, env=PRIVATE, args=() if deliver else ("--no-deliver",))
        try:
            with Receiver() as receiver:
                made = httpx.post(
                    f"{server.url}/v1/webhooks",
                    json={"url": f"{receiver.url}/hook", "events": ["vendor.created"]},
                    headers=headers,
                )
                assert made.status_code == 201, made.text
                for n in range(5):
                    assert httpx.post(f"{server.url}/v1/vendors", json={"name": f"V{n}"}, headers=headers).is_success
                if deliver:
                    receiver.wait_for(5)
                time.sleep(1.5)
                assert len(receiver.received) == (5 if deliver else 0)
                assert set(_types(receiver).values()) <= {1}
        finally:
            server.stop()
