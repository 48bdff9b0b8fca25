"""What the Tasks area stores and answers: the task, its commands, its table, actions and events."""

from __future__ import annotations

import datetime as dt
import enum
import re
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, MANAGERS, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.recurrence import optional_frequency
from ...kernel.validation import (
    Checked,
    Patch,
    Unset,
    blank_text,
    choice,
    date,
    id_list,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    text,
    wire_name,
)

__all__ = [
    "TaskStatus",
    "TaskDepartment",
    "TaskAutomationStatus",
    "OPEN",
    "Task",
    "NewTask",
    "TaskPatch",
    "TaskFilter",
    "SubmitForReview",
    "ApproveTask",
    "RejectTask",
    "TASKS",
    "MAX_BULK",
    "MAX_LINKS",
    "task_ids",
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
    "EVENTS",
]


class TaskStatus(enum.StrEnum):
    """The reference's task statuses."""

    TODO = "todo"
    IN_PROGRESS = "in_progress"
    IN_REVIEW = "in_review"
    DONE = "done"
    NOT_RELEVANT = "not_relevant"
    FAILED = "failed"


OPEN = frozenset({TaskStatus.TODO, TaskStatus.IN_PROGRESS, TaskStatus.IN_REVIEW, TaskStatus.FAILED})
"""Statuses of work still to do: what reassigning a person's tasks moves."""


class TaskDepartment(enum.StrEnum):
    """The reference's departments (a task made from a template takes the template's)."""

    NONE = "none"
    ADMIN = "admin"
    GOV = "gov"
    HR = "hr"
    IT = "it"
    ITSM = "itsm"
    QMS = "qms"


class TaskAutomationStatus(enum.StrEnum):
    """Whether the task's evidence is collected by hand or by an automation."""

    MANUAL = "manual"
    AUTOMATED = "automated"


MAX_LINKS = 200
"""Controls, risks, vendors or policies one task names, each."""
MAX_BULK = 500
"""Tasks one bulk request names (``taskIds``): larger sets are sent in several requests."""


@attrs.frozen(kw_only=True)
class Task:
    """A piece of compliance work with its evidence due: who does it, who approves it, when."""

    id: str
    organization_id: str
    title: str
    description: str = ""
    status: TaskStatus = TaskStatus.TODO
    assignee_id: str | None = None
    """A person of the organization."""
    approver_id: str | None = None
    """The active owner or admin asked to approve the work (set on submission for review)."""
    due_date: dt.date | None = None
    frequency: str | None = None
    """monthly, quarterly, yearly or an RFC 5545 recurrence rule; None: the work is done once."""
    department: TaskDepartment = TaskDepartment.NONE
    automation_status: TaskAutomationStatus = TaskAutomationStatus.MANUAL
    task_template_id: str | None = None
    """The task template it was made from (enabling a framework makes one task per template)."""
    framework_id: str | None = None
    """The framework of that template: stats and lists group tasks by it."""
    control_ids: tuple[str, ...] = ()
    """Controls the task serves: their status follows the task's (open: in progress, done)."""
    risk_ids: tuple[str, ...] = ()
    vendor_ids: tuple[str, ...] = ()
    policy_ids: tuple[str, ...] = ()
    previous_status: TaskStatus | None = None
    """The status before the submission for review, which a rejection restores."""
    review_comment: str | None = None
    """The comment of the submission, or the reason of the last rejection."""
    approved_at: dt.datetime | None = None
    review_date: dt.date | None = None
    """When the work was last reviewed (approved, or set by hand)."""
    last_completed_at: dt.datetime | None = None
    next_due_date: dt.date | None = None
    """For recurring work that is done: the next date it falls due, always after the completion.
    The task reopens (``todo``, due that day) when the date arrives."""
    created_at: dt.datetime
    updated_at: dt.datetime


_ID_FORM = re.compile(r"^[a-z]+(_[a-z]+)?_[0-9a-zA-Z]+$")


def _task_ids(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
    """Every malformed entry is listed at once (``taskIds[3]``), as a bulk request's bad rows are."""
    name = wire_name(field.name)
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field(name, value, "must be a list of task ids")
    if not value:
        raise ValidationError.field(name, [], "must name at least one task")
    if len(value) > MAX_BULK:
        raise ValidationError.field(name, len(value), f"at most {MAX_BULK} tasks per request")
    bad = [
        ValidationError.field(f"{name}[{index}]", item, "must be a task id such as tsk_...")
        for index, item in enumerate(value)
        if not isinstance(item, str) or len(item) > 64 or not _ID_FORM.match(item)
    ]
    if bad:
        raise ValidationError.every(bad)
    return tuple(value)


task_ids = register_schema(
    Checked(_task_ids, takes_field=True),
    {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_BULK,
        "items": {"type": "string", "pattern": _ID_FORM.pattern, "maxLength": 64},
        "description": f"1 to {MAX_BULK} task ids; a repeated id counts once",
    },
)


@attrs.frozen(kw_only=True)
class NewTask:
    title: str = attrs.field(converter=text(255))
    description: str = attrs.field(default="", converter=blank_text(5000))
    status: TaskStatus = attrs.field(default=TaskStatus.TODO, converter=choice(TaskStatus))
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    due_date: dt.date | None = attrs.field(default=None, converter=date)
    frequency: str | None = attrs.field(default=None, converter=optional_frequency)
    department: TaskDepartment = attrs.field(default=TaskDepartment.NONE, converter=choice(TaskDepartment))
    automation_status: TaskAutomationStatus = attrs.field(
        default=TaskAutomationStatus.MANUAL, converter=choice(TaskAutomationStatus)
    )
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    control_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))
    risk_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))
    vendor_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))
    policy_ids: tuple[str, ...] = attrs.field(default=(), converter=id_list(MAX_LINKS))


_NEW = attrs.fields(NewTask)


@attrs.frozen(kw_only=True)
class TaskPatch(Patch):
    """Any status may be set by hand (as the reference allows); the review's own fields
    (previous status, approval time) change only through the review transitions."""

    title: str | Unset = patch_field(_NEW.title.converter)
    description: str | Unset = patch_field(_NEW.description.converter)
    status: TaskStatus | Unset = patch_field(_NEW.status.converter)
    assignee_id: str | None | Unset = patch_field(_NEW.assignee_id.converter)
    approver_id: str | None | Unset = patch_field(optional_id)
    due_date: dt.date | None | Unset = patch_field(_NEW.due_date.converter)
    frequency: str | None | Unset = patch_field(_NEW.frequency.converter)
    department: TaskDepartment | Unset = patch_field(_NEW.department.converter)
    automation_status: TaskAutomationStatus | Unset = patch_field(_NEW.automation_status.converter)
    review_date: dt.date | None | Unset = patch_field(date)
    control_ids: tuple[str, ...] | Unset = patch_field(_NEW.control_ids.converter)
    risk_ids: tuple[str, ...] | Unset = patch_field(_NEW.risk_ids.converter)
    vendor_ids: tuple[str, ...] | Unset = patch_field(_NEW.vendor_ids.converter)
    policy_ids: tuple[str, ...] | Unset = patch_field(_NEW.policy_ids.converter)


@attrs.frozen(kw_only=True)
class TaskFilter(Filter):
    status: TaskStatus | None = attrs.field(default=None, converter=optional_choice(TaskStatus))
    assignee_id: str | None = attrs.field(default=None, converter=optional_text(100))
    approver_id: str | None = attrs.field(default=None, converter=optional_text(100))
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    department: TaskDepartment | None = attrs.field(default=None, converter=optional_choice(TaskDepartment))
    task_template_id: str | None = attrs.field(default=None, converter=optional_text(100))


@attrs.frozen(kw_only=True)
class SubmitForReview:
    approver_id: str | None = attrs.field(default=None, converter=optional_id)
    """An active owner or admin who decides; None leaves the decision to any owner or admin."""
    comment: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class ApproveTask:
    comment: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class RejectTask:
    reason: str = attrs.field(converter=text(2000))
    """Why: a rejection always says what is missing."""


TASKS: Records[Task, TaskFilter] = Records(
    "tasks",
    model=Task,
    filters=TaskFilter,
    kind="task",
    prefix="tsk",
    # framework_id's values are the few frameworks of the catalogue, as for task templates;
    # assignees, approvers and templates are ids, counted per filter set instead.
    facets=("status", "framework_id", "department"),
    searchable=("title", "description"),
    sortable=("title", "status", "due_date", "updated_at"),
    ranged="due_date",
    indexed=("due_date", "updated_at"),
)
TASK_READ = Action("task:read", READERS)
TASK_HISTORY = Action("task_history:read", READERS)
"""A slice of the audit trail, which only owners, admins and auditors read."""
TASK_WRITE = Action("task:write", MANAGERS)
TASK_APPROVE = Action("task:approve", MANAGERS)
TASK_MINE = Action("task_assigned:read", EVERYONE)
"""The tasks assigned to the caller's own person: what staff read of the area."""


class TaskCreated(Event):
    """A task was added: by a user, or made from a task template when its framework was enabled."""

    type = "task.created"


class TaskUpdated(Event):
    """Some of a task's fields changed (by PATCH, a bulk change, a reassignment, a reschedule, a
    link made from a control, or its first or last enabled automation setting
    ``automationStatus``); ``previous`` holds their old values."""

    type = "task.updated"


class TaskDeleted(Event):
    """A task was deleted (alone or in bulk); ``data`` is the task as it was."""

    type = "task.deleted"


class TaskStatusChanged(Event):
    """A task's status changed, whatever changed it (recorded beside the event of that write);
    ``previous`` holds the old status."""

    type = "task.status_changed"


class TaskSubmittedForReview(Event):
    """A task was sent for review (``in_review``), remembering the status it had."""

    type = "task.submitted_for_review"


class TaskApproved(Event):
    """The approver accepted a task's work: it is ``done``."""

    type = "task.approved"


class TaskRejected(Event):
    """The approver sent a task back with a reason: it has its status from before the review."""

    type = "task.rejected"


class TaskCompleted(Event):
    """A task was marked done without a review (``complete``)."""

    type = "task.completed"


class TaskReopened(Event):
    """Recurring work fell due again: the done task is ``todo`` once more, due on its next date."""

    type = "task.reopened"


EVENTS: tuple[type[Event], ...] = (
    TaskCreated,
    TaskUpdated,
    TaskDeleted,
    TaskStatusChanged,
    TaskSubmittedForReview,
    TaskApproved,
    TaskRejected,
    TaskCompleted,
    TaskReopened,
)
