"""Webhooks: endpoints an organization configures, and the delivery of every event to them.

``models`` holds what is stored and answered, ``service`` the Webhook group's operations,
``engine`` the delivery engine (outbox -> attempts -> the ``Sender`` port), ``signing`` the
secrets and signature headers, ``safety`` where an endpoint may point. See docs/webhooks.md.
"""

from __future__ import annotations

from ...kernel.registry import Area
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


AREA = Area(
    name="webhooks",
    tag="Webhook",
    service=_service,
    api=WebhookService,
    actions=(WEBHOOK_READ, WEBHOOK_WRITE),
    records=(WEBHOOKS, DELIVERIES),
    events=EVENTS,
)
