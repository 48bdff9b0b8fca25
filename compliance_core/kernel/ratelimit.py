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

from .registry import Repo

__all__ = ["RateLimitPolicy", "Bucket", "RateDecision", "RateLimitRepository", "lease", "take", "RATE_LIMITS"]


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


RATE_LIMITS: Repo[RateLimitRepository] = Repo("rate_limits")


def lease(
    bucket: Bucket | None, policy: RateLimitPolicy, now: dt.datetime, *, want: int = 1, returned: float = 0.0
) -> tuple[Bucket, RateDecision, int]:
    """Draw up to ``want`` tokens at once (none when the bucket has not a whole one).

    ``returned`` gives back tokens an earlier lease did not spend. The decision describes the
    first of the granted requests; the caller spends the others locally. Whatever the lease
    sizes, no more requests are granted than the bucket holds: the limit is kept.
    """
    if bucket is None:
        tokens, refilled_to = float(policy.burst), now
    else:
        # Processes read the clock before they wait for the write, so a bucket may already be
        # refilled past ``now``; moving its time back would credit that stretch a second time.
        refilled_to = max(now, bucket.updated_at)
        elapsed = (refilled_to - bucket.updated_at).total_seconds()
        tokens = min(float(policy.burst), bucket.tokens + elapsed * policy.per_second)
    tokens = min(float(policy.burst), tokens + max(0.0, returned))
    granted = max(0, min(want, int(math.floor(tokens))))
    tokens -= granted
    after_first = tokens + max(0, granted - 1)
    decision = RateDecision(
        allowed=granted >= 1,
        limit=policy.burst,
        remaining=int(math.floor(after_first)),
        reset_at=math.ceil(now.timestamp() + (policy.burst - after_first) / policy.per_second),
        retry_after=0 if granted else max(1, math.ceil((1.0 - tokens) / policy.per_second)),
    )
    return Bucket(tokens=tokens, updated_at=refilled_to), decision, granted


def take(bucket: Bucket | None, policy: RateLimitPolicy, now: dt.datetime) -> tuple[Bucket, RateDecision]:
    """One request's worth: ``lease`` of a single token."""
    bucket, decision, _ = lease(bucket, policy, now)
    return bucket, decision
