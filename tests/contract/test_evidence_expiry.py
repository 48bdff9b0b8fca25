"""The evidence expiry sweeps run by two workers at once on one SQL store (as two server
processes' lead workers would, or a worker restarted mid-run): each version's
``evidence.expiring`` is recorded exactly once, and each control turns stale exactly once."""

from __future__ import annotations

import pathlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from compliance_core import FrozenClock, Platform
from compliance_core.areas.evidence import NewEvidence, NewVersion
from compliance_core.areas.frameworks.control_models import ControlStatus, NewControl
from compliance_core.areas.tasks import NewTask
from compliance_core.kernel.events import OUTBOX

ITEMS = 12


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> str:
    if request.param == "sqlite":
        return str(request.getfixturevalue("migrated_sqlite")(tmp_path / "two-workers.db"))
    return str(request.getfixturevalue("postgres_url"))


def _open(url: str, clock: FrozenClock) -> Platform:
    """A platform of its own (its own store connections, writer queue and ids), as another
    process would have; files in memory, since only records matter here."""
    return Platform.open(url, clock=clock, settings={"blobs": "memory://"})


def _together(platforms: list[Platform], run: Callable[[Platform], int]) -> list[int]:
    start = threading.Barrier(len(platforms))

    def go(platform: Platform) -> int:
        start.wait()
        return run(platform)

    with ThreadPoolExecutor(len(platforms)) as pool:
        return list(pool.map(go, platforms))


def _messages(platform: Platform, event_type: str) -> list[dict]:
    with platform.uow.read() as session:
        return [m.payload for m in session[OUTBOX].pending(10_000) if m.type == event_type]


def test_two_workers_record_one_expiring_event_per_version(url: str) -> None:
    clock = FrozenClock()
    first, second = _open(url, clock), _open(url, clock)
    try:
        owner = first.actor(first.bootstrap("Acme").organization.id)
        task = first.tasks.create(owner, NewTask(title="Certificates")).id
        items = [
            first.evidence.add(
                owner, task, NewEvidence(kind="note", note=f"Certificate {n}", valid_until="2026-01-20T00:00:00Z")
            )
            for n in range(ITEMS)
        ]
        first.evidence.add_version(
            owner, task, items[0].id, NewVersion(note="Renewed", valid_until="2026-01-25T00:00:00Z")
        )
        counts = _together([first, second], lambda platform: platform.evidence.warn_expiring())
        assert sum(counts) == ITEMS
        third = _open(url, clock)  # a restart: nothing is owed any more
        try:
            assert _together([first, third], lambda platform: platform.evidence.warn_expiring()) == [0, 0]
        finally:
            third.close()
        warned = _messages(first, "evidence.expiring")
        versions = sorted(message["data"]["versionId"] for message in warned)
        assert len(versions) == ITEMS and len(set(versions)) == ITEMS
    finally:
        first.close()
        second.close()


def test_two_workers_make_a_control_stale_once(url: str) -> None:
    clock = FrozenClock()
    first, second = _open(url, clock), _open(url, clock)
    try:
        owner = first.actor(first.bootstrap("Acme").organization.id)
        control = first.controls.create(owner, NewControl(name="Backups are tested", code="OPS-1"))
        task = first.tasks.create(owner, NewTask(title="Restore test")).id
        for n in range(ITEMS):
            first.evidence.add(
                owner,
                task,
                NewEvidence(
                    kind="note", note=f"Restore {n}", valid_until="2026-02-01T00:00:00Z", control_ids=[control.id]
                ),
            )
        assert first.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED
        before = len(_messages(first, "control.status_changed"))
        clock.advance(days=40)
        counts = _together([first, second], lambda platform: platform.evidence.expire())
        assert sum(counts) == ITEMS
        assert second.controls.get(owner, control.id).status is ControlStatus.STALE
        assert len(_messages(first, "control.status_changed")) == before + 1
        assert len(_messages(first, "evidence.expired")) == ITEMS
    finally:
        first.close()
        second.close()
