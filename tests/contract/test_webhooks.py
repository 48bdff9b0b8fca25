"""The webhook deliveries table on every store: the engine's ``due`` query, the fields the wire
never shows, and claims that stay exclusive when two engines step at once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs
from overlapping_store import Overlapping

from compliance_core import Platform
from compliance_core.areas.findings import NewFinding
from compliance_core.areas.vendors import NewVendor
from compliance_core.areas.webhooks import (
    DELIVERIES,
    DELIVERY_QUEUE,
    WEBHOOKS,
    DeliveryState,
    NewWebhook,
    SendResult,
    WebhookPolicy,
)
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.uow import Store

from . import samples

TABLE = samples.TABLES[DELIVERIES.name]


def _delivery(id: str, state: DeliveryState, due: float, lease: float | None = None) -> Any:
    return TABLE.make(
        "org_a",
        id,
        state=state,
        due_at=samples.at(due),
        lease_expires_at=None if lease is None else samples.at(lease),
    )


def test_due_is_pending_and_due_or_sending_with_an_expired_lease_earliest_first(store: Store) -> None:
    rows = [
        _delivery("whd_1", DeliveryState.PENDING, due=30),
        _delivery("whd_2", DeliveryState.PENDING, due=10),
        _delivery("whd_3", DeliveryState.PENDING, due=101),  # not yet
        _delivery("whd_4", DeliveryState.SENDING, due=5, lease=99),  # lease ran out
        _delivery("whd_5", DeliveryState.SENDING, due=1, lease=200),  # still leased
        _delivery("whd_6", DeliveryState.SUCCEEDED, due=1),
        _delivery("whd_7", DeliveryState.FAILED, due=1),
        attrs.evolve(_delivery("whd_8", DeliveryState.PENDING, due=10), organization_id="org_b"),
    ]
    with store.session(write=True) as session:
        for row in rows:
            session[DELIVERIES].add(row)
    with store.session(write=False) as session:
        due = session[DELIVERY_QUEUE].due(samples.at(100), 10)
        assert [d.id for d in due] == ["whd_4", "whd_2", "whd_8", "whd_1"]
        assert [d.id for d in session[DELIVERY_QUEUE].due(samples.at(100), 2)] == ["whd_4", "whd_2"]
        assert session[DELIVERY_QUEUE].due(samples.at(0), 10) == []
    assert due[0] == rows[3]


def test_what_the_wire_never_shows_is_still_stored(store: Store) -> None:
    """The secret and the body are left out of equality (a client never sees them): check them."""
    webhook = samples.TABLES[WEBHOOKS.name].make("org_a", "whk_1", secret="whsec_c2VjcmV0")
    delivery = TABLE.make("org_a", "whd_1", body='{"id":"evt_1","ü":"✓"}')
    with store.session(write=True) as session:
        session[WEBHOOKS].add(webhook)
        session[DELIVERIES].add(delivery)
    with store.session(write=False) as session:
        assert session[WEBHOOKS].get("org_a", "whk_1").secret == "whsec_c2VjcmV0"  # type: ignore[union-attr]
        assert session[DELIVERIES].get("org_a", "whd_1").body == delivery.body  # type: ignore[union-attr]


class _Counting:
    """A sender answering 200 and counting each event id it was given, slowly enough that two
    engines stepping at once overlap."""

    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()
        self._lock = threading.Lock()

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        threading.Event().wait(0.002)
        with self._lock:
            self.sent[headers["webhook-id"]] += 1
        return SendResult(status=200, duration_ms=2)


def test_two_engines_stepping_at_once_send_each_event_once(store: Store) -> None:
    platform = Platform(store, settings={"webhooks": WebhookPolicy(allow_private=True)})
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    platform.webhooks.create(owner, NewWebhook(url="http://127.0.0.1:9/a", events=["finding.created"]))
    platform.webhooks.create(owner, NewWebhook(url="http://127.0.0.1:9/b", events=["*"]))
    for n in range(30):
        platform.findings.create(owner, NewFinding(title=f"Finding {n}", severity="low"))
    sender = _Counting()
    engines = [platform.delivery_engine(sender, batch=7, concurrency=2) for _ in range(2)]
    go = threading.Barrier(2)

    def drain(engine: Any) -> None:
        go.wait()
        for _ in range(50):
            engine.step()

    threads = [threading.Thread(target=drain, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 30 findings to both endpoints; the second endpoint's own creation to it alone (the first
    # endpoint's creation happened before the second existed, and the first takes findings only)
    assert len(sender.sent) == 31
    assert sorted(Counter(sender.sent.values()).items()) == [(1, 1), (2, 30)]
    with store.session(write=False) as session:
        assert session[DELIVERY_QUEUE].due(samples.at(10**9), 999) == []


def test_due_leaves_out_the_endpoints_skipped_and_in_flight_counts_running_leases(store: Store) -> None:
    rows = [
        attrs.evolve(_delivery("whd_1", DeliveryState.PENDING, due=1), webhook_id="whk_slow"),
        attrs.evolve(_delivery("whd_2", DeliveryState.PENDING, due=2), webhook_id="whk_slow"),
        attrs.evolve(_delivery("whd_3", DeliveryState.PENDING, due=3), webhook_id="whk_fast"),
        attrs.evolve(_delivery("whd_4", DeliveryState.SENDING, due=0, lease=200), webhook_id="whk_slow"),
        attrs.evolve(_delivery("whd_5", DeliveryState.SENDING, due=0, lease=300), webhook_id="whk_slow"),
        attrs.evolve(_delivery("whd_6", DeliveryState.SENDING, due=0, lease=99), webhook_id="whk_fast"),  # ran out
        attrs.evolve(_delivery("whd_7", DeliveryState.SENDING, due=0, lease=150), webhook_id="whk_other"),
    ]
    with store.session(write=True) as session:
        for row in rows:
            session[DELIVERIES].add(row)
        queue = session[DELIVERY_QUEUE]
        assert [d.id for d in queue.due(samples.at(100), 10)] == ["whd_6", "whd_1", "whd_2", "whd_3"]
        assert [d.id for d in queue.due(samples.at(100), 10, skip={"whk_slow"})] == ["whd_6", "whd_3"]
        assert queue.due(samples.at(100), 10, skip=["whk_slow", "whk_fast"]) == []
        assert queue.in_flight(samples.at(100)) == {"whk_slow": 2, "whk_other": 1}
        assert queue.in_flight(samples.at(250)) == {"whk_slow": 1}


class _Gate:
    """A sender that holds every attempt to ``stuck`` until released (a receiver that never
    answers within the time limit) and answers the others at once, recording the order."""

    def __init__(self, stuck: str) -> None:
        self.stuck = stuck
        self.release = threading.Event()
        self.arrived: list[str] = []
        self.holding = 0
        self.most_held = 0
        self.changed = threading.Condition()

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        with self.changed:
            self.arrived.append(url)
            if url == self.stuck:
                self.holding += 1
                self.most_held = max(self.most_held, self.holding)
            self.changed.notify_all()
        if url == self.stuck:
            self.release.wait(30)
            with self.changed:
                self.holding -= 1
            return SendResult(error="timeout", detail="timed out")
        return SendResult(status=200)

    def wait(self, test: Any, timeout: float = 15) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: test(self), timeout), self.arrived


def test_a_stuck_endpoint_holds_its_own_attempts_only(store: Store) -> None:
    """Five events wait for the stuck endpoint: at most ``per_endpoint`` are in flight at once,
    and an event for another endpoint, recorded after, is delivered while they are stuck."""
    platform = Platform(store, settings={"webhooks": WebhookPolicy(allow_private=True)})
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    platform.webhooks.create(owner, NewWebhook(url="http://127.0.0.1:9/stuck", events=["finding.created"]))
    other = platform.webhooks.create(owner, NewWebhook(url="http://127.0.0.1:9/other", events=["vendor.created"]))
    gate = _Gate("http://127.0.0.1:9/stuck")
    engine = platform.delivery_engine(gate, concurrency=4, per_endpoint=2)
    stop = threading.Event()
    loop = threading.Thread(target=engine.run, args=(stop, 0.02))
    loop.start()
    try:
        for n in range(5):
            platform.findings.create(owner, NewFinding(title=f"Finding {n}", severity="low"))
        gate.wait(lambda g: g.holding == 2)
        platform.vendors.create(owner, NewVendor(name="Acme Cloud"))
        gate.wait(lambda g: "http://127.0.0.1:9/other" in g.arrived)
        assert gate.holding == 2 and not gate.release.is_set()
        assert gate.arrived.count("http://127.0.0.1:9/stuck") == 2  # the three others wait their turn
    finally:
        gate.release.set()
        stop.set()
        loop.join()
    assert gate.most_held == 2
    log = platform.webhooks.deliveries(owner, other.webhook.id).items
    assert [d.state for d in log] == [DeliveryState.SUCCEEDED]


def test_concurrent_rotations_all_answer_the_one_secret_that_signs(store: Store) -> None:
    gated = Overlapping(store)
    platform = Platform(gated, settings={"webhooks": WebhookPolicy(allow_private=True)})  # type: ignore[arg-type]
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    issued = platform.webhooks.create(owner, NewWebhook(url="http://127.0.0.1:9/a", events=["*"]))
    webhook_id = issued.webhook.id
    answers: list[str | None] = []
    gated.overlap(10, after=WEBHOOKS)

    def rotate() -> None:
        answers.append(platform.webhooks.rotate_secret(owner, webhook_id).secret)

    threads = [threading.Thread(target=rotate) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    in_force = platform.webhooks.get(owner, webhook_id).secret
    assert len(answers) == 10 and set(answers) == {in_force} and in_force != issued.secret
    with store.session(write=False) as session:
        rotations = [m for m in session[OUTBOX].pending(limit=1000) if m.type == "webhook.secret_rotated"]
    assert len(rotations) == 1
    # a rotation that does not overlap another rotates again
    assert platform.webhooks.rotate_secret(owner, webhook_id).secret not in (None, in_force)
