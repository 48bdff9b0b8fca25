"""Bulk operations on tasks: set a status (and due or review date), set an assignee, delete,
send for review, for up to ``MAX_BULK`` tasks in one request.

Each request is all or nothing: every task id is looked up first, inside the write, and one
unknown to the organization refuses the whole request with a ``validation_error`` listing every
bad entry (``taskIds[3]``) in ``details.errors``; nothing is written then. Each task changed
records its own events, exactly as the single-task operation would.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import attrs

from ...kernel.directory import Directory
from ...kernel.errors import ValidationError
from ...kernel.operations import operation
from ...kernel.permissions import Actor
from ...kernel.registry import Route, Session
from ...kernel.validation import date, optional_choice, optional_id, optional_text
from .models import MAX_BULK, TASK_WRITE, TASKS, Task, TaskStatus, TaskUpdated, task_ids
from .rules import delete, submitted, write

__all__ = [
    "BulkStatus",
    "BulkAssignee",
    "BulkDelete",
    "BulkSubmit",
    "BulkUpdated",
    "BulkDeleted",
    "BulkSubmitted",
    "rows",
    "bulk_update",
    "bulk_assign",
    "bulk_delete",
    "bulk_submit_for_review",
]

_BULK = "/v1/tasks/bulk"


@attrs.frozen(kw_only=True)
class BulkStatus:
    """The same change on every task named: a status, a due date, a review date (at least one)."""

    task_ids: tuple[str, ...] = attrs.field(converter=task_ids)
    status: TaskStatus | None = attrs.field(default=None, converter=optional_choice(TaskStatus))
    due_date: dt.date | None = attrs.field(default=None, converter=date)
    review_date: dt.date | None = attrs.field(default=None, converter=date)


@attrs.frozen(kw_only=True)
class BulkAssignee:
    task_ids: tuple[str, ...] = attrs.field(converter=task_ids)
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    """A person of the organization; null (or left out) clears the assignee."""


@attrs.frozen(kw_only=True)
class BulkDelete:
    task_ids: tuple[str, ...] = attrs.field(converter=task_ids)


@attrs.frozen(kw_only=True)
class BulkSubmit:
    task_ids: tuple[str, ...] = attrs.field(converter=task_ids)
    approver_id: str | None = attrs.field(default=None, converter=optional_id)
    """An active owner or admin who decides on every task sent; None: any owner or admin."""
    comment: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class BulkUpdated:
    updated_count: int
    """Tasks that changed (a task already as asked is counted out: nothing was written to it)."""


@attrs.frozen(kw_only=True)
class BulkDeleted:
    deleted_count: int


@attrs.frozen(kw_only=True)
class BulkSubmitted:
    submitted_count: int
    skipped_ids: tuple[str, ...] = ()
    """Tasks in review or done already, left as they were (the reference's rule)."""


def rows(session: Session, organization_id: str, ids: Sequence[str]) -> list[Task]:
    """The tasks ``ids`` name, each once in the order first named, or one ``validation_error``
    listing every id that names no task of the organization (by its place in ``taskIds``)."""
    found: dict[str, Task] = {}
    errors: list[ValidationError] = []
    for index, task_id in enumerate(ids):
        if task_id in found:
            continue
        task = session[TASKS].get(organization_id, task_id)
        if task is None:
            errors.append(ValidationError.field(f"taskIds[{index}]", task_id, "names no task of the organization"))
        else:
            found[task_id] = task
    if errors:
        raise ValidationError.every(errors)
    return list(found.values())


# The operations below are declared here and named in ``TaskService``'s class body
# (``bulk_update = bulk.bulk_update``): ``self`` is that service, which holds ``uow``.


@operation(
    TASK_WRITE,
    Route("PATCH", _BULK, f"Set the same status, due date or review date on up to {MAX_BULK} tasks"),
    body=BulkStatus,
    result=BulkUpdated,
    example={"taskIds": ["tsk_..."], "status": "in_progress"},
)
def bulk_update(self: Any, actor: Actor, data: BulkStatus) -> BulkUpdated:
    """All or nothing (see the module). A status set here is set as PATCH sets it: done counts
    as completed and recurring work gets its next date."""
    changes: dict[str, Any] = {
        name: value
        for name, value in (("status", data.status), ("due_date", data.due_date), ("review_date", data.review_date))
        if value is not None
    }
    if not changes:
        raise ValidationError.field("status", None, "give status, dueDate or reviewDate (or several)")
    return BulkUpdated(updated_count=_each(self, actor, data.task_ids, changes))


@operation(
    TASK_WRITE,
    Route("PATCH", _BULK + "/assignee", f"Set (or clear) the assignee of up to {MAX_BULK} tasks"),
    body=BulkAssignee,
    result=BulkUpdated,
    example={"taskIds": ["tsk_..."], "assigneeId": "mem_..."},
)
def bulk_assign(self: Any, actor: Actor, data: BulkAssignee) -> BulkUpdated:
    """All or nothing; the assignee must be a person of the organization."""
    return BulkUpdated(updated_count=_each(self, actor, data.task_ids, {"assignee_id": data.assignee_id}))


@operation(
    TASK_WRITE,
    Route("DELETE", _BULK, f"Delete up to {MAX_BULK} tasks"),
    body=BulkDelete,
    result=BulkDeleted,
    example={"taskIds": ["tsk_..."]},
)
def bulk_delete(self: Any, actor: Actor, data: BulkDelete) -> BulkDeleted:
    """All or nothing: an unknown id deletes none."""
    with self.uow.write(actor) as tx:
        tasks = rows(tx, actor.organization_id, data.task_ids)
        now = self.uow.clock.now()
        for task in tasks:
            delete(tx, task, now)
    return BulkDeleted(deleted_count=len(tasks))


@operation(
    TASK_WRITE,
    Route("POST", _BULK + "/submit-for-review", f"Send up to {MAX_BULK} tasks for review with one approver"),
    body=BulkSubmit,
    result=BulkSubmitted,
    example={"taskIds": ["tsk_..."], "comment": "Quarterly evidence is ready."},
)
def bulk_submit_for_review(self: Any, actor: Actor, data: BulkSubmit) -> BulkSubmitted:
    """An unknown id refuses the whole request; a task in review or done already is skipped
    and named in ``skippedIds``."""
    with self.uow.write(actor) as tx:
        tasks = rows(tx, actor.organization_id, data.task_ids)
        Directory(tx).check_approver(actor.organization_id, "approverId", data.approver_id)
        now = self.uow.clock.now()
        skipped = []
        for task in tasks:
            if task.status in (TaskStatus.IN_REVIEW, TaskStatus.DONE):
                skipped.append(task.id)
            else:
                submitted(tx, task, data.approver_id, data.comment, now)
    return BulkSubmitted(submitted_count=len(tasks) - len(skipped), skipped_ids=tuple(skipped))


def _each(self: Any, actor: Actor, ids: Sequence[str], changes: dict[str, Any]) -> int:
    """Apply ``changes`` to every task named, in one write; returns how many changed."""
    with self.uow.write(actor) as tx:
        tasks = rows(tx, actor.organization_id, ids)
        if changes.get("assignee_id") is not None:
            Directory(tx).check_member(actor.organization_id, "assigneeId", changes["assignee_id"])
        now = self.uow.clock.now()
        count = 0
        for task in tasks:
            if write(tx, task, changes, TaskUpdated, now, check=False) is not task:
                count += 1
    return count
