"""The automation service: define a task's automations (each change of the definition a new
version), run one now, run the due ones on their schedules, and read their versions and runs.

A run is claimed inside a write (a ``running`` run naming the version; for the schedule, the
automation's next due time moves on in the same write), the check is made outside any write (it
may take up to its timeout), and a second write completes the run with its verdict and its
consequences: a failed run fails the task and opens a finding, a passed run adds evidence to the
task, through the ports those areas offer (``kernel.outcomes``). The task's automation status
follows its automations the same way: ``automated`` with its first enabled one, ``manual`` when the
last enabled one is disabled or deleted. Two workers running the chore at once claim each due
time once: the second finds the due time moved on inside its own write.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Protocol

import attrs

from ...kernel.clock import utc
from ...kernel.context_history import port_of
from ...kernel.directory import Directory, every
from ...kernel.errors import NotFound, ValidationError
from ...kernel.events import Event
from ...kernel.operations import Once, operation, page_of
from ...kernel.outbound import check_target, private_targets_allowed
from ...kernel.outcomes import EvidenceCollector, FailedCheck, FindingRaiser, PassedCheck, TaskVerdicts
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import changed, fetch
from ...kernel.recurrence import KEYWORDS, next_occurrence, normalised_frequency
from ...kernel.registry import Repo, Route, Session
from ...kernel.severities import Severity
from ...kernel.uow import Tx, UnitOfWork
from .checks import Checks, Outcome
from .models import (
    AUTOMATION_READ,
    AUTOMATION_RUN,
    AUTOMATION_RUNS,
    AUTOMATION_VERSIONS,
    AUTOMATION_WRITE,
    AUTOMATIONS,
    DEFINITION_FIELDS,
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
    RunFilter,
    RunStatus,
    RunTrigger,
    VersionFilter,
    assertion_errors,
)

__all__ = ["AutomationService", "TASK_DELETED", "ABANDONED_AFTER"]

log = logging.getLogger("compliance_core.automations")

ABANDONED_AFTER = dt.timedelta(hours=1)
"""A run still ``running`` this long after it started was left by a process that stopped (a
check takes at most 30 seconds): the chore ends it in ``error``."""

TASK_DELETED = "task.deleted"
"""The event type the tasks area records when a task is deleted: its automations go with it."""


class _Task(Protocol):
    @property
    def title(self) -> str: ...


class _Tasks(Protocol):
    def get(self, organization_id: str, item_id: str) -> _Task | None: ...


_TASKS: Repo[_Tasks] = Repo("tasks")
"""The tasks area's table, read through this handle (never imported): the task an automation is
bound to must exist."""

_ALL = "/v1/tasks/{task_id}/automations"
_ONE = _ALL + "/{automation_id}"

_EXAMPLE = {
    "name": "Status page answers",
    "description": "The public status page is up and reports every component operational.",
    "url": "https://status.example.invalid/api/v2/status.json",
    "timeoutSeconds": 2,
    "assertions": [
        {"type": "status_equals", "status": 200},
        {"type": "json_path_equals", "path": "$.status.indicator", "value": "none"},
    ],
    "schedule": "monthly",
    "changelog": "First version: status and indicator.",
}
"""A probe that works offline too: ``.invalid`` never resolves (RFC 6761), so running it ends at
once in an ``error`` run that says so."""


def _task(session: Session, organization_id: str, task_id: str) -> _Task:
    task = session[_TASKS].get(organization_id, task_id)
    if task is None:
        raise NotFound.resource("task", task_id)
    return task


def _automation(session: Session, organization_id: str, task_id: str, automation_id: str) -> Automation:
    """The task's automation, or a 404 (another task's automation is not this task's)."""
    _task(session, organization_id, task_id)
    automation = fetch(session, AUTOMATIONS, organization_id, automation_id)
    if automation.task_id != task_id:
        raise NotFound.resource(AUTOMATIONS.kind, automation_id)
    return automation


def _next_due(schedule: str | None, enabled: bool, now: dt.datetime) -> dt.datetime | None:
    """00:00 UTC of the schedule's next day after today (None: not scheduled, or disabled)."""
    if schedule is None or not enabled:
        return None
    day = next_occurrence(schedule, now.date())
    return None if day is None else dt.datetime.combine(day, dt.time(), dt.UTC)


@attrs.define
class AutomationService:
    uow: UnitOfWork
    pages: PageCache
    checks: Checks
    settings: Any
    ports: tuple[Any, ...] = ()

    # -- a task's automations ----------------------------------------------------------------

    @operation(
        AUTOMATION_READ,
        Route("GET", _ALL, "List the automations defined on a task"),
        paged=True,
        result=Automation,
        lists=AUTOMATIONS,
    )
    def list(self, actor: Actor, task_id: str, page: PageRequest | None = None) -> Page[Automation]:
        with self.uow.read() as session:
            _task(session, actor.organization_id, task_id)
        return page_of(self, AUTOMATIONS, actor, AutomationFilter(task_id=task_id), page)

    @operation(
        AUTOMATION_WRITE,
        Route("POST", _ALL, "Add an automation to a task (its first version)", 201),
        body=NewAutomation,
        idempotent=True,
        result=Automation,
        example=_EXAMPLE,
    )
    def add(self, actor: Actor, task_id: str, data: NewAutomation, once: Once) -> Automation:
        """Every field may be left out: an empty automation named "<task title> - Evidence
        Collection" is defined later (its runs end in ``error`` until then)."""
        now = self.uow.clock.now()
        definition = self._checked(Definition(**{name: getattr(data, name) for name in DEFINITION_FIELDS}))

        def create() -> Automation:
            task = _task(tx, actor.organization_id, task_id)
            automation = Automation(
                id=self.uow.ids.new(AUTOMATIONS.prefix),
                organization_id=actor.organization_id,
                task_id=task_id,
                name=data.name if data.name is not None else f"{task.title} - Evidence Collection"[:255],
                description=data.description,
                is_enabled=data.is_enabled,
                next_run_at=_next_due(definition.schedule, data.is_enabled, now),
                created_by=actor.principal,
                created_at=now,
                updated_at=now,
                **attrs.asdict(definition, recurse=False),
            )
            tx[AUTOMATIONS].add(automation)
            tx.record(AutomationCreated(organization_id=actor.organization_id, subject=automation))
            self._publish(tx, automation, actor.principal, data.changelog, now)
            if automation.is_enabled:
                self._follow(tx, automation, now)
            return automation

        with self.uow.write(actor) as tx:
            return once(tx, data, now, create)

    @operation(
        AUTOMATION_READ,
        Route("GET", _ALL + "/runs", "List the runs of every automation of a task, newest first"),
        paged=True,
        result=AutomationRun,
        lists=AUTOMATION_RUNS,
    )
    def runs(self, actor: Actor, task_id: str, page: PageRequest | None = None) -> Page[AutomationRun]:
        with self.uow.read() as session:
            _task(session, actor.organization_id, task_id)
        return page_of(self, AUTOMATION_RUNS, actor, RunFilter(task_id=task_id), page)

    @operation(AUTOMATION_READ, Route("GET", _ONE, "Read one automation"), result=Automation)
    def get(self, actor: Actor, task_id: str, automation_id: str) -> Automation:
        with self.uow.read() as session:
            return _automation(session, actor.organization_id, task_id, automation_id)

    @operation(
        AUTOMATION_WRITE,
        Route("PATCH", _ONE, "Change an automation (a change of its definition publishes a new version)"),
        body=AutomationPatch,
        result=Automation,
        example={
            "assertions": [{"type": "status_in", "statuses": [200, 204]}],
            "changelog": "Accept 204 from the new status endpoint.",
        },
    )
    def update(self, actor: Actor, task_id: str, automation_id: str, patch: AutomationPatch) -> Automation:
        changes = patch.changes()
        changelog = changes.pop("changelog", "")
        with self.uow.write(actor) as tx:
            current = _automation(tx, actor.organization_id, task_id, automation_id)
            now = self.uow.clock.now()
            definition = Definition(**{name: changes.get(name, getattr(current, name)) for name in DEFINITION_FIELDS})
            republished = definition != current.definition
            if republished:
                definition = self._checked(definition)
                changes.update(attrs.asdict(definition, recurse=False))
                changes["version"] = current.version + 1
            enabled = changes.get("is_enabled", current.is_enabled)
            if republished or enabled != current.is_enabled:
                changes["next_run_at"] = _next_due(definition.schedule, enabled, now)
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=now)
            tx[AUTOMATIONS].update(updated)
            tx.record(AutomationUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
            if republished:
                self._publish(tx, updated, actor.principal, changelog, now)
            if "is_enabled" in previous:
                self._follow(tx, updated, now)
            return updated

    @operation(AUTOMATION_WRITE, Route("DELETE", _ONE, "Delete an automation with its versions and runs"), result=None)
    def delete(self, actor: Actor, task_id: str, automation_id: str) -> None:
        with self.uow.write(actor) as tx:
            automation = _automation(tx, actor.organization_id, task_id, automation_id)
            self._delete(tx, automation)
            if automation.is_enabled:
                self._follow(tx, attrs.evolve(automation, is_enabled=False), self.uow.clock.now())

    @operation(
        AUTOMATION_READ,
        Route("GET", _ONE + "/versions", "List an automation's published versions, newest first"),
        paged=True,
        result=AutomationVersion,
        lists=AUTOMATION_VERSIONS,
    )
    def versions(
        self, actor: Actor, task_id: str, automation_id: str, page: PageRequest | None = None
    ) -> Page[AutomationVersion]:
        with self.uow.read() as session:
            _automation(session, actor.organization_id, task_id, automation_id)
        return page_of(self, AUTOMATION_VERSIONS, actor, VersionFilter(automation_id=automation_id), page)

    @operation(
        AUTOMATION_READ,
        Route("GET", _ONE + "/runs", "An automation's run log, newest first"),
        paged=True,
        result=AutomationRun,
        lists=AUTOMATION_RUNS,
    )
    def run_log(
        self, actor: Actor, task_id: str, automation_id: str, page: PageRequest | None = None
    ) -> Page[AutomationRun]:
        with self.uow.read() as session:
            _automation(session, actor.organization_id, task_id, automation_id)
        return page_of(self, AUTOMATION_RUNS, actor, RunFilter(automation_id=automation_id), page)

    @operation(
        AUTOMATION_RUN,
        Route("POST", _ONE + "/run", "Run an automation now (answers the completed run)", 201),
        result=AutomationRun,
    )
    def run(self, actor: Actor, task_id: str, automation_id: str) -> AutomationRun:
        """Runs its current version, enabled or not, and answers the run with its verdict: a run
        that fails or cannot be made is still a run (``failed``, ``error``), never an error of
        this call."""
        with self.uow.write(actor) as tx:
            automation = _automation(tx, actor.organization_id, task_id, automation_id)
            claimed = self._claim(tx, automation, RunTrigger.PERSON, actor.principal, None)
        outcome = self._check(automation, claimed)
        return self._complete(actor, automation, claimed, outcome)

    # -- the schedule --------------------------------------------------------------------------

    def run_due(self, now: dt.datetime | None = None) -> int:
        """Run every enabled automation whose scheduled time has come, in every organization: each
        due time is claimed in its organization's write, which moves the automation's next due
        time on, so a second run of the chore (another worker, at the same moment) finds nothing
        due and runs nothing twice. A due time missed while no worker ran is run once, late."""
        now = utc(now) if now is not None else self.uow.clock.now()
        with self.uow.read() as session:
            organizations = Directory(session).organization_ids()
        done = 0
        for organization_id in organizations:
            with self.uow.write(None) as tx:
                self._abandon(tx, organization_id, now)
                claimed = []
                for automation in every(tx[AUTOMATIONS], organization_id, AutomationFilter(is_enabled=True)):
                    due = automation.next_run_at
                    if due is None or due > now:
                        continue
                    moved = attrs.evolve(automation, next_run_at=_next_due(automation.schedule, True, now))
                    tx[AUTOMATIONS].update(moved)
                    claimed.append((moved, self._claim(tx, moved, RunTrigger.SCHEDULE, None, due)))
            for automation, run in claimed:
                self._complete(None, automation, run, self._check(automation, run))
                done += 1
        return done

    # -- reactions -----------------------------------------------------------------------------

    def react(self, tx: Tx, event: Event) -> None:
        """Inside the write deleting a task: its automations go with it (versions and runs too).
        The task's automation status is left alone: the task is gone."""
        if event.type != TASK_DELETED:
            return
        for automation in every(tx[AUTOMATIONS], event.organization_id, AutomationFilter(task_id=event.subject_id)):
            self._delete(tx, automation)

    # -- helpers -------------------------------------------------------------------------------

    def _checked(self, definition: Definition) -> Definition:
        """The definition with its schedule normalised, or a 400 naming what is wrong: a URL the
        platform may not reach (checked again, against every resolved address, at each run), an
        unknown callable (the error lists the installed ones), a field the kind does not read."""
        errors: list[ValidationError] = []
        schedule = definition.schedule
        if schedule is not None and schedule not in KEYWORDS:
            try:
                schedule = normalised_frequency(schedule)
            except ValueError as refused:
                errors.append(ValidationError.field("schedule", definition.schedule, str(refused)))
        errors += assertion_errors(definition.assertions)
        if definition.kind is AutomationKind.HTTP_PROBE:
            if definition.callable_name is not None:
                errors.append(
                    ValidationError.field(
                        "callableName", definition.callable_name, "is read by callable automations only"
                    )
                )
            if definition.url is not None:
                try:
                    check_target(definition.url, allow_private=private_targets_allowed(self.settings), resolver=None)
                except ValidationError as error:
                    errors.append(error)
            elif definition.assertions:
                errors.append(ValidationError.field("url", None, "is required when assertions are given"))
        else:
            if definition.url is not None or definition.assertions:
                field, value = ("url", definition.url) if definition.url is not None else ("assertions", "...")
                errors.append(ValidationError.field(field, value, "is read by http_probe automations only"))
            if definition.callable_name is None:
                errors.append(ValidationError.field("callableName", None, "is required for a callable automation"))
            else:
                try:
                    self.checks.check_callable(definition.callable_name)
                except ValidationError as error:
                    errors.append(error)
        if errors:
            raise ValidationError.every(errors)
        return attrs.evolve(definition, schedule=schedule)

    def _follow(self, tx: Tx, automation: Automation, now: dt.datetime) -> None:
        """After ``automation`` became enabled (added so, or switched on) or stopped being so
        (switched off, or deleted: passed as disabled), the task follows when that crossed
        between none of its automations enabled and some: its first enabled automation makes it
        ``automated``, its last one gone ``manual``, through the port the tasks area offers. Any
        other change leaves it alone, so a status a person set by hand holds until the next
        crossing."""
        verdicts = port_of(self.ports, TaskVerdicts)
        if verdicts is None:
            return
        organization_id = automation.organization_id
        enabled = AutomationFilter(task_id=automation.task_id, is_enabled=True)
        _, total = tx[AUTOMATIONS].list(organization_id, enabled, PageRequest(per_page=1))
        if total == (1 if automation.is_enabled else 0):
            verdicts.automated(tx, organization_id, automation.task_id, automation.is_enabled, now)

    def _publish(self, tx: Tx, automation: Automation, by: str | None, changelog: str, now: dt.datetime) -> None:
        version = AutomationVersion(
            id=self.uow.ids.new(AUTOMATION_VERSIONS.prefix),
            organization_id=automation.organization_id,
            task_id=automation.task_id,
            automation_id=automation.id,
            version=automation.version,
            definition=automation.definition,
            published_by=by,
            changelog=changelog,
            created_at=now,
        )
        tx[AUTOMATION_VERSIONS].add(version)

    def _delete(self, tx: Tx, automation: Automation) -> None:
        organization_id = automation.organization_id
        for run in every(tx[AUTOMATION_RUNS], organization_id, RunFilter(automation_id=automation.id)):
            tx[AUTOMATION_RUNS].delete(organization_id, run.id)
        for version in every(tx[AUTOMATION_VERSIONS], organization_id, VersionFilter(automation_id=automation.id)):
            tx[AUTOMATION_VERSIONS].delete(organization_id, version.id)
        tx[AUTOMATIONS].delete(organization_id, automation.id)
        tx.record(AutomationDeleted(organization_id=organization_id, subject=automation))

    def _claim(
        self, tx: Tx, automation: Automation, trigger: RunTrigger, by: str | None, due: dt.datetime | None
    ) -> AutomationRun:
        now = self.uow.clock.now()
        run = AutomationRun(
            id=self.uow.ids.new(AUTOMATION_RUNS.prefix),
            organization_id=automation.organization_id,
            task_id=automation.task_id,
            automation_id=automation.id,
            automation_name=automation.name,
            version=automation.version,
            triggered_by=trigger,
            triggered_by_id=by,
            due_at=due,
            started_at=now,
            created_at=now,
            updated_at=now,
        )
        tx[AUTOMATION_RUNS].add(run)
        tx.record(AutomationRunStarted(organization_id=run.organization_id, subject=run))
        return run

    def _check(self, automation: Automation, run: AutomationRun) -> Outcome:
        context = {
            "organization_id": automation.organization_id,
            "task_id": automation.task_id,
            "automation_id": automation.id,
            "automation_name": automation.name,
            "run_id": run.id,
            "version": run.version,
            "timeout_seconds": automation.timeout_seconds,
            "started_at": run.started_at.isoformat(),
        }
        allow_private = private_targets_allowed(self.settings)
        return self.checks.run(automation.definition, context, allow_private, self.uow.clock.now())

    def _abandon(self, tx: Tx, organization_id: str, now: dt.datetime) -> None:
        """End in ``error`` the runs a process claimed and never completed (it stopped while
        the check ran): a run is never left ``running`` for ever."""
        for run in every(tx[AUTOMATION_RUNS], organization_id, RunFilter(status=RunStatus.RUNNING)):
            if run.started_at > now - ABANDONED_AFTER:
                continue
            ended = attrs.evolve(
                run,
                status=RunStatus.ERROR,
                reason="abandoned: the process running the check stopped before completing it",
                completed_at=now,
                updated_at=now,
            )
            tx[AUTOMATION_RUNS].update(ended)
            tx.record(
                AutomationRunCompleted(organization_id=organization_id, subject=ended, previous={"status": run.status})
            )

    def _complete(
        self, actor: Actor | None, automation: Automation, run: AutomationRun, outcome: Outcome
    ) -> AutomationRun:
        """Record the verdict and its consequences; when those are refused (a store error, a
        port's rule), the run still ends, in ``error``, saying why."""
        try:
            return self._record(actor, automation, run, outcome)
        except Exception as error:
            log.exception("could not record the outcome of automation run %s", run.id)
            reason = f"the run's outcome could not be recorded ({type(error).__name__}: {error})"[:2000]
            failed = attrs.evolve(outcome, status=RunStatus.ERROR, reason=reason)
            return self._record(actor, automation, run, failed)

    def _record(
        self, actor: Actor | None, automation: Automation, run: AutomationRun, outcome: Outcome
    ) -> AutomationRun:
        organization_id = run.organization_id
        with self.uow.write(actor) as tx:
            now = self.uow.clock.now()
            finished = attrs.evolve(
                run,
                status=outcome.status,
                reason=outcome.reason,
                output=outcome.output,
                duration_ms=outcome.duration_ms,
                completed_at=now,
                updated_at=now,
            )
            stored = tx[AUTOMATION_RUNS].get(organization_id, run.id)
            current = tx[AUTOMATIONS].get(organization_id, automation.id)
            if stored is None or stored.status is not RunStatus.RUNNING or current is None:
                return finished  # deleted (with its automation) or completed while the check ran
            by = actor.principal if actor is not None else None
            if outcome.status is RunStatus.FAILED:
                finished = self._failed(tx, current, finished, by, now)
            elif outcome.status is RunStatus.PASSED:
                finished = self._passed(tx, current, finished, by, now)
            tx[AUTOMATION_RUNS].update(finished)
            tx.record(
                AutomationRunCompleted(
                    organization_id=organization_id, subject=finished, previous={"status": RunStatus.RUNNING}
                )
            )
            changes: dict[str, Any] = {"last_run_status": finished.status, "last_run_at": now}
            if finished.finding_id is not None:
                changes["open_finding_id"] = finished.finding_id
            if finished.evidence_id is not None:
                changes["evidence_id"] = finished.evidence_id
            previous = changed(current, changes)
            if previous:
                updated = attrs.evolve(current, **changes, updated_at=now)
                tx[AUTOMATIONS].update(updated)
                tx.record(AutomationUpdated(organization_id=organization_id, subject=updated, previous=previous))
            return finished

    def _failed(
        self, tx: Tx, automation: Automation, run: AutomationRun, by: str | None, now: dt.datetime
    ) -> AutomationRun:
        """The task fails and a finding is opened (or the one still open for this automation
        named again), each by its own area through the port it offers."""
        verdicts = port_of(self.ports, TaskVerdicts)
        if verdicts is not None:
            verdicts.fail(tx, run.organization_id, run.task_id, now)
        raiser = port_of(self.ports, FindingRaiser)
        if raiser is None:
            return run
        check = FailedCheck(
            organization_id=run.organization_id,
            task_id=run.task_id,
            title=f"Automation failed: {automation.name}"[:255],
            content=f"{run.reason}\n\nRun {run.id} of version {run.version}.\n\n{run.output}"[:5000],
            severity=Severity.MEDIUM,
            created_by=by,
            open_finding_id=automation.open_finding_id,
            at=now,
        )
        return attrs.evolve(run, finding_id=raiser.raise_(tx, self.uow.ids, check))

    def _passed(
        self, tx: Tx, automation: Automation, run: AutomationRun, by: str | None, now: dt.datetime
    ) -> AutomationRun:
        """The task gains a piece of evidence holding what the check saw."""
        collector = port_of(self.ports, EvidenceCollector)
        if collector is None:
            return run
        check = PassedCheck(
            organization_id=run.organization_id,
            task_id=run.task_id,
            title=f"{automation.name} (version {run.version})"[:255],
            note=f"{run.reason}\n\n{run.output}",
            reference=f"Collected by the automation {automation.name} ({automation.id}).",
            collected_at=now,
            created_by=by,
            evidence_id=automation.evidence_id,
        )
        return attrs.evolve(run, evidence_id=collector.collect(tx, self.uow.ids, check))
