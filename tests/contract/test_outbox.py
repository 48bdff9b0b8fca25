from __future__ import annotations

from typing import Any

from compliance_core import Platform
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.kernel.chores import OUTBOX_PURGE
from compliance_core.kernel.events import OUTBOX, OUTBOX_RETENTION
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


def test_purge_deletes_only_messages_published_before_the_time(store: Store) -> None:
    messages = [samples.outbox_message(id=f"evt_{n}", occurred_at=samples.at(n)) for n in range(4)]
    with store.session(write=True) as session:
        for message in messages:
            session[OUTBOX].add(message)
        session[OUTBOX].mark_published(["evt_0"], samples.at(10))
        session[OUTBOX].mark_published(["evt_1"], samples.at(20))
    with store.session(write=True) as session:
        assert session[OUTBOX].purge(samples.at(10)) == 0  # published exactly then: not before
        assert session[OUTBOX].purge(samples.at(1000)) == 2  # the unpublished stay, however old
    with store.session(write=False) as session:
        assert [m.id for m in session[OUTBOX].dump()] == ["evt_2", "evt_3"]  # type: ignore[attr-defined]
        assert session[OUTBOX].pending() == messages[2:]


class _NoSends:
    def send(self, url: str, body: bytes, headers: Any) -> Any:
        raise AssertionError("no webhook is configured")


def test_the_platform_keeps_published_messages_a_week(platform: Platform, owner: Any, clock: Any) -> None:
    platform.findings.create(owner, NewFinding(title="Weak TLS", severity="low"))
    platform.delivery_engine(_NoSends()).step()  # publishes it: no endpoint wants it
    platform.findings.create(owner, NewFinding(title="Unpublished", severity="low"))
    with platform.store.session(write=False) as session:
        published = [m for m in session[OUTBOX].dump() if m.published_at]  # type: ignore[attr-defined]
    assert len(published) >= 1
    assert platform.run_chore(OUTBOX_PURGE, clock.now() + OUTBOX_RETENTION) == 0
    assert platform.run_chore(OUTBOX_PURGE, clock.now() + OUTBOX_RETENTION * 2) == len(published)
    with platform.store.session(write=False) as session:
        assert [m.payload["data"]["title"] for m in session[OUTBOX].pending()] == ["Unpublished"]


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
