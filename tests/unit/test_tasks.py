"""Tasks and Task Management in-process: the areas' own rules (the generic suites cover the
rest): the review, recurrence and its chore, control statuses following tasks, tasks made from an
enabled framework's templates, all-or-nothing bulk requests, reassign, reschedule and stats."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compliance_core import Conflict, Forbidden, FrozenClock, Platform, Role, ValidationError
from compliance_core.areas.frameworks.control_models import ControlStatus, NewControl
from compliance_core.areas.frameworks.controls import LinkRequest
from compliance_core.areas.people import NewPerson
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.tasks import (
    MAX_BULK,
    ApproveTask,
    BulkAssignee,
    BulkDelete,
    BulkStatus,
    BulkSubmit,
    NewTask,
    RejectTask,
    SubmitForReview,
    TaskFilter,
    TaskPatch,
    TaskStatus,
)
from compliance_core.areas.tasks.management import Reassign, Reschedule
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.recurrence import next_occurrence, normalised_frequency

ISO = "iso-27001-2022"


def _person(platform: Platform, owner, name: str, role: Role = Role.EMPLOYEE) -> str:
    email = f"{name.lower().replace(' ', '.')}@acme.example"
    return platform.people.create(owner, NewPerson(name=name, email=email, role=role)).id


def _types(platform: Platform) -> list[str]:
    with platform.uow.read() as session:
        return [message.type for message in session[OUTBOX].pending(10_000)]


def test_a_task_names_only_people_and_records_of_its_organization(platform: Platform, owner, other_org) -> None:
    stranger = _person(platform, other_org, "Stranger")
    with pytest.raises(ValidationError) as refused:
        platform.tasks.create(owner, NewTask(title="Access review", assignee_id=stranger, risk_ids=["rsk_1"]))
    fields = [entry["field"] for entry in refused.value.details["errors"]]
    assert fields == ["assigneeId", "riskIds[0]"]
    with pytest.raises(ValidationError) as unknown_control:
        platform.tasks.create(owner, NewTask(title="Access review", control_ids=["ctl_1"]))
    assert unknown_control.value.details["field"] == "controlIds"
    assert platform.tasks.list(owner).total == 0
    risk = platform.risks.create(owner, NewRisk(title="Stale accounts"))
    task = platform.tasks.create(owner, NewTask(title="Access review", risk_ids=[risk.id]))
    assert task.risk_ids == (risk.id,)


def test_a_rule_is_stored_as_dateutil_writes_it_and_one_that_never_occurs_is_refused(platform, owner) -> None:
    task = platform.tasks.create(owner, NewTask(title="Weekly", frequency="RRULE:FREQ=WEEKLY;BYDAY=TU;BYDAY=MO"))
    assert task.frequency == "FREQ=WEEKLY;BYDAY=MO"
    with pytest.raises(ValidationError) as refused:
        platform.tasks.create(owner, NewTask(title="Never", frequency="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"))
    assert refused.value.details["field"] == "frequency"
    with pytest.raises(ValidationError):
        platform.tasks.update(owner, task.id, TaskPatch(frequency="every now and then"))


def test_review_remembers_the_status_a_rejection_restores_and_approval_finishes(platform, owner, clock) -> None:
    task = platform.tasks.create(owner, NewTask(title="Access review", status="in_progress"))
    submitted = platform.tasks.submit_for_review(owner, task.id, SubmitForReview(comment="Done, see evidence."))
    assert (submitted.status, submitted.previous_status) == (TaskStatus.IN_REVIEW, TaskStatus.IN_PROGRESS)
    with pytest.raises(Conflict) as again:
        platform.tasks.submit_for_review(owner, task.id, SubmitForReview())
    assert again.value.details["field"] == "status"
    with pytest.raises(ValidationError):
        RejectTask(reason="   ")
    rejected = platform.tasks.reject(owner, task.id, RejectTask(reason="The export is missing."))
    assert (rejected.status, rejected.previous_status) == (TaskStatus.IN_PROGRESS, None)
    assert rejected.review_comment == "The export is missing."
    with pytest.raises(Conflict):
        platform.tasks.approve(owner, task.id, ApproveTask())
    platform.tasks.submit_for_review(owner, task.id, SubmitForReview())
    approved = platform.tasks.approve(owner, task.id, ApproveTask(comment="Complete."))
    assert approved.status is TaskStatus.DONE
    assert approved.approved_at == clock.now() and approved.review_date == clock.now().date()
    with pytest.raises(Conflict):
        platform.tasks.complete(owner, task.id)
    activity = platform.tasks.activity(owner, task.id)
    actions = [entry.action for entry in activity.items]
    assert actions[:2] == ["task.status_changed", "task.approved"]
    assert "task.rejected" in actions and actions[-1] == "task.created"


def test_only_the_named_approver_or_the_owner_decides(platform: Platform, owner, boot) -> None:
    organization_id = boot.organization.id
    approver = _person(platform, owner, "Ann Approver", Role.ADMIN)
    other_admin = _person(platform, owner, "Otto Admin", Role.ADMIN)
    employee = _person(platform, owner, "Eve Employee")
    task = platform.tasks.create(owner, NewTask(title="Backup restore test"))
    with pytest.raises(ValidationError) as refused:
        platform.tasks.submit_for_review(owner, task.id, SubmitForReview(approver_id=employee))
    assert refused.value.details["field"] == "approverId"
    platform.tasks.submit_for_review(owner, task.id, SubmitForReview(approver_id=approver))
    with pytest.raises(Forbidden):
        platform.tasks.approve(platform.actor(organization_id, Role.ADMIN, person_id=other_admin), task.id)
    decided = platform.tasks.approve(platform.actor(organization_id, Role.ADMIN, person_id=approver), task.id)
    assert decided.status is TaskStatus.DONE
    second = platform.tasks.create(owner, NewTask(title="Second"))
    platform.tasks.submit_for_review(owner, second.id, SubmitForReview(approver_id=approver))
    assert platform.tasks.reject(owner, second.id, RejectTask(reason="Owner says no")).status is TaskStatus.TODO


def test_completing_recurring_work_sets_its_next_date_and_the_chore_reopens_it_once(
    platform: Platform, owner, clock: FrozenClock
) -> None:
    task = platform.tasks.create(owner, NewTask(title="Access review", frequency="quarterly"))
    done = platform.tasks.complete(owner, task.id)
    assert done.last_completed_at == clock.now()
    assert done.next_due_date == dt.date(2026, 4, 1)
    assert platform.tasks.reopen_due(clock.now()) == 0
    clock.advance(days=90)
    report = platform.run_chores()
    assert report.counts["reopenedTasks"] == 1
    reopened = platform.tasks.get(owner, task.id)
    assert (reopened.status, reopened.due_date, reopened.next_due_date) == (
        TaskStatus.TODO,
        dt.date(2026, 4, 1),
        None,
    )
    assert platform.tasks.reopen_due(clock.now()) == 0
    assert "task.reopened" in _types(platform)
    once = platform.tasks.create(owner, NewTask(title="Once"))
    assert platform.tasks.complete(owner, once.id).next_due_date is None


def test_a_controls_status_follows_its_tasks(platform: Platform, owner) -> None:
    control = platform.controls.create(owner, NewControl(name="Access reviews", code="ORG-1"))
    task = platform.tasks.create(owner, NewTask(title="Access review", control_ids=[control.id]))
    assert platform.controls.get(owner, control.id).status is ControlStatus.NOT_STARTED  # only planned
    platform.tasks.update(owner, task.id, TaskPatch(status="in_progress"))
    assert platform.controls.get(owner, control.id).status is ControlStatus.IN_PROGRESS
    platform.tasks.complete(owner, task.id)
    assert platform.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED
    platform.tasks.update(owner, task.id, TaskPatch(status="not_relevant"))
    assert platform.controls.get(owner, control.id).status is ControlStatus.NOT_STARTED
    platform.tasks.update(owner, task.id, TaskPatch(status="todo"))  # done once: its round still counts
    assert platform.controls.get(owner, control.id).status is ControlStatus.IMPLEMENTED
    platform.tasks.update(owner, task.id, TaskPatch(status="failed"))
    assert platform.controls.get(owner, control.id).status is ControlStatus.IN_PROGRESS
    other = platform.tasks.create(owner, NewTask(title="Other"))
    platform.controls.link(owner, control.id, LinkRequest(kind="task", target_id=other.id))
    assert platform.tasks.get(owner, other.id).control_ids == (control.id,)
    platform.tasks.delete(owner, task.id)
    platform.tasks.bulk_delete(owner, BulkDelete(task_ids=[other.id]))
    assert platform.controls.links(owner, control.id).total == 0
    assert platform.controls.get(owner, control.id).status is ControlStatus.NOT_STARTED


def test_enabling_a_framework_makes_one_task_per_template_once(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    templates = platform.task_templates.list(owner).total
    tasks = platform.tasks.list(owner, TaskFilter(framework_id=ISO))
    assert templates > 0 and tasks.total == templates
    assert all(task.task_template_id and task.due_date for task in tasks.items)
    assert any(task.control_ids for task in tasks.items)
    platform.controls.enable(owner, ISO)
    platform.controls.disable(owner, ISO)
    platform.controls.enable(owner, ISO)
    assert platform.tasks.list(owner, TaskFilter(framework_id=ISO)).total == templates


def test_bulk_requests_refuse_more_than_the_maximum_and_an_empty_change(platform: Platform, owner) -> None:
    with pytest.raises(ValidationError) as many:
        BulkStatus(task_ids=[f"tsk_{n}" for n in range(MAX_BULK + 1)], status="done")
    assert many.value.details["field"] == "taskIds"
    task = platform.tasks.create(owner, NewTask(title="One"))
    with pytest.raises(ValidationError) as nothing:
        platform.tasks.bulk_update(owner, BulkStatus(task_ids=[task.id]))
    assert nothing.value.details["field"] == "status"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(plan=st.lists(st.booleans(), min_size=1, max_size=8))
def test_a_bulk_update_is_all_or_nothing(plan: list[bool]) -> None:
    """Whatever the mix of tasks that exist (True) and ids that name none (False): every task
    changes, or none does and the error lists exactly the bad rows."""
    platform = Platform.open("memory://")
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    ids = [
        platform.tasks.create(owner, NewTask(title=f"T{n}")).id if real else f"tsk_missing{n}"
        for n, real in enumerate(plan)
    ]
    assignee = _person(platform, owner, "Ada")
    for request in (
        lambda: platform.tasks.bulk_update(
            owner, BulkStatus(task_ids=ids, status="in_progress", due_date="2027-01-01")
        ),
        lambda: platform.tasks.bulk_assign(owner, BulkAssignee(task_ids=ids, assignee_id=assignee)),
    ):
        if all(plan):
            assert request().updated_count == len(ids)
        else:
            with pytest.raises(ValidationError) as refused:
                request()
            listed = [entry["field"] for entry in refused.value.details["errors"]]
            assert listed == [f"taskIds[{n}]" for n, real in enumerate(plan) if not real]
    stored = platform.tasks.list(owner).items
    expected = TaskStatus.IN_PROGRESS if all(plan) else TaskStatus.TODO
    assert all(task.status is expected for task in stored)
    assert all((task.assignee_id == assignee) is all(plan) for task in stored)


def test_bulk_submission_skips_tasks_in_review_or_done(platform: Platform, owner) -> None:
    open_task, in_review, done = (platform.tasks.create(owner, NewTask(title=t)).id for t in "abc")
    platform.tasks.submit_for_review(owner, in_review, SubmitForReview())
    platform.tasks.complete(owner, done)
    result = platform.tasks.bulk_submit_for_review(owner, BulkSubmit(task_ids=[open_task, in_review, done]))
    assert (result.submitted_count, result.skipped_ids) == (1, (in_review, done))
    assert platform.tasks.get(owner, open_task).status is TaskStatus.IN_REVIEW


def test_reassign_moves_only_open_work_and_reschedule_is_all_or_nothing(platform: Platform, owner) -> None:
    leaver, successor = _person(platform, owner, "Lee Leaver"), _person(platform, owner, "Sue Successor")
    open_task = platform.tasks.create(owner, NewTask(title="Open", assignee_id=leaver, due_date="2026-03-01"))
    done_task = platform.tasks.create(owner, NewTask(title="Done", assignee_id=leaver, status="done"))
    moved = platform.task_management.reassign(owner, Reassign(from_person_id=leaver, to_person_id=successor))
    assert moved.task_ids == (open_task.id,)
    assert platform.tasks.get(owner, done_task.id).assignee_id == leaver
    with pytest.raises(ValidationError) as undated:
        platform.task_management.reschedule(owner, Reschedule(task_ids=[open_task.id, done_task.id], days=7))
    assert [entry["field"] for entry in undated.value.details["errors"]] == ["taskIds[1]"]
    assert platform.tasks.get(owner, open_task.id).due_date == dt.date(2026, 3, 1)
    platform.task_management.reschedule(owner, Reschedule(task_ids=[open_task.id], days=-14))
    assert platform.tasks.get(owner, open_task.id).due_date == dt.date(2026, 2, 15)


def test_stats_count_per_status_assignee_and_framework(platform: Platform, owner, clock) -> None:
    ada = _person(platform, owner, "Ada")
    platform.tasks.create(owner, NewTask(title="Late", assignee_id=ada, due_date="2025-12-01"))
    platform.tasks.create(owner, NewTask(title="Done", assignee_id=ada, status="done", framework_id=ISO))
    platform.tasks.create(owner, NewTask(title="Nobody's"))
    stats = platform.task_management.stats(platform.actor(owner.organization_id, Role.AUDITOR))
    assert (stats.total, stats.open, stats.overdue) == (3, 2, 1)
    assert {row.status: row.count for row in stats.by_status}[TaskStatus.DONE] == 1
    assert [(row.assignee_id, row.name, row.count, row.open) for row in stats.by_assignee] == [
        (ada, "Ada", 2, 1),
        (None, None, 1, 1),
    ]
    assert {row.framework_id: (row.count, row.done) for row in stats.by_framework} == {ISO: (1, 1), None: (2, 0)}


def test_staff_read_only_the_tasks_assigned_to_them(platform: Platform, owner, actor_as) -> None:
    ada = _person(platform, owner, "Ada")
    mine = platform.tasks.create(owner, NewTask(title="Mine", assignee_id=ada))
    platform.tasks.create(owner, NewTask(title="Someone else's"))
    staff = platform.actor(owner.organization_id, Role.EMPLOYEE, person_id=ada)
    assert [task.id for task in platform.tasks.mine(staff).items] == [mine.id]
    assert platform.tasks.mine(actor_as(Role.AUDITOR)).total == 0
    with pytest.raises(Forbidden):
        platform.tasks.mine(staff, TaskFilter(assignee_id="mem_someone"))
    with pytest.raises(Forbidden):
        platform.tasks.list(staff)
    with pytest.raises(Forbidden):
        platform.tasks.complete(actor_as(Role.AUDITOR), mine.id)


def test_every_status_change_records_task_status_changed(platform: Platform, owner) -> None:
    task = platform.tasks.create(owner, NewTask(title="Access review"))
    platform.tasks.update(owner, task.id, TaskPatch(title="Access review Q1"))
    platform.tasks.update(owner, task.id, TaskPatch(status="in_progress"))
    platform.tasks.bulk_update(owner, BulkStatus(task_ids=[task.id], status="failed"))
    types = _types(platform)
    assert types.count("task.status_changed") == 2
    assert types.count("task.updated") == 3


_RULE_PARTS = st.fixed_dictionaries(
    {"FREQ": st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"])},
    optional={
        "INTERVAL": st.integers(1, 60).map(str),
        "BYDAY": st.lists(st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]), min_size=1, unique=True).map(
            ",".join
        ),
        "BYMONTHDAY": st.sampled_from(["1", "15", "28", "29", "30", "31", "-1"]),
        "BYMONTH": st.integers(1, 12).map(str),
    },
)
FREQUENCIES = st.sampled_from(["monthly", "quarterly", "yearly"]) | _RULE_PARTS.map(
    lambda parts: ";".join(f"{key}={value}" for key, value in parts.items())
)


@settings(max_examples=300, deadline=None)
@given(frequency=FREQUENCIES, completed=st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2500, 12, 31)))
def test_the_next_due_date_is_always_after_the_completion(frequency: str, completed: dt.datetime) -> None:
    """Whatever the rule and the moment of completion. A rule taking every n-th day, week,
    month or year that also narrows the days (every 55th day when it is a Monday, 1 January)
    may fall due no more within 400 years of a completion: it has no next date then."""
    try:
        frequency = normalised_frequency(frequency)
    except ValueError:
        assume(False)
    following = next_occurrence(frequency, completed.date())
    assert following is None or following > completed.date()
    if "INTERVAL=" not in frequency:
        # the calendar repeats every 400 years: a rule that falls due at all falls due in them
        assert following is not None
