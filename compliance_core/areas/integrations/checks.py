"""Checks: what a provider's manifest declares it can verify, run for a connection now or by the
daily schedule, and kept as runs with one result per resource.

A run's results are compared with the same resources' previous results: a resource that starts
failing opens a finding (through the findings area's port, ``kernel.outcomes``), one that keeps
failing keeps the same finding, and one that passes again closes it. So a check that fails for a
month opens one finding, not thirty, and the finding closes itself when the gap is fixed. All of
it commits in the write that stores the run.

The provider is called outside any write (it is a network away); a check that cannot run at all
(the provider unreachable, its credentials refused) is an ``error`` run, which says nothing about
the resources and leaves their findings as they are.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import attrs

from ...kernel.blobs import Source
from ...kernel.clock import utc
from ...kernel.context_history import port_of
from ...kernel.directory import Directory, every
from ...kernel.errors import Conflict, NotFound, ValidationError
from ...kernel.operations import operation, page_of
from ...kernel.outcomes import FailedCheck, FindingRaiser
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import fetch
from ...kernel.registry import Route, Session
from ...kernel.uow import Tx, UnitOfWork
from ...kernel.uploads import chunks_of, content_of
from ...kernel.validation import optional_text
from .connections import CHECK_EVERY, Integrations, usable
from .models import (
    CHECK_RESULTS,
    CHECK_RUNS,
    CONNECTIONS,
    INTEGRATION_READ,
    INTEGRATION_RUN,
    CheckResult,
    CheckResultFilter,
    CheckRun,
    CheckRunCompleted,
    CheckRunFilter,
    CheckRunStatus,
    CheckRunTrigger,
    Connection,
    ConnectionFilter,
    ConnectionStatus,
    settings_map,
)
from .providers import Access, CheckSpec, Provider, ProviderError, ResourceResult
from .scans import MAX_SCAN_BYTES, SCANNER_IMPORT, ScanImport, read_scan

__all__ = ["CheckService", "RunChecks", "ProviderChecks", "CheckState", "ConnectionChecks", "ALL_CHECKS"]

_PROVIDER = "/v1/integrations/checks/providers/{provider_slug}"
_CONNECTION = "/v1/integrations/checks/connections/{connection_id}"
_RUN = _CONNECTION + "/runs/{check_run_id}"
_EMPTY_SARIF = "eyJ2ZXJzaW9uIjogIjIuMS4wIiwgInJ1bnMiOiBbXX0="
"""``{"version": "2.1.0", "runs": []}``: a scan that found nothing."""
ALL_CHECKS = "all"
"""The ``checkId`` of a run of every check of a connection."""
MAX_RESULTS = 1000
"""Resources one run keeps; a provider answering more is cut, and the run says so."""


@attrs.frozen(kw_only=True)
class ProviderChecks:
    data: tuple[CheckSpec, ...]


@attrs.frozen(kw_only=True)
class CheckState:
    """A check a connection can run, with its last run (none yet: nulls)."""

    id: str
    name: str
    description: str
    control_refs: tuple[str, ...]
    last_run_id: str | None
    last_status: CheckRunStatus | None
    last_run_at: dt.datetime | None


@attrs.frozen(kw_only=True)
class ConnectionChecks:
    connection_id: str
    status: ConnectionStatus
    data: tuple[CheckState, ...]


@attrs.frozen(kw_only=True)
class RunChecks:
    check_id: str | None = attrs.field(default=None, converter=optional_text(100))
    """The one check to run; left out, every check of the connection's provider."""


@attrs.frozen(kw_only=True)
class _Verdict:
    """What calling the provider gave for one check: its results, or why it could not run."""

    spec: CheckSpec
    results: Sequence[ResourceResult]
    error: str | None


@attrs.define
class CheckService:
    uow: UnitOfWork
    pages: PageCache
    integrations: Integrations
    ports: tuple[object, ...] = ()

    @operation(
        INTEGRATION_READ,
        Route("GET", _PROVIDER, "The checks a provider runs and the controls each gives evidence for"),
        result=ProviderChecks,
    )
    def for_provider(self, actor: Actor, provider_slug: str) -> ProviderChecks:
        return ProviderChecks(data=self.integrations.catalogue.get(provider_slug).manifest.checks)

    @operation(
        INTEGRATION_READ,
        Route("GET", _CONNECTION, "The checks a connection runs, each with its last run"),
        result=ConnectionChecks,
    )
    def for_connection(self, actor: Actor, connection_id: str) -> ConnectionChecks:
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
            runs = session[CHECK_RUNS]
            specs = self.integrations.provider(connection.provider).manifest.checks

            def newest(check_id: str) -> CheckRun | None:
                found, _ = runs.list(
                    actor.organization_id,
                    CheckRunFilter(connection_id=connection_id, check_id=check_id),
                    PageRequest(per_page=1),
                )
                return found[0] if found else None

            every_check = newest(ALL_CHECKS)
            last: dict[str, CheckRun | None] = {}
            for spec in specs:
                covering = [run for run in (newest(spec.id), every_check) if run is not None]
                last[spec.id] = max(covering, key=lambda run: (run.completed_at, run.id)) if covering else None
        return ConnectionChecks(
            connection_id=connection.id,
            status=connection.status,
            data=tuple(
                CheckState(
                    id=spec.id,
                    name=spec.name,
                    description=spec.description,
                    control_refs=spec.control_refs,
                    last_run_id=run.id if run else None,
                    last_status=run.status if run else None,
                    last_run_at=run.completed_at if run else None,
                )
                for spec in specs
                for run in (last[spec.id],)
            ),
        )

    @operation(
        INTEGRATION_RUN,
        Route("POST", _CONNECTION + "/run", "Run a connection's checks now: every one, or the one checkId names", 201),
        body=RunChecks,
        result=CheckRun,
        example={},
    )
    def run_checks(self, actor: Actor, connection_id: str, data: RunChecks) -> CheckRun:
        """One run with a result per resource (``checkId`` ``all`` for every check), answered
        with its verdict: a check that cannot run makes the run ``error`` (unless another
        failed), never an error of this call."""
        return self._run(actor, connection_id, data.check_id, CheckRunTrigger.PERSON)

    @operation(
        INTEGRATION_RUN,
        Route("POST", _CONNECTION + "/import", "Import a scanner's results (SARIF or OCSF) as a check run", 201),
        body=ScanImport,
        result=CheckRun,
        example={"format": "sarif", "content": _EMPTY_SARIF},
    )
    def import_results(self, actor: Actor, connection_id: str, data: ScanImport) -> CheckRun:
        """The file is the scanner's whole picture: a resource failing in it opens (or keeps) a
        finding, one passing or gone from it since the last import closes its finding. Any
        connection takes imports (Prowler's results beside an AWS connection); the built-in
        ``scanner-import`` provider is a connection for a scanner alone."""
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        usable(connection, "import results")
        spec = SCANNER_IMPORT.check(data.format.value)
        content = _bounded(content_of(data.content), MAX_SCAN_BYTES)
        verdict = _Verdict(spec=spec, results=read_scan(data.format, content), error=None)
        started_at = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            return self._store(tx, actor, connection, spec.id, [verdict], CheckRunTrigger.IMPORT, started_at)

    @operation(
        INTEGRATION_READ,
        Route("GET", _CONNECTION + "/runs", "A connection's check runs, newest first"),
        paged=True,
        result=CheckRun,
        lists=CHECK_RUNS,
    )
    def runs(self, actor: Actor, connection_id: str, page: PageRequest | None = None) -> Page[CheckRun]:
        with self.uow.read() as session:  # any other id, of any shape, is a 404
            fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        return page_of(self, CHECK_RUNS, actor, CheckRunFilter(connection_id=connection_id), page)

    @operation(INTEGRATION_READ, Route("GET", _RUN, "Read one check run"), result=CheckRun)
    def run(self, actor: Actor, connection_id: str, check_run_id: str) -> CheckRun:
        with self.uow.read() as session:
            return _run_of(session, actor.organization_id, connection_id, check_run_id)

    @operation(
        INTEGRATION_READ,
        Route("GET", _RUN + "/results", "A check run's results, one per resource"),
        paged=True,
        result=CheckResult,
        lists=CHECK_RESULTS,
    )
    def results(
        self, actor: Actor, connection_id: str, check_run_id: str, page: PageRequest | None = None
    ) -> Page[CheckResult]:
        with self.uow.read() as session:
            _run_of(session, actor.organization_id, connection_id, check_run_id)
        return page_of(self, CHECK_RESULTS, actor, CheckResultFilter(run_id=check_run_id), page)

    # -- the schedule --------------------------------------------------------------------------

    def run_due(self, now: dt.datetime | None = None) -> int:
        """Run every check of each active connection whose daily time has come, in every
        organization; the next time is claimed in the write that finds it due, so two workers
        never run the same connection's checks twice."""
        now = utc(now) if now is not None else self.uow.clock.now()
        with self.uow.read() as session:
            organizations = Directory(session).organization_ids()
        done = 0
        for organization_id in organizations:
            claimed: list[Connection] = []
            with self.uow.write(None) as tx:
                for connection in every(
                    tx[CONNECTIONS], organization_id, ConnectionFilter(status=ConnectionStatus.ACTIVE)
                ):
                    if (
                        connection.next_check_at is not None
                        and connection.next_check_at <= now
                        and self._runs(connection)
                    ):
                        tx[CONNECTIONS].update(attrs.evolve(connection, next_check_at=now + CHECK_EVERY))
                        claimed.append(connection)
            for connection in claimed:
                self._run(None, connection, None, CheckRunTrigger.SCHEDULE)
                done += 1
        return done

    # -- helpers -------------------------------------------------------------------------------

    def _runs(self, connection: Connection) -> bool:
        """Whether the schedule runs the connection's checks: its provider is installed and runs them."""
        provider = self.integrations.catalogue.providers.get(connection.provider)
        return provider is not None and provider.manifest.runs

    def _run(
        self, actor: Actor | None, connection: Connection | str, check_id: str | None, trigger: CheckRunTrigger
    ) -> CheckRun:
        with self.uow.read() as session:
            if isinstance(connection, str):
                assert actor is not None
                connection = fetch(session, CONNECTIONS, actor.organization_id, connection)
            usable(connection, "run checks")
            provider, access = self.integrations.access(session, connection)
        if not provider.manifest.runs:
            raise Conflict(
                f"the results of {provider.manifest.slug} are imported, not run: POST .../import",
                {"field": "provider", "value": provider.manifest.slug, "reason": "its results are imported"},
            )
        specs = provider.manifest.checks
        if check_id is not None:
            specs = tuple(spec for spec in specs if spec.id == check_id)
            if not specs:
                known = ", ".join(spec.id for spec in provider.manifest.checks)
                raise ValidationError.field(
                    "checkId", check_id, f"is not a check of {provider.manifest.slug}; its checks: {known}"
                )
        started_at = self.uow.clock.now()
        verdicts = [_call(provider, spec, access) for spec in specs]
        with self.uow.write(actor) as tx:
            return self._store(tx, actor, connection, check_id, verdicts, trigger, started_at)

    def _store(
        self,
        tx: Tx,
        actor: Actor | None,
        connection: Connection,
        check_id: str | None,
        verdicts: Sequence[_Verdict],
        trigger: CheckRunTrigger,
        started_at: dt.datetime,
    ) -> CheckRun:
        now = self.uow.clock.now()
        organization_id = connection.organization_id
        errors = [f"{verdict.spec.id}: {verdict.error}" for verdict in verdicts if verdict.error]
        judged = [(verdict.spec, result) for verdict in verdicts for result in verdict.results]
        if len(judged) > MAX_RESULTS:
            errors.append(f"the provider answered {len(judged)} resources; the first {MAX_RESULTS} are kept")
            judged = judged[:MAX_RESULTS]
        failed = sum(1 for _, result in judged if not result.passed)
        single = verdicts[0].spec if check_id is not None else None
        run = CheckRun(
            id=self.uow.ids.new(CHECK_RUNS.prefix),
            organization_id=organization_id,
            connection_id=connection.id,
            provider=connection.provider,
            check_id=single.id if single else ALL_CHECKS,
            check_name=single.name if single else "Every check",
            status=CheckRunStatus.FAILED if failed else CheckRunStatus.ERROR if errors else CheckRunStatus.SUCCESS,
            trigger=trigger,
            total_checked=len(judged),
            passed_count=len(judged) - failed,
            failed_count=failed,
            error_message="; ".join(errors)[:2000] or None,
            started_at=started_at,
            completed_at=now,
            duration_ms=int((now - started_at).total_seconds() * 1000),
            created_by=actor.principal if actor else None,
            created_at=now,
            updated_at=now,
        )
        tx[CHECK_RUNS].add(run)
        raiser = port_of(self.ports, FindingRaiser)
        for spec, result in judged:
            finding_id = self._follow(tx, raiser, connection, spec, result, run, now)
            tx[CHECK_RESULTS].add(
                CheckResult(
                    id=self.uow.ids.new(CHECK_RESULTS.prefix),
                    organization_id=organization_id,
                    run_id=run.id,
                    connection_id=connection.id,
                    check_id=spec.id,
                    passed=result.passed,
                    resource_type=result.resource_type[:100],
                    resource_id=result.resource_id[:500],
                    title=result.title[:255],
                    description=result.description[:2000],
                    severity=None if result.passed else result.severity or spec.severity,
                    remediation=result.remediation[:2000],
                    evidence=json.dumps(dict(result.evidence), sort_keys=True, default=str)[:20_000],
                    finding_id=finding_id,
                    collected_at=now,
                    created_at=now,
                    updated_at=now,
                )
            )
        for verdict in verdicts:
            if verdict.error is None and raiser is not None:
                seen = {result.resource_id[:500] for spec, result in judged if spec.id == verdict.spec.id}
                self._close_vanished(tx, raiser, connection, verdict.spec, seen, run, now)
        tx.record(CheckRunCompleted(organization_id=organization_id, subject=run))
        return run

    def _close_vanished(
        self,
        tx: Tx,
        raiser: FindingRaiser,
        connection: Connection,
        spec: CheckSpec,
        seen: set[str],
        run: CheckRun,
        now: dt.datetime,
    ) -> None:
        """A resource failing in the previous run of this check and absent from this one is gone
        (deleted, or fixed and no longer reported, as a scanner's file leaves it out): its finding
        closes as if it had passed."""
        organization_id = connection.organization_id
        earlier = [
            found
            for check_id in (spec.id, ALL_CHECKS)
            for found in tx[CHECK_RUNS].list(
                organization_id, CheckRunFilter(connection_id=connection.id, check_id=check_id), PageRequest(per_page=2)
            )[0]
            if found.id != run.id
        ]
        if not earlier:
            return
        previous = max(earlier, key=lambda found: (found.completed_at, found.id))
        failing = every(
            tx[CHECK_RESULTS], organization_id, CheckResultFilter(run_id=previous.id, check_id=spec.id, passed=False)
        )
        for result in failing:
            if result.finding_id is not None and result.resource_id not in seen:
                raiser.resolve(tx, organization_id, result.finding_id, now)

    def _follow(
        self,
        tx: Tx,
        raiser: FindingRaiser | None,
        connection: Connection,
        spec: CheckSpec,
        result: ResourceResult,
        run: CheckRun,
        now: dt.datetime,
    ) -> str | None:
        """The finding of this resource's failure: the one its previous failure opened, a new one,
        or none (passing: the previous failure's finding is closed)."""
        if raiser is None:
            return None
        found, _ = tx[CHECK_RESULTS].list(
            connection.organization_id,
            CheckResultFilter(connection_id=connection.id, check_id=spec.id, resource_id=result.resource_id[:500]),
            PageRequest(per_page=1),
        )
        previous = found[0] if found else None
        if result.passed:
            if previous is not None and previous.finding_id is not None:
                raiser.resolve(tx, connection.organization_id, previous.finding_id, now)
            return None
        source = settings_map(connection.variables).get("source")
        lines = [
            result.description,
            f"Remediation: {result.remediation}" if result.remediation else "",
            f"Source: {source}" if source else "",
        ]
        return raiser.raise_(
            tx,
            self.uow.ids,
            FailedCheck(
                organization_id=connection.organization_id,
                task_id=None,
                title=f"{spec.name}: {result.title}"[:255],
                content="\n\n".join(
                    [line for line in lines if line]
                    + [
                        f"Found by the {spec.id} check of the {connection.name} connection ({connection.provider}), run {run.id}."
                    ]
                ),
                severity=result.severity or spec.severity,
                created_by=run.created_by,
                open_finding_id=previous.finding_id if previous is not None and not previous.passed else None,
                at=now,
            ),
        )


def _call(provider: Provider, spec: CheckSpec, access: Access) -> _Verdict:
    try:
        return _Verdict(spec=spec, results=provider.run(spec.id, access), error=None)
    except ProviderError as refused:
        return _Verdict(spec=spec, results=(), error=str(refused)[:2000] or type(refused).__name__)


def _bounded(source: Source, limit: int) -> bytes:
    """The bytes of an uploaded file, refused past ``limit`` (a multipart part is streamed)."""
    data = bytearray()
    for chunk in chunks_of(source):
        data += chunk
        if len(data) > limit:
            raise ValidationError.field("content", len(data), f"must be a file of at most {limit} bytes")
    return bytes(data)


def _run_of(session: Session, organization_id: str, connection_id: str, check_run_id: str) -> CheckRun:
    run = fetch(session, CHECK_RUNS, organization_id, check_run_id)
    if run.connection_id != connection_id:
        raise NotFound.resource(CHECK_RUNS.kind, check_run_id)
    return run
