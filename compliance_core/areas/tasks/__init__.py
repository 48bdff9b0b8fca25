"""Tasks: the compliance work an organization does and the evidence it owes, each task with an
assignee, an approver, a due date and, for recurring work, a frequency; linked to the controls it
serves (whose status follows it), and to risks, vendors and policies.

Statuses: ``todo``, ``in_progress``, ``in_review``, ``done``, ``not_relevant``, ``failed``. A PATCH
may set any of them; the review moves ``in_review`` -> ``done`` (approve) or back to the status
before the submission (reject, with a reason). Completing recurring work (approve, complete, or
done set by hand) fixes its next due date, after the completion; the chore ``reopen_due`` reopens
it when that date arrives. Enabling a framework makes one task per task template of the framework.

``models`` holds what is stored and answered, ``rules`` what every write of a task follows,
``service`` the operations on one task, ``bulk`` those on many, and ``management`` the Task
Management area (reassign, reschedule, stats) over the same table. See docs/tasks.md.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.links import Linkable, LinkState
from ...kernel.outcomes import TaskVerdicts
from ...kernel.permissions import Actor
from ...kernel.registry import Area, Chore
from ...kernel.subjects import Commentable
from ...kernel.uow import Context, Tx
from .bulk import BulkAssignee, BulkDelete, BulkDeleted, BulkStatus, BulkSubmit, BulkSubmitted, BulkUpdated
from .models import (
    EVENTS,
    MAX_BULK,
    TASK_APPROVE,
    TASK_HISTORY,
    TASK_MINE,
    TASK_READ,
    TASK_WRITE,
    TASKS,
    ApproveTask,
    NewTask,
    RejectTask,
    SubmitForReview,
    Task,
    TaskApproved,
    TaskAutomationStatus,
    TaskCompleted,
    TaskCreated,
    TaskDeleted,
    TaskDepartment,
    TaskFilter,
    TaskPatch,
    TaskRejected,
    TaskReopened,
    TaskStatus,
    TaskStatusChanged,
    TaskSubmittedForReview,
    TaskUpdated,
)
from .rules import write
from .service import TaskService

__all__ = [
    "TaskStatus",
    "TaskDepartment",
    "TaskAutomationStatus",
    "Task",
    "NewTask",
    "TaskPatch",
    "TaskFilter",
    "SubmitForReview",
    "ApproveTask",
    "RejectTask",
    "BulkStatus",
    "BulkAssignee",
    "BulkDelete",
    "BulkSubmit",
    "BulkUpdated",
    "BulkDeleted",
    "BulkSubmitted",
    "TaskService",
    "TASKS",
    "MAX_BULK",
    "TASK_READ",
    "TASK_HISTORY",
    "TASK_WRITE",
    "TASK_APPROVE",
    "TASK_MINE",
    "TaskCreated",
    "TaskUpdated",
    "TaskDeleted",
    "TaskStatusChanged",
    "TaskSubmittedForReview",
    "TaskApproved",
    "TaskRejected",
    "TaskCompleted",
    "TaskReopened",
    "AREA",
]


def _serves(task: Task, now: dt.datetime) -> LinkState | None:
    """Done work implements its controls, and recurring work reopened for its next round still
    does by its last completion; work under way (started, in review, failed) will. Work nobody has
    touched yet, such as the tasks enabling a framework makes, is only planned: a control is not
    "in progress" because a to-do names it. Work judged not relevant counts for nothing."""
    if task.status is TaskStatus.NOT_RELEVANT:
        return None
    if task.status is TaskStatus.DONE or (task.status is TaskStatus.TODO and task.last_completed_at is not None):
        return LinkState.DONE
    return LinkState.PLANNED if task.status is TaskStatus.TODO else LinkState.PENDING


def _seen(task: Task, actor: Actor) -> bool:
    """Staff see the tasks assigned to them, as their own list shows them; readers see every task."""
    return actor.role in TASK_READ.roles or (actor.person_id is not None and task.assignee_id == actor.person_id)


def _fail(tx: Tx, organization_id: str, task_id: str, now: dt.datetime) -> None:
    """A failed automated check fails its task (``kernel.outcomes``), unless the task is failed
    already, judged not relevant, or gone."""
    task = tx[TASKS].get(organization_id, task_id)
    if task is None or task.status in (TaskStatus.FAILED, TaskStatus.NOT_RELEVANT):
        return
    write(tx, task, {"status": TaskStatus.FAILED}, TaskUpdated, now, check=False)


def _automated(tx: Tx, organization_id: str, task_id: str, automated: bool, now: dt.datetime) -> None:
    """A task's first enabled automation makes it ``automated``, and its last one disabled or
    deleted ``manual`` (``kernel.outcomes``): recorded as any change of the task (``task.updated``,
    audited), and not at all when the task has that status already or is gone."""
    task = tx[TASKS].get(organization_id, task_id)
    if task is None:
        return
    status = TaskAutomationStatus.AUTOMATED if automated else TaskAutomationStatus.MANUAL
    write(tx, task, {"automation_status": status}, TaskUpdated, now, check=False)


def _service(context: Context) -> TaskService:
    service = TaskService(context.uow, context.pages)
    context.uow.react(service.react)
    return service


AREA = Area(
    name="tasks",
    tag="Tasks",
    service=_service,
    api=TaskService,
    actions=(TASK_READ, TASK_MINE, TASK_HISTORY, TASK_WRITE, TASK_APPROVE),
    records=(TASKS,),
    events=EVENTS,
    links=(Linkable(kind="task", records=TASKS, state=_serves, updated=TaskUpdated),),
    ports=(
        Commentable(kind="task", records=TASKS, read=TASK_MINE, visible=_seen),
        TaskVerdicts(fail=_fail, automated=_automated),
    ),
    chores=(
        Chore(
            name="reopen recurring tasks that fell due",
            every=dt.timedelta(hours=1),
            run=TaskService.reopen_due,
            report="reopenedTasks",
            done="reopened %d recurring task(s) that fell due",
        ),
    ),
)
