"""Task management: the work on many tasks at once that a compliance lead does: hand a person's
open tasks to someone else, move due dates, and see where the work stands (per status, assignee
and framework). Owners and admins change; owners, admins and auditors read the stats.

A separate area of the same table as ``Tasks`` (the spec's "Task Management" group): it writes
tasks through the same rules (``rules.write``), so every task it changes records the same events
and audit entries as a change made one task at a time.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import attrs

from ...kernel.directory import Directory, every
from ...kernel.errors import ValidationError
from ...kernel.operations import operation
from ...kernel.page_cache import PageCache
from ...kernel.permissions import MANAGERS, READERS, Action, Actor
from ...kernel.registry import Area, Route
from ...kernel.uow import UnitOfWork
from ...kernel.validation import integer, text
from .bulk import rows
from .models import MAX_BULK, OPEN, TASKS, TaskFilter, TaskStatus, TaskUpdated, task_ids
from .rules import write

__all__ = [
    "Reassign",
    "Reassigned",
    "Reschedule",
    "Rescheduled",
    "StatusCount",
    "AssigneeCount",
    "FrameworkCount",
    "TaskStats",
    "TaskManagementService",
    "TASK_MANAGE",
    "TASK_STATS",
    "AREA",
]

TASK_MANAGE = Action("task_management:write", MANAGERS)
TASK_STATS = Action("task_management:read", READERS)

_ALL = "/v1/task-management"
MAX_SHIFT = 3650
"""Days a reschedule moves due dates, either way (ten years)."""


@attrs.frozen(kw_only=True)
class Reassign:
    from_person_id: str = attrs.field(converter=text(64))
    to_person_id: str = attrs.field(converter=text(64))


@attrs.frozen(kw_only=True)
class Reassigned:
    reassigned_count: int
    task_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Reschedule:
    """Move the due date of each task named by the same number of days (negative: earlier; 0
    moves nothing, and writes nothing)."""

    task_ids: tuple[str, ...] = attrs.field(converter=task_ids)
    days: int = attrs.field(converter=integer(-MAX_SHIFT, MAX_SHIFT))


@attrs.frozen(kw_only=True)
class Rescheduled:
    rescheduled_count: int


@attrs.frozen(kw_only=True)
class StatusCount:
    status: TaskStatus
    count: int


@attrs.frozen(kw_only=True)
class AssigneeCount:
    assignee_id: str | None
    """None: the tasks nobody is assigned."""
    name: str | None
    count: int
    open: int
    """Of those, the ones still to do (todo, in progress, in review, failed)."""


@attrs.frozen(kw_only=True)
class FrameworkCount:
    framework_id: str | None
    """None: tasks of no framework (made by hand)."""
    count: int
    done: int


@attrs.frozen(kw_only=True)
class TaskStats:
    total: int
    open: int
    overdue: int
    """Open tasks whose due date is before today."""
    by_status: tuple[StatusCount, ...]
    """Every status, in the order of the workflow, with 0 where none is."""
    by_assignee: tuple[AssigneeCount, ...]
    by_framework: tuple[FrameworkCount, ...]


@attrs.define
class TaskManagementService:
    uow: UnitOfWork
    pages: PageCache

    @operation(
        TASK_MANAGE,
        Route("POST", _ALL + "/reassign", "Hand every open task of one person to another"),
        body=Reassign,
        result=Reassigned,
        example={"fromPersonId": "mem_...", "toPersonId": "mem_..."},
    )
    def reassign(self, actor: Actor, data: Reassign) -> Reassigned:
        """Every task assigned to ``fromPersonId`` that is still open (todo, in progress, in
        review, failed) goes to ``toPersonId``, in one write; done and not relevant tasks keep
        who did them. Both must be people of the organization."""
        if data.from_person_id == data.to_person_id:
            raise ValidationError.field("toPersonId", data.to_person_id, "must differ from fromPersonId")
        organization_id = actor.organization_id
        with self.uow.write(actor) as tx:
            directory = Directory(tx)
            errors = []
            for field, person_id in (("fromPersonId", data.from_person_id), ("toPersonId", data.to_person_id)):
                try:
                    directory.check_member(organization_id, field, person_id)
                except ValidationError as error:
                    errors.append(error)
            if errors:
                raise ValidationError.every(errors)
            held = every(tx[TASKS], organization_id, TaskFilter(assignee_id=data.from_person_id))
            now = self.uow.clock.now()
            moved = [
                write(tx, task, {"assignee_id": data.to_person_id}, TaskUpdated, now, check=False).id
                for task in held
                if task.status in OPEN
            ]
        return Reassigned(reassigned_count=len(moved), task_ids=tuple(moved))

    @operation(
        TASK_MANAGE,
        Route("POST", _ALL + "/reschedule", f"Move the due dates of up to {MAX_BULK} tasks by a number of days"),
        body=Reschedule,
        result=Rescheduled,
        example={"taskIds": ["tsk_..."], "days": 14},
    )
    def reschedule(self, actor: Actor, data: Reschedule) -> Rescheduled:
        """All or nothing: an id naming no task, or a task with no due date to move, refuses the
        whole request, every such entry listed (``taskIds[2]``)."""
        with self.uow.write(actor) as tx:
            tasks = rows(tx, actor.organization_id, data.task_ids)
            place = {task_id: index for index, task_id in reversed(list(enumerate(data.task_ids)))}
            undated = [
                ValidationError.field(f"taskIds[{place[task.id]}]", task.id, "has no due date to move")
                for task in tasks
                if task.due_date is None
            ]
            if undated:
                raise ValidationError.every(undated)
            now = self.uow.clock.now()
            for task in tasks:
                assert task.due_date is not None
                try:
                    moved = task.due_date + dt.timedelta(days=data.days)
                except OverflowError:
                    raise ValidationError.field("days", data.days, "moves a due date past the calendar") from None
                write(tx, task, {"due_date": moved}, TaskUpdated, now, check=False)
        return Rescheduled(rescheduled_count=len(tasks))

    @operation(
        TASK_STATS,
        Route("GET", _ALL + "/stats", "How many tasks there are per status, assignee and framework"),
        result=TaskStats,
    )
    def stats(self, actor: Actor) -> TaskStats:
        """Counted over every task of the organization; assignees and frameworks with the most
        tasks first."""
        today = self.uow.clock.now().date()
        with self.uow.read() as session:
            tasks = every(session[TASKS], actor.organization_id, TaskFilter())
            names = Directory(session).names(actor.organization_id, (task.assignee_id for task in tasks))
        statuses = Counter(task.status for task in tasks)
        assigned = Counter(task.assignee_id for task in tasks)
        assigned_open = Counter(task.assignee_id for task in tasks if task.status in OPEN)
        frameworks = Counter(task.framework_id for task in tasks)
        frameworks_done = Counter(task.framework_id for task in tasks if task.status is TaskStatus.DONE)
        return TaskStats(
            total=len(tasks),
            open=sum(1 for task in tasks if task.status in OPEN),
            overdue=sum(
                1 for task in tasks if task.status in OPEN and task.due_date is not None and task.due_date < today
            ),
            by_status=tuple(StatusCount(status=status, count=statuses[status]) for status in TaskStatus),
            by_assignee=tuple(
                AssigneeCount(
                    assignee_id=person_id,
                    name=None if person_id is None else names.get(person_id),
                    count=count,
                    open=assigned_open[person_id],
                )
                for person_id, count in sorted(assigned.items(), key=lambda item: (-item[1], item[0] or ""))
            ),
            by_framework=tuple(
                FrameworkCount(framework_id=framework_id, count=count, done=frameworks_done[framework_id])
                for framework_id, count in sorted(frameworks.items(), key=lambda item: (-item[1], item[0] or ""))
            ),
        )


AREA = Area(
    name="task_management",
    tag="Task Management",
    service=lambda context: TaskManagementService(context.uow, context.pages),
    api=TaskManagementService,
    actions=(TASK_MANAGE, TASK_STATS),
)
