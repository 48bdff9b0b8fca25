"""The audit trail: who did what to which record, when, and what changed.

The unit of work derives one entry from each event a write records, in the same transaction as
the write and its outbox row, so the trail can miss no write that records an event, and a write
that rolls back leaves no entry. Every domain write records an event; the only writes that do
not are the admission bookkeeping (rate-limit leases, key usage counts) and maintenance purges
of idempotency records: they change no record a caller sees.

The trail lists newest first, as a log reads. Nobody changes it: the areas offer only reads of it. The store-level repository keeps the
generic ``add``/``update``/``delete`` of every ``Records`` table because the list machinery,
the store contract and ``migrate-store`` use them; no service calls the last two.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .permissions import Actor, Role
from .records import Filter, Records
from .validation import optional_text

__all__ = ["ActorType", "AuditEntry", "AuditFilter", "AUDIT_LOG", "actor_fields", "changes_of", "entry_for"]


class ActorType(enum.StrEnum):
    API_KEY = "api_key"
    USER = "user"
    LOCAL = "local"
    """An in-process caller (an embedding app, the CLI) acting with a role but no credential."""
    SYSTEM = "system"
    """A write with no caller: bootstrap, operator commands, sweeps."""


@attrs.frozen(kw_only=True)
class AuditEntry:
    """One write to one record, as the audit trail keeps it.

    ``changes`` maps each changed field's wire name to ``{"old", "new"}`` as the API renders
    them. A created record lists its non-empty fields with ``new`` only, a deleted one with
    ``old`` only; the bookkeeping fields (``id``, ``organizationId``, ``createdAt``,
    ``updatedAt``) are never listed. ``eventId`` is the event the write recorded: the same id
    its outbox row and webhook deliveries carry.
    """

    id: str
    organization_id: str
    created_at: dt.datetime
    actor_type: ActorType
    actor_id: str | None = None
    actor_role: Role | None = None
    actor_person_id: str | None = None
    """The person the writing key (or in-process caller) acted as, if any: ``actor_id`` stays
    the key, and this says who was behind it."""
    actor_person_name: str | None = None
    """That person's name when they wrote."""
    action: str
    entity_type: str
    entity_id: str
    event_id: str
    changes: dict[str, Any] = attrs.field(factory=dict)
    key_issued_by: str | None = None
    """Who issued the writing key (the issuing principal): a write, a signature above all, made
    through a key someone else bound to a person shows who could have made it."""
    key_issued_by_person_id: str | None = None
    """The person that issuing key acted as, if any."""


@attrs.frozen(kw_only=True)
class AuditFilter(Filter):
    entity_type: str | None = attrs.field(default=None, converter=optional_text(100))
    entity_id: str | None = attrs.field(default=None, converter=optional_text(100))
    action: str | None = attrs.field(default=None, converter=optional_text(100))
    actor_id: str | None = attrs.field(default=None, converter=optional_text(100))


AUDIT_LOG: Records[AuditEntry, AuditFilter] = Records(
    "audit_log",
    model=AuditEntry,
    filters=AuditFilter,
    kind="audit entry",
    prefix="aud",
    newest_first=True,
    facets=("entity_type", "action"),
    searchable=("action", "entity_type", "entity_id", "actor_person_name"),
    sortable=("action", "entity_type"),
    ranged="created_at",
)

_BOOKKEEPING = frozenset({"id", "organizationId", "createdAt", "updatedAt"})
_EMPTY: tuple[Any, ...] = (None, "", [], {})


def actor_fields(actor: Actor | None) -> tuple[ActorType, str | None, Role | None]:
    """(type, id, role) of whoever wrote: a key, a signed-in user, an in-process caller, or the
    system when there is no caller at all."""
    if actor is None:
        return ActorType.SYSTEM, None, None
    if actor.key_id is not None:
        return ActorType.API_KEY, actor.key_id, actor.role
    if actor.user_id is not None:
        return ActorType.USER, actor.user_id, actor.role
    return ActorType.LOCAL, None, actor.role


def changes_of(event_type: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The changed fields of an event body (``{"data", "previous"?}``, see ``event_body``)."""
    data: Mapping[str, Any] = body["data"]
    previous: Mapping[str, Any] | None = body.get("previous")
    if previous is not None:
        return {key: {"old": old, "new": data.get(key)} for key, old in previous.items()}
    side = "old" if event_type.endswith(".deleted") else "new" if event_type.endswith(".created") else None
    if side is None:
        return {}  # an occasion without a change (a reminder such as evidence.expiring)
    return {key: {side: value} for key, value in data.items() if key not in _BOOKKEEPING and value not in _EMPTY}


def entry_for(
    entry_id: str,
    event_type: str,
    body: Mapping[str, Any],
    subject_id: str,
    actor: Actor | None,
    at: dt.datetime,
    person_name: str | None = None,
) -> AuditEntry:
    """The audit entry of one recorded event, from the body the unit of work rendered for it."""
    actor_type, actor_id, role = actor_fields(actor)
    return AuditEntry(
        id=entry_id,
        organization_id=body["organizationId"],
        created_at=at,
        actor_type=actor_type,
        actor_id=actor_id,
        actor_role=role,
        actor_person_id=None if actor is None else actor.person_id,
        actor_person_name=person_name,
        action=event_type,
        entity_type=event_type.split(".", 1)[0],
        entity_id=subject_id,
        event_id=body["id"],
        changes=changes_of(event_type, body),
        key_issued_by=None if actor is None else actor.key_issued_by,
        key_issued_by_person_id=None if actor is None else actor.key_issued_by_person_id,
    )
