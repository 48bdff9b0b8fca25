"""The Webhook group: configure endpoints, read their delivery log, ask for a redelivery.

Endpoint writes record events (and so audit entries). Delivery rows are bookkeeping and record
none: an event per attempt would itself be delivered, a feedback loop.
"""

from __future__ import annotations

import attrs

from ...kernel.errors import Conflict, NotFound, ValidationError
from ...kernel.events import Event, event_body
from ...kernel.operations import Once, Standard, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import changed, fetch
from ...kernel.registry import Accepted, Route
from ...kernel.uow import Tx, UnitOfWork
from .models import (
    ALL_EVENTS,
    DELIVERIES,
    WEBHOOK_READ,
    WEBHOOK_WRITE,
    WEBHOOKS,
    DeliveryFilter,
    DeliveryQuery,
    DeliveryState,
    IssuedWebhook,
    NewWebhook,
    Webhook,
    WebhookCreated,
    WebhookDeleted,
    WebhookDelivery,
    WebhookDeliveryRequested,
    WebhookPatch,
    WebhookSecretRotated,
    WebhookUpdated,
    event_body_text,
)
from .safety import WebhookPolicy, check_url
from .signing import new_secret

__all__ = ["WebhookService", "PING"]


class WebhookPing(Event):
    """What ``ping`` sends, to the one endpoint asked whatever it subscribes to (its data: the
    endpoint). Never recorded, so it is no type an endpoint subscribes to; only its body is made,
    the same way the unit of work makes every event's."""

    type = "webhook.ping"


PING = WebhookPing.type


_TABLE = Standard(WEBHOOKS, id="webhook_id")
_ALL = "/v1/webhooks"
_ONE = "/v1/webhooks/{webhook_id}"
_DELIVERY = "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}"


@attrs.define
class WebhookService:
    """
    :param event_types: the catalogue a subscription may name (every event the platform's areas
        declare)
    :param policy: where endpoints may point (see ``safety``)
    """

    uow: UnitOfWork
    pages: PageCache
    event_types: frozenset[str] = frozenset()
    policy: WebhookPolicy = attrs.field(factory=WebhookPolicy)

    list = _TABLE.list(WEBHOOK_READ, Route("GET", _ALL, "List webhook endpoints"))

    @operation(
        WEBHOOK_WRITE,
        Route("POST", _ALL, "Add a webhook endpoint (answers its secret, once)", 201),
        body=NewWebhook,
        idempotent=True,
        result=IssuedWebhook,
        example={
            "url": "https://93.184.215.14/hooks/compliance",
            "events": ["finding.created", "vendor.updated"],
            "description": "Ticketing bridge",
        },
    )
    def create(self, actor: Actor, data: NewWebhook, once: Once) -> IssuedWebhook:
        self._check(data.url, data.events)
        now = self.uow.clock.now()
        issued: list[IssuedWebhook] = []

        def create() -> Webhook:
            secret = new_secret()
            webhook = Webhook(
                id=self.uow.ids.new(WEBHOOKS.prefix),
                organization_id=actor.organization_id,
                secret=secret,
                created_at=now,
                updated_at=now,
                **attrs.asdict(data, recurse=False),
            )
            tx[WEBHOOKS].add(webhook)
            tx.record(WebhookCreated(organization_id=actor.organization_id, subject=webhook))
            issued.append(IssuedWebhook(webhook=webhook, secret=secret))
            return webhook

        with self.uow.write(actor) as tx:
            webhook = once(tx, data, now, create)
        return issued[0] if issued else IssuedWebhook(webhook=webhook, secret=None)

    get = _TABLE.get(WEBHOOK_READ, Route("GET", _ONE, "Read one webhook endpoint"))

    @operation(
        WEBHOOK_WRITE,
        Route("PATCH", _ONE, "Change a webhook endpoint (active=true re-enables a disabled one)"),
        body=WebhookPatch,
        result=Webhook,
        example={"events": ["*"]},
    )
    def update(self, actor: Actor, webhook_id: str, patch: WebhookPatch) -> Webhook:
        """Turning ``active`` back on clears why the engine disabled the endpoint."""
        changes = patch.changes()
        if "url" in changes or "events" in changes:
            self._check(changes.get("url"), changes.get("events"))
        with self.uow.write(actor) as tx:
            current = fetch(tx, WEBHOOKS, actor.organization_id, webhook_id)
            if changes.get("active") is True and not current.active:
                changes.update(disabled_reason=None, disabled_at=None)
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[WEBHOOKS].update(updated)
            tx.record(WebhookUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    delete = _TABLE.delete(WEBHOOK_WRITE, Route("DELETE", _ONE, "Delete a webhook endpoint"), event=WebhookDeleted)
    """Attempts still queued for the endpoint are dropped by the engine when it reaches them."""

    @operation(
        WEBHOOK_WRITE,
        Route("POST", f"{_ONE}/rotate-secret", "Replace the signing secret (answers it, once)"),
        result=IssuedWebhook,
    )
    def rotate_secret(self, actor: Actor, webhook_id: str) -> IssuedWebhook:
        """A new secret at once: attempts sent from now on are signed with it.

        Rotations that overlap agree: the secret this call saw when it began is compared, inside
        the write, with the one in force; if another rotation committed in between, this call
        answers that one's secret instead of replacing it. Ten concurrent calls therefore all
        answer the one secret that signs (each used to answer its own, and nine of them signed
        nothing), and one ``webhook.secret_rotated`` is recorded. Calls that do not overlap
        each rotate, as asked."""
        with self.uow.read() as session:
            seen = fetch(session, WEBHOOKS, actor.organization_id, webhook_id).secret
        secret = new_secret()
        with self.uow.write(actor) as tx:
            current = fetch(tx, WEBHOOKS, actor.organization_id, webhook_id)
            if current.secret != seen:
                return IssuedWebhook(webhook=current, secret=current.secret)
            rotated = attrs.evolve(current, secret=secret, updated_at=self.uow.clock.now())
            tx[WEBHOOKS].update(rotated)
            tx.record(WebhookSecretRotated(organization_id=actor.organization_id, subject=rotated))
        return IssuedWebhook(webhook=rotated, secret=secret)

    @operation(
        WEBHOOK_WRITE,
        Route("POST", f"{_ONE}/ping", "Queue a webhook.ping event for this endpoint"),
        result=Accepted[WebhookDelivery],
    )
    def ping(self, actor: Actor, webhook_id: str) -> Accepted[WebhookDelivery]:
        """Queue a ``webhook.ping`` event (its data: the endpoint as the API shows it) for this
        endpoint only: a receiver's first test."""
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            webhook = self._active(tx, actor.organization_id, webhook_id)
            event_id = self.uow.ids.new("evt")
            ping = WebhookPing(organization_id=actor.organization_id, subject=webhook)
            body = event_body(event_id, ping, now, self.uow.renderer.json)
            delivery = self._queue(tx, webhook, event_id, PING, event_body_text(body))
            tx.record(WebhookDeliveryRequested(organization_id=actor.organization_id, subject=delivery))
        return Accepted(job=delivery, status=WebhookService.get_delivery.name, ids=(webhook_id, delivery.id))

    @operation(
        WEBHOOK_READ,
        Route("GET", f"{_ONE}/deliveries", "List the endpoint's delivery attempts"),
        filters=DeliveryQuery,
        paged=True,
        result=WebhookDelivery,
        lists=DELIVERIES,
    )
    def deliveries(
        self, actor: Actor, webhook_id: str, filters: DeliveryQuery | None = None, page: PageRequest | None = None
    ) -> Page[WebhookDelivery]:
        state = filters.state if filters is not None else None
        attempts = DeliveryFilter(webhook_id=webhook_id, state=state)
        return page_of(self, DELIVERIES, actor, attempts, page, under=(WEBHOOKS, webhook_id))

    @operation(WEBHOOK_READ, Route("GET", _DELIVERY, "Read one delivery attempt"), result=WebhookDelivery)
    def get_delivery(self, actor: Actor, webhook_id: str, delivery_id: str) -> WebhookDelivery:
        with self.uow.read() as session:
            return self._delivery(session, actor.organization_id, webhook_id, delivery_id)

    @operation(
        WEBHOOK_WRITE,
        Route("POST", f"{_DELIVERY}/redeliver", "Deliver the attempt's event again (same event id)"),
        result=Accepted[WebhookDelivery],
    )
    def redeliver(self, actor: Actor, webhook_id: str, delivery_id: str) -> Accepted[WebhookDelivery]:
        """A new attempt 1 of the same event (same event id, same body), due now, with its own
        retry schedule."""
        with self.uow.write(actor) as tx:
            source = self._delivery(tx, actor.organization_id, webhook_id, delivery_id)
            webhook = self._active(tx, actor.organization_id, webhook_id)
            delivery = self._queue(
                tx, webhook, source.event_id, source.event_type, source.body, redelivery_of=source.id
            )
            tx.record(WebhookDeliveryRequested(organization_id=actor.organization_id, subject=delivery))
        return Accepted(job=delivery, status=WebhookService.get_delivery.name, ids=(webhook_id, delivery.id))

    # -- helpers --------------------------------------------------------------------------------

    def _check(self, url: str | None, events: tuple[str, ...] | None) -> None:
        if events is not None and self.event_types:
            for index, name in enumerate(events):
                if name != ALL_EVENTS and name not in self.event_types:
                    raise ValidationError.field(f"events[{index}]", name, "is not an event type of this platform")
        if url is not None:
            check_url(url, self.policy)

    @staticmethod
    def _active(tx: Tx, organization_id: str, webhook_id: str) -> Webhook:
        webhook = fetch(tx, WEBHOOKS, organization_id, webhook_id)
        if not webhook.active:
            raise Conflict(
                "the webhook is inactive: set active to true first",
                {"field": "webhookId", "value": webhook_id, "reason": "is inactive"},
            )
        return webhook

    @staticmethod
    def _delivery(session: object, organization_id: str, webhook_id: str, delivery_id: str) -> WebhookDelivery:
        delivery = fetch(session, DELIVERIES, organization_id, delivery_id)  # type: ignore[arg-type]
        if delivery.webhook_id != webhook_id:
            raise NotFound.resource(DELIVERIES.kind, delivery_id)
        fetch(session, WEBHOOKS, organization_id, webhook_id)  # type: ignore[arg-type]
        return delivery

    def _queue(
        self,
        tx: Tx,
        webhook: Webhook,
        event_id: str,
        event_type: str,
        body: str,
        *,
        redelivery_of: str | None = None,
    ) -> WebhookDelivery:
        now = self.uow.clock.now()
        delivery = WebhookDelivery(
            id=self.uow.ids.new(DELIVERIES.prefix),
            organization_id=webhook.organization_id,
            webhook_id=webhook.id,
            event_id=event_id,
            event_type=event_type,
            attempt=1,
            state=DeliveryState.PENDING,
            due_at=now,
            redelivery_of=redelivery_of,
            body=body,
            created_at=now,
            updated_at=now,
        )
        tx[DELIVERIES].add(delivery)
        return delivery
