"""/v1/webhooks: endpoints, their delivery log, pings and redeliveries (the spec's Webhook group)."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/webhooks/{webhook_id}"
_DELIVERY = "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}"

ROUTES = group(
    "Webhook",
    ("GET", "/v1/webhooks", "webhooks.list", "List webhook endpoints"),
    ("POST", "/v1/webhooks", "webhooks.create", "Add a webhook endpoint (answers its secret, once)", 201),
    ("GET", _ONE, "webhooks.get", "Read one webhook endpoint"),
    ("PATCH", _ONE, "webhooks.update", "Change a webhook endpoint (active=true re-enables a disabled one)"),
    ("DELETE", _ONE, "webhooks.delete", "Delete a webhook endpoint"),
    ("POST", f"{_ONE}/rotate-secret", "webhooks.rotate_secret", "Replace the signing secret (answers it, once)"),
    ("POST", f"{_ONE}/ping", "webhooks.ping", "Queue a webhook.ping event for this endpoint"),
    ("GET", f"{_ONE}/deliveries", "webhooks.deliveries", "List the endpoint's delivery attempts"),
    ("GET", _DELIVERY, "webhooks.get_delivery", "Read one delivery attempt"),
    ("POST", f"{_DELIVERY}/redeliver", "webhooks.redeliver", "Deliver the attempt's event again (same event id)"),
)
