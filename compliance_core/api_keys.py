"""API keys: issued once, stored only as a SHA-256 hash, looked up by that hash.

A key is ``comp_`` + 64 hex characters (256 random bits), so an unsalted SHA-256 is a safe
one-way lookup index and authentication costs one indexed read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Callable, Protocol

import attrs

from .errors import ValidationError, require
from .idempotency import run_idempotent
from .pagination import Page, PageRequest
from .permissions import Actor, Role, authorize, ensure_can_grant
from .uow import UnitOfWork
from .validation import choice, text, timestamp

__all__ = [
    "ApiKey",
    "IssuedKey",
    "NewApiKey",
    "DailyUsage",
    "KeyUsage",
    "ApiKeyRepository",
    "ApiKeyService",
    "hash_secret",
    "new_secret",
    "USAGE_DAYS",
]

KEY_PREFIX = "comp_"
USAGE_DAYS = 30


def new_secret() -> str:
    return KEY_PREFIX + secrets.token_hex(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@attrs.frozen(kw_only=True)
class ApiKey:
    id: str
    organization_id: str
    name: str
    role: Role
    prefix: str
    """The first characters of the key, enough to recognise it in a list."""
    secret_hash: str = attrs.field(repr=False)
    created_at: dt.datetime
    expires_at: dt.datetime | None = None
    revoked_at: dt.datetime | None = None
    last_used_at: dt.datetime | None = None
    created_by: str | None = None

    def status(self, now: dt.datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


@attrs.frozen(kw_only=True)
class IssuedKey:
    """A created key. ``secret`` is the only copy of the key value and is never stored; a
    replay of the creating request through its Idempotency-Key returns ``secret=None``."""

    key: ApiKey
    secret: str | None = attrs.field(repr=False)


@attrs.frozen(kw_only=True)
class NewApiKey:
    name: str = attrs.field(converter=text(100))
    role: Role = attrs.field(converter=choice(Role, fold_case=True))
    expires_at: dt.datetime | None = attrs.field(default=None, converter=timestamp)


@attrs.frozen(kw_only=True)
class DailyUsage:
    date: dt.date
    requests: int


@attrs.frozen(kw_only=True)
class KeyUsage:
    key_id: str
    last_used_at: dt.datetime | None
    total_requests: int
    days: tuple[DailyUsage, ...]


class ApiKeyRepository(Protocol):
    def add(self, key: ApiKey) -> None: ...

    def get(self, organization_id: str, key_id: str) -> ApiKey | None: ...

    def find_by_hash(self, secret_hash: str) -> ApiKey | None: ...

    def update(self, key: ApiKey) -> None: ...

    def list(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]: ...

    def record_use(self, key_id: str, at: dt.datetime, count: int = 1) -> None:
        """Count ``count`` requests on ``at``'s UTC day and set ``last_used_at`` to ``at``
        unless it is already later."""

    def usage(self, key_id: str, since: dt.date) -> list[DailyUsage]:
        """Days with requests from ``since`` on, oldest first."""


@attrs.define
class ApiKeyService:
    uow: UnitOfWork
    flush_usage: Callable[[], None] = lambda: None
    """Writes usage this process counted but has not stored yet (see ``access``)."""

    def create(self, actor: Actor, data: NewApiKey, *, idempotency_key: str | None = None) -> IssuedKey:
        authorize(actor, "api_key:create")
        ensure_can_grant(actor, data.role)
        now = self.uow.clock.now()
        if data.expires_at is not None and data.expires_at <= now:
            raise ValidationError.field("expiresAt", data.expires_at.isoformat(), "must be in the future")
        issued: list[IssuedKey] = []

        def create() -> ApiKey:
            issued.append(self.issue(actor.organization_id, data, created_by=actor.principal))
            tx.api_keys.add(issued[0].key)
            return issued[0].key

        with self.uow.write() as tx:
            key = run_idempotent(tx, actor, idempotency_key, "api_keys.create", data, now, create)
        return issued[0] if issued else IssuedKey(key=key, secret=None)

    def issue(self, organization_id: str, data: NewApiKey, *, created_by: str | None) -> IssuedKey:
        """Build a key without storing it: for callers composing their own transaction."""
        secret = new_secret()
        key = ApiKey(
            id=self.uow.ids.new("key"),
            organization_id=organization_id,
            name=data.name,
            role=data.role,
            prefix=secret[: len(KEY_PREFIX) + 8],
            secret_hash=hash_secret(secret),
            created_at=self.uow.clock.now(),
            expires_at=data.expires_at,
            created_by=created_by,
        )
        return IssuedKey(key=key, secret=secret)

    def list(self, actor: Actor, page: PageRequest | None = None) -> Page[ApiKey]:
        authorize(actor, "api_key:read")
        page = page or PageRequest()
        with self.uow.read() as session:
            items, total = session.api_keys.list(actor.organization_id, page)
        return Page.of(items, total, page)

    def get(self, actor: Actor, key_id: str) -> ApiKey:
        authorize(actor, "api_key:read")
        with self.uow.read() as session:
            return require(session.api_keys.get(actor.organization_id, key_id), "api key", key_id)

    def revoke(self, actor: Actor, key_id: str) -> ApiKey:
        authorize(actor, "api_key:revoke")
        with self.uow.write() as tx:
            key = require(tx.api_keys.get(actor.organization_id, key_id), "api key", key_id)
            ensure_can_grant(actor, key.role)
            if key.revoked_at is not None:
                return key
            key = attrs.evolve(key, revoked_at=self.uow.clock.now())
            tx.api_keys.update(key)
        return key

    def usage(self, actor: Actor, key_id: str) -> KeyUsage:
        authorize(actor, "api_key:read")
        since = self.uow.clock.now().date() - dt.timedelta(days=USAGE_DAYS - 1)
        self.flush_usage()
        with self.uow.read() as session:
            key = require(session.api_keys.get(actor.organization_id, key_id), "api key", key_id)
            days = session.api_keys.usage(key_id, since)
        return KeyUsage(
            key_id=key.id,
            last_used_at=key.last_used_at,
            total_requests=sum(d.requests for d in days),
            days=tuple(days),
        )

