from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from compliance_core import Conflict, Platform
from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import NewVendor, SubProcessor
from compliance_core.kernel.idempotency import IDEMPOTENCY, IdempotencyRecord
from compliance_core.kernel.uow import Store

from . import samples

RESULTS: dict[str, Callable[[], Any]] = {
    "vendor": samples.vendor,
    "person": samples.person,
    "finding": samples.finding,
    "api key": samples.api_key,
    "people": lambda: (samples.person(id="mem_1"), samples.person(id="mem_2", email="b@example.com")),
    "sub-processors list": lambda: [SubProcessor(name="x", country="DE", purpose_category="hosting")],
    "none": lambda: None,
    "json": lambda: {"n": 1, "s": "ß", "nested": {"ok": True}},
}


def _record(result: Any, **changes: Any) -> IdempotencyRecord:
    record = IdempotencyRecord(
        organization_id="org_a",
        principal="key:key_1",
        key="abc-123",
        operation="vendors.create",
        fingerprint="f" * 64,
        result=result,
        created_at=samples.T0,
    )
    return attrs.evolve(record, **changes)


@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_a_record_round_trips_with_its_result(store: Store, kind: str) -> None:
    record = _record(RESULTS[kind]())
    with store.session(write=True) as session:
        session[IDEMPOTENCY].put(record)
    with store.session(write=False) as session:
        found = session[IDEMPOTENCY].get("org_a", "key:key_1", "abc-123")
    assert found == record
    assert type(found.result) is type(record.result)


def test_records_are_scoped_by_organization_principal_and_key(store: Store) -> None:
    with store.session(write=True) as session:
        session[IDEMPOTENCY].put(_record("x"))
    with store.session(write=False) as session:
        assert session[IDEMPOTENCY].get("org_b", "key:key_1", "abc-123") is None
        assert session[IDEMPOTENCY].get("org_a", "key:key_2", "abc-123") is None
        assert session[IDEMPOTENCY].get("org_a", "key:key_1", "abc-124") is None


def test_put_replaces_a_record_with_the_same_key_and_purge_drops_old_ones(store: Store) -> None:
    with store.session(write=True) as session:
        session[IDEMPOTENCY].put(_record("old"))
        session[IDEMPOTENCY].put(_record("other", key="k2", created_at=samples.at(10)))
    newer = _record("new", created_at=samples.at(5))
    with store.session(write=True) as session:
        session[IDEMPOTENCY].put(newer)
    with store.session(write=True) as session:
        assert session[IDEMPOTENCY].purge(samples.at(6)) == 1
    with store.session(write=False) as session:
        assert session[IDEMPOTENCY].get("org_a", "key:key_1", "abc-123") is None
        assert session[IDEMPOTENCY].get("org_a", "key:key_1", "k2").result == "other"


def test_an_idempotent_create_is_stored_and_replayed_in_later_sessions(platform: Platform, owner: Any) -> None:
    data = NewVendor(name="Hosting", sub_processors=[{"name": "B", "country": "fi", "purpose_category": "hosting"}])
    first = platform.vendors.create(owner, data, idempotency_key="create-1")
    again = platform.vendors.create(owner, data, idempotency_key="create-1")
    assert again == first
    assert platform.vendors.list(owner).total == 1
    with pytest.raises(Conflict):
        platform.vendors.create(owner, NewVendor(name="Other"), idempotency_key="create-1")


def test_a_replayed_bulk_create_returns_the_same_people(platform: Platform, owner: Any) -> None:
    members = [{"name": "A", "email": "a@example.com"}, {"name": "B", "email": "b@example.com", "role": "Admin"}]
    first = platform.people.bulk_create(owner, members, idempotency_key="bulk")
    assert platform.people.bulk_create(owner, members, idempotency_key="bulk") == first
    assert platform.people.list(owner).total == 2


def test_a_failed_attempt_leaves_no_record(platform: Platform, owner: Any) -> None:
    platform.people.create(owner, NewPerson(name="A", email="a@example.com"))
    with pytest.raises(Conflict):
        platform.people.create(owner, NewPerson(name="A2", email="a@example.com"), idempotency_key="try")
    with platform.store.session(write=False) as session:
        assert session[IDEMPOTENCY].get(owner.organization_id, owner.principal, "try") is None


def test_concurrent_calls_with_one_key_create_once(platform: Platform, owner: Any) -> None:
    data = NewVendor(name="Once")
    results: list[Any] = []

    def call() -> None:
        results.append(platform.vendors.create(owner, data, idempotency_key="race"))

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6 and all(r == results[0] for r in results)
    assert platform.vendors.list(owner).total == 1
