"""Admission of an API-key request: authenticate, pick the organization, draw from the bucket.

All three happen in one short write transaction, because the bucket and the usage counters are
shared by every server process through the store.
"""

from __future__ import annotations

import attrs

from .api_keys import hash_secret
from .errors import Forbidden, RateLimited, Unauthorized
from .permissions import Actor
from .ratelimit import RateDecision, take
from .uow import UnitOfWork

__all__ = ["Admission", "AccessService"]


@attrs.frozen(kw_only=True)
class Admission:
    actor: Actor
    rate: RateDecision


@attrs.define
class AccessService:
    uow: UnitOfWork

    def admit(self, api_key: str | None, organization_id: str | None = None) -> Admission:
        """Raise ``Unauthorized`` for a missing, unknown, revoked or expired key, ``Forbidden``
        when ``organization_id`` names another organization, and ``RateLimited`` (carrying the
        decision) when the key's bucket is empty."""
        if not api_key:
            raise Unauthorized("an X-API-Key header is required")
        digest = hash_secret(api_key)
        now = self.uow.clock.now()
        with self.uow.write() as tx:
            key = tx.api_keys.find_by_hash(digest)
            if key is None or key.status(now) != "active":
                reason = "unknown" if key is None else key.status(now)
                raise Unauthorized(f"the API key is {'not valid' if key is None else reason}",
                                   {"reason": reason})
            if organization_id is not None and organization_id != key.organization_id:
                raise Forbidden(
                    "the API key does not belong to the organization in X-Organization-Id",
                    {"field": "X-Organization-Id", "value": organization_id},
                )
            organization = tx.organizations.get(key.organization_id)
            if organization is None:
                raise Unauthorized("the API key's organization no longer exists", {"reason": "unknown"})
            bucket, decision = take(tx.rate_limits.get(key.id), organization.rate_limit, now)
            tx.rate_limits.put(key.id, bucket)
            if decision.allowed:
                tx.api_keys.record_use(key.id, now)
        if not decision.allowed:
            raise RateLimited(
                "rate limit exceeded for this API key",
                decision.retry_after,
                {"limit": decision.limit, "remaining": decision.remaining, "reset": decision.reset_at},
            )
        actor = Actor(organization_id=key.organization_id, role=key.role, key_id=key.id)
        return Admission(actor=actor, rate=decision)
