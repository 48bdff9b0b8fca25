"""The context's operations: every write keeps a snapshot of what it changed."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from ...kernel.directory import acting_name
from ...kernel.errors import ValidationError
from ...kernel.operations import Once, Standard, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import changed, fetch
from ...kernel.registry import Route
from ...kernel.uow import Tx, UnitOfWork
from .models import (
    CONTEXT,
    CONTEXT_READ,
    CONTEXT_SNAPSHOTS,
    CONTEXT_WRITE,
    ChangeKind,
    ContextChange,
    ContextConfirmed,
    ContextEdit,
    ContextEntry,
    ContextEntryCreated,
    ContextEntryDeleted,
    ContextEntryPatch,
    ContextEntryUpdated,
    ContextFilter,
    ContextPrevious,
    ContextSnapshot,
    ContextUpdate,
    NewContextEntry,
    SnapshotFilter,
)

__all__ = ["ContextService"]


def _change(kind: ChangeKind, entry: ContextEntry, previous: dict[str, Any] | None = None) -> ContextChange:
    return ContextChange(
        context_id=entry.id,
        kind=kind,
        question=entry.question,
        answer=entry.answer,
        tags=entry.tags,
        previous=ContextPrevious(**(previous or {})),
    )


_TABLE = Standard(CONTEXT, id="context_id")
_ALL = "/v1/context"
_ONE = "/v1/context/{context_id}"
_SNAPSHOTS = "/v1/context/snapshots"


@attrs.define
class ContextService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(CONTEXT_READ, Route("GET", _ALL, "The organization's context: its answers"))

    @operation(
        CONTEXT_WRITE,
        Route("POST", _ALL, "Add an answer to the context (keeps a snapshot)", 201),
        body=NewContextEntry,
        idempotent=True,
        result=ContextEntry,
        example={"question": "How does your team work?", "answer": "Fully remote.", "tags": ["people"]},
    )
    def create(self, actor: Actor, data: NewContextEntry, once: Once) -> ContextEntry:
        now = self.uow.clock.now()

        def create() -> ContextEntry:
            entry = ContextEntry(
                id=self.uow.ids.new(CONTEXT.prefix),
                organization_id=actor.organization_id,
                question=data.question,
                answer=data.answer,
                tags=data.tags,
                created_at=now,
                updated_at=now,
            )
            tx[CONTEXT].add(entry)
            tx.record(ContextEntryCreated(organization_id=actor.organization_id, subject=entry))
            self._snapshot(tx, actor, now, _change(ChangeKind.ADDED, entry))
            return entry

        with self.uow.write(actor) as tx:
            return once(tx, data, now, create)

    get = _TABLE.get(CONTEXT_READ, Route("GET", _ONE, "Read one answer of the context"))

    @operation(
        CONTEXT_WRITE,
        Route("PATCH", _ONE, "Change an answer of the context (keeps a snapshot)"),
        body=ContextEntryPatch,
        result=ContextEntry,
        example={"answer": "Remote, with an office in Lisbon."},
    )
    def update(self, actor: Actor, context_id: str, patch: ContextEntryPatch) -> ContextEntry:
        """Nothing is written, and no snapshot kept, when nothing changes."""
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = fetch(tx, CONTEXT, actor.organization_id, context_id)
            previous = changed(current, changes)
            if not previous:
                return current
            now = self.uow.clock.now()
            updated = attrs.evolve(current, **changes, updated_at=now)
            tx[CONTEXT].update(updated)
            tx.record(ContextEntryUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
            change = _change(ChangeKind.CHANGED, updated, previous)
            self._snapshot(tx, actor, now, change)
        return updated

    @operation(
        CONTEXT_WRITE, Route("DELETE", _ONE, "Remove an answer from the context (keeps a snapshot)"), result=None
    )
    def delete(self, actor: Actor, context_id: str) -> None:
        with self.uow.write(actor) as tx:
            current = fetch(tx, CONTEXT, actor.organization_id, context_id)
            tx[CONTEXT].delete(actor.organization_id, context_id)
            tx.record(ContextEntryDeleted(organization_id=actor.organization_id, subject=current))
            change = _change(ChangeKind.REMOVED, current)
            self._snapshot(tx, actor, self.uow.clock.now(), change)

    @operation(
        CONTEXT_WRITE,
        Route("PATCH", _ALL, "Add, change and remove answers in one write (keeps one snapshot, answered)"),
        body=ContextUpdate,
        idempotent=True,
        result=ContextSnapshot,
        example={"add": [{"question": "Where is customer data hosted?", "answer": "In the EU.", "tags": ["hosting"]}]},
    )
    def apply(self, actor: Actor, data: ContextUpdate, once: Once) -> ContextSnapshot:
        """Every change is checked before anything is written: an id that is no answer of the
        context, or one both changed twice or changed and removed, refuses the whole update,
        naming where it sits (``change[1].id``, ``remove[0]``). The snapshot lists what really
        changed (an edit to the same values changes nothing); every update keeps one, even one
        that changes nothing, as a record that the context was confirmed as it stands."""
        now = self.uow.clock.now()
        organization_id = actor.organization_id

        def apply() -> ContextSnapshot:
            entries = tx[CONTEXT]
            edited: dict[str, tuple[ContextEntry, ContextEdit]] = {}
            for index, edit in enumerate(data.change):
                current = entries.get(organization_id, edit.id)
                if current is None:
                    raise ValidationError.field(f"change[{index}].id", edit.id, "is not an answer of this context")
                if edit.id in edited:
                    raise ValidationError.field(f"change[{index}].id", edit.id, "is changed twice in one update")
                edited[edit.id] = (current, edit)
            removed = []
            for index, context_id in enumerate(data.remove):
                current = entries.get(organization_id, context_id)
                if current is None:
                    raise ValidationError.field(f"remove[{index}]", context_id, "is not an answer of this context")
                if context_id in edited:
                    raise ValidationError.field(f"remove[{index}]", context_id, "is also changed in this update")
                removed.append(current)
            changes = []
            for new in data.add:
                entry = ContextEntry(
                    id=self.uow.ids.new(CONTEXT.prefix),
                    organization_id=organization_id,
                    question=new.question,
                    answer=new.answer,
                    tags=new.tags,
                    created_at=now,
                    updated_at=now,
                )
                entries.add(entry)
                tx.record(ContextEntryCreated(organization_id=organization_id, subject=entry))
                changes.append(_change(ChangeKind.ADDED, entry))
            for current, edit in edited.values():
                previous = changed(current, edit.changes())
                if previous:
                    updated = attrs.evolve(current, **edit.changes(), updated_at=now)
                    entries.update(updated)
                    tx.record(ContextEntryUpdated(organization_id=organization_id, subject=updated, previous=previous))
                    changes.append(_change(ChangeKind.CHANGED, updated, previous))
            for current in removed:
                entries.delete(organization_id, current.id)
                tx.record(ContextEntryDeleted(organization_id=organization_id, subject=current))
                changes.append(_change(ChangeKind.REMOVED, current))
            snapshot = self._snapshot(tx, actor, now, *changes)
            if not changes:
                tx.record(ContextConfirmed(organization_id=organization_id, subject=snapshot))
            return snapshot

        with self.uow.write(actor) as tx:
            return once(tx, data, now, apply)

    @operation(
        CONTEXT_READ,
        Route("GET", _SNAPSHOTS, "List the context's snapshots, newest first: who changed what, when"),
        paged=True,
        result=ContextSnapshot,
        lists=CONTEXT_SNAPSHOTS,
    )
    def snapshots(self, actor: Actor, page: PageRequest | None = None) -> Page[ContextSnapshot]:
        return page_of(self, CONTEXT_SNAPSHOTS, actor, SnapshotFilter(), page)

    @operation(
        CONTEXT_READ,
        Route("GET", _SNAPSHOTS + "/{snapshot_id}", "Read one snapshot of the context"),
        result=ContextSnapshot,
    )
    def snapshot(self, actor: Actor, snapshot_id: str) -> ContextSnapshot:
        with self.uow.read() as session:
            return fetch(session, CONTEXT_SNAPSHOTS, actor.organization_id, snapshot_id)

    def _snapshot(self, tx: Tx, actor: Actor, now: dt.datetime, *changes: ContextChange) -> ContextSnapshot:
        """Keep what this write changed, with who made it and how many answers it leaves."""
        _, answers = tx[CONTEXT].list(actor.organization_id, ContextFilter(), PageRequest(per_page=1))
        snapshot = ContextSnapshot(
            id=self.uow.ids.new(CONTEXT_SNAPSHOTS.prefix),
            organization_id=actor.organization_id,
            created_at=now,
            changed_by=actor.principal,
            changed_by_person_id=actor.person_id,
            changed_by_person_name=acting_name(tx, actor),
            key_issued_by=actor.key_issued_by,
            changes=changes,
            answers=answers,
        )
        tx[CONTEXT_SNAPSHOTS].add(snapshot)
        return snapshot
