from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from compliance_core import PageRequest, Platform
from compliance_core.areas.api_keys import API_KEYS
from compliance_core.areas.findings import FINDINGS
from compliance_core.areas.organizations import ORGANIZATIONS
from compliance_core.areas.people import EMAILS, PEOPLE
from compliance_core.areas.vendors import VENDORS, VendorCreated, VendorFilter
from compliance_core.kernel.audit import AUDIT_LOG, AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.idempotency import IDEMPOTENCY, IdempotencyRecord
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.uow import Store

from . import samples


class Boom(Exception):
    pass


def _write_everything(session: Any) -> None:
    session[ORGANIZATIONS].add(samples.organization(id="org_a"))
    session[API_KEYS].add(samples.api_key())
    session[API_KEYS].record_use("key_full", samples.T0)
    session[VENDORS].add(samples.vendor())
    session[PEOPLE].add(samples.person())
    session[FINDINGS].add(samples.finding())
    session[IDEMPOTENCY].put(
        IdempotencyRecord(
            organization_id="org_a",
            principal="p",
            key="k",
            operation="op",
            fingerprint="f",
            result=None,
            created_at=samples.T0,
        )
    )
    session[RATE_LIMITS].put("key_full", Bucket(tokens=3.0, updated_at=samples.T0))
    session[OUTBOX].add(samples.outbox_message())


def _nothing_written(store: Store) -> None:
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].count() == 0
        assert session[API_KEYS].get("org_a", "key_full") is None
        assert session[API_KEYS].usage("key_full", dt.date(2000, 1, 1)) == []
        assert session[VENDORS].get("org_a", "vnd_full") is None
        assert session[PEOPLE].get("org_a", "mem_full") is None
        assert session[EMAILS].find_emails("org_a", ["zoe@example.com"]) == set()
        assert session[FINDINGS].get("org_a", "fnd_full") is None
        assert session[IDEMPOTENCY].get("org_a", "p", "k") is None
        assert session[RATE_LIMITS].get("key_full") is None
        assert session[OUTBOX].pending() == []


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
        assert session[ORGANIZATIONS].count() == 1
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()
        assert len(session[OUTBOX].pending()) == 1


def test_rolled_back_totals_stay_right(store: Store) -> None:
    """Totals of a later list do not count rows from a rolled-back write."""
    with store.session(write=True) as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_1"))
    with pytest.raises(Boom):
        with store.session(write=True) as session:
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_2"))
            raise Boom
    with store.session(write=False) as session:
        items, total = session[VENDORS].list("org_a", VendorFilter(), PageRequest())
    assert ([v.id for v in items], total) == (["vnd_1"], 1)


def test_a_failed_unit_of_work_leaves_no_outbox_row_no_audit_entry_and_sends_no_signal(
    platform: Platform, owner: Any
) -> None:
    received: list[Any] = []
    platform.signals.connect(None, lambda message, event: received.append(message))
    with platform.store.session(write=False) as session:
        trail = session[AUDIT_LOG].list(owner.organization_id, AuditFilter(), PageRequest())
    with pytest.raises(Boom):
        with platform.uow.write(owner) as tx:
            doomed = samples.plain_vendor(owner.organization_id, "vnd_doomed")
            tx[VENDORS].add(doomed)
            tx.record(VendorCreated(organization_id=owner.organization_id, subject=doomed))
            raise Boom
    with platform.store.session(write=False) as session:
        assert session[VENDORS].get(owner.organization_id, "vnd_doomed") is None
        assert session[OUTBOX].pending() == []
        assert session[AUDIT_LOG].list(owner.organization_id, AuditFilter(), PageRequest()) == trail
        assert session[AUDIT_LOG].list(owner.organization_id, AuditFilter(entity_id="vnd_doomed"), PageRequest()) == (
            [],
            0,
        )
    assert received == []


def test_a_nested_write_session_is_refused(store: Store) -> None:
    with store.session(write=True):
        with pytest.raises(RuntimeError):
            with store.session(write=True):
                pass
