"""Cloud security posture: where each connection stands now and how it got there, read from its
check runs. A resource's current verdict is its latest result, so a check run alone (one check)
updates that check and leaves the others as their last runs left them; a check that could not
run keeps the verdicts before it. The trend is the connection's recent runs, oldest first."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable

import attrs

from ...kernel.directory import every
from ...kernel.operations import operation
from ...kernel.page_cache import PageCache
from ...kernel.pages import PageRequest
from ...kernel.permissions import Actor
from ...kernel.registry import Route, Session
from ...kernel.severities import Severity
from ...kernel.uow import UnitOfWork
from .checks import ALL_CHECKS
from .connections import Integrations
from .models import (
    CHECK_RESULTS,
    CHECK_RUNS,
    CONNECTIONS,
    INTEGRATION_READ,
    CheckResult,
    CheckResultFilter,
    CheckRunFilter,
    CheckRunStatus,
    Connection,
    ConnectionFilter,
    ConnectionStatus,
)
from .providers import Category

__all__ = ["CloudSecurityService", "CloudSecurityState", "ConnectionPosture", "FailingBySeverity", "TrendPoint"]

TREND_RUNS = 10
"""Runs the trend shows, per connection."""
_LOOKBACK = 100
"""Runs read to find each check's latest verdicts."""


@attrs.frozen(kw_only=True)
class FailingBySeverity:
    critical: int = 0
    high: int = 0
    medium: int = 0
    low: int = 0
    info: int = 0


@attrs.frozen(kw_only=True)
class TrendPoint:
    run_id: str
    check_id: str
    at: dt.datetime
    status: CheckRunStatus
    passed: int
    failed: int


@attrs.frozen(kw_only=True)
class ConnectionPosture:
    connection_id: str
    name: str
    provider: str
    category: Category | None
    """None when the connection's provider is no longer installed."""
    status: ConnectionStatus
    last_run_at: dt.datetime | None
    resources: int
    passed: int
    failed: int
    failing: FailingBySeverity
    trend: tuple[TrendPoint, ...]


@attrs.frozen(kw_only=True)
class CloudSecurityState:
    """Every connection's posture, and the organization's totals over them."""

    resources: int
    passed: int
    failed: int
    failing: FailingBySeverity
    connections: tuple[ConnectionPosture, ...]


@attrs.define
class CloudSecurityService:
    uow: UnitOfWork
    pages: PageCache
    integrations: Integrations

    @operation(
        INTEGRATION_READ,
        Route(
            "GET",
            "/v1/cloud-security",
            "The security posture of every connection: failing resources by severity, and the trend",
        ),
        result=CloudSecurityState,
    )
    def state(self, actor: Actor) -> CloudSecurityState:
        """Connections that are disconnected are left out; a connection never run shows with
        zeros and an empty trend."""
        with self.uow.read() as session:
            connections = [
                connection
                for connection in every(session[CONNECTIONS], actor.organization_id, ConnectionFilter())
                if connection.status is not ConnectionStatus.DISCONNECTED
            ]
            postures = tuple(self._posture(session, connection) for connection in connections)
        return CloudSecurityState(
            resources=sum(p.resources for p in postures),
            passed=sum(p.passed for p in postures),
            failed=sum(p.failed for p in postures),
            failing=_add(p.failing for p in postures),
            connections=postures,
        )

    def _posture(self, session: Session, connection: Connection) -> ConnectionPosture:
        runs, _ = session[CHECK_RUNS].list(
            connection.organization_id, CheckRunFilter(connection_id=connection.id), PageRequest(per_page=_LOOKBACK)
        )
        provider = self.integrations.catalogue.providers.get(connection.provider)
        current: dict[tuple[str, str], CheckResult] = {}
        settled: set[str] = set()  # checks whose latest verdicts are read
        for run in runs:  # newest first
            if run.status is CheckRunStatus.ERROR and run.total_checked == 0:
                continue
            results = every(session[CHECK_RESULTS], connection.organization_id, CheckResultFilter(run_id=run.id))
            covered = {result.check_id for result in results} if run.check_id == ALL_CHECKS else {run.check_id}
            for result in results:
                if result.check_id not in settled:
                    current.setdefault((result.check_id, result.resource_id), result)
            settled |= covered
        failing = [result for result in current.values() if not result.passed]
        return ConnectionPosture(
            connection_id=connection.id,
            name=connection.name,
            provider=connection.provider,
            category=provider.manifest.category if provider is not None else None,
            status=connection.status,
            last_run_at=runs[0].completed_at if runs else None,
            resources=len(current),
            passed=len(current) - len(failing),
            failed=len(failing),
            failing=_count(failing),
            trend=tuple(
                TrendPoint(
                    run_id=run.id,
                    check_id=run.check_id,
                    at=run.completed_at,
                    status=run.status,
                    passed=run.passed_count,
                    failed=run.failed_count,
                )
                for run in reversed(runs[:TREND_RUNS])
            ),
        )


def _count(failing: list[CheckResult]) -> FailingBySeverity:
    counts = Counter((result.severity or Severity.MEDIUM).value for result in failing)
    return FailingBySeverity(**{severity.value: counts[severity.value] for severity in Severity})


def _add(parts: Iterable[FailingBySeverity]) -> FailingBySeverity:
    counts = Counter({severity.value: 0 for severity in Severity})
    for part in parts:
        counts.update(attrs.asdict(part))
    return FailingBySeverity(**counts)
