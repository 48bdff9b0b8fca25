"""Chores: declared once by their area (or the kernel), run by the platform from that one list."""

from __future__ import annotations

import datetime as dt

import attrs
import pytest
from tally_area import COUNT, JAM, WITH_A_JAM, WITH_TALLIES, Tallies

from compliance_core import FrozenClock, Platform
from compliance_core.areas import AREAS
from compliance_core.kernel.chores import IDEMPOTENCY_PURGE, KERNEL_CHORES
from compliance_core.kernel.registry import Area
from compliance_store.memory import MemoryStore


def test_the_platform_runs_the_kernels_chores_and_every_areas(platform: Platform, boot) -> None:
    declared = [*KERNEL_CHORES, *(chore for area in AREAS for chore in area.chores)]
    assert list(platform.chores) == declared
    report = platform.run_chores()
    assert report.failures == {}
    assert report.counts == {chore.report: 0 for chore in declared}
    assert {"purgedIdempotencyRecords", "purgedOutboxMessages", "policiesDueForReview", "lapsedRiskAcceptances"} <= set(
        report.counts
    )


def test_an_areas_chore_runs_by_its_registration_alone(clock: FrozenClock) -> None:
    platform = Platform(MemoryStore(), clock=clock, areas=WITH_TALLIES)
    platform.bootstrap("Acme")
    platform.bootstrap("Globex")
    assert platform.run_chores().counts["countedOrganizations"] == 2
    assert platform.run_chore(COUNT) == 2
    tallies: Tallies = platform.services["tallies"]
    assert tallies.seen == [clock.now(), clock.now()]


def test_a_chore_judges_by_the_time_given_taken_as_utc(clock: FrozenClock) -> None:
    platform = Platform(MemoryStore(), clock=clock, areas=WITH_TALLIES)
    platform.run_chore(COUNT, dt.datetime(2030, 1, 2, 3, 4))
    platform.run_chores(dt.datetime(2030, 1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    assert platform.services["tallies"].seen == [
        dt.datetime(2030, 1, 2, 3, 4, tzinfo=dt.UTC),
        dt.datetime(2030, 1, 2, 1, 4, tzinfo=dt.UTC),
    ]


def test_a_failing_chore_leaves_the_others_to_run(clock: FrozenClock) -> None:
    platform = Platform(MemoryStore(), clock=clock, areas=WITH_A_JAM)
    platform.bootstrap("Acme")
    report = platform.run_chores()
    assert list(report.failures) == ["jammedTallies"]
    assert str(report.failures["jammedTallies"]) == "the tally machine is jammed"
    assert report.counts["countedOrganizations"] == 1  # declared after the failing one
    assert report.counts["purgedIdempotencyRecords"] == 0
    with pytest.raises(RuntimeError, match="jammed"):
        platform.run_chore(JAM)


def test_a_chore_of_another_platform_is_refused(platform: Platform) -> None:
    with pytest.raises(ValueError, match="not a chore of this platform"):
        platform.run_chore(COUNT)
    assert platform.run_chore(IDEMPOTENCY_PURGE) == 0


def test_two_chores_may_share_neither_a_name_nor_a_report_key() -> None:
    for clash in (
        IDEMPOTENCY_PURGE,
        COUNT,
        attrs.evolve(COUNT, name="count the organizations again"),
    ):
        areas = (*WITH_TALLIES, Area(name="more_tallies", service=Tallies, chores=(clash,)))
        with pytest.raises(ValueError, match="a chore named"):
            Platform(MemoryStore(), areas=areas)
