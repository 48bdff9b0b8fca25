"""Per-key token buckets.

A bucket holds up to ``burst`` requests and refills at ``requests_per_minute``; its state lives
in the store, so every server process draws from the same bucket. ``take`` is a pure function of
the stored state and the time, which keeps the arithmetic testable on its own.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Protocol

import attrs

__all__ = ["RateLimitPolicy", "Bucket", "RateDecision", "RateLimitRepository", "take"]


@attrs.frozen
class RateLimitPolicy:
    requests_per_minute: int
    burst: int

    @property
    def per_second(self) -> float:
        return self.requests_per_minute / 60.0


@attrs.frozen
class Bucket:
    tokens: float
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int
    """Epoch seconds at which the bucket is full again."""
    retry_after: int
    """Seconds until one request is allowed again (0 when allowed)."""


class RateLimitRepository(Protocol):
    def get(self, key_id: str) -> Bucket | None: ...

    def put(self, key_id: str, bucket: Bucket) -> None: ...


def take(bucket: Bucket | None, policy: RateLimitPolicy, now: dt.datetime) -> tuple[Bucket, RateDecision]:
    if bucket is None:
        tokens = float(policy.burst)
    else:
        elapsed = max(0.0, (now - bucket.updated_at).total_seconds())
        tokens = min(float(policy.burst), bucket.tokens + elapsed * policy.per_second)
    allowed = tokens >= 1.0
    if allowed:
        tokens -= 1.0
    refill = (policy.burst - tokens) / policy.per_second
    decision = RateDecision(
        allowed=allowed,
        limit=policy.burst,
        remaining=int(math.floor(tokens)),
        reset_at=math.ceil(now.timestamp() + refill),
        retry_after=0 if allowed else max(1, math.ceil((1.0 - tokens) / policy.per_second)),
    )
    return Bucket(tokens=tokens, updated_at=now), decision
