"""The unit of work: the one way core reads and writes through a store.

A write is one store transaction holding the domain change, an outbox row and an audit entry per
recorded event, and any idempotency record; signals are sent only once that transaction has
committed. A write names its caller (``uow.write(actor)``, or ``uow.write(None)`` for a write
no caller asked for), so the audit trail says who made each change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar, cast

import attrs

from .audit import AUDIT_LOG, entry_for
from .clock import Clock
from .directory import acting_name
from .events import OUTBOX, Event, OutboxMessage, Signals, event_body
from .ids import IdGenerator
from .links import Linkable
from .page_cache import PageCache
from .permissions import Actor
from .registry import Repo, Session
from .rendering import Renderer, json_value

__all__ = ["Store", "QueuesWrites", "UnitOfWork", "Tx", "Context"]

R = TypeVar("R")


class Store(Protocol):
    """A storage adapter. ``session(write=True)`` must serialise writers (so read-check-write
    sequences such as idempotency and rate limits are atomic), commit when the block ends
    normally and roll back when it raises."""

    url: str

    def session(self, *, write: bool) -> AbstractContextManager[Session]: ...

    def health(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class QueuesWrites(Protocol):
    """A store that can hold a write session's new rows back until the session first reads or
    ends, so that its write lock covers the SQL alone and not the Python that builds the rows
    (SQLite: see ``compliance_store.sqlite.deferred``). The unit of work uses it when the
    store's class offers it: a wrapper that forwards attributes to a store it wraps (a test's
    gate, say) keeps seeing its own ``session`` called."""

    def queued_session(self) -> AbstractContextManager[Session]: ...


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


Reaction = Callable[["Tx", Event], None]
"""Work another area does in the same transaction when an event is recorded (see ``react``)."""


@attrs.define
class UnitOfWork:
    store: Store
    signals: Signals
    clock: Clock
    ids: IdGenerator
    renderer: Renderer
    reactions: list[Reaction] = attrs.field(factory=list)

    def react(self, reaction: Reaction) -> None:
        """Call ``reaction`` with every event any write records, inside that write, before it
        commits: what it writes and records commits or rolls back with the write, and what it
        raises refuses the write. The events it records reach every reaction in turn. How one
        area keeps what it derives from another's records exact (a control's status from the
        policies that serve it) without importing it."""
        self.reactions.append(reaction)

    @contextlib.contextmanager
    def write(self, actor: Actor | None) -> Iterator[Tx]:
        """One write transaction on behalf of ``actor`` (None: the system, e.g. bootstrap or a
        sweep). Each event recorded in it becomes an outbox row and an audit entry naming the
        actor, committed with the change; the signals follow the commit."""
        store = self.store
        queued = hasattr(type(store), "queued_session")
        with cast(QueuesWrites, store).queued_session() if queued else store.session(write=True) as session:
            tx = Tx(session)
            yield tx
            if self.reactions:
                seen = 0
                while seen < len(tx.events):
                    event = tx.events[seen]
                    seen += 1
                    for reaction in self.reactions:
                        reaction(tx, event)
            published = []
            if tx.events:
                now = self.clock.now()
                outbox = session[OUTBOX]
                audit = session[AUDIT_LOG]
                name = acting_name(session, actor)
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
                    audit.add(entry_for(entry_id, event.type, message.payload, message.subject_id, actor, now, name))
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
    :param event_types: the wire type of every event the platform's areas declare (what a
        subscription may name)
    :param settings: per-area settings the embedding application chose, by area name (e.g.
        ``{"webhooks": WebhookPolicy(...)}``); an area reads only its own entry
    :param links: every table of the platform whose records name the controls they serve
    :param ports: what areas offer each other (``Area.ports``)
    :param shared: objects several services of one package share, built once per platform by
        whichever service asks first (the framework catalogue, read by frameworks, controls, task
        templates and the SoA), keyed by the package's own name
    """

    uow: UnitOfWork
    pages: PageCache
    flush_admission: Callable[[], None]
    event_types: frozenset[str] = frozenset()
    settings: Mapping[str, Any] = attrs.field(factory=dict)
    links: tuple[Linkable, ...] = ()
    ports: tuple[Any, ...] = ()
    shared: dict[str, Any] = attrs.field(factory=dict)

    def share(self, key: str, build: Callable[[], R]) -> R:
        """The one object of this platform under ``key``, built by ``build`` on first use."""
        if key not in self.shared:
            self.shared[key] = build()
        return cast(R, self.shared[key])
