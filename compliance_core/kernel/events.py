"""Typed domain events, the outbox row they become, and the per-Platform blinker signals.

Services record events inside a write; the unit of work renders each one (the resource exactly
as the API shows it, plus the previous values of what changed) into an outbox row in the same
transaction, and sends the signals only after commit. Webhook delivery reads the durable outbox,
so a crash can neither lose an event nor announce a rolled-back write.

An area declares one class per kind of event, with its wire type:

    class VendorCreated(Event):
        type = "vendor.created"
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Protocol

import attrs
import blinker

from .registry import Repo

log = logging.getLogger("compliance_core.events")

__all__ = ["Event", "OutboxMessage", "OutboxRepository", "OUTBOX", "OUTBOX_RETENTION", "Signals", "event_body"]

OUTBOX_RETENTION = dt.timedelta(days=7)
"""How long a published message stays in the outbox. Nothing reads it after publication (each
webhook delivery keeps its own body, the audit log its own entry); the week leaves room to look
at what went out, by hand or with ``compliance migrate-store``, before it goes."""


@attrs.frozen(kw_only=True)
class Event:
    """Something that happened to one resource.

    :param subject: the resource as it is after the change (an attrs model with an ``id``)
    :param previous: for changes, the old values of the fields that changed (by field name)
    """

    type: ClassVar[str]
    organization_id: str
    subject: Any
    previous: Mapping[str, Any] | None = None

    @property
    def subject_id(self) -> str:
        return str(self.subject.id)


@attrs.frozen(kw_only=True)
class OutboxMessage:
    """One event as stored and delivered; ``payload`` is its JSON body (see ``event_body``)."""

    id: str
    type: str
    organization_id: str
    subject_id: str
    payload: dict[str, Any]
    occurred_at: dt.datetime
    published_at: dt.datetime | None = None


def event_body(event_id: str, event: Event, occurred_at: dt.datetime, render: Callable[[Any], Any]) -> dict[str, Any]:
    """The event's JSON body, the same for the outbox, webhooks and in-process subscribers:
    ``{"id", "type", "createdAt", "organizationId", "data"}`` and, for changes, ``previous``
    (camelCase field names, old values as the API shows them)."""
    body: dict[str, Any] = {
        "id": event_id,
        "type": event.type,
        "createdAt": render(occurred_at),
        "organizationId": event.organization_id,
        "data": render(event.subject),
    }
    if event.previous is not None:
        data = body["data"]
        shown = render(attrs.evolve(event.subject, **event.previous))
        body["previous"] = {key: shown[key] for key in data if key in shown and shown[key] != data[key]}
    return body


class OutboxRepository(Protocol):
    def add(self, message: OutboxMessage) -> None: ...

    def pending(self, limit: int = 100) -> list[OutboxMessage]: ...

    def mark_published(self, message_ids: Iterable[str], at: dt.datetime) -> None: ...

    def purge(self, before: dt.datetime) -> int:
        """Delete the messages published before ``before`` (never an unpublished one) and
        return how many went."""
        ...


OUTBOX: Repo[OutboxRepository] = Repo("outbox")


class Signals:
    """One set of signals per Platform instance: receivers never leak between platforms.

    Receivers get the ``OutboxMessage`` as sender (its ``payload`` is the event's JSON body) and
    the typed ``event`` as a keyword. ``connect(type, receiver)`` keeps a strong reference,
    because blinker's default weak reference silently drops lambdas and closures.
    """

    def __init__(self) -> None:
        self.any_event = blinker.Signal("any event")
        self._by_type: dict[str, blinker.Signal] = {}

    def signal(self, event_type: str) -> blinker.Signal:
        if event_type not in self._by_type:
            self._by_type[event_type] = blinker.Signal(event_type)
        return self._by_type[event_type]

    def connect(self, event_type: str | type[Event] | None, receiver: Callable[..., Any]) -> Callable[..., Any]:
        if isinstance(event_type, type):
            event_type = event_type.type
        target = self.any_event if event_type is None else self.signal(event_type)
        target.connect(receiver, weak=False)
        return receiver

    def send(self, published: Iterable[tuple[OutboxMessage, Event]]) -> None:
        """Deliver committed events. The write has already succeeded, so a receiver that raises
        is logged and the others still get the event; the caller never sees a committed write
        fail (webhooks read the durable outbox, not these signals)."""
        for message, event in published:
            signals = [self.any_event]
            if message.type in self._by_type:
                signals.append(self._by_type[message.type])
            for signal in signals:
                for receiver in signal.receivers_for(message):
                    try:
                        receiver(message, event=event)
                    except Exception:
                        log.exception("event receiver %r failed on %s %s", receiver, message.type, message.id)
