from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core import Forbidden, NotFound, RateLimited, Role, Unauthorized, ValidationError
from compliance_core.areas.api_keys import NewApiKey, hash_secret
from compliance_core.areas.organizations import Plan
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.kernel.ratelimit import Bucket, RateLimitPolicy, take


def test_secret_is_shown_once_and_stored_only_as_a_hash(platform, owner) -> None:
    issued = platform.api_keys.create(owner, NewApiKey(name="CI", role="auditor"))
    assert issued.secret.startswith("comp_") and len(issued.secret) == 69
    assert issued.key.secret_hash == hash_secret(issued.secret)
    assert issued.secret not in repr(issued) and issued.secret not in repr(issued.key)
    listed = platform.api_keys.list(owner)
    assert issued.key.id in [k.id for k in listed.items]
    assert platform.access.admit(issued.secret).actor.role is Role.AUDITOR


def test_revoked_expired_and_unknown_keys_are_unauthorized(platform, owner, clock) -> None:
    with pytest.raises(Unauthorized):
        platform.access.admit(None)
    with pytest.raises(Unauthorized):
        platform.access.admit("comp_" + "0" * 64)
    revoked = platform.api_keys.create(owner, NewApiKey(name="old", role="admin"))
    platform.api_keys.revoke(owner, revoked.key.id)
    with pytest.raises(Unauthorized) as caught:
        platform.access.admit(revoked.secret)
    assert caught.value.details == {"reason": "revoked"}
    expiring = platform.api_keys.create(
        owner, NewApiKey(name="temp", role="admin", expires_at=clock.now() + dt.timedelta(days=1))
    )
    platform.access.admit(expiring.secret)
    clock.advance(days=1)
    with pytest.raises(Unauthorized) as caught:
        platform.access.admit(expiring.secret)
    assert caught.value.details == {"reason": "expired"}


def test_expiry_must_be_in_the_future(platform, owner, clock) -> None:
    with pytest.raises(ValidationError) as caught:
        platform.api_keys.create(owner, NewApiKey(name="x", role="admin", expires_at=clock.now()))
    assert caught.value.details["field"] == "expiresAt"


def test_organization_header_must_match_the_key(platform, boot, other_org) -> None:
    platform.access.admit(boot.owner_key.secret, boot.organization.id)
    with pytest.raises(Forbidden) as caught:
        platform.access.admit(boot.owner_key.secret, other_org.organization_id)
    assert caught.value.details["field"] == "X-Organization-Id"


def test_usage_counts_requests_per_day(platform, boot, owner, clock) -> None:
    for _ in range(3):
        platform.access.admit(boot.owner_key.secret)
    clock.advance(days=1)
    platform.access.admit(boot.owner_key.secret)
    usage = platform.api_keys.usage(owner, boot.owner_key.key.id)
    assert [(d.date, d.requests) for d in usage.days] == [(dt.date(2026, 1, 1), 3), (dt.date(2026, 1, 2), 1)]
    assert usage.total_requests == 4 and usage.last_used_at == clock.now()


def test_key_management_permissions(platform, owner, actor_as, other_org) -> None:
    owner_key = platform.api_keys.create(owner, NewApiKey(name="root", role="owner"))
    admin = actor_as(Role.ADMIN)
    with pytest.raises(Forbidden):
        platform.api_keys.revoke(admin, owner_key.key.id)
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        with pytest.raises(Forbidden):
            platform.api_keys.create(actor_as(role), NewApiKey(name="x", role=role))
    with pytest.raises(NotFound):
        platform.api_keys.get(other_org, owner_key.key.id)


def test_free_plan_allows_its_burst_then_429_then_refills(platform, clock) -> None:
    boot = platform.bootstrap("Tiny", plan=Plan.FREE)
    admitted = [platform.access.admit(boot.owner_key.secret) for _ in range(60)]
    assert admitted[0].rate.limit == 60 and admitted[-1].rate.remaining == 0
    with pytest.raises(RateLimited) as caught:
        platform.access.admit(boot.owner_key.secret)
    assert caught.value.retry_after == 2  # 30 per minute: one token every two seconds
    clock.advance(seconds=2)
    assert platform.access.admit(boot.owner_key.secret).rate.remaining == 0


def test_enterprise_limits_are_negotiated(platform) -> None:
    boot = platform.bootstrap("Big", plan="enterprise", rpm=5000)
    org = platform.organizations.get(platform.actor(boot.organization.id))
    assert (org.rate_limit.requests_per_minute, org.rate_limit.burst) == (5000, 10000)
    with pytest.raises(ValidationError):
        platform.bootstrap("Small", plan="free", rpm=100)
    with pytest.raises(ValidationError):
        platform.bootstrap("Odd", plan="enterprise", rpm=100, burst=50)
    changed = platform.organizations.set_plan(platform.actor(boot.organization.id), "starter")
    assert changed.rate_limit == RateLimitPolicy(60, 120)


policies = st.builds(RateLimitPolicy, st.integers(1, 600), st.integers(1, 1200))


@settings(max_examples=200)
@given(policy=policies, gaps=st.lists(st.floats(0, 5), min_size=1, max_size=120))
def test_bucket_never_admits_more_than_burst_plus_refill(policy: RateLimitPolicy, gaps: list[float]) -> None:
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    now, bucket, allowed = start, None, 0
    for gap in gaps:
        now = now + dt.timedelta(seconds=gap)
        bucket, decision = take(bucket, policy, now)
        allowed += decision.allowed
        assert 0 <= decision.remaining <= policy.burst
        assert decision.allowed == (decision.retry_after == 0)
    elapsed = (now - start).total_seconds()
    assert allowed <= policy.burst + elapsed * policy.per_second + 1e-6


def test_bucket_starts_full() -> None:
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    _, decision = take(None, RateLimitPolicy(300, 600), now)
    assert (decision.allowed, decision.limit, decision.remaining) == (True, 600, 599)
    bucket, decision = take(Bucket(0.5, now), RateLimitPolicy(60, 120), now)
    assert not decision.allowed and decision.retry_after == 1


def test_staff_keys_act_as_a_person_of_the_organization(platform, owner, other_org) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    for role in (Role.EMPLOYEE, Role.CONTRACTOR):
        with pytest.raises(ValidationError) as raised:
            platform.api_keys.create(owner, NewApiKey(name="x", role=role))
        assert raised.value.details == {
            "field": "personId",
            "value": None,
            "reason": f"is required for a key with the {role.value} role",
        }
    stranger = platform.people.create(other_org, NewPerson(name="Zed", email="zed@globex.example"))
    with pytest.raises(ValidationError) as raised:
        platform.api_keys.create(owner, NewApiKey(name="x", role="employee", person_id=stranger.id))
    assert raised.value.details["value"] == stranger.id
    issued = platform.api_keys.create(owner, NewApiKey(name="Ann's key", role="employee", person_id=ann.id))
    assert issued.key.person_id == ann.id
    assert platform.access.admit(issued.secret).actor.person_id == ann.id
    admin = platform.api_keys.create(owner, NewApiKey(name="ops", role="admin"))
    assert platform.access.admit(admin.secret).actor.person_id is None
    boss = platform.people.create(owner, NewPerson(name="Boss", email="boss@acme.example", role="admin"))
    bound_admin = platform.api_keys.create(owner, NewApiKey(name="Boss admin", role="admin", person_id=boss.id))
    assert platform.access.admit(bound_admin.secret).actor.person_id == boss.id


def test_a_clock_read_late_does_not_refill_the_same_stretch_twice() -> None:
    """Two processes read the clock at 0 s and 0.1 s, then take turns at the write lock."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    policy, bucket, allowed = RateLimitPolicy(600, 1), None, 0  # one token per 0.1 s
    for offset in [0.0, 0.1] * 10:
        bucket, decision = take(bucket, policy, start + dt.timedelta(seconds=offset))
        allowed += decision.allowed
    assert allowed == 2


@settings(max_examples=200)
@given(
    policy=st.builds(RateLimitPolicy, st.integers(60, 6000), st.integers(1, 20)),  # often empty
    steps=st.lists(st.tuples(st.floats(0, 0.5), st.floats(0, 0.5)), min_size=1, max_size=120),
)
def test_clocks_read_before_the_lock_credit_no_time_twice(policy: RateLimitPolicy, steps) -> None:
    """Each write happens ``gap`` after the last one, with a clock read up to ``lag`` earlier."""
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    bucket, allowed, reads = None, 0, []
    for gap, lag in steps:
        now += dt.timedelta(seconds=gap)
        read = now - dt.timedelta(seconds=lag)
        reads.append(read)
        bucket, decision = take(bucket, policy, read)
        allowed += decision.allowed
    span = (max(reads) - min(reads)).total_seconds()
    assert allowed <= policy.burst + span * policy.per_second + 1e-6


def _boss(platform, owner, role: str = "admin", email: str = "boss@acme.example"):
    return platform.people.create(owner, NewPerson(name="Boss", email=email, role=role))


def test_only_a_managers_own_key_binds_keys_to_them(platform, boot, owner) -> None:
    """Issue 16: the Owner's key bound an admin key to another person and approved as them."""
    boss = _boss(platform, owner)
    owner_key = platform.access.admit(boot.owner_key.secret).actor
    with pytest.raises(Forbidden) as raised:
        platform.api_keys.create(owner_key, NewApiKey(name="as Boss", role="admin", person_id=boss.id))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("personId", boss.id)
    assert platform.api_keys.list(owner).total == 1  # nothing was issued

    # The operator (in-process, outside the API) hands Boss a key of their own...
    handed = platform.api_keys.create(owner, NewApiKey(name="Boss", role="admin", person_id=boss.id))
    assert (handed.key.self_issued, handed.key.created_by, handed.key.issued_by_person_id) == (
        True,
        "local:owner",
        None,
    )
    as_boss = platform.access.admit(handed.secret).actor
    assert as_boss.as_own_person
    # ...through which Boss binds more keys to themself.
    more = platform.api_keys.create(as_boss, NewApiKey(name="Boss signs", role="employee", person_id=boss.id))
    assert (more.key.self_issued, more.key.created_by, more.key.issued_by_person_id) == (True, handed.key.id, boss.id)

    # Another admin's own key binds no key to Boss, nor to the Owner.
    eve = _boss(platform, owner, email="eve@acme.example")
    as_eve = platform.access.admit(
        platform.api_keys.create(owner, NewApiKey(name="Eve", role="admin", person_id=eve.id)).secret
    ).actor
    for person, role in ((boss, "employee"), (_boss(platform, owner, "owner", "own@acme.example"), "admin")):
        with pytest.raises(Forbidden) as raised:
            platform.api_keys.create(as_eve, NewApiKey(name="x", role=role, person_id=person.id))
        assert raised.value.details["field"] == "personId"


def test_a_person_bound_key_records_who_issued_it(platform, owner) -> None:
    boss = _boss(platform, owner)
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    as_boss = platform.access.admit(
        platform.api_keys.create(owner, NewApiKey(name="Boss", role="admin", person_id=boss.id)).secret
    ).actor
    issued = platform.api_keys.create(as_boss, NewApiKey(name="Ann", role="employee", person_id=ann.id))
    assert (issued.key.created_by, issued.key.issued_by_person_id) == (as_boss.key_id, boss.id)
    assert not issued.key.self_issued  # Boss made it, not Ann
    actor = platform.access.admit(issued.secret).actor
    assert (actor.key_issued_by, actor.key_issued_by_person_id, actor.self_issued) == (as_boss.key_id, boss.id, False)
    assert actor.person_id == ann.id and not actor.as_own_person
    assert platform.api_keys.get(owner, issued.key.id).issued_by_person_id == boss.id


def test_a_deactivated_persons_keys_answer_401_from_the_next_request(platform, owner) -> None:
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    issued = platform.api_keys.create(owner, NewApiKey(name="Ann", role="employee", person_id=ann.id))
    platform.access.admit(issued.secret)  # a lease is held from here on
    platform.people.update(owner, ann.id, PersonPatch(is_active=False))
    with pytest.raises(Unauthorized) as raised:
        platform.access.admit(issued.secret)
    assert raised.value.details == {"reason": "person_inactive"}
    with pytest.raises(ValidationError) as refused:
        platform.api_keys.create(owner, NewApiKey(name="again", role="employee", person_id=ann.id))
    assert refused.value.details == {"field": "personId", "value": ann.id, "reason": "is deactivated"}
    platform.people.update(owner, ann.id, PersonPatch(is_active=True))
    assert platform.access.admit(issued.secret).actor.person_id == ann.id


@pytest.mark.parametrize(
    ("key_role", "person_role"),
    [("contractor", "employee"), ("employee", "contractor"), ("auditor", "employee"), ("owner", "admin")],
)
def test_a_key_matches_its_persons_kind(platform, owner, key_role: str, person_role: str) -> None:
    person = _boss(platform, owner, person_role)
    with pytest.raises(ValidationError) as raised:
        platform.api_keys.create(owner, NewApiKey(name="x", role=key_role, person_id=person.id))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("personId", person.id)


@pytest.mark.parametrize(
    ("key_role", "person_role"),
    [("contractor", "contractor"), ("employee", "employee"), ("employee", "admin"), ("auditor", "owner")],
)
def test_a_key_may_act_with_its_persons_role_or_less(platform, owner, key_role: str, person_role: str) -> None:
    person = _boss(platform, owner, person_role)
    issued = platform.api_keys.create(owner, NewApiKey(name="x", role=key_role, person_id=person.id))
    assert platform.access.admit(issued.secret).actor.person_id == person.id
