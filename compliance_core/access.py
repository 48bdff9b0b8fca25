"""Admission of an API-key request: authenticate, pick the organization, draw from the bucket.

Every request reads its key (one indexed read, no write lock) and, for a person-bound key, its
person (one more), so a revoked or expired key, or a deactivated person's, is refused at once in
every process. Rate-limit tokens and usage counts cross into the store in
batches: a process leases about one second's refill of tokens from the key's shared bucket in one
write transaction and spends them locally, and the usage it counted meanwhile is written with the
next lease (or by ``flush``). The bucket never grants more tokens than it holds, so the limits hold
however many processes share the store; plans that refill less than one request per second
(Free) lease a single token per request and are exact. Without leases, every request of every
process would queue for the store's one writer.

These writes record no event and so leave no audit entry: a lease or a usage count changes no
record a caller reads as the organization's data, and auditing every request's admission would
write an entry per request.
"""

from __future__ import annotations

import collections
import datetime as dt
import math
import threading

import attrs

from .areas.api_keys import API_KEYS, ApiKey, hash_secret
from .areas.organizations import ORGANIZATIONS
from .kernel.directory import Directory
from .kernel.errors import Forbidden, RateLimited, Unauthorized
from .kernel.permissions import Actor
from .kernel.ratelimit import RATE_LIMITS, RateDecision, RateLimitPolicy, lease
from .kernel.uow import Tx, UnitOfWork

__all__ = ["Admission", "AccessService", "LEASE_SECONDS"]

LEASE_SECONDS = 1.0


@attrs.frozen(kw_only=True)
class Admission:
    actor: Actor
    rate: RateDecision


@attrs.define
class _Lease:
    """Tokens a process drew from a key's bucket and has not spent yet, and the requests it
    admitted that the store has not counted yet (per UTC day)."""

    policy: RateLimitPolicy
    tokens: int
    store_tokens: float
    expires_at: dt.datetime
    unrecorded: collections.Counter[dt.date] = attrs.field(factory=collections.Counter)
    last_used_at: dt.datetime | None = None

    def spend(self, now: dt.datetime) -> RateDecision:
        self.tokens -= 1
        self.unrecorded[now.date()] += 1
        self.last_used_at = now
        remaining = self.store_tokens + self.tokens
        return RateDecision(
            allowed=True,
            limit=self.policy.burst,
            remaining=int(math.floor(remaining)),
            reset_at=math.ceil(now.timestamp() + (self.policy.burst - remaining) / self.policy.per_second),
            retry_after=0,
        )


@attrs.define
class AccessService:
    uow: UnitOfWork
    lease_seconds: float = LEASE_SECONDS
    _leases: dict[str, _Lease] = attrs.field(factory=dict, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def admit(self, api_key: str | None, organization_id: str | None = None) -> Admission:
        """Raise ``Unauthorized`` for a missing, unknown, revoked or expired key, ``Forbidden``
        when ``organization_id`` names another organization, and ``RateLimited`` (carrying the
        decision) when the key's bucket is empty."""
        if not api_key:
            raise Unauthorized("an X-API-Key header is required")
        now = self.uow.clock.now()
        with self.uow.read() as session:
            key = session[API_KEYS].find_by_hash(hash_secret(api_key))
            person = None
            if key is not None and key.person_id is not None:
                person = Directory(session).person(key.organization_id, key.person_id)
        if key is None:
            raise Unauthorized("the API key is not valid", {"reason": "unknown"})
        status = key.status(now)
        if status != "active":
            raise Unauthorized(f"the API key is {status}", {"reason": status})
        if key.person_id is not None and (person is None or not person.is_active):
            # Read from the store at every request, like the key: a deactivation holds from the
            # next request in every process.
            raise Unauthorized("the API key's person is deactivated", {"reason": "person_inactive"})
        if organization_id is not None and organization_id != key.organization_id:
            raise Forbidden(
                "the API key does not belong to the organization in X-Organization-Id",
                {"field": "X-Organization-Id", "value": organization_id},
            )
        actor = Actor(
            organization_id=key.organization_id,
            role=key.role,
            key_id=key.id,
            person_id=key.person_id,
            person_name=None if person is None else person.name,
            key_issued_by=key.created_by,
            key_issued_by_person_id=key.issued_by_person_id,
            self_issued=key.self_issued,
        )
        with self._lock:
            held = self._leases.get(key.id)
            if held is not None and held.tokens >= 1 and now < held.expires_at:
                return Admission(actor=actor, rate=held.spend(now))
            if held is not None:
                del self._leases[key.id]
        return Admission(actor=actor, rate=self._renew(key, now, held))

    def _renew(self, key: ApiKey, now: dt.datetime, held: _Lease | None) -> RateDecision:
        """One write: give back what ``held`` did not spend, record what it admitted, and lease
        fresh tokens for this request and the next second's worth."""
        returned = 0 if held is None else held.tokens
        with self.uow.write(None) as tx:  # admission bookkeeping: no event, so no audit entry
            organization = tx[ORGANIZATIONS].get(key.organization_id)
            if organization is None:
                raise Unauthorized("the API key's organization no longer exists", {"reason": "unknown"})
            policy = organization.rate_limit
            want = max(1, int(policy.per_second * self.lease_seconds))
            bucket, decision, granted = lease(tx[RATE_LIMITS].get(key.id), policy, now, want=want, returned=returned)
            tx[RATE_LIMITS].put(key.id, bucket)
            if held is not None:
                self._record(tx, key.id, held)
            if granted:
                tx[API_KEYS].record_use(key.id, now)
        if not granted:
            raise RateLimited(
                "rate limit exceeded for this API key",
                decision.retry_after,
                {"limit": decision.limit, "remaining": decision.remaining, "reset": decision.reset_at},
            )
        if granted > 1:
            fresh = _Lease(
                policy=policy,
                tokens=granted - 1,
                store_tokens=bucket.tokens,
                expires_at=now + dt.timedelta(seconds=self.lease_seconds),
            )
            with self._lock:
                other = self._leases.get(key.id)
                if other is None:
                    self._leases[key.id] = fresh
                else:  # another thread renewed meanwhile: pool the tokens
                    other.tokens += fresh.tokens
        return decision

    @staticmethod
    def _record(tx: Tx, key_id: str, held: _Lease) -> None:
        for day, count in sorted(held.unrecorded.items()):
            last = held.last_used_at
            at = last if last is not None and last.date() == day else _end_of(day)
            tx[API_KEYS].record_use(key_id, at, count)

    def flush(self) -> None:
        """End every lease: unspent tokens go back to their buckets and admitted requests are
        counted in the store. Called before usage is read, on close, and periodically by servers."""
        with self._lock:
            held, self._leases = self._leases, {}
        if not held:
            return
        now = self.uow.clock.now()
        with self.uow.write(None) as tx:
            for key_id, item in held.items():
                if item.tokens:
                    bucket, _, _ = lease(tx[RATE_LIMITS].get(key_id), item.policy, now, want=0, returned=item.tokens)
                    tx[RATE_LIMITS].put(key_id, bucket)
                self._record(tx, key_id, item)


def _end_of(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.max, tzinfo=dt.UTC)
