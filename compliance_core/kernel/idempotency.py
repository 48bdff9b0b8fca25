"""Idempotency keys, kept by core so in-process and HTTP callers get the same guarantee.

The record is looked up and written inside the same write transaction as the change it guards:
a repeat within 24 hours with the same payload gets the original result and creates nothing; a
different payload is a conflict; a failed attempt leaves no record, so a retry runs again. Stores
serialise writers, so two concurrent calls with one key cannot both create.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

import attrs

from .errors import Conflict, ValidationError
from .permissions import Actor
from .registry import Repo
from .rendering import json_value
from .uow import Tx

__all__ = [
    "IdempotencyKey",
    "IdempotencyRecord",
    "IdempotencyRepository",
    "run_idempotent",
    "fingerprint",
    "RETENTION",
    "IDEMPOTENCY",
]

T = TypeVar("T")
RETENTION = dt.timedelta(hours=24)


@attrs.frozen(kw_only=True)
class IdempotencyRecord:
    organization_id: str
    principal: str
    key: str
    operation: str
    fingerprint: str
    result: Any
    created_at: dt.datetime


class IdempotencyRepository(Protocol):
    def get(self, organization_id: str, principal: str, key: str) -> IdempotencyRecord | None: ...

    def put(self, record: IdempotencyRecord) -> None:
        """Insert, or replace an expired record with the same key."""

    def purge(self, before: dt.datetime) -> int: ...


def _plain(value: Any) -> Any:
    """Command models as plain values, for a stable digest (field names as they are in core)."""
    if attrs.has(type(value)):
        return {f.name: _plain(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return json_value(value)


def fingerprint(operation: str, payload: Any) -> str:
    body = json.dumps([operation, _plain(payload)], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


IDEMPOTENCY: Repo[IdempotencyRepository] = Repo("idempotency")


@attrs.define
class IdempotencyKey:
    """An Idempotency-Key that tells its caller whether the answer was a replay: pass it where an
    operation takes ``idempotency_key`` and read ``replayed`` after the call (the HTTP adapter
    answers ``Idempotent-Replayed: true`` from it). A plain string works the same, silently."""

    value: str
    replayed: bool = False


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not 1 <= len(key) <= 255 or not key.isprintable():
        raise ValidationError.field("Idempotency-Key", key, "must be 1 to 255 printable characters")
    return key


def run_idempotent(
    tx: Tx,
    actor: Actor,
    key: str | IdempotencyKey | None,
    operation: str,
    payload: Any,
    now: dt.datetime,
    run: Callable[[], T],
) -> T:
    if key is None:
        return run()
    told = key if isinstance(key, IdempotencyKey) else None
    key = _check_key(key.value if isinstance(key, IdempotencyKey) else key)
    digest = fingerprint(operation, payload)
    found = tx[IDEMPOTENCY].get(actor.organization_id, actor.principal, key)
    if found is not None and found.created_at > now - RETENTION:
        if found.fingerprint != digest:
            raise Conflict(
                "this Idempotency-Key was already used with a different request",
                {"field": "Idempotency-Key", "value": key, "operation": found.operation},
            )
        if told is not None:
            told.replayed = True
        return cast(T, found.result)
    result = run()
    tx[IDEMPOTENCY].put(
        IdempotencyRecord(
            organization_id=actor.organization_id,
            principal=actor.principal,
            key=key,
            operation=operation,
            fingerprint=digest,
            result=result,
            created_at=now,
        )
    )
    return result
