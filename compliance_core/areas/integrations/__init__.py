"""Integrations: connections to providers (an HTTPS endpoint, GitHub, AWS...), the variables
their checks read, and the checks that monitor controls continuously, opening a finding when a
resource starts failing and closing it when it passes again.

Four areas, as the spec groups them: **Connections** (the provider catalogue, a connection's
life and its sealed credentials), **Variables** (a provider's declared settings and a
connection's values), **Checks** (runs now or daily, scanner imports, their per-resource
results) and **CloudSecurity** (each connection's posture and its trend). Providers are
adapters outside core, found through the ``compliance.providers`` entry points (``providers``);
credentials are sealed by the instance's vault (``kernel.vault``). See docs/integrations.md.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.registry import Area, Chore
from ...kernel.uow import Context
from .checks import ALL_CHECKS, CheckService, CheckState, ConnectionChecks, ProviderChecks, RunChecks
from .connections import ConnectionService, Integrations, Providers
from .models import (
    CHECK_RESULTS,
    CHECK_RUNS,
    CONNECTIONS,
    CREDENTIALS,
    INTEGRATION_READ,
    INTEGRATION_RUN,
    INTEGRATION_WRITE,
    CheckResult,
    CheckResultFilter,
    CheckRun,
    CheckRunCompleted,
    CheckRunFilter,
    CheckRunStatus,
    CheckRunTrigger,
    Connection,
    ConnectionCreated,
    ConnectionDeleted,
    ConnectionFilter,
    ConnectionPatch,
    ConnectionStatus,
    ConnectionUpdated,
    NewConnection,
    NewCredentials,
    Setting,
    VariableValues,
)
from .posture import CloudSecurityService, CloudSecurityState, ConnectionPosture, FailingBySeverity, TrendPoint
from .providers import (
    Access,
    AuthType,
    Category,
    CheckSpec,
    CredentialField,
    Manifest,
    Provider,
    ProviderError,
    ResourceResult,
    Variable,
    VariableType,
)
from .scans import ScanFormat, ScanImport
from .variables import ConnectionVariables, ProviderVariables, VariableService, VariableState

__all__ = [
    "Access",
    "ScanFormat",
    "ScanImport",
    "AuthType",
    "Category",
    "CheckSpec",
    "CredentialField",
    "Manifest",
    "Provider",
    "ProviderError",
    "ResourceResult",
    "Variable",
    "VariableType",
    "Connection",
    "ConnectionStatus",
    "ConnectionFilter",
    "NewConnection",
    "ConnectionPatch",
    "NewCredentials",
    "VariableValues",
    "Setting",
    "CheckRun",
    "CheckRunFilter",
    "CheckResult",
    "CheckResultFilter",
    "CheckRunStatus",
    "CheckRunTrigger",
    "Providers",
    "ProviderVariables",
    "VariableState",
    "ConnectionVariables",
    "ProviderChecks",
    "CheckState",
    "ConnectionChecks",
    "ALL_CHECKS",
    "RunChecks",
    "ConnectionService",
    "VariableService",
    "CheckService",
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
    "CONNECTIONS_AREA",
    "VARIABLES_AREA",
    "CHECKS_AREA",
    "CLOUD_SECURITY_AREA",
    "CloudSecurityService",
    "CloudSecurityState",
    "ConnectionPosture",
    "FailingBySeverity",
    "TrendPoint",
]


def _integrations(context: Context) -> Integrations:
    return context.share("integrations", lambda: Integrations(context))


def _connections(context: Context) -> ConnectionService:
    return ConnectionService(context.uow, context.pages, _integrations(context))


CONNECTIONS_AREA = Area(
    name="integration_connections",
    tag="Connections",
    service=_connections,
    api=ConnectionService,
    actions=(INTEGRATION_READ, INTEGRATION_WRITE),
    records=(CONNECTIONS, CREDENTIALS),
    events=(ConnectionCreated, ConnectionUpdated, ConnectionDeleted),
)

VARIABLES_AREA = Area(
    name="integration_variables",
    tag="Variables",
    service=lambda context: VariableService(context.uow, context.pages, _integrations(context), _connections(context)),
    api=VariableService,
    actions=(INTEGRATION_READ, INTEGRATION_WRITE),
)

CHECKS_AREA = Area(
    name="integration_checks",
    tag="Checks",
    service=lambda context: CheckService(context.uow, context.pages, _integrations(context), ports=context.ports),
    api=CheckService,
    actions=(INTEGRATION_READ, INTEGRATION_RUN),
    records=(CHECK_RUNS, CHECK_RESULTS),
    events=(CheckRunCompleted,),
    chores=(
        Chore(
            name="run the integration checks that fell due",
            every=dt.timedelta(minutes=15),
            run=CheckService.run_due,
            report="integrationCheckRuns",
            done="ran %d integration check(s)",
        ),
    ),
)

CLOUD_SECURITY_AREA = Area(
    name="cloud_security",
    tag="CloudSecurity",
    service=lambda context: CloudSecurityService(context.uow, context.pages, _integrations(context)),
    api=CloudSecurityService,
    actions=(INTEGRATION_READ,),
)
