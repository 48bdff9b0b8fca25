from __future__ import annotations

import datetime as dt

import pytest

from compliance_core import FrozenClock, Platform, RateLimited
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.uow import Store

from . import samples


def test_a_bucket_round_trips_exactly_and_is_replaced_by_put(store: Store) -> None:
    with store.session(write=False) as session:
        assert session[RATE_LIMITS].get("key_1") is None
    first = Bucket(tokens=599.123456789, updated_at=samples.T0)
    with store.session(write=True) as session:
        session[RATE_LIMITS].put("key_1", first)
        session[RATE_LIMITS].put("key_2", Bucket(tokens=1.0, updated_at=samples.T0))
    with store.session(write=False) as session:
        assert session[RATE_LIMITS].get("key_1") == first
    second = Bucket(tokens=0.0, updated_at=samples.at(0.000001))
    with store.session(write=True) as session:
        session[RATE_LIMITS].put("key_1", second)
    with store.session(write=False) as session:
        assert session[RATE_LIMITS].get("key_1") == second
        assert session[RATE_LIMITS].get("key_2") == Bucket(tokens=1.0, updated_at=samples.T0)


def test_admission_drains_the_stored_bucket_and_time_refills_it(platform: Platform, clock: FrozenClock) -> None:
    boot = platform.bootstrap("Tiny", plan="enterprise", rpm=60, burst=60)
    secret = boot.owner_key.secret
    for _ in range(60):
        platform.access.admit(secret)
    with pytest.raises(RateLimited) as raised:
        platform.access.admit(secret)
    assert raised.value.retry_after == 1
    clock.advance(seconds=2)
    assert platform.access.admit(secret).rate.remaining == 1
    with platform.store.session(write=False) as session:
        bucket = session[RATE_LIMITS].get(boot.owner_key.key.id)
    assert bucket == Bucket(tokens=pytest.approx(1.0), updated_at=clock.now())
    assert bucket.updated_at.tzinfo is not None and bucket.updated_at.utcoffset() == dt.timedelta(0)
