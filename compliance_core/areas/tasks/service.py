"""The task service: edit tasks, review them (submit, approve, reject), complete them, read
their activity, reopen recurring work when it falls due, and turn an enabled framework's task
templates into tasks.

Who may do what: owners and admins edit, submit, complete and decide; the named approver (or,
when none is named, any owner or admin) approves or rejects, and the organization's owner may
decide in a named approver's stead; auditors read every task and its activity; staff read the
tasks assigned to their own person (``mine``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

import attrs

from ...kernel.audit import AUDIT_LOG, AuditEntry, AuditFilter
from ...kernel.clock import utc
from ...kernel.directory import Directory, every
from ...kernel.errors import Forbidden, NotFound, ValidationError
from ...kernel.events import Event
from ...kernel.operations import Standard, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor, Role
from ...kernel.records import fetch
from ...kernel.registry import Repo, Route
from ...kernel.uow import Tx, UnitOfWork
from . import bulk
from .models import (
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
    TaskDepartment,
    TaskFilter,
    TaskPatch,
    TaskRejected,
    TaskReopened,
    TaskStatus,
    TaskUpdated,
)
from .rules import Where, check_fields, conflict, delete, first_due, normalised, submitted, write

__all__ = ["TaskService", "ENABLED"]

ENABLED = "framework.enabled"
DISABLED = "framework.disabled"
"""The event type the frameworks area records when an organization enables a framework."""


class _Template(Protocol):
    """What a task made from a task template copies (the framework editor's template)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def frequency(self) -> str: ...
    @property
    def department(self) -> str: ...
    @property
    def automation_status(self) -> str: ...
    @property
    def requirement_ids(self) -> tuple[str, ...]: ...


class _Row(Protocol):
    """A requirement of an enabled framework and the control serving it."""

    @property
    def requirement_id(self) -> str: ...
    @property
    def control_id(self) -> str: ...


class _Listing(Protocol):
    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[list[Any], int]: ...


_TEMPLATES: Repo[_Listing] = Repo("task_templates")
_REQUIREMENT_ROWS: Repo[_Listing] = Repo("control_requirements")

_TABLE = Standard(TASKS, id="task_id")
_ALL = "/v1/tasks"
_ONE = _ALL + "/{task_id}"


def _check_new(service: TaskService, tx: Tx, actor: Actor, task: Task) -> None:
    check_fields(tx, task, ("assignee_id", "risk_ids", "vendor_ids", "policy_ids"))


def _shaped(task: Task) -> Task:
    """A new task: its rule normalised, and its completion and next date when it starts done."""
    task = normalised(task)
    if task.status is TaskStatus.DONE:
        upcoming = first_due(task.frequency, task.created_at.date())
        return attrs.evolve(task, last_completed_at=task.created_at, next_due_date=upcoming)
    return task


@attrs.define
class TaskService:
    uow: UnitOfWork
    pages: PageCache

    # -- reading ---------------------------------------------------------------------------

    list = _TABLE.list(TASK_READ, Route("GET", _ALL, "List the organization's tasks"))

    @operation(
        TASK_MINE,
        Route("GET", _ALL + "/mine", "List the tasks assigned to the caller's own person"),
        filters=TaskFilter,
        paged=True,
        result=Task,
        lists=TASKS,
    )
    def mine(self, actor: Actor, filters: TaskFilter | None = None, page: PageRequest | None = None) -> Page[Task]:
        """The caller's person's tasks (a caller acting as no person has none). Asking for
        another assignee's is refused (403) rather than quietly narrowed."""
        filters = filters or TaskFilter()
        request = page or PageRequest()
        if filters.assignee_id not in (None, actor.person_id):
            raise Forbidden(
                f"this list holds the tasks of person {actor.person_id}",
                {"field": "assigneeId", "value": filters.assignee_id, "reason": "is not the caller's own person"},
            )
        if actor.person_id is None:
            TASKS.listing.check(request)
            return Page.of((), 0, request)
        chosen = attrs.evolve(filters, assignee_id=actor.person_id)
        return page_of(self, TASKS, actor, chosen, request, scope=actor.person_id)

    get = _TABLE.get(TASK_READ, Route("GET", _ONE, "Read one task"))

    @operation(
        TASK_HISTORY,
        Route("GET", _ONE + "/activity", "The task's activity: its audit trail, newest first"),
        paged=True,
        result=AuditEntry,
        lists=AUDIT_LOG,
    )
    def activity(self, actor: Actor, task_id: str, page: PageRequest | None = None) -> Page[AuditEntry]:
        """Every write to the task (created, each change with old and new values, each review
        step), newest first, with who made it: the audit trail's entries of this task."""
        try:
            history = AuditFilter(entity_type="task", entity_id=task_id)
        except ValidationError:  # no task's id is one the audit log's filter refuses
            raise NotFound.resource(TASKS.kind, task_id) from None
        return page_of(self, AUDIT_LOG, actor, history, page, under=(TASKS, task_id))

    # -- editing ---------------------------------------------------------------------------

    create = _TABLE.create(
        TASK_WRITE,
        Route("POST", _ALL, "Add a task", 201),
        body=NewTask,
        event=TaskCreated,
        shape=_shaped,
        check=_check_new,
        example={
            "title": "Review user access rights",
            "description": "Compare every account's access with its owner's role.",
            "dueDate": "2026-12-31",
            "frequency": "quarterly",
            "department": "it",
        },
    )

    @operation(
        TASK_WRITE,
        Route("PATCH", _ONE, "Change some of a task's fields (any status may be set)"),
        body=TaskPatch,
        result=Task,
        example={"status": "in_progress", "dueDate": "2027-01-15"},
    )
    def update(self, actor: Actor, task_id: str, patch: TaskPatch) -> Task:
        """Set done, the task counts as completed (and recurring work gets its next date); a
        change of status is recorded as ``task.status_changed`` too."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, TASKS, actor.organization_id, task_id)
            return write(tx, current, patch.changes(), TaskUpdated, self.uow.clock.now())

    @operation(TASK_WRITE, Route("DELETE", _ONE, "Delete a task"), result=None)
    def delete(self, actor: Actor, task_id: str) -> None:
        """Its controls forget it first (recorded as a change of ``controlIds``), so their status
        no longer counts it."""
        with self.uow.write(actor) as tx:
            delete(tx, fetch(tx, TASKS, actor.organization_id, task_id), self.uow.clock.now())

    # -- many tasks at once (all or nothing: see ``bulk``) ---------------------------------------

    bulk_update = bulk.bulk_update
    bulk_assign = bulk.bulk_assign
    bulk_delete = bulk.bulk_delete
    bulk_submit_for_review = bulk.bulk_submit_for_review

    # -- review ----------------------------------------------------------------------------

    @operation(
        TASK_WRITE,
        Route("POST", _ONE + "/submit-for-review", "Send a task for review (in_review)"),
        body=SubmitForReview,
        result=Task,
        example={"comment": "Screenshots of the access review are attached."},
    )
    def submit_for_review(self, actor: Actor, task_id: str, data: SubmitForReview) -> Task:
        """Remembers the status it leaves, which a rejection restores. Not while it is in review
        or done already (409)."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, TASKS, actor.organization_id, task_id)
            if current.status in (TaskStatus.IN_REVIEW, TaskStatus.DONE):
                raise conflict(current, "a task in review or done is not submitted again")
            Directory(tx).check_approver(actor.organization_id, "approverId", data.approver_id)
            return submitted(tx, current, data.approver_id, data.comment, self.uow.clock.now())

    @operation(
        TASK_APPROVE,
        Route("POST", _ONE + "/approve", "Approve a task's work (done)"),
        body=ApproveTask,
        result=Task,
        example={"comment": "Evidence is complete."},
        given=(submit_for_review,),
    )
    def approve(self, actor: Actor, task_id: str, data: ApproveTask) -> Task:
        """Done, approved now and reviewed today; recurring work gets its next date."""
        with self.uow.write(actor) as tx:
            current = self._awaiting(tx, actor, task_id)
            now = self.uow.clock.now()
            changes = {
                "status": TaskStatus.DONE,
                "approved_at": now,
                "review_date": now.date(),
                "previous_status": None,
                "review_comment": data.comment,
            }
            return write(tx, current, changes, TaskApproved, now, check=False)

    @operation(
        TASK_APPROVE,
        Route("POST", _ONE + "/reject", "Send a task back with a reason (its status from before the review)"),
        body=RejectTask,
        result=Task,
        example={"reason": "The screenshot predates the review period."},
        given=(submit_for_review,),
    )
    def reject(self, actor: Actor, task_id: str, data: RejectTask) -> Task:
        with self.uow.write(actor) as tx:
            current = self._awaiting(tx, actor, task_id)
            changes = {
                "status": current.previous_status or TaskStatus.TODO,
                "previous_status": None,
                "approver_id": None,
                "review_comment": data.reason,
            }
            return write(tx, current, changes, TaskRejected, self.uow.clock.now(), check=False)

    @operation(TASK_WRITE, Route("POST", _ONE + "/complete", "Mark a task done without a review"), result=Task)
    def complete(self, actor: Actor, task_id: str) -> Task:
        """Not while it awaits its approver (approve or reject it), nor when it is done or not
        relevant (409); recurring work gets its next date."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, TASKS, actor.organization_id, task_id)
            if current.status in (TaskStatus.IN_REVIEW, TaskStatus.DONE, TaskStatus.NOT_RELEVANT):
                raise conflict(current, "only open work (todo, in_progress, failed) is completed")
            changes = {"status": TaskStatus.DONE, "previous_status": None}
            return write(tx, current, changes, TaskCompleted, self.uow.clock.now(), check=False)

    # -- recurrence --------------------------------------------------------------------------

    def reopen_due(self, now: dt.datetime | None = None) -> int:
        """Reopen every done recurring task whose next date has come, in every organization
        (one write each): ``todo``, due on that date, its last review's approval cleared. Each
        task is read inside its organization's write, so a second run, or one in another
        process, finds it open already and reopens nothing more."""
        now = utc(now) if now is not None else self.uow.clock.now()
        today = now.date()
        with self.uow.read() as session:
            organizations = Directory(session).organization_ids()
        reopened = 0
        for organization_id in organizations:
            with self.uow.write(None) as tx:
                due = [
                    task
                    for task in every(tx[TASKS], organization_id, TaskFilter(status=TaskStatus.DONE))
                    if task.frequency is not None and task.next_due_date is not None and task.next_due_date <= today
                ]
                for task in due:
                    changes = {
                        "status": TaskStatus.TODO,
                        "due_date": task.next_due_date,
                        "approver_id": None,
                        "approved_at": None,
                        "previous_status": None,
                        "review_comment": None,
                    }
                    write(tx, task, changes, TaskReopened, now, check=False)
            reopened += len(due)
        return reopened

    # -- frameworks --------------------------------------------------------------------------

    def _drop_untouched(self, tx: Tx, event: Event) -> None:
        framework_id = str(getattr(event.subject, "framework_id"))  # noqa: B009 (a port: any disabled framework)
        now = self.uow.clock.now()
        for task in every(tx[TASKS], event.organization_id, TaskFilter(framework_id=framework_id)):
            if task.task_template_id and task.status is TaskStatus.TODO and task.last_completed_at is None:
                delete(tx, task, now)

    def react(self, tx: Tx, event: Event) -> None:
        """Inside the write enabling a framework: one task per task template of the framework
        that has none yet, linked to the controls serving the template's requirements, so
        enabling twice (or again after disabling) makes no second task. Disabling it takes away
        the tasks it made that nobody has begun; work begun or done stays as the record of it."""
        if event.type == DISABLED:
            self._drop_untouched(tx, event)
            return
        if event.type != ENABLED:
            return
        framework_id = str(getattr(event.subject, "framework_id"))  # noqa: B009 (a port: any enabled framework)
        organization_id = event.organization_id
        templates: list[_Template] = every(tx[_TEMPLATES], organization_id, Where({"framework_id": framework_id}))
        if not templates:
            return
        made = {
            task.task_template_id for task in every(tx[TASKS], organization_id, TaskFilter(framework_id=framework_id))
        }
        rows: list[_Row] = every(tx[_REQUIREMENT_ROWS], organization_id, Where({"framework_id": framework_id}))
        serving = {row.requirement_id: row.control_id for row in rows}
        now = self.uow.clock.now()
        for template in templates:
            if template.id in made:
                continue
            task = Task(
                id=self.uow.ids.new(TASKS.prefix),
                organization_id=organization_id,
                title=template.name[:255],
                description=template.description[:5000],
                frequency=template.frequency,
                due_date=first_due(template.frequency, now.date()),
                department=TaskDepartment(str(template.department)),
                automation_status=TaskAutomationStatus(str(template.automation_status)),
                task_template_id=template.id,
                framework_id=framework_id,
                control_ids=tuple(dict.fromkeys(serving[item] for item in template.requirement_ids if item in serving)),
                created_at=now,
                updated_at=now,
            )
            tx[TASKS].add(task)
            tx.record(TaskCreated(organization_id=organization_id, subject=task))

    # -- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _awaiting(tx: Tx, actor: Actor, task_id: str) -> Task:
        """The task in review, when the caller may decide on it: the named approver acting with
        their own key, or the organization's owner in their stead; any owner or admin when no
        approver is named."""
        task = fetch(tx, TASKS, actor.organization_id, task_id)
        if task.status is not TaskStatus.IN_REVIEW:
            raise conflict(task, "only a task in review is approved or rejected; submit it for review first")
        named = task.approver_id
        if named is None or actor.role is Role.OWNER:
            return task
        if actor.person_id != named or not actor.as_own_person:
            raise Forbidden(
                f"only the named approver {named} (or the owner) decides on task {task.id}",
                {"field": "approverId", "value": named, "reason": "the caller is not the named approver"},
            )
        return task
