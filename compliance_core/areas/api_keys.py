"""API keys: issued once, stored only as a SHA-256 hash, looked up by that hash.

A key is ``comp_`` + 64 hex characters (256 random bits), so an unsalted SHA-256 is a safe
one-way lookup index and authentication costs one indexed read.
"""

from __future__ import annotations

import builtins
import datetime as dt
import hashlib
import secrets
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

import attrs

from ..kernel.directory import Directory
from ..kernel.errors import Conflict, Forbidden, ValidationError, require
from ..kernel.events import Event
from ..kernel.operations import Once, operation
from ..kernel.pages import Page, PageRequest, check_position
from ..kernel.permissions import MANAGERS, Action, Actor, Role, ensure_can_grant
from ..kernel.records import Listed
from ..kernel.registry import Area, Route, Session
from ..kernel.rendering import WireView
from ..kernel.uow import UnitOfWork
from ..kernel.validation import choice, optional_id, text, timestamp

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
    "API_KEYS",
    "API_KEY_CREATE",
    "API_KEY_READ",
    "API_KEY_REVOKE",
    "LAST_OWNER_KEY",
    "PERSON_BOUND_ROLES",
    "ApiKeyCreated",
    "ApiKeyRevoked",
    "AREA",
]

KEY_PREFIX = "comp_"
USAGE_DAYS = 30


def new_secret() -> str:
    return KEY_PREFIX + secrets.token_hex(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _status(key: ApiKey, now: dt.datetime) -> dict[str, Any]:
    return {"status": key.status(now)}


@attrs.frozen(kw_only=True)
class ApiKey:
    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"secret_hash"}), extra=_status, clocked=True)
    """Never shows its hash; its status depends on the time of the answer."""

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
    person_id: str | None = None
    """The person the key acts as (required for employee and contractor keys)."""
    issued_by_person_id: str | None = None
    """The person the issuing key (``created_by``) acted as, if any."""
    self_issued: bool = False
    """Whether the key is its person's own: issued through a key that is itself that person's
    own, or by the operator outside the API (``compliance keys create``, an embedding app), who
    hands it over. Only such a key takes the decisions reserved to its person (approving as the
    named approver, binding keys to an owner or admin): a key a manager bound to someone else
    signs only with its issuer shown. Keys issued before issuers were recorded count as the
    person's own only when the operator issued them (their issuing key's person cannot prove
    a chain of own keys), so such a person asks the operator for a new key."""

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

    WIRE_VIEW: ClassVar[WireView] = WireView(inline=frozenset({"key"}), rename={"secret": "key"})

    key: ApiKey
    secret: str | None = attrs.field(
        repr=False,
        metadata={"description": "The key value, shown once; null when an Idempotency-Key replays the request"},
    )


@attrs.frozen(kw_only=True)
class NewApiKey:
    name: str = attrs.field(converter=text(100))
    role: Role = attrs.field(converter=choice(Role, fold_case=True))
    expires_at: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    person_id: str | None = attrs.field(default=None, converter=optional_id)


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

    def list(self, organization_id: str, page: PageRequest) -> tuple[Sequence[ApiKey], int]: ...

    def count_active(self, organization_id: str, role: Role, now: dt.datetime) -> int:
        """How many of the organization's keys with ``role`` are active at ``now``: not revoked,
        and without an expiry or expiring after ``now`` (what ``ApiKey.status`` calls active)."""
        ...

    def record_use(self, key_id: str, at: dt.datetime, count: int = 1) -> None:
        """Count ``count`` requests on ``at``'s UTC day and set ``last_used_at`` to ``at``
        unless it is already later."""

    def usage(self, key_id: str, since: dt.date) -> builtins.list[DailyUsage]:
        """Days with requests from ``since`` on, oldest first."""


API_KEYS: Listed[ApiKeyRepository] = Listed(
    "api_keys",
    model=ApiKey,
    kind="api key",
    searchable=("name", "prefix"),
    sortable=("name", "role", "expires_at", "last_used_at"),
    ranged="created_at",
    indexed=("name",),
)
"""A kernel table (keys are found by hash across organizations), listed as a ``Records`` table
is: ``q`` over the name and the prefix a list shows, sorts by the columns a key audit reads,
``from``/``to`` on when a key was issued. Only the name is indexed for sorting: it is written
once, while ``last_used_at`` changes with every flush of the usage counts (an index on it would
cost the hot path a write), and an organization's keys are few enough to sort unindexed."""
API_KEY_CREATE = Action("api_key:create", MANAGERS)
API_KEY_READ = Action("api_key:read", MANAGERS)
API_KEY_REVOKE = Action("api_key:revoke", MANAGERS)


PERSON_BOUND_ROLES = frozenset({Role.EMPLOYEE, Role.CONTRACTOR})
"""Roles whose keys always act as a person: staff see and sign only what is theirs."""


def check_person(session: Session, actor: Actor, data: NewApiKey) -> None:
    """A key of a staff role acts as a person, who must be an active person of the
    organization of the key's kind: a contractor key for a contractor only, and no key with
    more rights than its person's role. Only the person's own key (or the operator) binds a key
    to an owner or admin, so nobody approves or decides as them."""
    if data.person_id is None:
        if data.role in PERSON_BOUND_ROLES:
            raise ValidationError.field("personId", None, f"is required for a key with the {data.role.value} role")
        return
    person = Directory(session).person(actor.organization_id, data.person_id)
    if person is None:
        raise ValidationError.field("personId", data.person_id, "is not a person in this organization")
    if not person.is_active:
        raise ValidationError.field("personId", data.person_id, "is deactivated")
    kind = Role(person.role)
    if (data.role is Role.CONTRACTOR) != (kind is Role.CONTRACTOR) or data.role.rank > kind.rank:
        raise ValidationError.field(
            "personId",
            data.person_id,
            f"is a person with the {kind.value} role, who may not act with the {data.role.value} role",
        )
    if kind in MANAGERS and not (actor.auth_type == "local" or _own(actor, data.person_id)):
        raise Forbidden(
            f"only {data.person_id}'s own key binds a key to them",
            {
                "field": "personId",
                "value": data.person_id,
                "reason": f"is an {kind.value}: only their own key binds keys to them",
            },
        )


def _own(actor: Actor, person_id: str | None) -> bool:
    """Whether ``actor`` is ``person_id`` acting through a key of their own."""
    return person_id is not None and actor.person_id == person_id and actor.as_own_person


LAST_OWNER_KEY = "the organization's last active owner key cannot be revoked; create another owner key first"
"""Why revoking the only active Owner key is a ``Conflict``: nobody could manage the
organization's keys afterwards."""


class ApiKeyCreated(Event):
    """An API key was issued (``POST /v1/api-keys``, or the first Owner key at bootstrap); the
    body never holds the secret."""

    type = "api_key.created"


class ApiKeyRevoked(Event):
    """An API key was revoked; ``previous`` holds ``revokedAt: null``."""

    type = "api_key.archived"


_ALL = "/v1/api-keys"
_ONE = "/v1/api-keys/{key_id}"


@attrs.define
class ApiKeyService:
    uow: UnitOfWork
    flush_usage: Callable[[], None] = lambda: None
    """Writes usage this process counted but has not stored yet (see ``access``)."""

    @operation(
        API_KEY_READ,
        Route("GET", _ALL, "List the organization's API keys"),
        paged=True,
        result=ApiKey,
        lists=API_KEYS,
    )
    def list(self, actor: Actor, page: PageRequest | None = None) -> Page[ApiKey]:
        page = page or PageRequest()
        API_KEYS.listing.check(page)
        with self.uow.read() as session:
            check_position(session[API_KEYS], actor.organization_id, page.after)
            items, total = session[API_KEYS].list(actor.organization_id, page)
        return Page.of(items, total, page)

    @operation(
        API_KEY_CREATE,
        Route("POST", _ALL, "Issue an API key; its value is in `key`, shown this once", 201),
        body=NewApiKey,
        idempotent=True,
        result=IssuedKey,
        example={"name": "CI pipeline", "role": "auditor"},
    )
    def create(self, actor: Actor, data: NewApiKey, once: Once) -> IssuedKey:
        ensure_can_grant(actor, data.role)
        now = self.uow.clock.now()
        if data.expires_at is not None and data.expires_at <= now:
            raise ValidationError.field("expiresAt", data.expires_at.isoformat(), "must be in the future")
        issued: list[IssuedKey] = []

        def create() -> ApiKey:
            check_person(tx, actor, data)
            issued.append(
                self.issue(
                    actor.organization_id,
                    data,
                    created_by=actor.principal,
                    issued_by_person_id=actor.person_id,
                    self_issued=data.person_id is not None
                    and (actor.auth_type == "local" or _own(actor, data.person_id)),
                )
            )
            tx[API_KEYS].add(issued[0].key)
            tx.record(ApiKeyCreated(organization_id=actor.organization_id, subject=issued[0].key))
            return issued[0].key

        with self.uow.write(actor) as tx:
            key = once(tx, data, now, create)
        return issued[0] if issued else IssuedKey(key=key, secret=None)

    def issue(
        self,
        organization_id: str,
        data: NewApiKey,
        *,
        created_by: str | None,
        issued_by_person_id: str | None = None,
        self_issued: bool = False,
    ) -> IssuedKey:
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
            person_id=data.person_id,
            issued_by_person_id=issued_by_person_id,
            self_issued=self_issued,
        )
        return IssuedKey(key=key, secret=secret)

    @operation(API_KEY_READ, Route("GET", _ONE, "Read one API key"), result=ApiKey)
    def get(self, actor: Actor, key_id: str) -> ApiKey:
        with self.uow.read() as session:
            return require(session[API_KEYS].get(actor.organization_id, key_id), "api key", key_id)

    @operation(API_KEY_REVOKE, Route("POST", _ONE + "/revoke", "Revoke an API key"), result=ApiKey)
    def revoke(self, actor: Actor, key_id: str) -> ApiKey:
        """Revoke a key (revoking a revoked key returns it unchanged).

        The organization's last active Owner key cannot be revoked (``Conflict``): the count
        and the revocation happen in one write transaction, and stores serialise writers, so two
        owners revoking each other's keys at once cannot both succeed.
        """
        with self.uow.write(actor) as tx:
            key = require(tx[API_KEYS].get(actor.organization_id, key_id), "api key", key_id)
            ensure_can_grant(actor, key.role)
            if key.revoked_at is not None:
                return key
            now = self.uow.clock.now()
            if (
                key.role == Role.OWNER
                and key.status(now) == "active"
                and tx[API_KEYS].count_active(actor.organization_id, Role.OWNER, now) <= 1
            ):
                raise Conflict(
                    LAST_OWNER_KEY,
                    {"field": "keyId", "value": key.id, "reason": "is the organization's last active owner key"},
                )
            revoked = attrs.evolve(key, revoked_at=now)
            tx[API_KEYS].update(revoked)
            tx.record(
                ApiKeyRevoked(organization_id=actor.organization_id, subject=revoked, previous={"revoked_at": None})
            )
            key = revoked
        return key

    @operation(API_KEY_READ, Route("GET", _ONE + "/usage", "Requests per day over the last 30 days"), result=KeyUsage)
    def usage(self, actor: Actor, key_id: str) -> KeyUsage:
        since = self.uow.clock.now().date() - dt.timedelta(days=USAGE_DAYS - 1)
        self.flush_usage()
        with self.uow.read() as session:
            key = require(session[API_KEYS].get(actor.organization_id, key_id), "api key", key_id)
            days = session[API_KEYS].usage(key_id, since)
        return KeyUsage(
            key_id=key.id,
            last_used_at=key.last_used_at,
            total_requests=sum(d.requests for d in days),
            days=tuple(days),
        )


AREA = Area(
    name="api_keys",
    tag="API Keys",
    service=lambda context: ApiKeyService(context.uow, flush_usage=context.flush_admission),
    api=ApiKeyService,
    actions=(API_KEY_CREATE, API_KEY_READ, API_KEY_REVOKE),
    events=(ApiKeyCreated, ApiKeyRevoked),
)
