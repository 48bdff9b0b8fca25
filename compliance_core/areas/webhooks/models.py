"""What the webhooks area stores and answers: endpoints, delivery attempts, their tables and events.

An endpoint keeps its signing secret, which the wire never shows except once, in the answer of
the request that made or rotated it (``IssuedWebhook``). A delivery row is one ATTEMPT to send one
event to one endpoint: a retry is a new row with the next attempt number, so the log shows every
try with its own status, duration and response.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Protocol

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import MANAGERS, Action
from ...kernel.records import Filter, RecordRepository, Records
from ...kernel.registry import Repo
from ...kernel.rendering import WireView
from ...kernel.validation import (
    Checked,
    Patch,
    Unset,
    blank_text,
    boolean,
    http_url,
    patch_field,
    register_schema,
)

__all__ = [
    "Webhook",
    "IssuedWebhook",
    "NewWebhook",
    "WebhookPatch",
    "WebhookFilter",
    "DeliveryState",
    "WebhookDelivery",
    "DeliveryFilter",
    "DeliveryQuery",
    "DeliveryRepository",
    "WEBHOOKS",
    "DELIVERIES",
    "DELIVERY_QUEUE",
    "WEBHOOK_READ",
    "WEBHOOK_WRITE",
    "ALL_EVENTS",
    "MAX_EVENT_TYPES",
    "WebhookCreated",
    "WebhookUpdated",
    "WebhookDeleted",
    "WebhookSecretRotated",
    "WebhookDisabled",
    "EVENTS",
    "event_body_text",
]

ALL_EVENTS = "*"
"""Subscribes an endpoint to every event type, present and future."""
MAX_EVENT_TYPES = 100
_EVENT_TYPE = re.compile(r"^[a-z][a-z_]*\.[a-z][a-z_]*$")


@attrs.frozen(kw_only=True)
class Webhook:
    """An endpoint events are delivered to.

    :param events: the event types it receives, or ``("*",)`` for all
    :param active: inactive endpoints receive nothing (set false by hand, or by the delivery
        engine when an event failed for the whole retry schedule: see ``disabled_reason``)
    """

    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"secret"}))

    id: str
    organization_id: str
    url: str
    events: tuple[str, ...]
    description: str = ""
    active: bool = True
    secret: str = attrs.field(default="", repr=False, eq=False)
    """Never on the wire but in ``IssuedWebhook`` (so a client reading an endpoint gets "")."""
    disabled_reason: str | None = None
    disabled_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime

    def wants(self, event_type: str) -> bool:
        return ALL_EVENTS in self.events or event_type in self.events


@attrs.frozen(kw_only=True)
class IssuedWebhook:
    """An endpoint with its secret: the answer of create and rotate-secret, the only times the
    secret is shown. A replay of the create through its Idempotency-Key answers ``secret=None``."""

    WIRE_VIEW: ClassVar[WireView] = WireView(inline=frozenset({"webhook"}))

    webhook: Webhook
    secret: str | None = attrs.field(
        repr=False,
        metadata={
            "description": "The signing secret (whsec_ + base64 of 32 random bytes), shown once; null when an "
            "Idempotency-Key replays the request"
        },
    )


def _event_types(value: Any, field: attrs.Attribute[Any]) -> Any:
    """A list of event type names (``vendor.created``) or ``["*"]``; the names are checked
    against the platform's catalogue by the service, which knows it."""
    if isinstance(value, Unset):
        return value
    if not isinstance(value, (list, tuple)) or not value:
        raise ValidationError.field("events", value, 'must be a non-empty list of event types, or ["*"]')
    if len(value) > MAX_EVENT_TYPES:
        raise ValidationError.field("events", len(value), f"at most {MAX_EVENT_TYPES} entries")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not (item == ALL_EVENTS or _EVENT_TYPE.match(item)):
            raise ValidationError.field(
                f"events[{index}]", item, 'must be an event type such as vendor.created, or "*"'
            )
    if ALL_EVENTS in value:
        return (ALL_EVENTS,)  # it already means every event type
    return tuple(dict.fromkeys(value))


event_types = register_schema(
    Checked(_event_types, takes_field=True),
    {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_EVENT_TYPES,
        "items": {"type": "string", "pattern": r"^([a-z][a-z_]*\.[a-z][a-z_]*|\*)$", "x-event-catalogue": True},
        "description": 'event types such as vendor.created (see docs/webhooks.md for the catalogue), or "*" '
        'for every type (a list holding "*" is stored as ["*"]); repeated names count once',
    },
)


@attrs.frozen(kw_only=True)
class NewWebhook:
    url: str = attrs.field(converter=http_url)
    events: tuple[str, ...] = attrs.field(converter=event_types)
    description: str = attrs.field(default="", converter=blank_text(500))
    active: bool = attrs.field(default=True, converter=boolean)


_NEW = attrs.fields(NewWebhook)


@attrs.frozen(kw_only=True)
class WebhookPatch(Patch):
    """Setting ``active`` to true re-enables an endpoint the engine disabled."""

    url: str | Unset = patch_field(_NEW.url.converter)
    events: tuple[str, ...] | Unset = patch_field(_NEW.events.converter)
    description: str | None | Unset = patch_field(_NEW.description.converter)
    active: bool | Unset = patch_field(_NEW.active.converter)


@attrs.frozen(kw_only=True)
class WebhookFilter(Filter):
    active: bool | None = None


class DeliveryState(enum.StrEnum):
    PENDING = "pending"
    SENDING = "sending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@attrs.frozen(kw_only=True)
class WebhookDelivery:
    """One attempt to deliver one event to one endpoint.

    :param attempt: 1 for the first try of an event (and of a redelivery); retries count up
    :param due_at: when the attempt may be sent
    :param next_retry_at: on a failed attempt, when the next one is due (None: no retry)
    :param lease_expires_at: while ``sending``, when another worker may take the attempt over
        (its sender died mid-send)
    :param redelivery_of: the delivery a redelivery request repeated
    :param body: the event's JSON body as sent: the same bytes on every attempt (not on the wire
        of the log: the event id and type say which event it was)
    """

    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"body", "lease_expires_at"}))

    id: str
    organization_id: str
    webhook_id: str
    event_id: str
    event_type: str
    attempt: int
    state: DeliveryState
    due_at: dt.datetime
    status_code: int | None = None
    duration_ms: int | None = None
    response_excerpt: str = ""
    error: str | None = None
    next_retry_at: dt.datetime | None = None
    lease_expires_at: dt.datetime | None = None
    redelivery_of: str | None = None
    body: str = attrs.field(default="", repr=False, eq=False)
    created_at: dt.datetime
    updated_at: dt.datetime


_STATES = ", ".join(state.value for state in DeliveryState)


def _state(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is None or isinstance(value, DeliveryState):
        return value
    try:
        return DeliveryState(value)
    except ValueError:
        raise ValidationError.field("state", value, f"must be one of {_STATES}") from None


optional_state = register_schema(
    Checked(_state, takes_field=True),
    {"type": "string", "enum": [state.value for state in DeliveryState], "nullable": True},
)


@attrs.frozen(kw_only=True)
class DeliveryFilter(Filter):
    """The store's filter of attempts; the service sets the endpoint from the path, where any
    string names an endpoint or none (a 404, never a malformed-id 400)."""

    webhook_id: str | None = None
    state: DeliveryState | None = attrs.field(default=None, converter=optional_state)


@attrs.frozen(kw_only=True)
class DeliveryQuery:
    """The query of an endpoint's delivery log (the endpoint is in the path)."""

    state: DeliveryState | None = attrs.field(default=None, converter=optional_state)


class DeliveryRepository(RecordRepository[WebhookDelivery, DeliveryFilter], Protocol):
    """The deliveries table plus the one query the delivery engine needs across organizations."""

    def due(self, now: dt.datetime, limit: int, skip: Collection[str] = ()) -> list[WebhookDelivery]:
        """Attempts a worker may send now, earliest first: ``pending`` ones due at or before
        ``now``, and ``sending`` ones whose lease expired at or before ``now`` (their worker
        stopped mid-send), leaving out the endpoints in ``skip`` (those with as many attempts in
        flight as they may have: without this, a backlog for one endpoint would fill every batch
        and starve the others). Called inside a write, whose exclusivity makes the claim that
        follows it exclusive across processes."""
        ...

    def in_flight(self, now: dt.datetime) -> dict[str, int]:
        """How many attempts each endpoint has in flight: ``sending`` with a lease still running
        at ``now``, whichever process holds it (the per-endpoint limit holds across processes)."""
        ...


WEBHOOKS: Records[Webhook, WebhookFilter] = Records(
    "webhooks",
    model=Webhook,
    filters=WebhookFilter,
    kind="webhook",
    prefix="whk",
    facets=("active",),
    searchable=("url", "description"),
    sortable=("url", "updated_at"),
    ranged="created_at",
)
DELIVERIES: Records[WebhookDelivery, DeliveryFilter] = Records(
    "webhook_deliveries",
    model=WebhookDelivery,
    filters=DeliveryFilter,
    kind="webhook delivery",
    prefix="whd",
    newest_first=True,
    facets=("state",),
    queries=DeliveryRepository,
    searchable=("event_type",),
    sortable=("due_at", "attempt", "status_code", "duration_ms"),
    ranged="created_at",
)
DELIVERY_QUEUE: Repo[DeliveryRepository] = Repo("webhook_deliveries")
"""The deliveries table through its engine-facing Protocol (the same repository)."""

WEBHOOK_READ = Action("webhook:read", MANAGERS)
WEBHOOK_WRITE = Action("webhook:write", MANAGERS)


class WebhookCreated(Event):
    """A webhook endpoint was configured (its secret is never in the event)."""

    type = "webhook.created"


class WebhookUpdated(Event):
    """A webhook endpoint's URL, events, description or active flag changed."""

    type = "webhook.updated"


class WebhookDeleted(Event):
    """A webhook endpoint was deleted; nothing more is delivered to it."""

    type = "webhook.deleted"


class WebhookSecretRotated(Event):
    """A webhook endpoint's signing secret was replaced (the new one is never in the event)."""

    type = "webhook.secret_rotated"


class WebhookDisabled(Event):
    """The engine turned the endpoint off: an event failed for the whole retry schedule."""

    type = "webhook.disabled"


class WebhookDeliveryRequested(Event):
    """Someone asked for a delivery by hand, a ping or a redelivery (the subject is the new
    attempt). The attempts the engine makes and retries by itself record no event: an event per
    attempt would itself be delivered, without end."""

    type = "webhook_delivery.requested"


EVENTS: tuple[type[Event], ...] = (
    WebhookCreated,
    WebhookUpdated,
    WebhookDeleted,
    WebhookSecretRotated,
    WebhookDisabled,
    WebhookDeliveryRequested,
)


def event_body_text(payload: Mapping[str, Any]) -> str:
    """The bytes (as text) every attempt of an event sends: compact JSON of the outbox payload."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
