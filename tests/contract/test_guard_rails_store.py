"""Guard rails on every store: counting active keys by role, the last Owner key under concurrent
revocations, idempotency purge, and free-text vendor categories."""

from __future__ import annotations

import datetime as dt
import pathlib
import sqlite3
import threading
from typing import Any

import attrs
import pytest

from compliance_core import Conflict, FrozenClock, PageRequest, Platform, Role
from compliance_core.areas.api_keys import API_KEYS, NewApiKey
from compliance_core.areas.vendors import VENDORS, NewVendor, VendorFilter
from compliance_core.kernel.chores import IDEMPOTENCY_PURGE
from compliance_core.kernel.idempotency import IDEMPOTENCY, RETENTION
from compliance_core.kernel.uow import Store
from compliance_core.platform import Bootstrap

from . import samples

# Counting active keys


def test_count_active_counts_unrevoked_unexpired_keys_of_one_role_in_one_organization(store: Store) -> None:
    now = samples.at(1000)
    keys = [
        samples.api_key(id="key_1", role=Role.OWNER, revoked_at=None, expires_at=None),
        samples.api_key(id="key_2", role=Role.OWNER, revoked_at=None, expires_at=now + dt.timedelta(seconds=1)),
        samples.api_key(id="key_3", role=Role.OWNER, revoked_at=None, expires_at=now),  # expires now: expired
        samples.api_key(id="key_4", role=Role.OWNER, revoked_at=samples.at(10), expires_at=None),
        samples.api_key(id="key_5", role=Role.ADMIN, revoked_at=None, expires_at=None),
        samples.api_key(id="key_6", organization_id="org_b", role=Role.OWNER, revoked_at=None, expires_at=None),
    ]
    with store.session(write=True) as session:
        for n, key in enumerate(keys):
            session[API_KEYS].add(attrs.evolve(key, secret_hash=f"{n:064x}"))
    with store.session(write=False) as session:
        repo = session[API_KEYS]
        assert repo.count_active("org_a", Role.OWNER, now) == 2
        assert repo.count_active("org_a", Role.ADMIN, now) == 1
        assert repo.count_active("org_a", Role.AUDITOR, now) == 0
        assert repo.count_active("org_b", Role.OWNER, now) == 1
        assert repo.count_active("org_c", Role.OWNER, now) == 0
        assert repo.count_active("org_a", Role.OWNER, now + dt.timedelta(seconds=1)) == 1
        assert repo.count_active("org_a", Role.OWNER, samples.at(-1000)) == 3  # key_3 not yet expired
    with store.session(write=True) as session:
        session[API_KEYS].update(attrs.evolve(keys[0], secret_hash=f"{0:064x}", revoked_at=now))
    with store.session(write=False) as session:
        assert session[API_KEYS].count_active("org_a", Role.OWNER, now) == 1


def test_a_rolled_back_key_is_not_counted(store: Store) -> None:
    key = samples.api_key(id="key_1", role=Role.OWNER, revoked_at=None, expires_at=None)
    with pytest.raises(RuntimeError):
        with store.session(write=True) as session:
            session[API_KEYS].add(key)
            raise RuntimeError("roll back")
    with store.session(write=False) as session:
        assert session[API_KEYS].count_active(key.organization_id, Role.OWNER, samples.T0) == 0
        assert session[API_KEYS].list(key.organization_id, PageRequest()) == ([], 0)


# The last Owner key


def test_the_last_owner_key_cannot_be_revoked_on_any_store(platform: Platform, boot: Bootstrap, owner: Any) -> None:
    with pytest.raises(Conflict) as caught:
        platform.api_keys.revoke(owner, boot.owner_key.key.id)
    assert caught.value.details["field"] == "keyId" and caught.value.details["value"] == boot.owner_key.key.id
    second = platform.api_keys.create(owner, NewApiKey(name="second", role="owner"))
    assert platform.api_keys.revoke(owner, boot.owner_key.key.id).revoked_at is not None
    with pytest.raises(Conflict):
        platform.api_keys.revoke(owner, second.key.id)
    assert platform.api_keys.get(owner, second.key.id).revoked_at is None


def test_two_owners_revoking_each_other_at_once_leave_one_owner_key(
    platform: Platform, boot: Bootstrap, owner: Any
) -> None:
    for round_ in range(5):
        keys = [platform.api_keys.create(owner, NewApiKey(name=f"owner {round_}-{n}", role="owner")) for n in (1, 2)]
        if round_ == 0:
            platform.api_keys.revoke(owner, boot.owner_key.key.id)
        else:  # the survivor of the round before goes too, leaving the two new keys
            survivors = [
                k for k in platform.api_keys.list(owner, PageRequest(per_page=200)).items if k.revoked_at is None
            ]
            for key in survivors:
                if key.id not in {k.key.id for k in keys}:
                    platform.api_keys.revoke(owner, key.id)
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def revoke(key_id: str, barrier: threading.Barrier = barrier, outcomes: list[str] = outcomes) -> None:
            barrier.wait()
            try:
                platform.api_keys.revoke(owner, key_id)
                outcomes.append("revoked")
            except Conflict:
                outcomes.append("conflict")

        threads = [threading.Thread(target=revoke, args=(k.key.id,)) for k in keys]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["conflict", "revoked"]
        with platform.store.session(write=False) as session:
            assert session[API_KEYS].count_active(owner.organization_id, Role.OWNER, platform.clock.now()) == 1


# Idempotency purge


def test_purge_idempotency_deletes_only_records_past_the_retention(
    platform: Platform, owner: Any, clock: FrozenClock
) -> None:
    old = platform.vendors.create(owner, NewVendor(name="Old"), idempotency_key="old")
    clock.advance(hours=2)
    young = platform.vendors.create(owner, NewVendor(name="Young"), idempotency_key="young")
    clock.advance(hours=22, minutes=30)  # "old" is 24.5 h old, "young" 22.5 h
    assert platform.run_chore(IDEMPOTENCY_PURGE) == 1
    assert platform.run_chore(IDEMPOTENCY_PURGE) == 0
    with platform.store.session(write=False) as session:
        assert session[IDEMPOTENCY].get(owner.organization_id, owner.principal, "old") is None
        assert session[IDEMPOTENCY].get(owner.organization_id, owner.principal, "young") is not None
    assert platform.vendors.create(owner, NewVendor(name="Young"), idempotency_key="young") == young
    rerun = platform.vendors.create(owner, NewVendor(name="Old"), idempotency_key="old")
    assert rerun.id != old.id  # the purged key runs again
    assert platform.vendors.list(owner).total == 3
    assert platform.vendors.create(owner, NewVendor(name="Old"), idempotency_key="old") == rerun


def test_purge_idempotency_takes_an_explicit_time(platform: Platform, owner: Any, clock: FrozenClock) -> None:
    platform.vendors.create(owner, NewVendor(name="A"), idempotency_key="a")
    platform.vendors.create(owner, NewVendor(name="B"), idempotency_key="b")
    assert platform.run_chore(IDEMPOTENCY_PURGE, clock.now() + RETENTION) == 0  # exactly 24 h: not older
    assert platform.run_chore(IDEMPOTENCY_PURGE, clock.now() + RETENTION + dt.timedelta(microseconds=1)) == 2
    assert platform.run_chore(IDEMPOTENCY_PURGE, clock.now() + dt.timedelta(days=30)) == 0


def test_a_failed_purge_deletes_nothing(store: Store) -> None:
    record = samples_record()
    with store.session(write=True) as session:
        session[IDEMPOTENCY].put(record)
    with pytest.raises(RuntimeError):
        with store.session(write=True) as session:
            assert session[IDEMPOTENCY].purge(samples.at(10**6)) == 1
            raise RuntimeError("roll back")
    with store.session(write=False) as session:
        assert session[IDEMPOTENCY].get(record.organization_id, record.principal, record.key) == record


def samples_record() -> Any:
    from compliance_core.kernel.idempotency import IdempotencyRecord

    return IdempotencyRecord(
        organization_id="org_a",
        principal="key:key_1",
        key="k",
        operation="vendors.create",
        fingerprint="f" * 64,
        result="r",
        created_at=samples.T0,
    )


# Free-text vendor categories


def test_a_free_text_category_round_trips_and_filters_by_exact_match(store: Store) -> None:
    vendors = [
        samples.vendor(id="vnd_1", category="Cloud hosting – EU", created_at=samples.at(1)),
        samples.vendor(id="vnd_2", category="cloud hosting – eu", created_at=samples.at(2)),
        samples.vendor(id="vnd_3", category="cloud", created_at=samples.at(3)),
    ]
    with store.session(write=True) as session:
        for vendor in vendors:
            session[VENDORS].add(vendor)
    with store.session(write=False) as session:
        repo = session[VENDORS]
        got = repo.get("org_a", "vnd_1")
        assert got is not None and got.category == "Cloud hosting – EU"
        for category, expected in (("Cloud hosting – EU", ["vnd_1"]), ("cloud", ["vnd_3"]), ("Cloud", [])):
            items, total = repo.list("org_a", VendorFilter(archived=True, category=category), PageRequest())
            assert [v.id for v in items] == expected and total == len(expected)


def test_a_free_text_category_survives_an_idempotent_replay(platform: Platform, owner: Any) -> None:
    first = platform.vendors.create(owner, NewVendor(name="A", category="Payroll bureau"), idempotency_key="p")
    again = platform.vendors.create(owner, NewVendor(name="A", category="Payroll bureau"), idempotency_key="p")
    assert again == first and again.category == "Payroll bureau"


# SQLite specifics


def test_sqlite_counts_active_keys_from_its_index(tmp_path: pathlib.Path) -> None:
    from compliance_store.sqlite import SqliteStore
    from compliance_store.sqlite.api_keys import _COUNT_ACTIVE

    store = SqliteStore(f"sqlite:///{tmp_path / 'plan.db'}")
    store.close()
    conn = sqlite3.connect(tmp_path / "plan.db")
    try:
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + _COUNT_ACTIVE, ("o", "owner", "t")))
    finally:
        conn.close()
    assert "COVERING INDEX api_keys_active_by_role" in plan


def test_sqlite_rows_written_with_the_old_category_values_still_load(tmp_path: pathlib.Path) -> None:
    from compliance_store.sqlite import SqliteStore

    path = tmp_path / "old.db"
    store = SqliteStore(f"sqlite:///{path}")
    with store.session(write=True) as session:
        session[VENDORS].add(samples.vendor(id="vnd_1"))
    store.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE vendors SET category = 'software_as_a_service'")
    conn.close()
    store = SqliteStore(f"sqlite:///{path}")
    try:
        with store.session(write=False) as session:
            loaded = session[VENDORS].get("org_a", "vnd_1")
            items, _ = session[VENDORS].list(
                "org_a", VendorFilter(archived=True, category="software_as_a_service"), PageRequest()
            )
        assert loaded is not None and loaded.category == "software_as_a_service" and type(loaded.category) is str
        assert [v.id for v in items] == ["vnd_1"]
    finally:
        store.close()
