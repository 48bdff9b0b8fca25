"""The delivery engine: from the durable outbox to every subscribed endpoint, exactly once per
endpoint while the receiver is healthy, retried on a schedule while it is not.

Core does no I/O here: sending goes through the ``Sender`` port (``compliance_http.delivery``
holds the real one), time through the platform's clock and jitter through an injected random
source. One ``step(now)`` is:

1. **Fan out**, in one write: read unpublished outbox messages, add an attempt-1 ``pending``
   delivery for each active endpoint of the message's organization that subscribes to its type
   (and existed when it happened), and mark the messages published. A rolled-back write never
   reached the outbox, so it is never announced; a committed one stays in the outbox until this
   write commits, so a crash loses nothing.
2. **Claim**, in one write: take the due attempts (``pending`` and due, or ``sending`` with an
   expired lease: their worker died mid-send), set them ``sending`` with a lease. Stores serialise
   writes (SQLite's single writer, PostgreSQL's per-schema advisory lock), so a claim is exclusive
   across every process on the database: two workers never send one attempt. A claim takes no
   more attempts than the engine has idle delivery threads (a claimed attempt starts at once, so
   its lease is never spent waiting in a queue), and none of an endpoint that already has
   ``per_endpoint`` attempts in flight in any process: a slow endpoint holds at most that many
   threads, and the others' attempts are claimed past its backlog.
3. **Send** each claimed attempt outside any transaction, signed (``signing``), on the engine's
   pool of delivery threads.
4. **Record** each result in its own write, as soon as it is known: succeeded, or failed with the
   next attempt queued as a NEW row when the failure is worth retrying, or the endpoint disabled
   (and ``webhook.disabled`` recorded) when the schedule is exhausted.

``step`` does one round and waits for its sends (scripts, tests, ``drain``). ``run`` does not wait:
it claims again whenever a thread is free, so an endpoint that takes its whole time limit to
answer delays no other endpoint's deliveries, nor a ping.

Only endpoint changes record events; attempts do not (an event per attempt would be delivered
in turn, a feedback loop).
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from typing import Protocol

import attrs

from ...kernel.events import OUTBOX, OutboxMessage
from ...kernel.pages import MAX_PER_PAGE, PageRequest
from ...kernel.uow import Tx, UnitOfWork
from .models import (
    DELIVERIES,
    DELIVERY_QUEUE,
    WEBHOOKS,
    DeliveryState,
    Webhook,
    WebhookDelivery,
    WebhookDisabled,
    WebhookFilter,
    event_body_text,
)
from .safety import WebhookPolicy
from .signing import signature_headers

__all__ = [
    "SCHEDULE",
    "JITTER",
    "MAX_RETRY_AFTER",
    "SendResult",
    "Sender",
    "StepReport",
    "DeliveryEngine",
    "retryable",
    "retry_delay",
]

log = logging.getLogger("compliance_core.webhooks")

SCHEDULE: tuple[dt.timedelta, ...] = tuple(
    dt.timedelta(seconds=s) for s in (10, 60, 5 * 60, 30 * 60, 2 * 3600, 6 * 3600, 12 * 3600, 24 * 3600, 24 * 3600)
)
"""The wait before each retry (retry 1 after about 10 s, ..., retry 9 about 3 days after the
first attempt: 70 h 36 min 10 s in all, before jitter). An event still failing after the last
retry disables its endpoint."""
JITTER = 0.2
"""Each wait is scaled by a random factor in [0.8, 1.2], so retries of many events spread out."""
MAX_RETRY_AFTER = dt.timedelta(hours=24)
"""The longest ``Retry-After`` honoured (a longer one waits this long)."""
USER_AGENT = "compliance-webhooks/1"


@attrs.frozen(kw_only=True)
class SendResult:
    """What one POST came to.

    :param status: the response's status code (None: no response)
    :param duration_ms: from connecting to the end of the (bounded) read
    :param excerpt: the first part of the response body, at most 64 KB as sent, as text
    :param error: why there is no usable response: ``timeout``, ``network`` (DNS, connection,
        TLS), ``refused`` (the safety check refused the resolved address); None when answered
    :param retry_after: seconds the receiver asked to wait (``Retry-After`` of a 429 or 503)
    """

    status: int | None = None
    duration_ms: int = 0
    excerpt: str = ""
    error: str | None = None
    detail: str | None = None
    retry_after: float | None = None


class Sender(Protocol):
    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        """POST ``body`` to ``url`` after checking the address it connects to; never raises for
        what the network or the receiver does (that is the result)."""
        ...


def retryable(result: SendResult) -> bool:
    """Network errors, timeouts, 5xx and 429 are retried; a refused address, a redirect and any
    other 4xx are not (sending the same request again would meet the same answer)."""
    if result.status is None:
        return result.error in ("timeout", "network")
    return result.status == 429 or result.status >= 500


def retry_delay(attempt: int, result: SendResult, draw: Callable[[], float]) -> dt.timedelta | None:
    """The wait before attempt ``attempt + 1``, or None when the schedule is exhausted."""
    if attempt > len(SCHEDULE):
        return None
    delay = SCHEDULE[attempt - 1] * (1 + JITTER * (2 * draw() - 1))
    if result.retry_after is not None and result.retry_after > 0:
        delay = max(delay, min(dt.timedelta(seconds=result.retry_after), MAX_RETRY_AFTER))
    return delay


@attrs.frozen(kw_only=True)
class StepReport:
    fanned_out: int = 0
    """Outbox messages published by this step."""
    queued: int = 0
    """Attempts added for them."""
    sent: int = 0
    succeeded: int = 0
    failed: int = 0
    disabled: int = 0

    @property
    def busy(self) -> bool:
        return bool(self.fanned_out or self.sent)


@attrs.frozen
class _Claim:
    delivery: WebhookDelivery
    webhook: Webhook


@attrs.define
class DeliveryEngine:
    """Delivers the platform's events; run ``step()`` from a loop (``run``), one engine per
    delivering process.

    :param uow: the platform's unit of work (``platform.uow``)
    :param sender: does the POSTs (``compliance_http.delivery.HttpSender`` in production)
    :param policy: checked again at send time by the sender; kept here for embedding code
    :param draw: a random number in [0, 1) for jitter (inject a fixed one in tests)
    :param batch: most outbox messages fanned out, and most attempts claimed, per step
    :param lease: how long a claimed attempt is reserved for this worker (longer than the sender's
        timeout, so it is never taken over while really in flight)
    :param concurrency: delivery threads: attempts this engine sends at once
    :param per_endpoint: attempts in flight at once for one endpoint, over every delivering process
    """

    uow: UnitOfWork
    sender: Sender
    policy: WebhookPolicy = attrs.field(factory=WebhookPolicy)
    draw: Callable[[], float] = random.random
    batch: int = 50
    lease: dt.timedelta = dt.timedelta(seconds=60)
    concurrency: int = 16
    per_endpoint: int = 2

    def step(self, now: dt.datetime | None = None) -> StepReport:
        """One round of fan-out, claim, send and record (see the module's description), waiting
        for every send it started."""
        now = now or self.uow.clock.now()
        if not self._work_waiting(now):
            return StepReport()
        fanned_out, queued = self._fan_out(now)
        claims = self._claim(now, self.concurrency)
        counts = {"succeeded": 0, "failed": 0, "disabled": 0}
        for claim, result in self._send_all(claims):
            outcome = self._record(claim, result)
            for key in outcome:
                counts[key] += 1
        return StepReport(fanned_out=fanned_out, queued=queued, sent=len(claims), **counts)

    def run(self, stop: threading.Event, interval: float = 1.0) -> None:
        """Deliver until ``stop`` is set, then finish the attempts in flight (each bounded by the
        sender's time limit) so none waits for its lease to run out. Claims again at once after a
        busy round or when an attempt lands, else after ``interval`` seconds. An error is logged
        and the loop goes on (the next round retries it)."""
        flight = _Flight()
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency), thread_name_prefix="webhook-send") as pool:
            while not stop.is_set():
                flight.landed.clear()
                try:
                    busy = self._dispatch(pool, flight)
                except Exception:
                    log.exception("webhook delivery round failed")
                    busy = False
                if not busy:
                    (flight.landed if flight.count else stop).wait(interval)

    def _dispatch(self, pool: Executor, flight: _Flight) -> bool:
        """One round of ``run``: fan out, claim what the idle threads can take, start sending."""
        now = self.uow.clock.now()
        if not self._work_waiting(now):
            return False
        fanned_out, _ = self._fan_out(now)
        room = self.concurrency - flight.count
        claims = self._claim(now, room) if room > 0 else []
        for claim in claims:
            flight.take()
            pool.submit(self._deliver, claim, flight)
        return bool(fanned_out or claims)

    def _deliver(self, claim: _Claim, flight: _Flight) -> None:
        try:
            self._record(claim, self._send(claim))
        except Exception:  # the lease runs out and another round sends it again
            log.exception("recording webhook delivery %s failed", claim.delivery.id)
        finally:
            flight.land()

    def drain(self, now: dt.datetime | None = None, rounds: int = 1000) -> StepReport:
        """Step until nothing is left to do now (tests, scripts, an in-process app's shutdown)."""
        total = StepReport()
        for _ in range(rounds):
            report = self.step(now)
            total = StepReport(
                **{f.name: getattr(total, f.name) + getattr(report, f.name) for f in attrs.fields(StepReport)}
            )
            if not report.busy:
                break
        return total

    # -- the four stages ----------------------------------------------------------------------

    def _work_waiting(self, now: dt.datetime) -> bool:
        """A read first, so an idle worker polling once a second never takes the write lock."""
        with self.uow.read() as session:
            return bool(session[OUTBOX].pending(limit=1) or session[DELIVERY_QUEUE].due(now, 1))

    def _fan_out(self, now: dt.datetime) -> tuple[int, int]:
        queued = 0
        with self.uow.write(None) as tx:
            messages = tx[OUTBOX].pending(limit=self.batch)
            endpoints: dict[str, list[Webhook]] = {}
            for message in messages:
                if message.organization_id not in endpoints:
                    endpoints[message.organization_id] = list(_active(tx, message.organization_id))
                body: str | None = None
                for webhook in endpoints[message.organization_id]:
                    if not webhook.wants(message.type) or webhook.created_at > message.occurred_at:
                        continue
                    body = body or event_body_text(message.payload)
                    tx[DELIVERIES].add(self._attempt(message, webhook, body, now))
                    queued += 1
            tx[OUTBOX].mark_published([m.id for m in messages], now)
        return len(messages), queued

    def _attempt(self, message: OutboxMessage, webhook: Webhook, body: str, now: dt.datetime) -> WebhookDelivery:
        return WebhookDelivery(
            id=self.uow.ids.new(DELIVERIES.prefix),
            organization_id=message.organization_id,
            webhook_id=webhook.id,
            event_id=message.id,
            event_type=message.type,
            attempt=1,
            state=DeliveryState.PENDING,
            due_at=now,
            body=body,
            created_at=now,
            updated_at=now,
        )

    def _claim(self, now: dt.datetime, room: int | None = None) -> list[_Claim]:
        """Up to ``room`` (default: ``concurrency``) due attempts, at most ``per_endpoint`` in
        flight per endpoint."""
        room = self.concurrency if room is None else room
        claims: list[_Claim] = []
        with self.uow.write(None) as tx:
            queue = tx[DELIVERY_QUEUE]
            flying = queue.in_flight(now)
            full = {webhook_id for webhook_id, count in flying.items() if count >= self.per_endpoint}
            progressed = True
            while progressed and len(claims) < room:
                progressed = False
                for delivery in queue.due(now, self.batch, skip=full):
                    if len(claims) >= room:
                        break
                    if delivery.webhook_id in full:
                        continue
                    progressed = True
                    webhook = tx[WEBHOOKS].get(delivery.organization_id, delivery.webhook_id)
                    if webhook is None or not webhook.active:
                        reason = "the endpoint was deleted" if webhook is None else "the endpoint is inactive"
                        tx[DELIVERIES].update(
                            attrs.evolve(
                                delivery,
                                state=DeliveryState.FAILED,
                                error=reason,
                                lease_expires_at=None,
                                updated_at=now,
                            )
                        )
                        continue
                    claimed = attrs.evolve(
                        delivery, state=DeliveryState.SENDING, lease_expires_at=now + self.lease, updated_at=now
                    )
                    tx[DELIVERIES].update(claimed)
                    claims.append(_Claim(claimed, webhook))
                    flying[delivery.webhook_id] = flying.get(delivery.webhook_id, 0) + 1
                    if flying[delivery.webhook_id] >= self.per_endpoint:
                        full.add(delivery.webhook_id)
        return claims

    def _send_all(self, claims: list[_Claim]) -> Iterator[tuple[_Claim, SendResult]]:
        """Each result as soon as it is known (not in claim order: a slow endpoint's attempt does
        not hold the recording of the others)."""
        if len(claims) <= 1 or self.concurrency <= 1:
            for claim in claims:
                yield claim, self._send(claim)
            return
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(claims))) as pool:
            futures = {pool.submit(self._send, claim): claim for claim in claims}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def _send(self, claim: _Claim) -> SendResult:
        delivery = claim.delivery
        body = delivery.body.encode()
        timestamp = int(self.uow.clock.now().timestamp())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            **signature_headers(claim.webhook.secret, delivery.event_id, timestamp, body),
        }
        try:
            return self.sender.send(claim.webhook.url, body, headers)
        except Exception as error:  # a sender must not raise; if one does, the attempt still ends
            log.exception("webhook sender failed on %s", delivery.id)
            return SendResult(error="network", detail=f"{type(error).__name__}: {error}")

    def _record(self, claim: _Claim, result: SendResult) -> tuple[str, ...]:
        sent = claim.delivery
        now = self.uow.clock.now()
        with self.uow.write(None) as tx:
            current = tx[DELIVERIES].get(sent.organization_id, sent.id)
            if (
                current is None
                or current.state != DeliveryState.SENDING
                or current.lease_expires_at != sent.lease_expires_at
            ):
                return ()  # another worker took it over after our lease ran out; its result counts
            done = attrs.evolve(
                current,
                status_code=result.status,
                duration_ms=result.duration_ms,
                response_excerpt=result.excerpt,
                error=None if result.error is None else (result.detail or result.error),
                lease_expires_at=None,
                updated_at=now,
            )
            if result.status is not None and 200 <= result.status < 300:
                tx[DELIVERIES].update(attrs.evolve(done, state=DeliveryState.SUCCEEDED))
                return ("succeeded",)
            if not retryable(result):
                tx[DELIVERIES].update(attrs.evolve(done, state=DeliveryState.FAILED))
                return ("failed",)
            delay = retry_delay(sent.attempt, result, self.draw)
            if delay is None:
                tx[DELIVERIES].update(attrs.evolve(done, state=DeliveryState.FAILED))
                return ("failed", "disabled") if self._disable(tx, claim, now) else ("failed",)
            due = now + delay
            tx[DELIVERIES].update(attrs.evolve(done, state=DeliveryState.FAILED, next_retry_at=due))
            tx[DELIVERIES].add(
                attrs.evolve(
                    done,
                    id=self.uow.ids.new(DELIVERIES.prefix),
                    attempt=sent.attempt + 1,
                    state=DeliveryState.PENDING,
                    due_at=due,
                    status_code=None,
                    duration_ms=None,
                    response_excerpt="",
                    error=None,
                    next_retry_at=None,
                    created_at=now,
                    updated_at=now,
                )
            )
            return ("failed",)

    def _disable(self, tx: Tx, claim: _Claim, now: dt.datetime) -> bool:
        webhook = tx[WEBHOOKS].get(claim.webhook.organization_id, claim.webhook.id)
        if webhook is None or not webhook.active:
            return False
        reason = (
            f"event {claim.delivery.event_id} failed for the whole retry schedule ({claim.delivery.attempt} attempts)"
        )
        disabled = attrs.evolve(webhook, active=False, disabled_reason=reason, disabled_at=now, updated_at=now)
        tx[WEBHOOKS].update(disabled)
        tx.record(
            WebhookDisabled(
                organization_id=webhook.organization_id,
                subject=disabled,
                previous={"active": True, "disabled_reason": None, "disabled_at": None},
            )
        )
        return True


class _Flight:
    """The attempts ``run`` has in flight, and the signal that one landed (a thread is free)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.landed = threading.Event()

    def take(self) -> None:
        with self._lock:
            self.count += 1

    def land(self) -> None:
        with self._lock:
            self.count -= 1
        self.landed.set()


def _active(tx: Tx, organization_id: str) -> Iterator[Webhook]:
    """Every active endpoint of the organization, a page of the largest size at a time."""
    page = 1
    while True:
        items, total = tx[WEBHOOKS].list(
            organization_id, WebhookFilter(active=True), PageRequest(page=page, per_page=MAX_PER_PAGE)
        )
        yield from items
        if page * MAX_PER_PAGE >= total or not items:
            return
        page += 1
