"""A test-only area with chores, declared as any area declares its own: registration alone (being
in the platform's areas) must bring a chore to ``Platform.run_chores``, the server's lead worker
and ``compliance maintenance``, with no edit of the server or the command line."""

from __future__ import annotations

import datetime as dt

from compliance_core.areas import AREAS
from compliance_core.areas.organizations import ORGANIZATIONS
from compliance_core.kernel.registry import Area, Chore
from compliance_core.kernel.uow import Context


class Tallies:
    def __init__(self, context: Context) -> None:
        self.uow = context.uow
        self.seen: list[dt.datetime] = []
        """The ``now`` of every run, oldest first."""

    def count_organizations(self, now: dt.datetime) -> int:
        self.seen.append(now)
        with self.uow.read() as session:
            return session[ORGANIZATIONS].count()

    def jam(self, now: dt.datetime) -> int:
        raise RuntimeError("the tally machine is jammed")


COUNT = Chore(
    name="count the organizations",
    every=dt.timedelta(hours=1),
    run=Tallies.count_organizations,
    report="countedOrganizations",
    done="counted %d organization(s)",
)
JAM = Chore(
    name="jam the tally machine",
    every=dt.timedelta(hours=1),
    run=Tallies.jam,
    report="jammedTallies",
    done="jammed %d time(s)",
)

WITH_TALLIES = (*AREAS, Area(name="tallies", service=Tallies, chores=(COUNT,)))
"""Every area, and one more whose chore counts the organizations."""
WITH_A_JAM = (*AREAS, Area(name="tallies", service=Tallies, chores=(JAM, COUNT)))
"""Every area, and one more whose first chore always fails."""
