"""Webhooks in-process: the endpoint rules, and the delivery engine end to end through a real
in-process sender (it answers as scripted and keeps what it was sent), on the memory store."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
from collections import deque
from collections.abc import Mapping
from typing import Any

import attrs
import pytest
import standardwebhooks
from hypothesis import given
from hypothesis import strategies as st

from compliance_core import Conflict, Forbidden, FrozenClock, Platform, Role, SequentialIds, ValidationError
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.vendors import NewVendor
from compliance_core.areas.webhooks import (
    PING,
    SCHEDULE,
    DeliveryQuery,
    DeliveryState,
    NewWebhook,
    SendResult,
    WebhookPatch,
    WebhookPolicy,
)
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_store.memory import MemoryStore


@attrs.frozen
class Sent:
    url: str
    body: bytes
    headers: Mapping[str, str]


class Scripted:
    """A sender that answers the queued results in turn (then 200) and keeps every request."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.results: deque[SendResult] = deque()

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        self.sent.append(Sent(url, body, dict(headers)))
        return self.results.popleft() if self.results else SendResult(status=200, duration_ms=3, excerpt="ok")


class Hosts:
    """A resolver over a fixed table (an IP literal resolves to itself)."""

    def __init__(self, **table: str) -> None:
        self.table = {name.replace("_", "."): address for name, address in table.items()}

    def resolve(self, host: str, port: int) -> list[str]:
        if host in self.table:
            return [self.table[host]]
        if host.replace(".", "").isdigit() or ":" in host:
            return [host]
        raise OSError(f"unknown host {host}")


PUBLIC = "https://93.184.215.14/hook"


@pytest.fixture
def clock() -> FrozenClock:
    # standardwebhooks refuses timestamps more than 5 minutes from its own clock
    return FrozenClock(dt.datetime.now(dt.UTC).replace(microsecond=0))


def make_platform(clock: FrozenClock, **policy: Any) -> Platform:
    policy.setdefault("resolver", Hosts(hooks_example_com="93.184.215.14", inside_example_com="10.0.0.7"))
    settings = {"webhooks": WebhookPolicy(**policy)}
    return Platform(MemoryStore(), clock=clock, ids=SequentialIds(), settings=settings)


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return make_platform(clock)


@pytest.fixture
def sender() -> Scripted:
    return Scripted()


@pytest.fixture
def engine(platform: Platform, sender: Scripted) -> Any:
    return platform.delivery_engine(sender, draw=lambda: 0.5, concurrency=1)


def outbox_types(platform: Platform) -> list[str]:
    with platform.store.session(write=False) as session:
        return [m.type for m in session[OUTBOX].pending(limit=1000)]


# -- endpoints -------------------------------------------------------------------------------------


def test_the_secret_is_shown_once_and_never_rendered_with_the_endpoint(platform: Platform, owner: Any) -> None:
    issued = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"]), idempotency_key="k")
    assert issued.secret is not None and issued.secret.startswith("whsec_")
    assert len(base64.b64decode(issued.secret.removeprefix("whsec_"), validate=True)) == 32
    stored = platform.webhooks.get(owner, issued.webhook.id)
    assert stored.secret == issued.secret
    shown = platform.renderer.json(stored)
    assert "secret" not in shown and issued.secret not in json.dumps(shown)
    assert platform.renderer.json(issued)["secret"] == issued.secret
    replay = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"]), idempotency_key="k")
    assert replay.secret is None and replay.webhook == issued.webhook
    with platform.store.session(write=False) as session:
        payloads = json.dumps([m.payload for m in session[OUTBOX].pending()])
    assert issued.secret not in payloads


def test_rotating_gives_a_new_secret_and_records_it(platform: Platform, owner: Any) -> None:
    issued = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"]))
    rotated = platform.webhooks.rotate_secret(owner, issued.webhook.id)
    assert rotated.secret not in (None, issued.secret)
    assert platform.webhooks.get(owner, issued.webhook.id).secret == rotated.secret
    assert outbox_types(platform)[-2:] == ["webhook.created", "webhook.secret_rotated"]


@pytest.mark.parametrize(
    "events, field, value",
    [
        (["vendor.created", "vendor.exploded"], "events[1]", "vendor.exploded"),
        ([], "events", []),
        (["Vendor Created"], "events[0]", "Vendor Created"),
        ("vendor.created", "events", "vendor.created"),
    ],
)
def test_events_name_declared_types_or_star(
    platform: Platform, owner: Any, events: Any, field: str, value: Any
) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=events))
    assert (raised.value.details["field"], raised.value.details["value"]) == (field, value)


def test_subscribing_to_every_declared_type_works(platform: Platform, owner: Any) -> None:
    types = sorted(event.type for area in platform.areas for event in area.events)
    created = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=[*types, types[0]])).webhook
    assert created.events == tuple(types)
    star = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created", "*"])).webhook
    assert star.events == ("*",)


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://93.184.215.14/hook", "must be an https URL"),
        ("https://127.0.0.1/hook", "not a public address"),
        ("https://10.1.2.3/hook", "not a public address"),
        ("https://[::1]/hook", "not a public address"),
        ("https://[::ffff:192.168.0.1]/hook", "not a public address"),
        ("https://169.254.169.254/latest", "metadata"),
        ("https://inside.example.com/hook", "not a public address"),
        ("https://nowhere.example.com/hook", "does not resolve"),
        ("ftp://hooks.example.com/x", "must be an http(s) URL"),
    ],
)
def test_endpoints_must_be_public_https(platform: Platform, owner: Any, url: str, reason: str) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.webhooks.create(owner, NewWebhook(url=url, events=["*"]))
    assert raised.value.details["field"] == "url" and raised.value.details["value"] == url
    assert reason in raised.value.details["reason"]


def test_private_targets_when_allowed_but_never_the_metadata_address(clock: FrozenClock) -> None:
    platform = make_platform(clock, allow_private=True)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    for url in ("http://127.0.0.1:8080/hook", "https://inside.example.com/hook", "http://[::1]/x"):
        platform.webhooks.create(owner, NewWebhook(url=url, events=["*"]))
    for url in ("http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/"):
        with pytest.raises(ValidationError, match="metadata"):
            platform.webhooks.create(owner, NewWebhook(url=url, events=["*"]))


def test_a_url_change_is_checked_like_a_new_one(platform: Platform, owner: Any) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"])).webhook
    with pytest.raises(ValidationError, match="not a public address"):
        platform.webhooks.update(owner, webhook.id, WebhookPatch(url="https://10.0.0.1/x"))
    moved = platform.webhooks.update(owner, webhook.id, WebhookPatch(url="https://hooks.example.com/v2"))
    assert moved.url == "https://hooks.example.com/v2"


def test_only_managers_configure_webhooks(platform: Platform, actor_as: Any, owner: Any) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"])).webhook
    platform.webhooks.get(actor_as(Role.ADMIN), webhook.id)
    for role in (Role.AUDITOR, Role.EMPLOYEE):
        with pytest.raises(Forbidden):
            platform.webhooks.list(actor_as(role))


def test_another_organizations_endpoints_do_not_exist(platform: Platform, owner: Any, other_org: Any) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"])).webhook
    with pytest.raises(Exception) as raised:
        platform.webhooks.deliveries(other_org, webhook.id)
    assert type(raised.value).__name__ == "NotFound"


# -- delivery --------------------------------------------------------------------------------------


def test_every_event_reaches_every_subscribed_endpoint_once_signed(
    platform: Platform, owner: Any, engine: Any, sender: Scripted
) -> None:
    everything = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["*"]))
    findings = platform.webhooks.create(
        owner, NewWebhook(url="https://hooks.example.com/f", events=["finding.created", "finding.updated"])
    )
    platform.webhooks.create(owner, NewWebhook(url="https://hooks.example.com/off", events=["*"], active=False))
    finding = platform.findings.create(owner, NewFinding(title="Weak TLS", severity="low"))
    platform.findings.update(owner, finding.id, FindingPatch(severity="high"))
    platform.vendors.create(owner, NewVendor(name="Acme Cloud"))
    with platform.store.session(write=False) as session:
        bodies = {m.id: m.payload for m in session[OUTBOX].pending(limit=100)}

    report = engine.drain()
    assert engine.drain().sent == 0  # nothing is sent twice

    by_url: dict[str, list[str]] = {}
    for sent in sender.sent:
        by_url.setdefault(sent.url, []).append(json.loads(sent.body)["type"])
    assert by_url == {
        # all three creations (one instant on this clock: each endpoint existed when they happened)
        PUBLIC: ["webhook.created"] * 3
        + ["finding.created", "finding.updated", "finding.severity_changed"]
        + ["vendor.created"],
        "https://hooks.example.com/f": ["finding.created", "finding.updated"],
    }
    assert report.sent == len(sender.sent) and report.succeeded == report.sent
    for sent in sender.sent:
        secret = everything.secret if sent.url == PUBLIC else findings.secret
        assert secret is not None
        assert json.loads(sent.body) == bodies[sent.headers["webhook-id"]]
        expected = hmac.new(secret.encode(), sent.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(sent.headers["X-Service-Signature"], expected)
        standardwebhooks.Webhook(secret).verify(sent.body, dict(sent.headers))
        assert sent.headers["Content-Type"] == "application/json"


def test_each_endpoint_gets_each_event_of_its_types_exactly_once(
    platform: Platform, owner: Any, engine: Any, sender: Scripted
) -> None:
    platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"]))
    platform.webhooks.create(owner, NewWebhook(url="https://hooks.example.com/x", events=["*"]))
    for n in range(7):
        platform.vendors.create(owner, NewVendor(name=f"Vendor {n}"))
    engine.drain()
    sent = [(s.url, s.headers["webhook-id"]) for s in sender.sent]
    assert len(sent) == len(set(sent))
    assert sum(1 for url, _ in sent if url == PUBLIC) == 7
    assert sum(1 for url, _ in sent if url != PUBLIC) == 9  # and both creations (one instant on this clock)


def test_a_rolled_back_write_announces_nothing(platform: Platform, owner: Any, engine: Any, sender: Scripted) -> None:
    platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"]))

    class Abort(Exception):
        pass

    with pytest.raises(Abort), platform.uow.write(None) as tx:
        from compliance_core.areas.vendors import VendorCreated

        tx.record(VendorCreated(organization_id=owner.organization_id, subject=platform.webhooks.list(owner).items[0]))
        raise Abort
    engine.drain()
    assert sender.sent == []


def test_a_500_comes_again_with_the_same_id_after_about_ten_seconds(
    platform: Platform, owner: Any, engine: Any, sender: Scripted, clock: FrozenClock
) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    sender.results.append(SendResult(status=500, duration_ms=4, excerpt="boom"))
    engine.drain()
    assert len(sender.sent) == 1
    clock.advance(seconds=9.9)
    engine.drain()
    assert len(sender.sent) == 1
    clock.advance(seconds=0.1)
    engine.drain()
    assert len(sender.sent) == 2
    first, second = sender.sent
    assert first.headers["webhook-id"] == second.headers["webhook-id"] and first.body == second.body
    log = platform.webhooks.deliveries(owner, webhook.id).items  # newest first
    assert [(d.attempt, d.state, d.status_code) for d in log] == [
        (2, DeliveryState.SUCCEEDED, 200),
        (1, DeliveryState.FAILED, 500),
    ]
    assert log[1].response_excerpt == "boom" and log[1].next_retry_at == log[0].due_at
    assert log[0].next_retry_at is None and log[0].response_excerpt == "ok"


@pytest.mark.parametrize(
    "result, retried",
    [
        (SendResult(status=503), True),
        (SendResult(status=429), True),
        (SendResult(error="timeout"), True),
        (SendResult(error="network", detail="connection refused"), True),
        (SendResult(status=404), False),
        (SendResult(status=410), False),
        (SendResult(status=302), False),
        (SendResult(error="refused", detail="refused x: 10.0.0.1 is not a public address"), False),
    ],
)
def test_what_is_retried(
    platform: Platform, owner: Any, engine: Any, sender: Scripted, clock: FrozenClock, result: SendResult, retried: bool
) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    sender.results.append(result)
    engine.drain()
    clock.advance(seconds=13)
    engine.drain()
    assert len(sender.sent) == (2 if retried else 1)
    first = platform.webhooks.deliveries(owner, webhook.id, DeliveryQuery(state=DeliveryState.FAILED)).items[0]
    assert first.error == (result.detail or result.error)


def test_retry_after_is_honoured(
    platform: Platform, owner: Any, engine: Any, sender: Scripted, clock: FrozenClock
) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    sender.results.append(SendResult(status=429, retry_after=120))
    engine.drain()
    failed = platform.webhooks.deliveries(owner, webhook.id, DeliveryQuery(state=DeliveryState.FAILED)).items[0]
    assert failed.next_retry_at == clock.now() + dt.timedelta(seconds=120)


def test_jitter_keeps_the_first_retry_within_thirty_seconds(clock: FrozenClock) -> None:
    from compliance_core.areas.webhooks.engine import retry_delay

    for draw in (0.0, 0.5, 0.999999):
        delay = retry_delay(1, SendResult(status=500), lambda draw=draw: draw)
        assert delay is not None and dt.timedelta(seconds=8) <= delay <= dt.timedelta(seconds=12)
    total = sum(SCHEDULE, dt.timedelta())
    assert dt.timedelta(days=2.5) < total < dt.timedelta(days=3.5)
    assert retry_delay(len(SCHEDULE) + 1, SendResult(status=500), lambda: 0.5) is None


@given(
    attempt=st.integers(1, len(SCHEDULE)),
    draw=st.floats(0, 1, exclude_max=True),
    retry_after=st.none() | st.floats(0, 10 * 86400),
    status=st.sampled_from([429, 500, 502, 503]),
)
def test_every_wait_is_the_schedule_within_jitter_or_the_capped_retry_after(
    attempt: int, draw: float, retry_after: float | None, status: int
) -> None:
    from compliance_core.areas.webhooks.engine import JITTER, MAX_RETRY_AFTER, retry_delay

    delay = retry_delay(attempt, SendResult(status=status, retry_after=retry_after), lambda: draw)
    planned = SCHEDULE[attempt - 1]
    assert delay is not None and planned * (1 - JITTER) <= delay <= max(planned * (1 + JITTER), MAX_RETRY_AFTER)
    if retry_after is not None:
        assert delay >= min(dt.timedelta(seconds=retry_after), MAX_RETRY_AFTER)
    else:
        assert delay <= planned * (1 + JITTER)


def test_failing_for_the_whole_schedule_disables_the_endpoint(
    platform: Platform, owner: Any, engine: Any, sender: Scripted, clock: FrozenClock
) -> None:
    recorded: list[Any] = []
    platform.signals.connect("webhook.disabled", lambda message, event: recorded.append(message))
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    sender.results.extend(SendResult(status=502) for _ in range(len(SCHEDULE) + 1))
    engine.drain()
    for wait in SCHEDULE:
        clock.current += wait
        engine.drain()
    assert len(sender.sent) == len(SCHEDULE) + 1
    disabled = platform.webhooks.get(owner, webhook.id)
    assert not disabled.active and disabled.disabled_at == clock.now()
    assert disabled.disabled_reason is not None and "retry schedule" in disabled.disabled_reason
    assert [m.payload["data"]["active"] for m in recorded] == [False]
    assert recorded[0].payload["previous"]["active"] is True
    log = platform.webhooks.deliveries(owner, webhook.id, page=None).items
    assert [d.attempt for d in log] == list(range(len(SCHEDULE) + 1, 0, -1))
    assert all(d.state == DeliveryState.FAILED for d in log)
    platform.vendors.create(owner, NewVendor(name="Later"))
    engine.drain()
    assert len(sender.sent) == len(SCHEDULE) + 1  # a disabled endpoint gets nothing
    enabled = platform.webhooks.update(owner, webhook.id, WebhookPatch(active=True))
    assert enabled.active and enabled.disabled_reason is None and enabled.disabled_at is None


def test_redelivery_sends_the_same_event_again(platform: Platform, owner: Any, engine: Any, sender: Scripted) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    engine.drain()
    delivered = platform.webhooks.deliveries(owner, webhook.id).items[0]
    accepted = platform.webhooks.redeliver(owner, webhook.id, delivered.id)
    assert accepted.status == "webhooks.get_delivery" and accepted.location_ids == (webhook.id, accepted.job.id)
    again = accepted.job
    assert (again.event_id, again.attempt, again.state, again.redelivery_of) == (
        delivered.event_id,
        1,
        DeliveryState.PENDING,
        delivered.id,
    )
    engine.drain()
    assert sender.sent[0].body == sender.sent[1].body
    assert sender.sent[0].headers["webhook-id"] == sender.sent[1].headers["webhook-id"] == delivered.event_id
    assert platform.webhooks.get_delivery(owner, webhook.id, again.id).state == DeliveryState.SUCCEEDED


def test_a_ping_reaches_only_the_endpoint_asked(platform: Platform, owner: Any, engine: Any, sender: Scripted) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.webhooks.create(owner, NewWebhook(url="https://hooks.example.com/x", events=["vendor.created"]))
    platform.webhooks.ping(owner, webhook.id)
    engine.drain()
    assert [(s.url, json.loads(s.body)["type"]) for s in sender.sent] == [(PUBLIC, PING)]
    assert json.loads(sender.sent[0].body)["data"]["id"] == webhook.id


def test_inactive_endpoints_refuse_pings_and_lose_their_queue(
    platform: Platform, owner: Any, engine: Any, sender: Scripted
) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    platform.vendors.create(owner, NewVendor(name="Acme"))
    platform.webhooks.update(owner, webhook.id, WebhookPatch(active=False))
    with pytest.raises(Conflict):
        platform.webhooks.ping(owner, webhook.id)
    engine.drain()  # the fan-out finds the endpoint inactive: nothing is queued
    assert sender.sent == []
    platform.webhooks.update(owner, webhook.id, WebhookPatch(active=True))
    platform.webhooks.ping(owner, webhook.id)
    platform.webhooks.delete(owner, webhook.id)
    engine.drain()
    assert sender.sent == []


def test_an_attempt_claimed_by_a_worker_that_died_is_sent_after_its_lease(
    platform: Platform, owner: Any, sender: Scripted, clock: FrozenClock
) -> None:
    platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"]))
    platform.vendors.create(owner, NewVendor(name="Acme"))
    dead = platform.delivery_engine(Scripted(), lease=dt.timedelta(seconds=60))
    dead._fan_out(clock.now())
    assert len(dead._claim(clock.now())) == 1  # ... and the worker dies before sending
    survivor = platform.delivery_engine(sender)
    survivor.drain()
    assert sender.sent == []
    clock.advance(seconds=60)
    survivor.drain()
    assert len(sender.sent) == 1


def test_pings_and_redeliveries_are_audited(platform: Platform, owner: Any, engine: Any) -> None:
    webhook = platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["vendor.created"])).webhook
    ping = platform.webhooks.ping(owner, webhook.id).job
    engine.drain()
    again = platform.webhooks.redeliver(owner, webhook.id, ping.id).job
    entries = platform.audit_log.list(owner, AuditFilter(action="webhook_delivery.requested")).items
    assert [(e.entity_type, e.entity_id, e.actor_id) for e in entries] == [
        ("webhook_delivery", again.id, owner.key_id),
        ("webhook_delivery", ping.id, owner.key_id),
    ]


def test_a_policy_that_flips_a_control_delivers_one_control_status_changed_per_flip(
    platform: Platform, owner: Any, engine: Any, sender: Scripted
) -> None:
    from compliance_core.areas.frameworks.control_models import NewControl
    from compliance_core.areas.policies import NewPolicy, PolicyPatch, PublishPolicy

    platform.webhooks.create(owner, NewWebhook(url=PUBLIC, events=["control.status_changed"]))
    control = platform.controls.create(owner, NewControl(name="Access control"))
    policy = platform.policies.create(owner, NewPolicy(name="Access", content="Reviewed.", control_ids=[control.id]))
    engine.drain()
    platform.policies.update(owner, policy.id, PolicyPatch(description="Same status"))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    engine.drain()
    bodies = [json.loads(sent.body) for sent in sender.sent]
    assert [(body["type"], body["previous"]["status"], body["data"]["status"]) for body in bodies] == [
        ("control.status_changed", "not_started", "in_progress"),
        ("control.status_changed", "in_progress", "implemented"),
    ]
    assert {body["data"]["id"] for body in bodies} == {control.id}
