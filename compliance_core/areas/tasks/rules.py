"""The rules every write of a task follows, whichever operation makes it (one task or a bulk
request): checking what it names, deriving what follows from its status, and recording it.

What a status change derives:
- entering ``done``: ``last_completed_at`` is now and, for recurring work, ``next_due_date`` is
  the frequency's next date strictly after today (``kernel.recurrence.next_occurrence``);
- leaving ``done``: there is no next date any more (the work is open again);
- a new frequency on a done task moves its next date, counted from the last completion.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, Protocol

import attrs

from ...kernel.directory import Directory
from ...kernel.errors import Conflict, ValidationError
from ...kernel.events import Event
from ...kernel.records import changed
from ...kernel.recurrence import KEYWORDS, next_occurrence, normalised_frequency
from ...kernel.registry import Repo, Session, Where
from ...kernel.uow import Tx
from .models import TASKS, Task, TaskDeleted, TaskStatus, TaskStatusChanged, TaskSubmittedForReview, TaskUpdated

__all__ = ["Where", "check_fields", "derive", "write", "submitted", "delete", "conflict", "first_due"]


class _Named(Protocol):
    """What a task asks of a risk, vendor or policy it names: that it exists."""

    def get(self, organization_id: str, item_id: str) -> Any | None: ...


_NAMED: dict[str, tuple[Repo[_Named], str]] = {
    "risk_ids": (Repo("risks"), "risk"),
    "vendor_ids": (Repo("vendors"), "vendor"),
    "policy_ids": (Repo("policies"), "policy"),
}
"""The other areas' tables a task links to, reached through these handles, never imported."""

_WIRE = {"risk_ids": "riskIds", "vendor_ids": "vendorIds", "policy_ids": "policyIds"}


def check_fields(session: Session, task: Task, fields: Iterable[str]) -> None:
    """Refuse a task whose named fields point at nobody or nothing of its organization: the
    assignee is a person, the approver an active owner or admin, each linked risk, vendor and
    policy exists. (Controls are checked by the controls area as it indexes the links.) Every
    bad field is listed at once."""
    directory = Directory(session)
    errors: list[ValidationError] = []
    for field in fields:
        try:
            if field == "assignee_id":
                directory.check_member(task.organization_id, "assigneeId", task.assignee_id)
            elif field == "approver_id":
                directory.check_approver(task.organization_id, "approverId", task.approver_id)
            elif field in _NAMED:
                repo, kind = _NAMED[field]
                for index, item_id in enumerate(getattr(task, field)):
                    if session[repo].get(task.organization_id, item_id) is None:
                        errors.append(
                            ValidationError.field(
                                f"{_WIRE[field]}[{index}]", item_id, f"names no {kind} of the organization"
                            )
                        )
        except ValidationError as error:
            errors.append(error)
    if errors:
        raise ValidationError.every(errors)


def normalised(task: Task) -> Task:
    """The task with its rule written as python-dateutil writes it back, or a 400 naming
    ``frequency`` for a rule that never occurs or contradicts itself."""
    if task.frequency is None or task.frequency in KEYWORDS:
        return task
    try:
        return attrs.evolve(task, frequency=normalised_frequency(task.frequency))
    except ValueError as refused:
        raise ValidationError.field("frequency", task.frequency, str(refused)) from None


def first_due(frequency: str | None, today: dt.date) -> dt.date | None:
    """When recurring work made today first falls due (None for work done once)."""
    return None if frequency is None else next_occurrence(frequency, today)


def derive(current: Task, changes: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """``changes`` with what they imply for the task's completion and next date (see the module)."""
    status = changes.get("status", current.status)
    frequency = changes.get("frequency", current.frequency)
    if status is TaskStatus.DONE and current.status is not TaskStatus.DONE:
        changes["last_completed_at"] = now
        changes["next_due_date"] = None if frequency is None else next_occurrence(frequency, now.date())
    elif status is not TaskStatus.DONE:
        changes["next_due_date"] = None
    elif "frequency" in changes:
        completed = (current.last_completed_at or now).date()
        changes["next_due_date"] = None if frequency is None else next_occurrence(frequency, completed)
    return changes


def write(
    tx: Tx, current: Task, changes: dict[str, Any], event: type[Event], now: dt.datetime, *, check: bool = True
) -> Task:
    """Store ``current`` with ``changes`` (and what they derive), recording ``event`` with the old
    values of what changed, and ``task.status_changed`` when the status moved. Nothing is
    written, and ``current`` returned, when nothing changes."""
    changes = derive(current, dict(changes), now)
    previous = changed(current, changes)
    if not previous:
        return current
    updated = normalised(attrs.evolve(current, **changes, updated_at=now))
    if check:
        check_fields(tx, updated, previous)
    tx[TASKS].update(updated)
    tx.record(event(organization_id=current.organization_id, subject=updated, previous=previous))
    if "status" in previous:
        tx.record(
            TaskStatusChanged(
                organization_id=current.organization_id, subject=updated, previous={"status": current.status}
            )
        )
    return updated


def conflict(task: Task, reason: str) -> Conflict:
    """A transition the task's status forbids: a 409 naming ``status``."""
    return Conflict(
        f"task {task.id} is {task.status.value}: {reason}",
        {"field": "status", "value": task.status.value, "reason": reason},
    )


def submitted(tx: Tx, current: Task, approver_id: str | None, comment: str | None, now: dt.datetime) -> Task:
    """``current`` in review, remembering the status it leaves (the caller checked it may be)."""
    changes = {
        "status": TaskStatus.IN_REVIEW,
        "previous_status": current.status,
        "approver_id": approver_id,
        "review_comment": comment,
    }
    return write(tx, current, changes, TaskSubmittedForReview, now, check=False)


def delete(tx: Tx, task: Task, now: dt.datetime) -> None:
    """Delete the task; its controls forget it first (a change of ``controlIds``, so the
    controls area drops its links and their status no longer counts it)."""
    if task.control_ids:
        task = write(tx, task, {"control_ids": ()}, TaskUpdated, now, check=False)
    tx[TASKS].delete(task.organization_id, task.id)
    tx.record(TaskDeleted(organization_id=task.organization_id, subject=task))
