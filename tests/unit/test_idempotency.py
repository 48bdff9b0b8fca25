from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import Conflict, ValidationError
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.findings import NewFinding
from compliance_core.areas.vendors import NewVendor, VendorFilter


def test_same_key_same_payload_returns_the_original(platform, owner, clock) -> None:
    first = platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    clock.advance(hours=23)
    again = platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    assert again == first
    assert platform.vendors.list(owner).total == 1


def test_same_key_other_payload_is_a_conflict(platform, owner) -> None:
    platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    with pytest.raises(Conflict) as caught:
        platform.vendors.create(owner, NewVendor(name="Other Co"), idempotency_key="req-1")
    assert caught.value.details["field"] == "Idempotency-Key"
    with pytest.raises(Conflict):  # the key is per request, not per operation
        platform.findings.create(owner, NewFinding(title="x", severity="low"), idempotency_key="req-1")
    assert platform.vendors.list(owner).total == 1


def test_keys_expire_after_24_hours(platform, owner, clock) -> None:
    platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    clock.advance(hours=24, seconds=1)
    platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    assert platform.vendors.list(owner).total == 2


def test_a_failed_attempt_leaves_nothing_so_a_retry_runs_again(platform, owner) -> None:
    with pytest.raises(ValidationError):
        platform.vendors.create(owner, NewVendor(name="X", assignee_id="mem_missing"), idempotency_key="req-9")
    vendor = platform.vendors.create(owner, NewVendor(name="X"), idempotency_key="req-9")
    assert platform.vendors.get(owner, vendor.id) == vendor


def test_keys_are_scoped_to_the_caller(platform, owner, other_org) -> None:
    mine = platform.vendors.create(owner, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    theirs = platform.vendors.create(other_org, NewVendor(name="Cloud Co"), idempotency_key="req-1")
    assert mine.id != theirs.id


def test_replayed_key_creation_does_not_reveal_the_secret_again(platform, owner) -> None:
    issued = platform.api_keys.create(owner, NewApiKey(name="CI", role="admin"), idempotency_key="k")
    replay = platform.api_keys.create(owner, NewApiKey(name="CI", role="admin"), idempotency_key="k")
    assert replay.key == issued.key and replay.secret is None and issued.secret


def test_bad_keys_are_rejected(platform, owner) -> None:
    for key in ("", "x" * 256, "line\nbreak"):
        with pytest.raises(ValidationError) as caught:
            platform.vendors.create(owner, NewVendor(name="X"), idempotency_key=key)
        assert caught.value.details["field"] == "Idempotency-Key"


def test_concurrent_calls_with_one_key_create_once(platform, owner) -> None:
    results, barrier = [], threading.Barrier(8)

    def call() -> None:
        barrier.wait()
        results.append(platform.vendors.create(owner, NewVendor(name="Race Co"), idempotency_key="race"))

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r.id for r in results}) == 1 and len(results) == 8
    assert platform.vendors.list(owner).total == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["X", "Y"])), max_size=12))
def test_one_vendor_per_key_and_payload(platform, calls) -> None:
    actor = platform.actor(platform.bootstrap("Prop").organization.id)
    first_payload: dict[str, str] = {}
    created = 0
    for key, name in calls:
        if key is not None and key in first_payload and first_payload[key] != name:
            with pytest.raises(Conflict):
                platform.vendors.create(actor, NewVendor(name=name), idempotency_key=key)
            continue
        platform.vendors.create(actor, NewVendor(name=name), idempotency_key=key)
        if key is None or key not in first_payload:
            created += 1
        if key is not None:
            first_payload.setdefault(key, name)
    assert platform.vendors.list(actor, VendorFilter()).total == created
