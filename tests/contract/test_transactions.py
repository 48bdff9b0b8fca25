from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from compliance_core import PageRequest, Platform, VendorFilter
from compliance_core.events import DomainEvent
from compliance_core.idempotency import IdempotencyRecord
from compliance_core.ratelimit import Bucket
from compliance_core.uow import Store

from . import samples


class Boom(Exception):
    pass


def _write_everything(session: Any) -> None:
    session.organizations.add(samples.organization(id="org_a"))
    session.api_keys.add(samples.api_key())
    session.api_keys.record_use("key_full", samples.T0)
    session.vendors.add(samples.vendor())
    session.people.add(samples.person())
    session.findings.add(samples.finding())
    session.idempotency.put(IdempotencyRecord(organization_id="org_a", principal="p", key="k", operation="op",
                                              fingerprint="f", result=None, created_at=samples.T0))
    session.rate_limits.put("key_full", Bucket(tokens=3.0, updated_at=samples.T0))
    session.outbox.add(samples.outbox_message())


def _nothing_written(store: Store) -> None:
    with store.session(write=False) as session:
        assert session.organizations.count() == 0
        assert session.api_keys.get("org_a", "key_full") is None
        assert session.api_keys.usage("key_full", dt.date(2000, 1, 1)) == []
        assert session.vendors.get("org_a", "vnd_full") is None
        assert session.people.get("org_a", "mem_full") is None
        assert session.people.find_emails("org_a", ["zoe@example.com"]) == set()
        assert session.findings.get("org_a", "fnd_full") is None
        assert session.idempotency.get("org_a", "p", "k") is None
        assert session.rate_limits.get("key_full") is None
        assert session.outbox.pending() == []


def test_an_exception_rolls_back_every_write_of_the_session(store: Store) -> None:
    with pytest.raises(Boom):
        with store.session(write=True) as session:
            _write_everything(session)
            raise Boom
    _nothing_written(store)


def test_a_committed_session_is_visible_to_later_sessions(store: Store) -> None:
    with store.session(write=True) as session:
        _write_everything(session)
    with store.session(write=False) as session:
        assert session.organizations.count() == 1
        assert session.vendors.get("org_a", "vnd_full") == samples.vendor()
        assert len(session.outbox.pending()) == 1


def test_rolled_back_totals_stay_right(store: Store) -> None:
    """Totals of a later list do not count rows from a rolled-back write."""
    with store.session(write=True) as session:
        session.vendors.add(samples.plain_vendor("org_a", "vnd_1"))
    with pytest.raises(Boom):
        with store.session(write=True) as session:
            session.vendors.add(samples.plain_vendor("org_a", "vnd_2"))
            raise Boom
    with store.session(write=False) as session:
        items, total = session.vendors.list("org_a", VendorFilter(), PageRequest())
    assert ([v.id for v in items], total) == (["vnd_1"], 1)


def test_a_failed_unit_of_work_leaves_no_outbox_row_and_sends_no_signal(platform: Platform, owner: Any) -> None:
    received: list[Any] = []
    platform.signals.connect(None, received.append)
    with pytest.raises(Boom):
        with platform.uow.write() as tx:
            tx.vendors.add(samples.plain_vendor(owner.organization_id, "vnd_doomed"))
            tx.record(DomainEvent(type="vendor.created", organization_id=owner.organization_id,
                                  subject_id="vnd_doomed", data={}))
            raise Boom
    with platform.store.session(write=False) as session:
        assert session.vendors.get(owner.organization_id, "vnd_doomed") is None
        assert session.outbox.pending() == []
    assert received == []


def test_a_nested_write_session_is_refused(store: Store) -> None:
    with store.session(write=True):
        with pytest.raises(RuntimeError):
            with store.session(write=True):
                pass
