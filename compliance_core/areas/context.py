"""Context: what the organization says about itself, as questions and answers ("How does your
team work?" "Fully remote."), which the SoA and the assistant read instead of asking again.

Every write keeps a snapshot: who changed the context (the key or user, the person behind it,
who issued the key), when, and each answer it changed: as it is after the write, with the old
values of what changed. The snapshots are the context's
history: replayed oldest first from nothing they give the context as it is, so an approved SoA
can name the snapshot it was decided on and anyone can see what the context said then.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import attrs

from ..kernel.directory import acting_name
from ..kernel.errors import ValidationError
from ..kernel.events import Event
from ..kernel.operations import Once, Standard, operation, page_of
from ..kernel.page_cache import PageCache
from ..kernel.pages import Page, PageRequest
from ..kernel.permissions import EVERYONE, MANAGERS, Action, Actor
from ..kernel.records import Filter, Records, changed, fetch
from ..kernel.registry import Area, Route
from ..kernel.uow import Tx, UnitOfWork
from ..kernel.validation import UNSET, Checked, Patch, Unset, patch_field, register_schema, schema_of, text

__all__ = [
    "ContextEntry",
    "NewContextEntry",
    "ContextEntryPatch",
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
    "replay",
    "AREA",
]

MAX_TAGS = 20
TAG_LENGTH = 50


@attrs.frozen(kw_only=True)
class ContextEntry:
    """One answer of the organization's context."""

    id: str
    organization_id: str
    question: str
    answer: str
    tags: tuple[str, ...] = ()
    created_at: dt.datetime
    updated_at: dt.datetime


_tag = text(TAG_LENGTH)


@attrs.frozen(kw_only=True)
class _Tag:
    """One tag, checked as any short text (a model, so the text rules stay the kernel's)."""

    value: str = attrs.field(converter=_tag)


def _check_tags(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is UNSET:
        return value
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field("tags", value, "must be a list of short texts")
    if len(value) > MAX_TAGS:
        raise ValidationError.field("tags", len(value), f"at most {MAX_TAGS} tags")
    tags = []
    for index, item in enumerate(value):
        try:
            tags.append(_Tag(value=item).value)
        except ValidationError as error:
            raise ValidationError.field(f"tags[{index}]", item, error.details.get("reason", "is not a tag")) from None
    return tuple(dict.fromkeys(tags))


tag_list = register_schema(
    Checked(_check_tags, takes_field=True),
    {
        "type": "array",
        "maxItems": MAX_TAGS,
        "nullable": True,
        "items": schema_of(_tag),
        "description": "null means none; repeated tags are kept once",
    },
)


@attrs.frozen(kw_only=True)
class NewContextEntry:
    question: str = attrs.field(converter=text(1000))
    answer: str = attrs.field(converter=text(10_000))
    tags: tuple[str, ...] = attrs.field(default=(), converter=tag_list)


_NEW = attrs.fields(NewContextEntry)


@attrs.frozen(kw_only=True)
class ContextEntryPatch(Patch):
    question: str | Unset = patch_field(_NEW.question.converter)
    answer: str | Unset = patch_field(_NEW.answer.converter)
    tags: tuple[str, ...] | Unset = patch_field(_NEW.tags.converter)


@attrs.frozen(kw_only=True)
class ContextAnswer:
    """An answer's content, without its bookkeeping: what ``replay`` gives per answer id."""

    question: str
    answer: str
    tags: tuple[str, ...] = ()


class ChangeKind(enum.StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"


@attrs.frozen(kw_only=True)
class ContextPrevious:
    """The old values of what a change changed; null where the field did not change."""

    question: str | None = None
    answer: str | None = None
    tags: tuple[str, ...] | None = None


@attrs.frozen(kw_only=True)
class ContextChange:
    """One answer a write changed: its content after the write (as it was, for a removed one)
    and, for a changed one, ``previous``: the old values of the fields that changed, so a
    snapshot shows the answer before and after without reading any other."""

    context_id: str
    kind: ChangeKind
    question: str
    answer: str
    tags: tuple[str, ...] = ()
    previous: ContextPrevious = ContextPrevious()


@attrs.frozen(kw_only=True)
class ContextSnapshot:
    """One write to the context: who made it, when, and what it changed."""

    id: str
    organization_id: str
    created_at: dt.datetime
    changed_by: str
    """The key or user that wrote (``local:<role>`` for an in-process caller)."""
    changed_by_person_id: str | None = None
    """The person behind that key, if it acts as one."""
    changed_by_person_name: str | None = None
    """That person's name when they wrote."""
    key_issued_by: str | None = None
    """Who issued the writing key."""
    changes: tuple[ContextChange, ...] = ()
    answers: int = 0
    """How many answers the context held after the write."""


@attrs.frozen
class ContextFilter(Filter):
    """No filter: the context is read whole (``q`` searches its questions and answers)."""


@attrs.frozen
class SnapshotFilter(Filter):
    """No filter: the history is read newest first (``from``/``to`` bound its dates)."""


CONTEXT: Records[ContextEntry, ContextFilter] = Records(
    "context_entries",
    model=ContextEntry,
    filters=ContextFilter,
    kind="context entry",
    prefix="ctx",
    searchable=("question", "answer"),
    sortable=("question", "updated_at"),
)
CONTEXT_SNAPSHOTS: Records[ContextSnapshot, SnapshotFilter] = Records(
    "context_snapshots",
    model=ContextSnapshot,
    filters=SnapshotFilter,
    kind="context snapshot",
    prefix="ctxs",
    newest_first=True,
    ranged="created_at",
)
CONTEXT_READ = Action("context:read", EVERYONE)
CONTEXT_WRITE = Action("context:write", MANAGERS)


class ContextEntryCreated(Event):
    """An answer was added to the organization's context."""

    type = "context_entry.created"


class ContextEntryUpdated(Event):
    """An answer of the context changed; ``previous`` holds the old values of what changed."""

    type = "context_entry.updated"


class ContextEntryDeleted(Event):
    """An answer was removed from the context; ``data`` is the answer as it was."""

    type = "context_entry.deleted"


def _change(kind: ChangeKind, entry: ContextEntry, previous: dict[str, Any] | None = None) -> ContextChange:
    return ContextChange(
        context_id=entry.id,
        kind=kind,
        question=entry.question,
        answer=entry.answer,
        tags=entry.tags,
        previous=ContextPrevious(**(previous or {})),
    )


def replay(snapshots: list[ContextSnapshot]) -> dict[str, ContextAnswer]:
    """The context the snapshots give, applied oldest first from an empty one: by answer id."""
    state: dict[str, ContextAnswer] = {}
    for snapshot in sorted(snapshots, key=lambda s: (s.created_at, s.id)):
        for change in snapshot.changes:
            if change.kind is ChangeKind.REMOVED:
                state.pop(change.context_id, None)
            else:
                state[change.context_id] = ContextAnswer(
                    question=change.question, answer=change.answer, tags=change.tags
                )
    return state


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

    def _snapshot(self, tx: Tx, actor: Actor, now: dt.datetime, change: ContextChange) -> None:
        """Keep what this write changed, with who made it and how many answers it leaves."""
        _, answers = tx[CONTEXT].list(actor.organization_id, ContextFilter(), PageRequest(per_page=1))
        tx[CONTEXT_SNAPSHOTS].add(
            ContextSnapshot(
                id=self.uow.ids.new(CONTEXT_SNAPSHOTS.prefix),
                organization_id=actor.organization_id,
                created_at=now,
                changed_by=actor.principal,
                changed_by_person_id=actor.person_id,
                changed_by_person_name=acting_name(tx, actor),
                key_issued_by=actor.key_issued_by,
                changes=(change,),
                answers=answers,
            )
        )


AREA = Area(
    name="context",
    tag="Context",
    service=lambda context: ContextService(context.uow, context.pages),
    api=ContextService,
    actions=(CONTEXT_READ, CONTEXT_WRITE),
    records=(CONTEXT, CONTEXT_SNAPSHOTS),
    events=(ContextEntryCreated, ContextEntryUpdated, ContextEntryDeleted),
)
