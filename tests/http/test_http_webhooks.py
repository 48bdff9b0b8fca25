"""/v1/webhooks over HTTP, and real deliveries: the engine with ``HttpSender`` posting to a
loopback receiver (private targets allowed here, as ``COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1`` does)."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import standardwebhooks
from overlapping_store import Overlapping

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.webhooks import WEBHOOKS, WebhookPolicy
from compliance_http.app import create_app
from compliance_http.delivery import MAX_RESPONSE_BYTES, HttpSender, delivering
from compliance_http.openapi import openapi_document
from http_support import Api, check_answer, error
from webhook_receiver import Answer, Receiver

ROOT = "/v1/webhooks"
DOCUMENT = openapi_document()
PRIVATE = WebhookPolicy(allow_private=True)


@pytest.fixture
def clock() -> FrozenClock:
    # standardwebhooks refuses timestamps more than 5 minutes from its own clock
    return FrozenClock(dt.datetime.now(dt.UTC).replace(microsecond=0))


@pytest.fixture
def platform(store_url: str, clock: FrozenClock) -> Iterator[Platform]:
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings={"webhooks": PRIVATE}) as platform:
        yield platform


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


@pytest.fixture
def engine(platform: Platform) -> Iterator[Any]:
    sender = HttpSender(PRIVATE, timeout=2)
    yield platform.delivery_engine(sender, draw=lambda: 0.5)
    sender.close()


def test_configure_an_endpoint(api: Api, receiver: Receiver) -> None:
    created = api.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["vendor.created"], "description": "CRM"})
    assert created.status_code == 201, created.text
    check_answer(DOCUMENT, ROOT, "POST", 201, created.json)
    secret = created.json["secret"]
    assert secret.startswith("whsec_") and created.json["active"] is True
    one = f"{ROOT}/{created.json['id']}"
    shown = api.get(one).json
    assert "secret" not in shown and shown == {k: v for k, v in created.json.items() if k != "secret"}
    assert secret not in api.get(ROOT).text

    changed = api.patch(one, {"events": ["*"], "active": False})
    assert (changed.json["events"], changed.json["active"]) == (["*"], False)
    assert api.get(ROOT, query="active=false").json["count"] == 1
    assert api.get(ROOT, query="active=true").json["count"] == 0

    rotated = api.post(f"{one}/rotate-secret")
    assert rotated.status_code == 200 and rotated.json["secret"] not in (None, secret)
    check_answer(DOCUMENT, "/v1/webhooks/{webhookId}/rotate-secret", "POST", 200, rotated.json)

    assert api.request("DELETE", one).status_code == 204
    error(api.get(one), 404, "not_found")


def test_bad_endpoints_are_refused_naming_the_field(api: Api) -> None:
    details = error(api.post(ROOT, {"url": "http://169.254.169.254/", "events": ["*"]}), 400, "validation_error", "url")
    assert "metadata" in details["reason"]
    details = error(api.post(ROOT, {"url": "https://93.184.215.14/", "events": ["nope.nope"]}), 400, "validation_error")
    assert (details["field"], details["value"]) == ("events[0]", "nope.nope")
    error(api.post(ROOT, {"url": None, "events": ["*"]}), 400, "validation_error", "url")
    error(api.post(ROOT, {"url": "https://93.184.215.14/", "events": "*"}), 400, "validation_error", "events")


def test_delivery_log_and_redelivery_over_http(api: Api, receiver: Receiver, engine: Any, clock: FrozenClock) -> None:
    webhook = api.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["vendor.created"]}).json
    receiver.answer(Answer(status=500, body=b"down for maintenance"))
    vendor = api.post("/v1/vendors", {"name": "Acme Cloud"}).json
    engine.drain()
    clock.advance(seconds=12)
    engine.drain()
    first, second = receiver.wait_for(2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] and first.body == second.body
    event = json.loads(second.body)
    assert (event["type"], event["data"]["id"]) == ("vendor.created", vendor["id"])
    for received in (first, second):
        expected = hmac.new(webhook["secret"].encode(), received.body, hashlib.sha256).hexdigest()
        assert received.headers["x-service-signature"] == expected
        standardwebhooks.Webhook(webhook["secret"]).verify(received.body, received.headers)

    path = f"{ROOT}/{webhook['id']}/deliveries"
    log = api.get(path)
    assert log.status_code == 200, log.text
    check_answer(DOCUMENT, "/v1/webhooks/{webhookId}/deliveries", "GET", 200, log.json)
    attempts = [(d["attempt"], d["state"], d["statusCode"], d["eventId"]) for d in log.json["data"]]
    assert attempts == [(2, "succeeded", 200, event["id"]), (1, "failed", 500, event["id"])]  # newest first
    failed = log.json["data"][1]
    assert failed["responseExcerpt"] == "down for maintenance" and failed["nextRetryAt"] is not None
    assert failed["durationMs"] >= 0 and "body" not in failed and "leaseExpiresAt" not in failed
    assert api.get(path, query="state=failed").json["count"] == 1
    error(api.get(path, query="state=lost"), 400, "validation_error", "state")

    redelivered = api.post(f"{path}/{failed['id']}/redeliver")
    assert redelivered.status_code == 202, redelivered.text
    location = httpx.URL(redelivered.headers["location"]).path
    assert location == f"{path}/{redelivered.json['id']}"
    check_answer(DOCUMENT, "/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver", "POST", 202, redelivered.json)
    engine.drain()
    third = receiver.wait_for(3)[2]
    assert third.headers["webhook-id"] == event["id"] and third.body == first.body
    done = api.get(location).json
    assert (done["state"], done["attempt"], done["redeliveryOf"]) == ("succeeded", 1, failed["id"])

    error(api.post(f"{path}/whd_missing/redeliver"), 404, "not_found")
    other = api.post(ROOT, {"url": f"{receiver.url}/other", "events": ["*"]}).json
    error(api.get(f"{ROOT}/{other['id']}/deliveries/{failed['id']}"), 404, "not_found")


def test_ping_answers_202_and_arrives(api: Api, receiver: Receiver, engine: Any) -> None:
    webhook = api.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["vendor.created"]}).json
    pinged = api.post(f"{ROOT}/{webhook['id']}/ping")
    assert pinged.status_code == 202 and pinged.json["eventType"] == "webhook.ping"
    assert httpx.URL(pinged.headers["location"]).path == f"{ROOT}/{webhook['id']}/deliveries/{pinged.json['id']}"
    engine.drain()
    (received,) = receiver.wait_for(1)
    assert json.loads(received.body)["type"] == "webhook.ping" and received.path == "/hook"


# -- the sender on its own ------------------------------------------------------------------------


def _post(sender: HttpSender, url: str) -> Any:
    return sender.send(url, b'{"id":"evt_1"}', {"Content-Type": "application/json", "webhook-id": "evt_1"})


@pytest.fixture
def sender() -> Iterator[HttpSender]:
    sender = HttpSender(PRIVATE, timeout=0.5)
    yield sender
    sender.close()


def test_the_sender_refuses_private_targets_unless_allowed(receiver: Receiver) -> None:
    strict = HttpSender(WebhookPolicy())
    try:
        refused = _post(strict, f"{receiver.url}/hook")
        assert (refused.error, refused.status) == ("refused", None)
        https = _post(strict, receiver.url.replace("http://", "https://"))
        assert https.error == "refused" and "not a public address" in (https.detail or "")
    finally:
        strict.close()
    assert receiver.received == []


def test_the_sender_never_reaches_the_metadata_address(sender: HttpSender) -> None:
    result = _post(sender, "http://169.254.169.254/latest/meta-data/")
    assert result.error == "refused" and "metadata" in (result.detail or "")


def test_the_sender_follows_no_redirect(sender: HttpSender, receiver: Receiver) -> None:
    receiver.answer(Answer(status=302, headers=(("Location", f"{receiver.url}/elsewhere"),)))
    result = _post(sender, f"{receiver.url}/hook")
    assert result.status == 302
    assert [r.path for r in receiver.received] == ["/hook"]


def test_the_sender_reads_at_most_64_kb(sender: HttpSender, receiver: Receiver) -> None:
    receiver.answer(Answer(status=200, body=b"x" * (MAX_RESPONSE_BYTES * 3)))
    result = _post(sender, f"{receiver.url}/hook")
    assert result.status == 200 and len(result.excerpt) == MAX_RESPONSE_BYTES


def test_the_sender_times_out_and_reads_retry_after(sender: HttpSender, receiver: Receiver) -> None:
    receiver.answer(Answer(delay=1.0), Answer(status=429, headers=(("Retry-After", "7"),)))
    slow = _post(sender, f"{receiver.url}/hook")
    assert (slow.error, slow.status) == ("timeout", None)
    limited = _post(sender, f"{receiver.url}/hook")
    assert (limited.status, limited.retry_after) == (429, 7.0)


def test_the_sender_reports_a_host_that_does_not_resolve(sender: HttpSender) -> None:
    result = _post(sender, "http://no-such-host.invalid/hook")
    assert result.error == "network" and "does not resolve" in (result.detail or "")


def test_the_sender_sends_the_host_it_was_given(sender: HttpSender, receiver: Receiver) -> None:
    port = httpx.URL(receiver.url).port
    _post(sender, f"http://localhost:{port}/hook?x=1")
    (received,) = receiver.wait_for(1)
    assert received.headers["host"] == f"localhost:{port}" and received.path == "/hook?x=1"


class _Rebinding:
    """A resolver whose answer for ``hooks.test`` is set by the test (a DNS rebinding attacker's)."""

    def __init__(self, address: str) -> None:
        self.address = address

    def resolve(self, host: str, port: int) -> list[str]:
        return [self.address] if host == "hooks.test" else [host]


@pytest.mark.parametrize("allow_private", [False, True])
@pytest.mark.parametrize(
    "address, reason",
    [
        ("2002:7f00:1::", "127.0.0.1"),
        ("2002:a9fe:a9fe::", "169.254.169.254 is a cloud metadata address"),
        ("64:ff9b::a9fe:a9fe", "169.254.169.254 is a cloud metadata address"),
        ("::ffff:0:a9fe:a9fe", "169.254.169.254 is a cloud metadata address"),
    ],
)
def test_the_sender_checks_what_a_resolved_ipv6_address_embeds(address: str, reason: str, allow_private: bool) -> None:
    if allow_private and "metadata" not in reason:
        return
    sender = HttpSender(WebhookPolicy(allow_private=allow_private), resolver=_Rebinding(address), timeout=0.5)
    try:
        result = _post(sender, "https://hooks.test/hook")
    finally:
        sender.close()
    assert (result.error, result.status) == ("refused", None) and reason in (result.detail or "")


def test_the_sender_refuses_port_0(sender: HttpSender) -> None:
    result = _post(sender, "http://127.0.0.1:0/hook")
    assert result.error == "refused" and "port 0" in (result.detail or "")


# -- a slow receiver delays no one but itself --------------------------------------------------------


def test_an_attempt_against_a_one_byte_at_a_time_receiver_ends_at_the_time_limit(receiver: Receiver) -> None:
    """Every single read is quick (a byte each 0.2 s), so only a deadline on the whole attempt ends
    it: the answer would take over 12 s to arrive in full, the limit is 1 s."""
    receiver.answer(Answer(status=200, body=b"x" * 20, drip=0.2))
    sender = HttpSender(PRIVATE, timeout=1.0)
    try:
        result = _post(sender, f"{receiver.url}/hook")
    finally:
        sender.close()
    assert (result.error, result.status) == ("timeout", None)
    assert result.duration_ms < 6000  # ended at its limit, long before the receiver's answer ends


SLOW_LIMIT = 4.0
"""The slow endpoint's attempts are cut at this limit; every other delivery must land before."""


@pytest.fixture
def slow() -> Iterator[Receiver]:
    with Receiver() as receiver:
        receiver.answer(*[Answer(status=200, body=b"slow", drip=0.5)] * 5)
        yield receiver


def _state(api: Api, webhook: dict[str, Any]) -> list[tuple[str, str | None]]:
    log = api.get(f"{ROOT}/{webhook['id']}/deliveries").json["data"]
    return [(d["state"], d["error"]) for d in log]


def test_while_one_endpoint_is_stuck_another_endpoints_event_is_delivered(
    api: Api, platform: Platform, receiver: Receiver, slow: Receiver
) -> None:
    stuck = api.post(ROOT, {"url": f"{slow.url}/hook", "events": ["vendor.created"]}).json
    other = api.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["finding.created"]}).json
    sender = HttpSender(PRIVATE, timeout=SLOW_LIMIT)
    try:
        with delivering(platform, interval=0.05, sender=sender):
            api.post("/v1/vendors", {"name": "Acme Cloud"})
            slow.wait_for(1)  # the stuck endpoint's attempt is in flight ...
            finding = api.post("/v1/findings", {"title": "Open bucket", "severity": "high"}).json
            (received,) = receiver.wait_for(1, timeout=SLOW_LIMIT * 3)
            # ... and still is when the other endpoint's event has arrived
            assert _state(api, stuck) == [("sending", None)]
        assert json.loads(received.body)["data"]["id"] == finding["id"]
        assert _state(api, other) == [("succeeded", None)]
        # the stuck attempt ended at the limit, as a timeout, and a retry is queued
        (retry, attempt) = _state(api, stuck)
        assert retry == ("pending", None) and attempt[0] == "failed" and "timed out" in (attempt[1] or "")
    finally:
        sender.close()


def test_a_ping_after_a_rotation_is_not_held_behind_a_slow_endpoint(
    api: Api, platform: Platform, receiver: Receiver, slow: Receiver
) -> None:
    stuck = api.post(ROOT, {"url": f"{slow.url}/hook", "events": ["*"]}).json
    other = api.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["vendor.created"]}).json
    sender = HttpSender(PRIVATE, timeout=SLOW_LIMIT)
    try:
        with delivering(platform, interval=0.05, sender=sender):
            api.post("/v1/vendors", {"name": "Acme Cloud"})
            slow.wait_for(1)
            receiver.wait_for(1, timeout=SLOW_LIMIT * 3)  # the vendor, to the other endpoint
            secret = api.post(f"{ROOT}/{other['id']}/rotate-secret").json["secret"]
            api.post(f"{ROOT}/{other['id']}/ping")
            ping = receiver.wait_for(2, timeout=SLOW_LIMIT * 3)[1]
            assert _state(api, stuck)[-1] == ("sending", None)
        assert json.loads(ping.body)["type"] == "webhook.ping"
        standardwebhooks.Webhook(secret).verify(ping.body, ping.headers)
    finally:
        sender.close()


def test_concurrent_rotations_over_http_all_answer_the_secret_that_signs(
    platform: Platform, receiver: Receiver, engine: Any
) -> None:
    """The HTTP path of ``tests/contract/test_webhooks.py``'s race: ten overlapping calls (held
    until all ten have read the endpoint) answer 200 with one secret, the one deliveries use."""
    gated = Overlapping(platform.store)
    over = Platform(gated, clock=platform.clock, ids=SequentialIds(), settings={"webhooks": PRIVATE})  # type: ignore[arg-type]
    owner = Api(create_app(over), over.bootstrap("Rotating").owner_key.secret)
    webhook = owner.post(ROOT, {"url": f"{receiver.url}/hook", "events": ["vendor.created"]}).json
    assert owner.get(f"{ROOT}/{webhook['id']}").status_code == 200  # the key's admission lease is held
    answers: list[Any] = []
    gated.overlap(10, after=WEBHOOKS)
    threads = [
        threading.Thread(target=lambda: answers.append(owner.post(f"{ROOT}/{webhook['id']}/rotate-secret")))
        for _ in range(10)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [200] * 10
    (secret,) = {a.json["secret"] for a in answers}
    owner.post("/v1/vendors", {"name": "Acme Cloud"})
    over.delivery_engine(HttpSender(PRIVATE, timeout=2), draw=lambda: 0.5).drain()
    (received,) = receiver.wait_for(1)
    standardwebhooks.Webhook(secret).verify(received.body, received.headers)
