from __future__ import annotations

from typing import Any

from compliance_core import NewFinding, Platform
from compliance_core.uow import Store

from . import samples


def test_a_message_round_trips_with_its_payload(store: Store) -> None:
    message = samples.outbox_message()
    with store.session(write=True) as session:
        session.outbox.add(message)
    with store.session(write=False) as session:
        assert session.outbox.pending() == [message]


def test_pending_is_unpublished_oldest_first_and_limited(store: Store) -> None:
    messages = [samples.outbox_message(id=f"evt_{9 - n}", occurred_at=samples.at(n // 2)) for n in range(6)]
    with store.session(write=True) as session:
        for message in messages:
            session.outbox.add(message)
    expected = sorted(messages, key=lambda m: (m.occurred_at, m.id))
    with store.session(write=False) as session:
        assert session.outbox.pending() == expected
        assert session.outbox.pending(limit=2) == expected[:2]
    with store.session(write=True) as session:
        session.outbox.mark_published([expected[0].id, expected[3].id, "evt_unknown"], samples.at(100))
    with store.session(write=False) as session:
        assert session.outbox.pending() == [expected[1], expected[2], expected[4], expected[5]]
    with store.session(write=True) as session:
        session.outbox.mark_published([m.id for m in messages], samples.at(101))
    with store.session(write=False) as session:
        assert session.outbox.pending() == []


def test_every_committed_event_reaches_the_outbox(platform: Platform, owner: Any) -> None:
    received = []
    platform.signals.connect(None, received.append)
    finding = platform.findings.create(owner, NewFinding(title="Weak TLS", severity="low"))
    with platform.store.session(write=False) as session:
        pending = session.outbox.pending()
    assert [m.type for m in pending] == ["finding.created"]
    assert pending[0].subject_id == finding.id
    assert pending[0].payload["finding"]["title"] == "Weak TLS"
    assert received == pending
