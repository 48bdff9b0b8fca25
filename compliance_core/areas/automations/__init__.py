"""Task Automations: versioned, declarative evidence collectors bound to a task.

An automation is an HTTP probe judged by assertions (status, JSON path, header, TLS certificate
expiry) or a Python callable installed under the ``compliance.automations`` entry points. Each
change of its definition publishes a new version; each run records the version it ran, who or
what asked (a caller's run now, or the schedule through the worker's chore), its status
(``passed``, ``failed``, ``error``), duration, output and reason. A failed run fails the task and
opens a finding; a passed run adds the evidence it saw to the task.

``models`` holds what is stored and answered, ``jsonpath`` the path subset assertions read,
``checks`` the prober port, the callables and the verdict, ``service`` the operations and the
chore. See docs/automations.md.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.registry import Area, Chore
from ...kernel.uow import Context
from .checks import AutomationSettings, Checks, Outcome, Prober, ProbeRequest, ProbeResponse, judge
from .models import (
    AUTOMATION_READ,
    AUTOMATION_RUN,
    AUTOMATION_RUNS,
    AUTOMATION_VERSIONS,
    AUTOMATION_WRITE,
    AUTOMATIONS,
    EVENTS,
    Assertion,
    AssertionType,
    Automation,
    AutomationCreated,
    AutomationDeleted,
    AutomationFilter,
    AutomationKind,
    AutomationPatch,
    AutomationRun,
    AutomationRunCompleted,
    AutomationRunStarted,
    AutomationUpdated,
    AutomationVersion,
    Definition,
    NewAutomation,
    ProbeMethod,
    RunFilter,
    RunStatus,
    RunTrigger,
    VersionFilter,
)
from .service import AutomationService

__all__ = [
    "AutomationKind",
    "ProbeMethod",
    "AssertionType",
    "RunStatus",
    "RunTrigger",
    "Assertion",
    "Definition",
    "Automation",
    "AutomationVersion",
    "AutomationRun",
    "NewAutomation",
    "AutomationPatch",
    "AutomationFilter",
    "VersionFilter",
    "RunFilter",
    "AutomationService",
    "AutomationSettings",
    "Prober",
    "ProbeRequest",
    "ProbeResponse",
    "Outcome",
    "judge",
    "AUTOMATIONS",
    "AUTOMATION_VERSIONS",
    "AUTOMATION_RUNS",
    "AUTOMATION_READ",
    "AUTOMATION_WRITE",
    "AUTOMATION_RUN",
    "AutomationCreated",
    "AutomationUpdated",
    "AutomationDeleted",
    "AutomationRunStarted",
    "AutomationRunCompleted",
    "AREA",
]


def _service(context: Context) -> AutomationService:
    settings = context.settings.get("automations") or AutomationSettings()
    service = AutomationService(
        context.uow, context.pages, Checks(settings), settings=context.settings, ports=context.ports
    )
    context.uow.react(service.react)
    return service


AREA = Area(
    name="automations",
    tag="Task Automations",
    service=_service,
    api=AutomationService,
    actions=(AUTOMATION_READ, AUTOMATION_WRITE, AUTOMATION_RUN),
    records=(AUTOMATIONS, AUTOMATION_VERSIONS, AUTOMATION_RUNS),
    events=EVENTS,
    chores=(
        Chore(
            name="run the task automations that fell due",
            every=dt.timedelta(minutes=5),
            run=AutomationService.run_due,
            report="automationRuns",
            done="ran %d scheduled task automation(s)",
        ),
    ),
)
