"""What the Task Automations area stores and answers: automations, their versions and their
runs, the bodies that make and change them, their tables, actions and events."""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Mapping
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import MANAGERS, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.recurrence import optional_frequency
from ...kernel.validation import (
    UNSET,
    Checked,
    Patch,
    Unset,
    blank_text,
    boolean,
    choice,
    integer,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    text,
    url,
    wire_name,
)
from .jsonpath import PATH_PATTERN, JsonPathError, parse_path

__all__ = [
    "AutomationKind",
    "ProbeMethod",
    "AssertionType",
    "RunStatus",
    "RunTrigger",
    "Assertion",
    "Definition",
    "Automation",
    "AutomationVersion",
    "AutomationRun",
    "NewAutomation",
    "AutomationPatch",
    "AutomationFilter",
    "VersionFilter",
    "RunFilter",
    "AUTOMATIONS",
    "AUTOMATION_VERSIONS",
    "AUTOMATION_RUNS",
    "AUTOMATION_READ",
    "AUTOMATION_WRITE",
    "AUTOMATION_RUN",
    "MAX_ASSERTIONS",
    "MAX_OUTPUT",
    "AutomationCreated",
    "AutomationUpdated",
    "AutomationDeleted",
    "AutomationRunStarted",
    "AutomationRunCompleted",
    "EVENTS",
    "assertion_errors",
]

MAX_ASSERTIONS = 20
"""Assertions one HTTP probe checks."""
MAX_OUTPUT = 16_000
"""Characters of a run's output kept (the response's head, or the callable's output)."""


class AutomationKind(enum.StrEnum):
    """How an automation collects its evidence."""

    HTTP_PROBE = "http_probe"
    """A GET or HEAD of a URL, judged by assertions on the answer."""
    CALLABLE = "callable"
    """A Python callable installed under the ``compliance.automations`` entry points."""


class ProbeMethod(enum.StrEnum):
    GET = "GET"
    HEAD = "HEAD"


class AssertionType(enum.StrEnum):
    """What an HTTP probe's assertion checks."""

    STATUS_EQUALS = "status_equals"
    """The status is ``status``."""
    STATUS_IN = "status_in"
    """The status is one of ``statuses``."""
    JSON_PATH_EQUALS = "json_path_equals"
    """The JSON body's value at ``path`` is ``value`` (a string compared as is; any other JSON
    value compared by its JSON text: ``"true"``, ``"42"``)."""
    JSON_PATH_EXISTS = "json_path_exists"
    """The JSON body has a value at ``path``."""
    HEADER_EQUALS = "header_equals"
    """The response header ``header`` is exactly ``value``."""
    HEADER_CONTAINS = "header_contains"
    """The response header ``header`` contains ``value``."""
    TLS_EXPIRES_AFTER_DAYS = "tls_expires_after_days"
    """The server's TLS certificate expires more than ``days`` days after the run."""


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    """Claimed and under way (the probe happens outside the write that claimed it)."""
    PASSED = "passed"
    FAILED = "failed"
    """The check ran and its assertions (or the callable) said no."""
    ERROR = "error"
    """The check could not be made: no definition, a refused or unreachable target, a callable
    that raised."""


class RunTrigger(enum.StrEnum):
    PERSON = "person"
    """Run now, by a caller (``triggeredById`` names its key or person)."""
    SCHEDULE = "schedule"
    """The worker's chore, at a due time of the schedule."""


@attrs.frozen(kw_only=True)
class Assertion:
    """One rule an HTTP probe's answer must meet (checked on the way in by ``_AssertionInput``,
    so reading stored ones never re-runs validation)."""

    type: AssertionType
    status: int | None = None
    statuses: tuple[int, ...] = ()
    path: str | None = None
    """A JSONPath such as ``$.status`` or ``$.checks[0]['name']`` (see ``jsonpath``)."""
    header: str | None = None
    value: str | None = None
    days: int | None = None


def _optional_int(minimum: int, maximum: int) -> Checked:
    def check(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None or value is UNSET:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise ValidationError.field(wire_name(field.name), value, f"must be an integer from {minimum} to {maximum}")
        return value

    schema = {"type": "integer", "minimum": minimum, "maximum": maximum, "nullable": True}
    return register_schema(Checked(check, takes_field=True), schema)


def _statuses(value: Any, field: attrs.Attribute[Any]) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or len(value) > 20:
        raise ValidationError.field("statuses", value, "must be a list of at most 20 HTTP statuses")
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or not 100 <= item <= 599:
            raise ValidationError.field(f"statuses[{index}]", item, "must be an HTTP status from 100 to 599")
    return tuple(dict.fromkeys(value))


def _path(value: Any, field: attrs.Attribute[Any]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 500:
        raise ValidationError.field("path", value, "must be a JSONPath of at most 500 characters")
    try:
        parse_path(value)
    except JsonPathError as error:
        raise ValidationError.field("path", value, str(error)) from None
    return value


_HEADER_NAME = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _header(value: Any, field: attrs.Attribute[Any]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 200 or any(char not in _HEADER_NAME for char in value):
        raise ValidationError.field("header", value, "must be an HTTP header name (RFC 9110 token characters)")
    return value.lower()


@attrs.frozen(kw_only=True)
class _AssertionInput:
    type: AssertionType = attrs.field(converter=choice(AssertionType))
    status: int | None = attrs.field(default=None, converter=_optional_int(100, 599))
    statuses: tuple[int, ...] = attrs.field(
        default=(),
        converter=register_schema(
            Checked(_statuses, takes_field=True),
            {
                "type": "array",
                "maxItems": 20,
                "nullable": True,
                "items": {"type": "integer", "minimum": 100, "maximum": 599},
            },
        ),
    )
    path: str | None = attrs.field(
        default=None,
        converter=register_schema(
            Checked(_path, takes_field=True),
            {
                "type": "string",
                "maxLength": 500,
                "nullable": True,
                "pattern": PATH_PATTERN,
                "description": "a JSONPath naming one value: $, then .name, ['name'] or [index] steps",
            },
        ),
    )
    header: str | None = attrs.field(
        default=None,
        converter=register_schema(
            Checked(_header, takes_field=True),
            {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "nullable": True,
                "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
                "description": "stored in lower case",
            },
        ),
    )
    value: str | None = attrs.field(default=None, converter=optional_text(2000))
    days: int | None = attrs.field(default=None, converter=_optional_int(0, 3650))


_NEEDS: Mapping[AssertionType, tuple[str, ...]] = {
    AssertionType.STATUS_EQUALS: ("status",),
    AssertionType.STATUS_IN: ("statuses",),
    AssertionType.JSON_PATH_EQUALS: ("path", "value"),
    AssertionType.JSON_PATH_EXISTS: ("path",),
    AssertionType.HEADER_EQUALS: ("header", "value"),
    AssertionType.HEADER_CONTAINS: ("header", "value"),
    AssertionType.TLS_EXPIRES_AFTER_DAYS: ("days",),
}
"""The fields each assertion type reads: required (and the others refused, so a rule never
silently ignores what its author wrote)."""
_ASSERTION_FIELDS = tuple(field.name for field in attrs.fields(Assertion))


def _assertion(where: str, item: Any) -> Assertion:
    if isinstance(item, Assertion):
        item = attrs.asdict(item, recurse=False)
    if not isinstance(item, Mapping):
        raise ValidationError.field(where, item, "must be an object with a type")
    for key in item:
        if key not in _ASSERTION_FIELDS:
            raise ValidationError.field(f"{where}.{wire_name(str(key))}", item[key], "unknown field")
    if "type" not in item:
        raise ValidationError.field(f"{where}.type", None, "is required")
    try:
        checked = _AssertionInput(**item)
    except ValidationError as error:
        details = {**error.details, "field": f"{where}.{error.details['field']}"}
        raise ValidationError(f"{details['field']}: {details['reason']}", details) from None
    return Assertion(**attrs.asdict(checked, recurse=False))


def assertion_errors(assertions: tuple[Assertion, ...]) -> list[ValidationError]:
    """Each assertion's fields against its type (``_NEEDS``): a rule across an assertion's
    fields, which the service checks once each field is valid on its own."""
    errors: list[ValidationError] = []
    for index, assertion in enumerate(assertions):
        needs = _NEEDS[assertion.type]
        for name in _ASSERTION_FIELDS[1:]:
            value = getattr(assertion, name)
            where = f"assertions[{index}].{name}"
            if name in needs and value in (None, ()):
                errors.append(ValidationError.field(where, None, f"is required by a {assertion.type.value} assertion"))
            elif name not in needs and value not in (None, ()):
                errors.append(ValidationError.field(where, value, f"is not read by a {assertion.type.value} assertion"))
    return errors


def _assertions(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is UNSET:
        return value
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field("assertions", value, "must be a list")
    if len(value) > MAX_ASSERTIONS:
        raise ValidationError.field("assertions", len(value), f"at most {MAX_ASSERTIONS} assertions")
    return tuple(_assertion(f"assertions[{index}]", item) for index, item in enumerate(value))


assertions = register_schema(
    Checked(_assertions, takes_field=True),
    {
        "type": "array",
        "maxItems": MAX_ASSERTIONS,
        "nullable": True,
        "items": _AssertionInput,
        "description": "each assertion names a type and exactly the fields that type reads; null means none",
    },
)


@attrs.frozen(kw_only=True)
class Definition:
    """What an automation checks and when: what each version pins. A change of any of these
    fields publishes a new version."""

    kind: AutomationKind = AutomationKind.HTTP_PROBE
    url: str | None = None
    method: ProbeMethod = ProbeMethod.GET
    timeout_seconds: int = 10
    assertions: tuple[Assertion, ...] = ()
    callable_name: str | None = None
    schedule: str | None = None


DEFINITION_FIELDS = tuple(field.name for field in attrs.fields(Definition))


@attrs.frozen(kw_only=True)
class Automation:
    """An evidence collector bound to a task: an HTTP probe judged by assertions, or an installed
    callable; run now, or on its schedule by the worker."""

    id: str
    organization_id: str
    task_id: str
    name: str
    description: str = ""
    is_enabled: bool = True
    """A disabled automation runs only when asked to (run now), never on its schedule."""
    kind: AutomationKind = AutomationKind.HTTP_PROBE
    url: str | None = None
    method: ProbeMethod = ProbeMethod.GET
    timeout_seconds: int = 10
    assertions: tuple[Assertion, ...] = ()
    callable_name: str | None = None
    """The name of an installed ``compliance.automations`` entry point."""
    schedule: str | None = None
    """monthly, quarterly, yearly or an RFC 5545 rule (as a task's frequency): it runs at 00:00
    UTC on each day the schedule names. None: only when asked to."""
    version: int = 1
    """The current version's number (see its versions)."""
    next_run_at: dt.datetime | None = None
    """When the schedule next makes it due (None without a schedule, or while disabled)."""
    last_run_status: RunStatus | None = None
    last_run_at: dt.datetime | None = None
    open_finding_id: str | None = None
    """The finding its failures opened: further failures name it again while it is not closed."""
    evidence_id: str | None = None
    """The evidence item its passing runs add to the task: each passing run adds a version."""
    created_by: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def definition(self) -> Definition:
        return Definition(**{name: getattr(self, name) for name in DEFINITION_FIELDS})


@attrs.frozen(kw_only=True)
class AutomationVersion:
    """One published definition of an automation; runs name the version they ran."""

    id: str
    organization_id: str
    task_id: str
    automation_id: str
    version: int
    definition: Definition
    published_by: str | None = None
    changelog: str = ""
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class AutomationRun:
    """One run of an automation: what ran, who or what asked, and the verdict."""

    id: str
    organization_id: str
    task_id: str
    automation_id: str
    automation_name: str
    version: int
    status: RunStatus = RunStatus.RUNNING
    triggered_by: RunTrigger
    triggered_by_id: str | None = None
    """The caller's key or person for a run now; None for the schedule."""
    due_at: dt.datetime | None = None
    """The schedule's due time this run answers (None for a run now)."""
    reason: str = ""
    """Why it passed, failed or could not run: the first assertion that failed, the error."""
    output: str = ""
    """What the check saw, cut to ``MAX_OUTPUT`` characters: the status line, headers and the
    body's head of an HTTP probe; the callable's output (JSON when it answered data)."""
    duration_ms: int | None = None
    started_at: dt.datetime
    completed_at: dt.datetime | None = None
    evidence_id: str | None = None
    """The evidence a passing run added to the task."""
    finding_id: str | None = None
    """The finding a failing run opened (or found still open)."""
    created_at: dt.datetime
    updated_at: dt.datetime


_CALLABLE_NAME = re.compile(r"\S(.*\S)?")


def _callable_name(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is None or value is UNSET:
        return value
    if not isinstance(value, str) or len(value) > 200 or not _CALLABLE_NAME.fullmatch(value):
        raise ValidationError.field("callableName", value, "must be the name of an installed automation callable")
    return value


callable_name = register_schema(
    Checked(_callable_name, takes_field=True),
    {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "pattern": "^\\S(.*\\S)?$",
        "nullable": True,
        "description": "an entry point name of the compliance.automations group",
    },
)


@attrs.frozen(kw_only=True)
class NewAutomation:
    """Every field may be left out: an empty automation (named after its task) is defined later,
    as the reference platform makes one."""

    name: str | None = attrs.field(default=None, converter=text(255, optional=True))
    """Default: "<task title> - Evidence Collection"."""
    description: str = attrs.field(default="", converter=blank_text(2000))
    is_enabled: bool = attrs.field(default=True, converter=boolean)
    kind: AutomationKind = attrs.field(default=AutomationKind.HTTP_PROBE, converter=choice(AutomationKind))
    url: str | None = attrs.field(default=None, converter=url)
    """https; plain http and private addresses only where the platform allows private targets."""
    method: ProbeMethod = attrs.field(default=ProbeMethod.GET, converter=choice(ProbeMethod))
    timeout_seconds: int = attrs.field(default=10, converter=integer(1, 30))
    assertions: tuple[Assertion, ...] = attrs.field(default=(), converter=assertions)
    callable_name: str | None = attrs.field(default=None, converter=callable_name)
    schedule: str | None = attrs.field(default=None, converter=optional_frequency)
    changelog: str = attrs.field(default="", converter=blank_text(1000))
    """What the first version says of itself."""


_NEW = attrs.fields(NewAutomation)


@attrs.frozen(kw_only=True)
class AutomationPatch(Patch):
    """A change of the definition (kind, url, method, timeout, assertions, callable, schedule)
    publishes a new version, described by ``changelog``; name, description and enabling do not."""

    name: str | Unset = patch_field(text(255))
    description: str | Unset = patch_field(_NEW.description.converter)
    is_enabled: bool | Unset = patch_field(_NEW.is_enabled.converter)
    kind: AutomationKind | Unset = patch_field(_NEW.kind.converter)
    url: str | None | Unset = patch_field(_NEW.url.converter)
    method: ProbeMethod | Unset = patch_field(_NEW.method.converter)
    timeout_seconds: int | Unset = patch_field(_NEW.timeout_seconds.converter)
    assertions: tuple[Assertion, ...] | Unset = patch_field(_NEW.assertions.converter)
    callable_name: str | None | Unset = patch_field(_NEW.callable_name.converter)
    schedule: str | None | Unset = patch_field(_NEW.schedule.converter)
    changelog: str | Unset = patch_field(_NEW.changelog.converter)


@attrs.frozen(kw_only=True)
class AutomationFilter(Filter):
    task_id: str | None = attrs.field(default=None, converter=optional_id)
    is_enabled: bool | None = None
    kind: AutomationKind | None = attrs.field(default=None, converter=optional_choice(AutomationKind))


@attrs.frozen(kw_only=True)
class VersionFilter(Filter):
    automation_id: str | None = attrs.field(default=None, converter=optional_id)


@attrs.frozen(kw_only=True)
class RunFilter(Filter):
    task_id: str | None = attrs.field(default=None, converter=optional_id)
    automation_id: str | None = attrs.field(default=None, converter=optional_id)
    status: RunStatus | None = attrs.field(default=None, converter=optional_choice(RunStatus))


AUTOMATIONS: Records[Automation, AutomationFilter] = Records(
    "automations",
    model=Automation,
    filters=AutomationFilter,
    kind="automation",
    prefix="aut",
    searchable=("name", "description"),
)
AUTOMATION_VERSIONS: Records[AutomationVersion, VersionFilter] = Records(
    "automation_versions",
    model=AutomationVersion,
    filters=VersionFilter,
    kind="automation version",
    prefix="atv",
    newest_first=True,
)
AUTOMATION_RUNS: Records[AutomationRun, RunFilter] = Records(
    "automation_runs",
    model=AutomationRun,
    filters=RunFilter,
    kind="automation run",
    prefix="atr",
    newest_first=True,
    facets=("status",),
)

AUTOMATION_READ = Action("automation:read", READERS)
AUTOMATION_WRITE = Action("automation:write", MANAGERS)
AUTOMATION_RUN = Action("automation:run", MANAGERS)
"""Running a check reaches out to the network and may fail a task: what its editors do."""


class AutomationCreated(Event):
    """An automation was added to a task (its first version published with it)."""

    type = "automation.created"


class AutomationUpdated(Event):
    """Some of an automation's fields changed; a change of its definition published a new
    version (``version`` among the changes). ``previous`` holds the old values."""

    type = "automation.updated"


class AutomationDeleted(Event):
    """An automation was deleted with its versions and runs; ``data`` is the automation as it was."""

    type = "automation.deleted"


class AutomationRunStarted(Event):
    """A run was claimed (run now, or a due time of the schedule, claimed once across workers)
    and its check is under way."""

    type = "automation.run_started"


class AutomationRunCompleted(Event):
    """A run ended: passed (evidence added to the task), failed (the task failed and a finding
    opened) or error (the check could not be made); ``data`` is the run."""

    type = "automation.run_completed"


EVENTS: tuple[type[Event], ...] = (
    AutomationCreated,
    AutomationUpdated,
    AutomationDeleted,
    AutomationRunStarted,
    AutomationRunCompleted,
)
