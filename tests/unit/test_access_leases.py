"""Admission leases rate-limit tokens in batches; these pin down what must still hold exactly."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core import FrozenClock, Platform, RateLimited, SequentialIds, Unauthorized
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.kernel.ratelimit import RATE_LIMITS, RateLimitPolicy, lease
from compliance_store.memory import MemoryStore


def _pair(clock: FrozenClock) -> tuple[Platform, Platform]:
    """Two platforms over one store stand for two server processes over one database."""
    store = MemoryStore()
    return (
        Platform(store, clock=clock, ids=SequentialIds()),
        Platform(store, clock=clock, ids=SequentialIds(start=10_000)),
    )


def _bucket(platform: Platform, key_id: str) -> float:
    with platform.uow.read() as session:
        return session[RATE_LIMITS].get(key_id).tokens


def _admit_until_limited(platform: Platform, secret: str, most: int = 10_000) -> int:
    for admitted in range(most):
        try:
            platform.access.admit(secret)
        except RateLimited:
            return admitted
    return most


def test_two_processes_together_never_exceed_the_burst(clock) -> None:
    one, two = _pair(clock)
    boot = one.bootstrap("Big", plan="enterprise", rpm=1200, burst=1200)  # leases of 20 tokens
    first = _admit_until_limited(one, boot.owner_key.secret, most=7)
    second = _admit_until_limited(two, boot.owner_key.secret)
    third = _admit_until_limited(one, boot.owner_key.secret)
    assert (first, first + second + third) == (7, 1200)


def test_unspent_tokens_go_back_on_flush(clock) -> None:
    one, _ = _pair(clock)
    boot = one.bootstrap("Big", plan="enterprise", rpm=1200, burst=1200)
    one.access.admit(boot.owner_key.secret)
    assert _bucket(one, boot.owner_key.key.id) == 1180  # one spent, nineteen held by the lease
    one.access.flush()
    assert _bucket(one, boot.owner_key.key.id) == 1199


def test_revocation_in_another_process_is_seen_by_the_next_request(clock) -> None:
    one, two = _pair(clock)
    boot = one.bootstrap("Big", plan="enterprise", rpm=6000)
    extra = one.api_keys.create(one.actor(boot.organization.id), NewApiKey(name="ci", role="admin"))
    one.access.admit(extra.secret)  # one now holds a lease of many tokens for this key
    two.api_keys.revoke(two.actor(boot.organization.id), extra.key.id)
    with pytest.raises(Unauthorized):
        one.access.admit(extra.secret)


def test_usage_is_exact_once_read(clock) -> None:
    one, two = _pair(clock)
    boot = one.bootstrap("Big", plan="professional")
    for _ in range(7):
        one.access.admit(boot.owner_key.secret)
    clock.advance(days=1)
    for _ in range(3):
        one.access.admit(boot.owner_key.secret)
    two.access.admit(boot.owner_key.secret)
    two.access.flush()  # what a server worker does periodically and on exit
    usage = one.api_keys.usage(one.actor(boot.organization.id), boot.owner_key.key.id)
    assert [d.requests for d in usage.days] == [7, 4]
    assert usage.last_used_at == clock.now()


def test_closing_the_platform_stores_what_it_held(clock) -> None:
    one, two = _pair(clock)
    boot = one.bootstrap("Big", plan="professional")
    for _ in range(3):
        one.access.admit(boot.owner_key.secret)
    one.close()
    assert two.api_keys.usage(two.actor(boot.organization.id), boot.owner_key.key.id).total_requests == 3


def test_a_plan_change_applies_to_the_next_request(clock) -> None:
    platform, _ = _pair(clock)
    boot = platform.bootstrap("Shrinking", plan="enterprise", rpm=6000)
    platform.access.admit(boot.owner_key.secret)
    platform.organizations.set_plan(platform.actor(boot.organization.id), "free")
    assert platform.access.admit(boot.owner_key.secret).rate.limit == 60


def test_leases_expire_after_a_second(clock) -> None:
    platform, _ = _pair(clock)
    boot = platform.bootstrap("Big", plan="enterprise", rpm=1200, burst=1200)
    platform.access.admit(boot.owner_key.secret)
    clock.advance(seconds=1)
    # The renewal gives back the 19 unspent tokens (the bucket refilled to full meanwhile, so
    # they are capped away) and leases 20 fresh ones, spending one now.
    decision = platform.access.admit(boot.owner_key.secret).rate
    assert _bucket(platform, boot.owner_key.key.id) == 1180
    assert decision.remaining == 1199


policies = st.builds(RateLimitPolicy, st.integers(1, 6000), st.integers(1, 2000))


@settings(max_examples=200)
@given(
    policy=policies,
    steps=st.lists(st.tuples(st.floats(0, 3), st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=60),
)
def test_leases_never_grant_more_than_the_bucket_holds(policy, steps) -> None:
    start = now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    bucket, granted_total, returned_total = None, 0, 0
    for gap, want, give_back in steps:
        now = now + dt.timedelta(seconds=gap)
        give_back = min(give_back, granted_total - returned_total)
        bucket, decision, granted = lease(bucket, policy, now, want=want, returned=give_back)
        granted_total += granted
        returned_total += give_back
        assert 0 <= granted <= want
        assert decision.allowed == (granted >= 1)
        assert 0 <= bucket.tokens <= policy.burst
    elapsed = (now - start).total_seconds()
    assert granted_total - returned_total <= policy.burst + elapsed * policy.per_second + 1e-6
