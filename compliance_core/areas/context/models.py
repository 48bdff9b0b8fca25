"""The context's answers, the snapshots every write keeps, their tables, actions and events."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, MANAGERS, Action
from ...kernel.records import Filter, Records
from ...kernel.validation import (
    UNSET,
    Checked,
    Patch,
    Unset,
    id_list,
    object_list,
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
    "CONTEXT",
    "CONTEXT_SNAPSHOTS",
    "CONTEXT_READ",
    "CONTEXT_WRITE",
    "ContextEntryCreated",
    "ContextEntryUpdated",
    "ContextEntryDeleted",
    "ContextConfirmed",
    "replay",
    "ContextFilter",
    "SnapshotFilter",
    "MAX_EDITS",
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


@attrs.frozen(kw_only=True)
class ContextUpdate:
    """Answers to add, change and remove in one write, which keeps one snapshot."""

    add: tuple[NewContextEntry, ...] = attrs.field(default=(), converter=object_list(NewContextEntry, "add", MAX_EDITS))
    change: tuple[ContextEdit, ...] = attrs.field(default=(), converter=object_list(ContextEdit, "change", MAX_EDITS))
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
    searchable=("changed_by_person_name",),
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
