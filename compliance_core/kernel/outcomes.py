"""What an automated check's verdict does in other areas: the ports a task automation's run
reaches the task, the findings and the evidence through, without importing those areas.

A failing run fails its task and opens a finding; a passing run adds a piece of evidence to the
task. The tasks, findings and evidence areas each offer their part among their ``Area(ports=...)``
(found with ``port_of``); each works inside the write that completes the run, so the run, the
task's status, the finding and the evidence commit together or not at all, with their own
areas' events and audit entries. A task's automation status follows its automations the same
way, inside the write adding, enabling, disabling or deleting one: ``automated`` with its first
enabled automation, ``manual`` again when the last is disabled or deleted. A platform built
without one of those areas simply skips that consequence.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import attrs

from .ids import IdGenerator
from .severities import Severity
from .uow import Tx

__all__ = ["FailedCheck", "PassedCheck", "TaskVerdicts", "FindingRaiser", "EvidenceCollector"]


@attrs.frozen(kw_only=True)
class FailedCheck:
    """A check of a task that failed, as the finding it opens tells it.

    :param open_finding_id: the finding an earlier failure of the same check opened: while it is
        not closed, it is the finding again (one open finding per failing check, not one per run)
    """

    organization_id: str
    task_id: str | None
    """The task the check belongs to; None for an integration's check of a connection."""
    title: str
    content: str
    severity: Severity
    created_by: str | None
    open_finding_id: str | None
    at: dt.datetime


@attrs.frozen(kw_only=True)
class PassedCheck:
    """A check of a task that passed: the evidence it collected.

    :param note: what the check saw (bounded text, JSON when the check answered JSON)
    :param reference: where the evidence came from (the automation and its run)
    :param evidence_id: the evidence item an earlier passing run of the same check added: while
        it exists, this evidence is its next version (one item per check, a version per run)
    """

    organization_id: str
    task_id: str
    title: str
    note: str
    reference: str
    collected_at: dt.datetime
    created_by: str | None
    evidence_id: str | None


@attrs.frozen(kw_only=True)
class TaskVerdicts:
    """Offered by the tasks area: ``fail(tx, organization_id, task_id, now)`` sets the task
    ``failed`` (recording the tasks area's own events); nothing when it is failed already or
    gone. ``automated(tx, organization_id, task_id, automated, now)`` sets the task's automation
    status (``automated`` when True, else ``manual``) when its automations cross between none
    enabled and some; nothing when the task has that status already or is gone."""

    fail: Callable[[Tx, str, str, dt.datetime], None]
    automated: Callable[[Tx, str, str, bool, dt.datetime], None]


@attrs.frozen(kw_only=True)
class FindingRaiser:
    """Offered by the findings area: ``raise_(tx, ids, check)`` opens a finding for a failed
    check (or answers the one still open for it) and returns its id; ``resolve(tx,
    organization_id, finding_id, now)`` closes the finding a check opened once it passes again
    (nothing when it is closed already or gone)."""

    raise_: Callable[[Tx, IdGenerator, FailedCheck], str]
    resolve: Callable[[Tx, str, str, dt.datetime], None]


@attrs.frozen(kw_only=True)
class EvidenceCollector:
    """Offered by the evidence area: ``collect(tx, ids, check)`` adds a note (source
    ``automation``) to the task, or a version to the check's earlier one, and returns its id."""

    collect: Callable[[Tx, IdGenerator, PassedCheck], str]
