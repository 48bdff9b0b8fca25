"""Domain events, the outbox row they become, and the per-Platform blinker signals.

Services record events inside a write; the unit of work stores each as an outbox row in the same
transaction and sends the signals only after commit. Webhook delivery (a later area) reads the
durable outbox, so a crash can neither lose an event nor announce a rolled-back write.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, Callable, Iterable, Protocol

import attrs
import blinker

__all__ = ["DomainEvent", "OutboxMessage", "OutboxRepository", "Signals", "jsonable"]


def jsonable(value: Any) -> Any:
    """Turn a model (or nested models) into JSON-ready values for event payloads."""
    if attrs.has(type(value)):
        return {f.name: jsonable(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


@attrs.frozen(kw_only=True)
class DomainEvent:
    type: str
    organization_id: str
    subject_id: str
    data: dict[str, Any]


@attrs.frozen(kw_only=True)
class OutboxMessage:
    id: str
    type: str
    organization_id: str
    subject_id: str
    payload: dict[str, Any]
    occurred_at: dt.datetime
    published_at: dt.datetime | None = None


class OutboxRepository(Protocol):
    def add(self, message: OutboxMessage) -> None: ...
    def pending(self, limit: int = 100) -> list[OutboxMessage]: ...
    def mark_published(self, message_ids: Iterable[str], at: dt.datetime) -> None: ...


class Signals:
    """One set of signals per Platform instance: receivers never leak between platforms.

    ``connect(type, receiver)`` keeps a strong reference, because blinker's default weak
    reference silently drops lambdas and closures.
    """

    def __init__(self) -> None:
        self.any_event = blinker.Signal("any event")
        self._by_type: dict[str, blinker.Signal] = {}

    def signal(self, event_type: str) -> blinker.Signal:
        if event_type not in self._by_type:
            self._by_type[event_type] = blinker.Signal(event_type)
        return self._by_type[event_type]

    def connect(self, event_type: str | None, receiver: Callable[..., Any]) -> Callable[..., Any]:
        target = self.any_event if event_type is None else self.signal(event_type)
        target.connect(receiver, weak=False)
        return receiver

    def send(self, messages: Iterable[OutboxMessage]) -> None:
        for message in messages:
            self.any_event.send(message)
            if message.type in self._by_type:
                self._by_type[message.type].send(message)
