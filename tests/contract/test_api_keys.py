from __future__ import annotations

import datetime as dt
import threading

import attrs
import pytest

from compliance_core import Conflict, FrozenClock, PageRequest, Platform, Role, Unauthorized, ValidationError
from compliance_core.areas.api_keys import API_KEYS, DailyUsage, NewApiKey
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.kernel.permissions import Actor
from compliance_core.kernel.uow import Store
from compliance_core.platform import Bootstrap

from . import samples


def test_a_key_round_trips_with_every_field(store: Store) -> None:
    key = samples.api_key()
    with store.session(write=True) as session:
        session[API_KEYS].add(key)
    with store.session(write=False) as session:
        assert session[API_KEYS].get(key.organization_id, key.id) == key
        assert session[API_KEYS].find_by_hash(key.secret_hash) == key


def test_another_organizations_key_is_not_found(store: Store) -> None:
    key = samples.api_key(organization_id="org_a")
    with store.session(write=True) as session:
        session[API_KEYS].add(key)
    with store.session(write=False) as session:
        assert session[API_KEYS].get("org_b", key.id) is None
        assert session[API_KEYS].get("org_a", "key_missing") is None
        assert session[API_KEYS].find_by_hash("cd" * 32) is None


def test_a_second_key_with_the_same_hash_is_a_conflict(store: Store) -> None:
    with store.session(write=True) as session:
        session[API_KEYS].add(samples.api_key(id="key_1"))
    with pytest.raises(Conflict):
        with store.session(write=True) as session:
            session[API_KEYS].add(samples.api_key(id="key_2"))
    with store.session(write=False) as session:
        assert session[API_KEYS].get("org_a", "key_2") is None


def test_an_update_is_stored(store: Store) -> None:
    key = samples.api_key(revoked_at=None)
    with store.session(write=True) as session:
        session[API_KEYS].add(key)
    revoked = attrs.evolve(key, revoked_at=samples.at(1000), name="renamed")
    with store.session(write=True) as session:
        session[API_KEYS].update(revoked)
    with store.session(write=False) as session:
        assert session[API_KEYS].get(key.organization_id, key.id) == revoked


def test_keys_list_in_creation_order_within_the_organization(store: Store) -> None:
    keys = [samples.api_key(id=f"key_{n}", secret_hash=f"{n:064x}", created_at=samples.at(-n // 2)) for n in range(7)]
    with store.session(write=True) as session:
        for key in keys:
            session[API_KEYS].add(key)
        session[API_KEYS].add(samples.api_key(organization_id="org_b", id="key_other", secret_hash="f" * 64))
    expected = sorted(keys, key=lambda k: (k.created_at, k.id))
    with store.session(write=False) as session:
        first, total = session[API_KEYS].list("org_a", PageRequest(page=1, per_page=4))
        second, _ = session[API_KEYS].list("org_a", PageRequest(page=2, per_page=4))
    assert total == 7
    assert [*first, *second] == expected


def test_record_use_counts_requests_per_utc_day_and_stamps_the_key(store: Store) -> None:
    key = samples.api_key(last_used_at=None)
    day = dt.datetime(2026, 5, 1, 23, 59, tzinfo=dt.UTC)
    with store.session(write=True) as session:
        session[API_KEYS].add(key)
        session[API_KEYS].add(samples.api_key(id="key_other", secret_hash="e" * 64))
    with store.session(write=True) as session:
        session[API_KEYS].record_use(key.id, day - dt.timedelta(days=3))
        session[API_KEYS].record_use(key.id, day)
        session[API_KEYS].record_use(key.id, day)
        session[API_KEYS].record_use("key_other", day)
    last = day + dt.timedelta(minutes=2)
    with store.session(write=True) as session:
        session[API_KEYS].record_use(key.id, last)
    with store.session(write=False) as session:
        assert session[API_KEYS].usage(key.id, dt.date(2026, 4, 1)) == [
            DailyUsage(date=dt.date(2026, 4, 28), requests=1),
            DailyUsage(date=dt.date(2026, 5, 1), requests=2),
            DailyUsage(date=dt.date(2026, 5, 2), requests=1),
        ]
        assert session[API_KEYS].usage(key.id, dt.date(2026, 5, 1)) == [
            DailyUsage(date=dt.date(2026, 5, 1), requests=2),
            DailyUsage(date=dt.date(2026, 5, 2), requests=1),
        ]
        assert session[API_KEYS].usage("key_unused", dt.date(2026, 1, 1)) == []
        assert session[API_KEYS].get(key.organization_id, key.id).last_used_at == last


def test_admitted_requests_show_in_the_keys_usage(platform: Platform, boot: Bootstrap, clock: FrozenClock) -> None:
    owner = platform.actor(boot.organization.id)
    secret = boot.owner_key.secret
    platform.access.admit(secret)
    clock.advance(days=1)
    platform.access.admit(secret)
    platform.access.admit(secret)
    usage = platform.api_keys.usage(owner, boot.owner_key.key.id)
    assert usage.total_requests == 3
    assert [d.requests for d in usage.days] == [1, 2]
    assert usage.last_used_at == clock.now()


def test_concurrent_requests_are_all_counted(platform: Platform, boot: Bootstrap) -> None:
    secret = boot.owner_key.secret

    def work() -> None:
        for _ in range(15):
            platform.access.admit(secret)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    usage = platform.api_keys.usage(platform.actor(boot.organization.id), boot.owner_key.key.id)
    assert usage.total_requests == 60


def test_an_idempotent_key_creation_replays_without_the_secret(platform: Platform, boot: Bootstrap) -> None:
    owner = platform.actor(boot.organization.id)
    data = NewApiKey(name="deploy", role=Role.ADMIN)
    first = platform.api_keys.create(owner, data, idempotency_key="key-1")
    again = platform.api_keys.create(owner, data, idempotency_key="key-1")
    assert first.secret is not None and again.secret is None
    assert again.key == first.key
    assert platform.api_keys.list(owner).total == 2


def test_a_deactivated_persons_key_is_refused_from_the_next_request(platform: Platform, owner: Actor) -> None:
    """Issue 16: the person is read from the store at every admission, on every store, so every
    process refuses the key once the person is deactivated (a lease held changes nothing)."""
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    issued = platform.api_keys.create(owner, NewApiKey(name="Ann", role="employee", person_id=ann.id))
    assert issued.secret is not None
    assert platform.access.admit(issued.secret).actor.person_id == ann.id
    platform.people.update(owner, ann.id, PersonPatch(is_active=False))
    with pytest.raises(Unauthorized) as raised:
        platform.access.admit(issued.secret)
    assert raised.value.details == {"reason": "person_inactive"}
    with pytest.raises(ValidationError) as refused:
        platform.api_keys.create(owner, NewApiKey(name="again", role="employee", person_id=ann.id))
    assert refused.value.details["field"] == "personId"


def test_a_key_keeps_who_issued_it(platform: Platform, owner: Actor) -> None:
    boss = platform.people.create(owner, NewPerson(name="Boss", email="boss@acme.example", role="admin"))
    ann = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.example"))
    handed = platform.api_keys.create(owner, NewApiKey(name="Boss", role="admin", person_id=boss.id))
    assert handed.secret is not None
    as_boss = platform.access.admit(handed.secret).actor
    issued = platform.api_keys.create(as_boss, NewApiKey(name="Ann", role="employee", person_id=ann.id))
    assert issued.secret is not None
    stored = platform.api_keys.get(owner, issued.key.id)
    assert (stored.created_by, stored.issued_by_person_id, stored.self_issued) == (handed.key.id, boss.id, False)
    assert platform.api_keys.get(owner, handed.key.id).self_issued
    actor = platform.access.admit(issued.secret).actor
    assert (actor.key_issued_by, actor.key_issued_by_person_id, actor.as_own_person) == (handed.key.id, boss.id, False)
