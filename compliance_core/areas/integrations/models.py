"""The records of integrations: connections to providers, their sealed credentials, check runs and
the per-resource results of each run, with their events and permissions."""

from __future__ import annotations

import datetime as dt
import enum
import json
from collections.abc import Iterable
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import MANAGERS, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.severities import Severity
from ...kernel.validation import (
    Checked,
    Patch,
    Unset,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    text,
    wire_name,
)

__all__ = [
    "ConnectionStatus",
    "Setting",
    "Connection",
    "NewConnection",
    "ConnectionPatch",
    "NewCredentials",
    "VariableValues",
    "ConnectionFilter",
    "CredentialVersion",
    "CredentialFilter",
    "CheckRunStatus",
    "CheckRunTrigger",
    "CheckRun",
    "CheckRunFilter",
    "CheckResult",
    "CheckResultFilter",
    "CONNECTIONS",
    "CREDENTIALS",
    "CHECK_RUNS",
    "CHECK_RESULTS",
    "INTEGRATION_READ",
    "INTEGRATION_WRITE",
    "INTEGRATION_RUN",
    "ConnectionCreated",
    "ConnectionUpdated",
    "ConnectionDeleted",
    "CheckRunCompleted",
    "settings_map",
]

MAX_SETTINGS = 50
MAX_SETTING_CHARS = 8000


class ConnectionStatus(enum.StrEnum):
    PENDING = "pending"
    """Made, not yet reached: its first test (on create, or ``test``) decides."""
    ACTIVE = "active"
    ERROR = "error"
    """Its last test or run could not reach the provider; ``errorMessage`` says why."""
    PAUSED = "paused"
    """Kept, but the schedule runs none of its checks until resumed."""
    DISCONNECTED = "disconnected"
    """Its credentials are gone; it stays as the history of its runs."""


@attrs.frozen(kw_only=True)
class Setting:
    """A named value of a connection: a variable, or a credential field that is not secret."""

    id: str
    value: str


def _settings(value: Any, field: attrs.Attribute[Any]) -> tuple[Setting, ...]:
    """A JSON object of names to text, numbers or booleans, kept as text: which names and types
    are right is the provider's manifest to judge, so the service checks them against it."""
    name = wire_name(field.name)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValidationError.field(name, value, "must be an object of names to values")
    if len(value) > MAX_SETTINGS:
        raise ValidationError.field(name, len(value), f"must hold at most {MAX_SETTINGS} entries")
    found: list[Setting] = []
    for key, item in value.items():
        if isinstance(item, bool):
            text_value = "true" if item else "false"
        elif isinstance(item, (int, float)):
            text_value = json.dumps(item)
        elif isinstance(item, str):
            text_value = item
        else:
            raise ValidationError.field(name, item, f"{key}: must be text, a number or a boolean")
        if len(text_value) > MAX_SETTING_CHARS:
            raise ValidationError.field(
                f"{name}.{key}", len(text_value), f"must be at most {MAX_SETTING_CHARS} characters"
            )
        found.append(Setting(id=key, value=text_value))
    return tuple(found)


_SETTINGS = register_schema(
    Checked(_settings, takes_field=True),
    {
        "type": "object",
        "maxProperties": MAX_SETTINGS,
        "additionalProperties": {
            "anyOf": [{"type": "string", "maxLength": MAX_SETTING_CHARS}, {"type": "number"}, {"type": "boolean"}]
        },
        "nullable": True,
        "description": "names to values, as the provider's manifest declares them",
    },
)


def settings_map(settings: Iterable[Setting]) -> dict[str, str]:
    return {setting.id: setting.value for setting in settings}


@attrs.frozen(kw_only=True)
class Connection:
    """An organization's link to a provider. Its secret credentials are never part of it: they are
    sealed in a credential version (``credentialVersion`` counts them)."""

    id: str
    organization_id: str
    provider: str
    name: str
    status: ConnectionStatus
    settings: tuple[Setting, ...] = ()
    """The credential fields the manifest marks not secret (an account id, a role ARN)."""
    variables: tuple[Setting, ...] = ()
    credential_version: int = 0
    error_message: str | None = None
    last_tested_at: dt.datetime | None = None
    next_check_at: dt.datetime | None = None
    """When the schedule runs its checks next (daily while active); None while it is not."""
    created_by: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewConnection:
    provider: str = attrs.field(converter=text(100))
    name: str | None = attrs.field(default=None, converter=optional_text(255))
    """Defaults to the provider's name."""
    credentials: tuple[Setting, ...] = attrs.field(default=None, converter=_SETTINGS)
    variables: tuple[Setting, ...] = attrs.field(default=None, converter=_SETTINGS)


@attrs.frozen(kw_only=True)
class ConnectionPatch(Patch):
    name: str | Unset = patch_field(text(255))


@attrs.frozen(kw_only=True)
class NewCredentials:
    """Credentials that replace the connection's (a new sealed version); fields left out keep
    their stored values."""

    credentials: tuple[Setting, ...] = attrs.field(converter=_SETTINGS)


@attrs.frozen(kw_only=True)
class VariableValues:
    """Values to set on a connection, each replacing the one it names (the others are kept)."""

    values: tuple[Setting, ...] = attrs.field(converter=_SETTINGS)


@attrs.frozen(kw_only=True)
class ConnectionFilter(Filter):
    provider: str | None = attrs.field(default=None, converter=optional_text(100))
    status: ConnectionStatus | None = attrs.field(default=None, converter=optional_choice(ConnectionStatus))


@attrs.frozen(kw_only=True)
class CredentialVersion:
    """One sealed set of a connection's secret credentials; the newest is the one in use."""

    id: str
    organization_id: str
    connection_id: str
    version: int
    sealed: str
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class CredentialFilter(Filter):
    connection_id: str | None = attrs.field(default=None, converter=optional_id)


class CheckRunStatus(enum.StrEnum):
    SUCCESS = "success"
    """Every resource passed."""
    FAILED = "failed"
    """Some resource failed."""
    ERROR = "error"
    """The check could not run (``errorMessage`` says why): nothing is known of its resources."""


class CheckRunTrigger(enum.StrEnum):
    PERSON = "person"
    SCHEDULE = "schedule"
    IMPORT = "import"
    """A scanner's results file, imported."""


@attrs.frozen(kw_only=True)
class CheckRun:
    id: str
    organization_id: str
    connection_id: str
    provider: str
    check_id: str
    check_name: str
    status: CheckRunStatus
    trigger: CheckRunTrigger
    total_checked: int = 0
    passed_count: int = 0
    failed_count: int = 0
    error_message: str | None = None
    started_at: dt.datetime
    completed_at: dt.datetime
    duration_ms: int = 0
    created_by: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class CheckRunFilter(Filter):
    connection_id: str | None = attrs.field(default=None, converter=optional_id)
    check_id: str | None = attrs.field(default=None, converter=optional_text(100))
    status: CheckRunStatus | None = attrs.field(default=None, converter=optional_choice(CheckRunStatus))


@attrs.frozen(kw_only=True)
class CheckResult:
    """One resource a run looked at. ``findingId`` is the finding its failure opened (kept while
    it keeps failing, closed when it passes again)."""

    id: str
    organization_id: str
    run_id: str
    connection_id: str
    check_id: str
    passed: bool
    resource_type: str
    resource_id: str
    title: str
    description: str = ""
    severity: Severity | None = None
    remediation: str = ""
    evidence: str = "{}"
    """What the check saw, as JSON text."""
    finding_id: str | None = None
    collected_at: dt.datetime
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class CheckResultFilter(Filter):
    run_id: str | None = attrs.field(default=None, converter=optional_id)
    connection_id: str | None = attrs.field(default=None, converter=optional_id)
    check_id: str | None = attrs.field(default=None, converter=optional_text(100))
    resource_id: str | None = attrs.field(default=None, converter=optional_text(500))
    passed: bool | None = None


CONNECTIONS: Records[Connection, ConnectionFilter] = Records(
    "integration_connections",
    model=Connection,
    filters=ConnectionFilter,
    kind="connection",
    prefix="con",
    facets=("status",),
    searchable=("name", "provider"),
    sortable=("name", "provider", "status", "updated_at"),
    ranged="created_at",
)
CREDENTIALS: Records[CredentialVersion, CredentialFilter] = Records(
    "integration_credentials",
    model=CredentialVersion,
    filters=CredentialFilter,
    kind="credential version",
    prefix="crd",
)
CHECK_RUNS: Records[CheckRun, CheckRunFilter] = Records(
    "integration_check_runs",
    model=CheckRun,
    filters=CheckRunFilter,
    kind="check run",
    prefix="chr",
    newest_first=True,
    facets=("status",),
)
CHECK_RESULTS: Records[CheckResult, CheckResultFilter] = Records(
    "integration_check_results",
    model=CheckResult,
    filters=CheckResultFilter,
    kind="check result",
    prefix="chk",
    newest_first=True,
    searchable=("title", "resource_id"),
)

INTEGRATION_READ = Action("integration:read", READERS)
INTEGRATION_WRITE = Action("integration:write", MANAGERS)
INTEGRATION_RUN = Action("integration:run", MANAGERS)


class ConnectionCreated(Event):
    """A connection to a provider was made (its credentials sealed, never in the event)."""

    type = "integration_connection.created"


class ConnectionUpdated(Event):
    """A connection's name, status, variables or credentials changed; ``previous`` holds the old
    values (a credential change shows as a new ``credentialVersion``)."""

    type = "integration_connection.updated"


class ConnectionDeleted(Event):
    """A connection was deleted with its credentials, runs and results."""

    type = "integration_connection.deleted"


class CheckRunCompleted(Event):
    """A check run of a connection finished: its counts and status (the results are listed with
    the run)."""

    type = "integration_check_run.completed"
