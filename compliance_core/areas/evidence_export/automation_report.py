"""A task automation's evidence as a PDF: what it checks, its current version and its latest runs.

The automations area keeps the automations, their versions and their runs; this module reads
them through handles on those tables (never importing the area), relying only on the fields the
Protocols below name. What it reads becomes an ``ExportedAutomation``, laid out as a
``SummaryDocument`` for the PDF port: the same records give the same bytes, since every date
inside comes from the records (or from the export's ``asOf``), never from the clock.

A run log may be long (a schedule runs for years, callers run it now as often as they like), so
a PDF holds the newest ``MAX_RUNS`` runs and says how many older ones it leaves out; the run
log (``GET .../automations/{automationId}/runs``) pages through all of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ...kernel.directory import Directory, every
from ...kernel.errors import NotFound
from ...kernel.pages import PageRequest
from ...kernel.registry import Repo, Session, Where
from .bundle import ExportedAutomation, ExportedRun, ExportedTask
from .pdf import SummaryDocument, cell, markdown_text

__all__ = [
    "MAX_RUNS",
    "AUTOMATION_KIND",
    "automation_of",
    "automations_of",
    "automation_document",
]

MAX_RUNS = 200
"""Runs one automation's PDF lists (the newest); one page of the largest size the stores serve."""
AUTOMATION_KIND = "automation"
"""The kind a missing automation's 404 names, as the automations area's own 404s do."""
_REASON_CHARS = 500
"""Of a run's reason or error, in the PDF (a callable's error may be long): 200 runs then stay
within what a long policy makes the renderer lay out, well inside its time limit."""


class _Automation(Protocol):
    """What the PDF reads of an automation (the automations area's record)."""

    @property
    def id(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def is_enabled(self) -> bool: ...
    @property
    def kind(self) -> Any: ...
    @property
    def url(self) -> str | None: ...
    @property
    def method(self) -> Any: ...
    @property
    def callable_name(self) -> str | None: ...
    @property
    def schedule(self) -> str | None: ...
    @property
    def version(self) -> int: ...
    @property
    def created_at(self) -> dt.datetime: ...
    @property
    def updated_at(self) -> dt.datetime: ...


class _Version(Protocol):
    """What the PDF reads of an automation's published version (its list filters take
    ``automation_id``, newest first)."""

    @property
    def version(self) -> int: ...
    @property
    def changelog(self) -> str: ...
    @property
    def created_at(self) -> dt.datetime: ...


class _Run(Protocol):
    """What the PDF reads of a run (its list filters take ``automation_id``, newest first)."""

    @property
    def id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def status(self) -> Any: ...
    @property
    def triggered_by(self) -> Any: ...
    @property
    def triggered_by_id(self) -> str | None: ...
    @property
    def due_at(self) -> dt.datetime | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def duration_ms(self) -> int | None: ...
    @property
    def started_at(self) -> dt.datetime: ...
    @property
    def completed_at(self) -> dt.datetime | None: ...
    @property
    def evidence_id(self) -> str | None: ...
    @property
    def finding_id(self) -> str | None: ...
    @property
    def created_at(self) -> dt.datetime: ...
    @property
    def updated_at(self) -> dt.datetime: ...


class _Table(Protocol):
    def get(self, organization_id: str, item_id: str) -> Any | None: ...
    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[Sequence[Any], int]: ...


_AUTOMATIONS: Repo[_Table] = Repo("automations")
_VERSIONS: Repo[_Table] = Repo("automation_versions")
_RUNS: Repo[_Table] = Repo("automation_runs")
"""The automations area's tables, read through these handles (never imported)."""


def _table(session: Session, repo: Repo[_Table]) -> _Table | None:
    """The table, or None on a platform built without the automations area (nothing to read)."""
    try:
        return session[repo]
    except KeyError:
        return None


def automation_of(session: Session, organization_id: str, task: ExportedTask, automation_id: str) -> ExportedAutomation:
    """The task's automation with its latest runs, or a 404: for an id of no automation of the
    organization, and for another task's automation (it is not this task's)."""
    table = _table(session, _AUTOMATIONS)
    record = table.get(organization_id, automation_id) if table is not None else None
    if record is None or record.task_id != task.id:
        raise NotFound.resource(AUTOMATION_KIND, automation_id)
    return _exported(session, organization_id, task, record, None)


def automations_of(
    session: Session, organization_id: str, tasks: Iterable[ExportedTask], as_of: dt.datetime | None
) -> tuple[ExportedAutomation, ...]:
    """Every automation of ``tasks`` (made at or before ``as_of``) with its latest runs (started
    at or before it), by id."""
    table = _table(session, _AUTOMATIONS)
    by_id = {task.id: task for task in tasks}
    if table is None or not by_id:
        return ()
    if len(by_id) == 1:
        records = every(table, organization_id, Where({"task_id": next(iter(by_id))}))
    else:
        records = every(table, organization_id, Where({}))
    return tuple(
        _exported(session, organization_id, by_id[record.task_id], record, as_of)
        for record in sorted(records, key=lambda r: r.id)
        if record.task_id in by_id and (as_of is None or record.created_at <= as_of)
    )


def _exported(
    session: Session, organization_id: str, task: ExportedTask, record: _Automation, as_of: dt.datetime | None
) -> ExportedAutomation:
    runs, total = _runs(session, organization_id, record.id, as_of)
    version = _version(session, organization_id, record)
    names = Directory(session).names(organization_id, {run.triggered_by_id for run in runs})
    callable_kind = str(record.kind) == "callable"
    return ExportedAutomation(
        id=record.id,
        task_id=task.id,
        task_title=task.title,
        name=record.name,
        description=record.description,
        is_enabled=record.is_enabled,
        kind=str(record.kind),
        method=str(record.method),
        target=record.callable_name if callable_kind else record.url,
        schedule=record.schedule,
        version=record.version,
        version_published_at=version.created_at if version is not None else None,
        version_changelog=version.changelog if version is not None else "",
        created_at=record.created_at,
        updated_at=record.updated_at,
        runs=tuple(
            ExportedRun(
                id=run.id,
                version=run.version,
                status=str(run.status),
                triggered_by=str(run.triggered_by),
                triggered_by_id=run.triggered_by_id,
                triggered_by_name=names.get(run.triggered_by_id) if run.triggered_by_id else None,
                due_at=run.due_at,
                reason=run.reason,
                duration_ms=run.duration_ms,
                started_at=run.started_at,
                completed_at=run.completed_at,
                evidence_id=run.evidence_id,
                finding_id=run.finding_id,
                updated_at=run.updated_at,
            )
            for run in runs
        ),
        total_runs=total,
    )


def _version(session: Session, organization_id: str, record: _Automation) -> _Version | None:
    """The published version the automation's ``version`` names (the newest, as a rule)."""
    table = _table(session, _VERSIONS)
    if table is None:
        return None
    items, _ = table.list(organization_id, Where({"automation_id": record.id}), PageRequest(per_page=5))
    found: _Version | None = next((item for item in items if item.version == record.version), None)
    return found


def _runs(
    session: Session, organization_id: str, automation_id: str, as_of: dt.datetime | None
) -> tuple[list[_Run], int]:
    """The newest ``MAX_RUNS`` runs (started at or before ``as_of``) and how many there are.

    The run log lists newest first, so the runs after ``as_of`` all come before the others: they
    are skipped page by page, and counted off the total."""
    table = _table(session, _RUNS)
    if table is None:
        return [], 0
    where = Where({"automation_id": automation_id})
    kept: list[_Run] = []
    later = 0
    number = 1
    while True:
        items, total = table.list(organization_id, where, PageRequest(page=number, per_page=MAX_RUNS))
        for run in items:
            if as_of is not None and run.created_at > as_of:
                later += 1
            elif len(kept) < MAX_RUNS:
                kept.append(run)
        if len(kept) >= MAX_RUNS or not items or number * MAX_RUNS >= total:
            return kept, total - later
        number += 1


# -- the document ------------------------------------------------------------------------------


def automation_document(
    automation: ExportedAutomation, organization: str, generated_at: dt.datetime, as_of: str | None = None
) -> SummaryDocument:
    """The automation laid out for the PDF port, dated ``generated_at`` (from the records)."""
    schedule = automation.schedule or "none (runs only when asked to)"
    return SummaryDocument(
        name=automation.name,
        description=automation.description,
        version=automation.version,
        content=_content(automation),
        published_at=generated_at,
        organization=organization,
        head=(
            f"Automation {automation.id} of task {automation.task_id}",
            f"Enabled: {_yes(automation.is_enabled)}; schedule: {schedule}; definition version {automation.version}",
            f"Automation evidence of {organization}" + (f" as of {as_of}" if as_of else ""),
        ),
    )


def _content(automation: ExportedAutomation) -> str:
    published = _when(automation.version_published_at)
    version = f"{automation.version}" + (f", published {published}" if published else "")
    if automation.version_changelog:
        version += f": {automation.version_changelog}"
    lines = [
        "| Field | Value |",
        "|---|---|",
        f"| Task | {cell(automation.task_title)} ({cell(automation.task_id)}) |",
        f"| Enabled | {_yes(automation.is_enabled)} |",
        f"| Schedule | {cell(automation.schedule or 'none: runs only when asked to')} |",
        f"| Kind | {cell(automation.kind)} |",
        f"| Checks | {cell(_target(automation))} |",
        f"| Current definition version | {cell(version)} |",
        f"| Created | {cell(_when(automation.created_at))} |",
        "",
        "## Runs",
        "",
    ]
    shown = len(automation.runs)
    if not shown:
        lines.append("It has not run yet.")
    elif shown < automation.total_runs:
        left_out = automation.total_runs - shown
        lines.append(
            markdown_text(
                f"The latest {shown} of {automation.total_runs} runs, newest first; "
                f"the {left_out} older run{'s' if left_out != 1 else ''} "
                f"{'are' if left_out != 1 else 'is'} left out (the automation's run log lists every run)."
            )
        )
    else:
        lines.append(markdown_text(f"All {shown} run{'s' if shown != 1 else ''}, newest first."))
    for index, run in enumerate(automation.runs):
        lines += ["", f"### Run {automation.total_runs - index}: {markdown_text(run.status)}", ""]
        lines += [f"- {markdown_text(item)}" for item in _run_items(run)]
    return "\n".join(lines) + "\n"


def _run_items(run: ExportedRun) -> list[str]:
    took = f" ({run.duration_ms} ms)" if run.duration_ms is not None else ""
    completed = _when(run.completed_at) or "not yet (still running)"
    items = [
        f"Run {run.id} of definition version {run.version}",
        f"Started {_when(run.started_at)}; completed {completed}{took}",
        f"Triggered by: {_trigger(run)}",
    ]
    reason = _cut(run.reason)
    if run.status in ("passed", "failed"):
        items.append(f"Verdict: {run.status}" + (f"; reason: {reason}" if reason else ""))
        items.append("Error: none")
    elif run.status == "error":
        items.append("Verdict: none (the check could not be made)")
        items.append(f"Error: {reason or 'not recorded'}")
    else:
        items.append(f"Verdict: pending ({run.status})")
    outcome = []
    if run.evidence_id:
        outcome.append(f"evidence {run.evidence_id} added to the task")
    if run.finding_id:
        outcome.append(f"finding {run.finding_id}")
    items.append("Produced: " + ("; ".join(outcome) if outcome else "no evidence and no finding"))
    return items


def _trigger(run: ExportedRun) -> str:
    if run.triggered_by == "schedule":
        return "the schedule" + (f", due {_when(run.due_at)}" if run.due_at else "")
    who = run.triggered_by_id or "an unknown caller"
    if run.triggered_by_name:
        who = f"{run.triggered_by_name} ({who})"
    return f"run now by {who}" if run.triggered_by == "person" else f"{run.triggered_by}: {who}"


def _target(automation: ExportedAutomation) -> str:
    if automation.kind == "callable":
        return f"the callable {automation.target}" if automation.target else "no callable named yet"
    return f"{automation.method} {automation.target}" if automation.target else "no URL set yet"


def _when(value: dt.datetime | None) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else ""


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 3] + "..."
