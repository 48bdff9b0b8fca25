"""Webhooks: endpoints an organization configures, and the delivery of every event to them.

``models`` holds what is stored and answered, ``service`` the Webhook group's operations,
``engine`` the delivery engine (outbox -> attempts -> the ``Sender`` port), ``signing`` the
secrets and signature headers, ``safety`` where an endpoint may point. See docs/webhooks.md.
"""

from __future__ import annotations

from ...kernel.registry import Accepted, Area, Operation
from ...kernel.uow import Context
from .engine import SCHEDULE, DeliveryEngine, Sender, SendResult, StepReport
from .models import (
    DELIVERIES,
    DELIVERY_QUEUE,
    EVENTS,
    WEBHOOK_READ,
    WEBHOOK_WRITE,
    WEBHOOKS,
    DeliveryFilter,
    DeliveryQuery,
    DeliveryRepository,
    DeliveryState,
    IssuedWebhook,
    NewWebhook,
    Webhook,
    WebhookCreated,
    WebhookDeleted,
    WebhookDelivery,
    WebhookDisabled,
    WebhookFilter,
    WebhookPatch,
    WebhookSecretRotated,
    WebhookUpdated,
)
from .safety import Resolver, SystemResolver, WebhookPolicy, address_problem, check_url
from .service import PING, WebhookService
from .signing import new_secret, signature_headers

__all__ = [
    "AREA",
    "DELIVERIES",
    "DELIVERY_QUEUE",
    "PING",
    "SCHEDULE",
    "WEBHOOKS",
    "WEBHOOK_READ",
    "WEBHOOK_WRITE",
    "DeliveryEngine",
    "DeliveryFilter",
    "DeliveryQuery",
    "DeliveryRepository",
    "DeliveryState",
    "IssuedWebhook",
    "NewWebhook",
    "Resolver",
    "SendResult",
    "Sender",
    "StepReport",
    "SystemResolver",
    "Webhook",
    "WebhookCreated",
    "WebhookDeleted",
    "WebhookDelivery",
    "WebhookDisabled",
    "WebhookFilter",
    "WebhookPatch",
    "WebhookPolicy",
    "WebhookSecretRotated",
    "WebhookService",
    "WebhookUpdated",
    "address_problem",
    "check_url",
    "new_secret",
    "signature_headers",
]


def _service(context: Context) -> WebhookService:
    return WebhookService(
        context.uow,
        context.pages,
        event_types=context.event_types,
        policy=context.settings.get("webhooks") or WebhookPolicy(),
    )


_WEBHOOK = ("webhook_id",)
_DELIVERY = ("webhook_id", "delivery_id")

AREA = Area(
    name="webhooks",
    service=_service,
    actions=(WEBHOOK_READ, WEBHOOK_WRITE),
    records=(WEBHOOKS, DELIVERIES),
    events=EVENTS,
    operations=(
        Operation(name="webhooks.list", action=WEBHOOK_READ, filters=WebhookFilter, paged=True, result=Webhook),
        Operation(
            name="webhooks.create",
            action=WEBHOOK_WRITE,
            body=NewWebhook,
            idempotent=True,
            result=IssuedWebhook,
            example={
                "url": "https://93.184.215.14/hooks/compliance",
                "events": ["finding.created", "vendor.updated"],
                "description": "Ticketing bridge",
            },
        ),
        Operation(name="webhooks.get", action=WEBHOOK_READ, ids=_WEBHOOK, result=Webhook),
        Operation(
            name="webhooks.update",
            action=WEBHOOK_WRITE,
            ids=_WEBHOOK,
            body=WebhookPatch,
            result=Webhook,
            example={"events": ["*"]},
        ),
        Operation(name="webhooks.delete", action=WEBHOOK_WRITE, ids=_WEBHOOK, result=None),
        Operation(name="webhooks.rotate_secret", action=WEBHOOK_WRITE, ids=_WEBHOOK, result=IssuedWebhook),
        Operation(name="webhooks.ping", action=WEBHOOK_WRITE, ids=_WEBHOOK, result=Accepted[WebhookDelivery]),
        Operation(
            name="webhooks.deliveries",
            action=WEBHOOK_READ,
            ids=_WEBHOOK,
            filters=DeliveryQuery,
            paged=True,
            result=WebhookDelivery,
        ),
        Operation(name="webhooks.get_delivery", action=WEBHOOK_READ, ids=_DELIVERY, result=WebhookDelivery),
        Operation(name="webhooks.redeliver", action=WEBHOOK_WRITE, ids=_DELIVERY, result=Accepted[WebhookDelivery]),
    ),
)
