"""Context: what the organization says about itself, as questions and answers ("How does your
team work?" "Fully remote."), which the SoA and the assistant read instead of asking again.

Every write keeps a snapshot: who changed the context (the key or user, the person behind it,
who issued the key), when, and each answer it changed: as it is after the write, with the old
values of what changed. The snapshots are the context's history: replayed oldest first from
nothing they give the context as it is, so an approved SoA can name the snapshot it was decided
on and anyone can see what the context said then.
"""

from __future__ import annotations

from ...kernel.context_history import ContextHistory, PinnedContext
from ...kernel.pages import PageRequest
from ...kernel.registry import Area, Session
from .models import (
    CONTEXT,
    CONTEXT_READ,
    CONTEXT_SNAPSHOTS,
    CONTEXT_WRITE,
    ChangeKind,
    ContextAnswer,
    ContextChange,
    ContextConfirmed,
    ContextEdit,
    ContextEntry,
    ContextEntryCreated,
    ContextEntryDeleted,
    ContextEntryPatch,
    ContextEntryUpdated,
    ContextPrevious,
    ContextSnapshot,
    ContextUpdate,
    NewContextEntry,
    SnapshotFilter,
    replay,
)
from .service import ContextService

__all__ = [
    "ContextEntry",
    "NewContextEntry",
    "ContextEntryPatch",
    "ContextEdit",
    "ContextUpdate",
    "ContextAnswer",
    "ChangeKind",
    "ContextChange",
    "ContextPrevious",
    "ContextSnapshot",
    "ContextService",
    "CONTEXT",
    "CONTEXT_SNAPSHOTS",
    "CONTEXT_READ",
    "CONTEXT_WRITE",
    "ContextEntryCreated",
    "ContextEntryUpdated",
    "ContextEntryDeleted",
    "ContextConfirmed",
    "replay",
    "AREA",
]


def _latest(session: Session, organization_id: str) -> PinnedContext | None:
    newest, _ = session[CONTEXT_SNAPSHOTS].list(organization_id, SnapshotFilter(), PageRequest(per_page=1))
    if not newest:
        return None
    return PinnedContext(snapshot_id=newest[0].id, taken_at=newest[0].created_at, answers=newest[0].answers)


AREA = Area(
    name="context",
    tag="Context",
    service=lambda context: ContextService(context.uow, context.pages),
    api=ContextService,
    actions=(CONTEXT_READ, CONTEXT_WRITE),
    records=(CONTEXT, CONTEXT_SNAPSHOTS),
    events=(ContextEntryCreated, ContextEntryUpdated, ContextEntryDeleted, ContextConfirmed),
    ports=(ContextHistory(latest=_latest),),
)
