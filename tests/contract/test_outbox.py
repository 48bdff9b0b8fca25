from __future__ import annotations

from typing import Any

from compliance_core import Platform
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.uow import Store

from . import samples


def test_a_message_round_trips_with_its_payload(store: Store) -> None:
    message = samples.outbox_message()
    with store.session(write=True) as session:
        session[OUTBOX].add(message)
    with store.session(write=False) as session:
        assert session[OUTBOX].pending() == [message]


def test_pending_is_unpublished_oldest_first_and_limited(store: Store) -> None:
    messages = [samples.outbox_message(id=f"evt_{9 - n}", occurred_at=samples.at(n // 2)) for n in range(6)]
    with store.session(write=True) as session:
        for message in messages:
            session[OUTBOX].add(message)
    expected = sorted(messages, key=lambda m: (m.occurred_at, m.id))
    with store.session(write=False) as session:
        assert session[OUTBOX].pending() == expected
        assert session[OUTBOX].pending(limit=2) == expected[:2]
    with store.session(write=True) as session:
        session[OUTBOX].mark_published([expected[0].id, expected[3].id, "evt_unknown"], samples.at(100))
    with store.session(write=False) as session:
        assert session[OUTBOX].pending() == [expected[1], expected[2], expected[4], expected[5]]
    with store.session(write=True) as session:
        session[OUTBOX].mark_published([m.id for m in messages], samples.at(101))
    with store.session(write=False) as session:
        assert session[OUTBOX].pending() == []


def test_every_committed_event_reaches_the_outbox(platform: Platform, owner: Any) -> None:
    received = []
    platform.signals.connect(None, lambda message, event: received.append(message))
    finding = platform.findings.create(owner, NewFinding(title="Weak TLS", severity="low"))
    with platform.store.session(write=False) as session:
        pending = session[OUTBOX].pending()
    assert [m.type for m in pending] == ["finding.created"]
    assert pending[0].subject_id == finding.id
    assert pending[0].payload["data"]["title"] == "Weak TLS"
    assert received == pending


def test_an_event_body_survives_the_store_unchanged(platform: Platform, owner: Any) -> None:
    """The body is built in core and only stored: what a webhook reads is what was rendered."""
    published: list[dict[str, Any]] = []
    platform.signals.connect(None, lambda message, event: published.append(message.payload))
    finding = platform.findings.create(owner, NewFinding(title="Ünïcode ✓", severity="low"))
    platform.findings.update(owner, finding.id, FindingPatch(severity="high", content="line 1\nline 2"))
    with platform.store.session(write=False) as session:
        stored = [m.payload for m in session[OUTBOX].pending()]
    assert stored == published
    assert [body["type"] for body in stored] == ["finding.created", "finding.updated", "finding.severity_changed"]
    assert stored[1]["previous"] == {"severity": "low", "content": ""}
    assert stored[2]["previous"] == {"severity": "low"}
