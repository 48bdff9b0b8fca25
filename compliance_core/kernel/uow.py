"""The unit of work: the one way core reads and writes through a store.

A write is one store transaction holding the domain change, an outbox row and an audit entry per
recorded event, and any idempotency record; signals are sent only once that transaction has
committed. A write names its caller (``uow.write(actor)``, or ``uow.write(None)`` for a write
no caller asked for), so the audit trail says who made each change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import attrs

from .audit import AUDIT_LOG, entry_for
from .clock import Clock
from .events import OUTBOX, Event, OutboxMessage, Signals, event_body
from .ids import IdGenerator
from .pagination import PageCache
from .permissions import Actor
from .registry import Repo, Session
from .rendering import Renderer, json_value

__all__ = ["Store", "UnitOfWork", "Tx", "Context"]

R = TypeVar("R")


class Store(Protocol):
    """A storage adapter. ``session(write=True)`` must serialise writers (so read-check-write
    sequences such as idempotency and rate limits are atomic), commit when the block ends
    normally and roll back when it raises."""

    url: str

    def session(self, *, write: bool) -> AbstractContextManager[Session]: ...

    def health(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class Tx:
    """A write session plus the events recorded during it."""

    __slots__ = ("_session", "events")

    def __init__(self, session: Session) -> None:
        self._session = session
        self.events: list[Event] = []

    def __getitem__(self, repo: Repo[R]) -> R:
        return self._session[repo]

    def record(self, event: Event) -> None:
        self.events.append(event)


@attrs.define
class UnitOfWork:
    store: Store
    signals: Signals
    clock: Clock
    ids: IdGenerator
    renderer: Renderer

    @contextlib.contextmanager
    def write(self, actor: Actor | None) -> Iterator[Tx]:
        """One write transaction on behalf of ``actor`` (None: the system, e.g. bootstrap or a
        sweep). Each event recorded in it becomes an outbox row and an audit entry naming the
        actor, committed with the change; the signals follow the commit."""
        with self.store.session(write=True) as session:
            tx = Tx(session)
            yield tx
            published = []
            if tx.events:
                now = self.clock.now()
                outbox = session[OUTBOX]
                audit = session[AUDIT_LOG]
                for event in tx.events:
                    event_id = self.ids.new("evt")
                    message = OutboxMessage(
                        id=event_id,
                        type=event.type,
                        organization_id=event.organization_id,
                        subject_id=event.subject_id,
                        payload=event_body(event_id, event, now, self._json),
                        occurred_at=now,
                    )
                    outbox.add(message)
                    entry_id = self.ids.new(AUDIT_LOG.prefix)
                    audit.add(entry_for(entry_id, event.type, message.payload, message.subject_id, actor, now))
                    published.append((message, event))
        self.signals.send(published)

    def read(self) -> AbstractContextManager[Session]:
        return self.store.session(write=False)

    def _json(self, value: Any) -> Any:
        return json_value(self.renderer.native(value))


@attrs.frozen(kw_only=True)
class Context:
    """What each area's service is built from; one per Platform.

    :param uow: reads and writes through the store
    :param pages: the platform's page cache (areas opt in per ``Records`` table)
    :param flush_admission: stores what admission counted in memory (key usage, leased rate-limit
        tokens); an area that reads or changes those calls it first
    """

    uow: UnitOfWork
    pages: PageCache
    flush_admission: Callable[[], None]
