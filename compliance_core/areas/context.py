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
from ..kernel.validation import (
    UNSET,
    Checked,
    Patch,
    Unset,
    id_list,
    patch_field,
    register_schema,
    schema_of,
    text,
)

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


MAX_EDITS = 100
"""How many answers one update may add, and as many it may change and remove."""


@attrs.frozen(kw_only=True)
class ContextEdit:
    """A change to one answer of an update, named by its id; a field left out stays."""

    id: str = attrs.field(converter=text(64))
    question: str | Unset = patch_field(_NEW.question.converter)
    answer: str | Unset = patch_field(_NEW.answer.converter)
    tags: tuple[str, ...] | Unset = patch_field(_NEW.tags.converter)

    def changes(self) -> dict[str, Any]:
        return {
            name: getattr(self, name) for name in ("question", "answer", "tags") if getattr(self, name) is not UNSET
        }


def _item(model: type, where: str, item: Any) -> Any:
    """One entry of an update's list, from its wire object (or the model itself, in-process),
    its errors named by where it sits (``change[2].answer``)."""
    if isinstance(item, model):
        return item
    if not isinstance(item, dict):
        raise ValidationError.field(where, item, "must be an object")
    known = {field.name for field in attrs.fields(model)}
    for key in item:
        if key not in known:
            raise ValidationError.field(f"{where}.{key}", item[key], "unknown field")
    for field in attrs.fields(model):
        if field.default is attrs.NOTHING and field.name not in item:
            raise ValidationError.field(f"{where}.{field.name}", None, "is required")
    try:
        return model(**item)
    except ValidationError as error:
        details = {**error.details, "field": f"{where}.{error.details['field']}"}
        raise ValidationError(f"{details['field']}: {details['reason']}", details) from None


def _items(model: type, wire: str) -> Checked:
    def check(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)):
            raise ValidationError.field(wire, value, "must be a list")
        if len(value) > MAX_EDITS:
            raise ValidationError.field(wire, len(value), f"at most {MAX_EDITS} entries")
        return tuple(_item(model, f"{wire}[{index}]", item) for index, item in enumerate(value))

    return register_schema(
        Checked(check, takes_field=True),
        {"type": "array", "maxItems": MAX_EDITS, "nullable": True, "description": "null means none", "items": model},
    )


@attrs.frozen(kw_only=True)
class ContextUpdate:
    """Answers to add, change and remove in one write, which keeps one snapshot."""

    add: tuple[NewContextEntry, ...] = attrs.field(default=(), converter=_items(NewContextEntry, "add"))
    change: tuple[ContextEdit, ...] = attrs.field(default=(), converter=_items(ContextEdit, "change"))
    remove: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_EDITS))


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


class ContextConfirmed(Event):
    """An update of the context changed no answer: the context was confirmed as it stands;
    ``data`` is the snapshot that update kept."""

    type = "context.confirmed"


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


AREA = Area(
    name="context",
    tag="Context",
    service=lambda context: ContextService(context.uow, context.pages),
    api=ContextService,
    actions=(CONTEXT_READ, CONTEXT_WRITE),
    records=(CONTEXT, CONTEXT_SNAPSHOTS),
    events=(ContextEntryCreated, ContextEntryUpdated, ContextEntryDeleted, ContextConfirmed),
)
