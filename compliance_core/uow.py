"""The unit of work: the one way core reads and writes through a store.

A write is one store transaction holding the domain change, an outbox row per recorded event and
any idempotency record; signals are sent only once that transaction has committed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ContextManager, Iterator, Protocol

import attrs

from .clock import Clock
from .events import DomainEvent, OutboxMessage, OutboxRepository, Signals
from .ids import IdGenerator

if TYPE_CHECKING:
    from .api_keys import ApiKeyRepository
    from .findings import FindingRepository
    from .idempotency import IdempotencyRepository
    from .organizations import OrganizationRepository
    from .people import PersonRepository
    from .ratelimit import RateLimitRepository
    from .vendors import VendorRepository

__all__ = ["Session", "Store", "UnitOfWork", "Tx"]


class Session(Protocol):
    """What a store hands out for one transaction: a repository per area."""

    organizations: "OrganizationRepository"
    api_keys: "ApiKeyRepository"
    vendors: "VendorRepository"
    people: "PersonRepository"
    findings: "FindingRepository"
    idempotency: "IdempotencyRepository"
    rate_limits: "RateLimitRepository"
    outbox: OutboxRepository


class Store(Protocol):
    """A storage adapter. ``session(write=True)`` must serialise writers (so read-check-write
    sequences such as idempotency and rate limits are atomic), commit when the block ends
    normally and roll back when it raises."""

    url: str

    def session(self, *, write: bool) -> ContextManager[Session]: ...

    def health(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class Tx:
    """A write session plus the events recorded during it."""

    __slots__ = ("_session", "events")

    def __init__(self, session: Session) -> None:
        self._session = session
        self.events: list[DomainEvent] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def record(self, event: DomainEvent) -> None:
        self.events.append(event)


@attrs.define
class UnitOfWork:
    store: Store
    signals: Signals
    clock: Clock
    ids: IdGenerator

    @contextlib.contextmanager
    def write(self) -> Iterator[Tx]:
        with self.store.session(write=True) as session:
            tx = Tx(session)
            yield tx
            now = self.clock.now()
            messages = [
                OutboxMessage(
                    id=self.ids.new("evt"),
                    type=event.type,
                    organization_id=event.organization_id,
                    subject_id=event.subject_id,
                    payload=event.data,
                    occurred_at=now,
                )
                for event in tx.events
            ]
            for message in messages:
                session.outbox.add(message)
        self.signals.send(messages)

    def read(self) -> ContextManager[Session]:
        return self.store.session(write=False)
