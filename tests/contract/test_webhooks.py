"""The webhook deliveries table on every store: the engine's ``due`` query, the fields the wire
never shows, and claims that stay exclusive when two engines step at once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs

from compliance_core import Platform
from compliance_core.areas.findings import NewFinding
from compliance_core.areas.webhooks import (
    DELIVERIES,
    DELIVERY_QUEUE,
    WEBHOOKS,
    DeliveryState,
    NewWebhook,
    SendResult,
    WebhookPolicy,
)
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
