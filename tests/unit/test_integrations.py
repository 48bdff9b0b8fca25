"""Integrations in-process: connections with sealed credentials, their tests and states, variables
checked against the manifest, and check runs that open one finding per failing resource and close
it when the resource passes again. The provider here is a scripted double of an outside service;
the built-in providers are tested against real servers (tests/unit/test_https_endpoint_provider.py)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from scripted_provider import MANIFEST, Scripted, user_result

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.findings import FindingFilter, FindingSource, FindingStatus
from compliance_core.areas.integrations import (
    CREDENTIALS,
    CheckRunStatus,
    CheckRunTrigger,
    ConnectionPatch,
    ConnectionStatus,
    NewConnection,
    NewCredentials,
    ProviderError,
    ResourceResult,
    RunChecks,
    VariableValues,
)
from compliance_core.kernel.audit import AUDIT_LOG, AuditFilter
from compliance_core.kernel.errors import Conflict, Forbidden, NotFound, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.permissions import Actor, Role
from compliance_core.kernel.severities import Severity
from compliance_store.memory import MemoryStore

SECRET = "tok_super_secret_value"


@pytest.fixture
def provider() -> Scripted:
    return Scripted()


@pytest.fixture
def platform(provider: Scripted) -> Platform:
    return Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds(), settings={"providers": [provider]})


@pytest.fixture
def owner(platform: Platform) -> Actor:
    return platform.actor(platform.bootstrap("Acme").organization.id)


def _connect(platform: Platform, owner: Actor, **fields: Any) -> Any:
    body = {"provider": "scripted", "credentials": {"token": SECRET}, "variables": {"url": "https://idp.example"}}
    return platform.integration_connections.create(owner, NewConnection(**{**body, **fields}))


def _findings(platform: Platform, actor: Actor) -> list[Any]:
    return list(platform.findings.list(actor, FindingFilter(), PageRequest(per_page=100)).items)


# -- connections -----------------------------------------------------------------------------


def test_the_catalogue_lists_the_installed_providers(platform: Platform, owner: Actor) -> None:
    assert [manifest.slug for manifest in platform.integration_connections.providers(owner).data] == [
        "scanner-import",
        "scripted",
    ]
    assert platform.integration_connections.provider(owner, "scripted") == MANIFEST
    with pytest.raises(NotFound):
        platform.integration_connections.provider(owner, "gitlab")


def test_a_connection_is_tested_at_once_and_active_when_the_provider_answers(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner, credentials={"token": SECRET, "account": "acme"})
    assert made.status is ConnectionStatus.ACTIVE and made.name == "Scripted service"
    assert made.last_tested_at is not None and made.next_check_at is not None
    assert [(s.id, s.value) for s in made.settings] == [("account", "acme")]  # not secret: shown
    assert provider.seen[-1].credentials == {"token": SECRET, "account": "acme"}
    assert provider.seen[-1].variables == {"url": "https://idp.example", "days": "30", "mode": "fast"}


def test_a_secret_credential_is_never_answered_nor_stored_in_the_clear(platform: Platform, owner: Actor) -> None:
    made = _connect(platform, owner)
    assert SECRET not in repr(made)
    with platform.uow.read() as session:
        versions, _ = session[CREDENTIALS].list(owner.organization_id, CREDENTIALS.filters(), PageRequest())
        outbox = session[OUTBOX].pending(100)
        audit, _ = session[AUDIT_LOG].list(owner.organization_id, AuditFilter(), PageRequest(per_page=100))
    assert len(versions) == 1 and SECRET not in versions[0].sealed
    assert all(SECRET not in json.dumps(message.payload) for message in outbox)
    assert all(SECRET not in repr(entry) for entry in audit)
    assert [message.type for message in outbox if message.type.startswith("integration")] == [
        "integration_connection.created"
    ]


def test_rotating_the_vault_key_keeps_every_credential_readable(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner)
    vault = platform.integration_connections.integrations.vault
    vault.rotate()  # type: ignore[attr-defined]
    assert platform.integration_connections.test(owner, made.id).status is ConnectionStatus.ACTIVE
    assert provider.seen[-1].credentials["token"] == SECRET


def test_what_the_manifest_does_not_allow_is_refused_naming_each_field(platform: Platform, owner: Actor) -> None:
    with pytest.raises(ValidationError) as refused:
        _connect(platform, owner, provider="gitlab")
    assert refused.value.details["field"] == "provider" and "scripted" in refused.value.details["reason"]
    with pytest.raises(ValidationError) as refused:
        _connect(
            platform,
            owner,
            credentials={"password": "x"},
            variables={"days": "soon", "mode": "slow", "colour": "red", "url": "ftp://x"},
        )
    fields = {error["field"] for error in refused.value.details["errors"]}
    assert fields == {
        "credentials.password",
        "credentials.token",
        "variables.days",
        "variables.mode",
        "variables.colour",
        "variables.url",
    }
    assert _findings(platform, owner) == [] and platform.integration_connections.list(owner).total == 0


def test_a_refused_test_keeps_the_connection_in_error_until_it_passes(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    provider.reachable = False
    made = _connect(platform, owner)
    assert made.status is ConnectionStatus.ERROR and made.error_message == "the token was refused (401)"
    assert made.next_check_at is None
    provider.reachable = True
    tested = platform.integration_connections.test(owner, made.id)
    assert tested.status is ConnectionStatus.ACTIVE and tested.error_message is None


def test_pause_resume_and_disconnect(platform: Platform, owner: Actor, provider: Scripted) -> None:
    made = _connect(platform, owner)
    paused = platform.integration_connections.pause(owner, made.id)
    assert paused.status is ConnectionStatus.PAUSED and paused.next_check_at is None
    with pytest.raises(Conflict):
        platform.integration_connections.test(owner, made.id)
    with pytest.raises(Conflict):
        platform.integration_checks.run_checks(owner, made.id, RunChecks())
    assert platform.integration_connections.resume(owner, made.id).status is ConnectionStatus.ACTIVE
    with pytest.raises(Conflict):
        platform.integration_connections.resume(owner, made.id)
    gone = platform.integration_connections.disconnect(owner, made.id)
    assert gone.status is ConnectionStatus.DISCONNECTED
    with platform.uow.read() as session:
        assert session[CREDENTIALS].list(owner.organization_id, CREDENTIALS.filters(), PageRequest())[1] == 0
    with pytest.raises(ValidationError):  # the token is gone: all of it is needed again
        platform.integration_connections.replace_credentials(owner, made.id, NewCredentials(credentials={}))
    back = platform.integration_connections.replace_credentials(
        owner, made.id, NewCredentials(credentials={"token": "tok_new"})
    )
    assert back.status is ConnectionStatus.ACTIVE and back.credential_version == 2
    assert provider.seen[-1].credentials == {"token": "tok_new"}


def test_renaming_and_deleting(platform: Platform, owner: Actor) -> None:
    made = _connect(platform, owner)
    assert platform.integration_connections.update(owner, made.id, ConnectionPatch(name="IdP")).name == "IdP"
    platform.integration_connections.delete(owner, made.id)
    with pytest.raises(NotFound):
        platform.integration_connections.get(owner, made.id)
    with platform.uow.read() as session:
        assert session[CREDENTIALS].list(owner.organization_id, CREDENTIALS.filters(), PageRequest())[1] == 0


def test_who_may_do_what(platform: Platform, owner: Actor) -> None:
    made = _connect(platform, owner)
    auditor = platform.actor(owner.organization_id, Role.AUDITOR)
    assert platform.integration_connections.get(auditor, made.id).id == made.id
    with pytest.raises(Forbidden):
        platform.integration_connections.pause(auditor, made.id)
    with pytest.raises(Forbidden):
        platform.integration_checks.run_checks(auditor, made.id, RunChecks())
    with pytest.raises(Forbidden):
        platform.integration_connections.list(platform.actor(owner.organization_id, Role.EMPLOYEE))
    other = platform.actor(platform.bootstrap("Globex").organization.id)
    with pytest.raises(NotFound):
        platform.integration_connections.get(other, made.id)


# -- variables -------------------------------------------------------------------------------


def test_variables_are_set_checked_and_cleared_back_to_their_defaults(platform: Platform, owner: Actor) -> None:
    made = _connect(platform, owner)
    values = platform.integration_variables.set_values(
        owner, made.id, VariableValues(values={"days": 7, "mode": "deep"})
    )
    shown = {state.id: (state.value, state.is_set) for state in values.data}
    assert shown == {"url": ("https://idp.example", True), "days": ("7", True), "mode": ("deep", True)}
    with pytest.raises(ValidationError) as refused:
        platform.integration_variables.set_values(owner, made.id, VariableValues(values={"mode": "slow"}))
    assert refused.value.details["field"] == "values.mode"
    cleared = platform.integration_variables.clear(owner, made.id, "days")
    assert {state.id: state.value for state in cleared.data}["days"] == "30"
    with pytest.raises(Conflict):
        platform.integration_variables.clear(owner, made.id, "url")  # required, no default
    with pytest.raises(NotFound):
        platform.integration_variables.clear(owner, made.id, "colour")
    assert [variable.id for variable in platform.integration_variables.for_provider(owner, "scripted").data] == [
        "url",
        "days",
        "mode",
    ]


# -- checks ----------------------------------------------------------------------------------


def test_a_failing_resource_opens_one_finding_and_passing_again_closes_it(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner)
    provider.answers["mfa"] = [user_result("ada", True), user_result("bob", False)]
    run = platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))
    assert (run.status, run.total_checked, run.passed_count, run.failed_count) == (CheckRunStatus.FAILED, 2, 1, 1)
    [finding] = _findings(platform, owner)
    assert finding.source is FindingSource.INTEGRATION and finding.severity is Severity.HIGH
    assert "bob has no MFA" in finding.title and "Turn on MFA" in finding.content

    platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))  # still failing: the same finding
    assert [f.id for f in _findings(platform, owner)] == [finding.id]
    results = platform.integration_checks.results(owner, made.id, run.id).items
    assert {(r.resource_id, r.passed, r.finding_id) for r in results} == {
        ("ada", True, None),
        ("bob", False, finding.id),
    }

    provider.answers["mfa"] = [user_result("ada", True), user_result("bob", True)]
    assert (
        platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa")).status
        is CheckRunStatus.SUCCESS
    )
    [closed] = _findings(platform, owner)
    assert closed.id == finding.id and closed.status is FindingStatus.CLOSED

    provider.answers["mfa"] = [user_result("bob", False)]
    platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))
    assert len(_findings(platform, owner)) == 2  # failing again after the fix: a new finding


def test_a_check_that_cannot_run_makes_an_error_run_and_leaves_findings_alone(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner)
    provider.answers["mfa"] = [user_result("bob", False)]
    platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))
    provider.answers["mfa"] = ProviderError("the service answered 503")
    provider.answers["tls"] = [
        ResourceResult(passed=True, resource_type="endpoint", resource_id="idp", title="TLS 1.3")
    ]
    run = platform.integration_checks.run_checks(owner, made.id, RunChecks())
    assert (run.check_id, run.status, run.error_message) == (
        "all",
        CheckRunStatus.ERROR,
        "mfa: the service answered 503",
    )
    assert [(r.check_id, r.passed) for r in platform.integration_checks.results(owner, made.id, run.id).items] == [
        ("tls", True)
    ]
    assert [f.status for f in _findings(platform, owner)] == [FindingStatus.OPEN]
    states = {
        s.id: (s.last_run_id, s.last_status) for s in platform.integration_checks.for_connection(owner, made.id).data
    }
    assert states == {"mfa": (run.id, CheckRunStatus.ERROR), "tls": (run.id, CheckRunStatus.ERROR)}
    assert platform.integration_checks.runs(owner, made.id).total == 2
    assert platform.integration_checks.run(owner, made.id, run.id) == run
    with pytest.raises(ValidationError) as refused:
        platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="nope"))
    assert refused.value.details["field"] == "checkId"
    other = _connect(platform, owner, name="Other")
    with pytest.raises(NotFound):  # a run is read under its own connection
        platform.integration_checks.run(owner, other.id, run.id)


def test_the_schedule_runs_each_active_connection_once_a_day(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner)
    paused = _connect(platform, owner, name="Paused")
    platform.integration_connections.pause(owner, paused.id)
    provider.answers["mfa"] = [user_result("ada", True)]
    now = platform.clock.now()
    assert platform.integration_checks.run_due(now) == 1  # the active connection, every check
    assert platform.integration_checks.run_due(now) == 0  # claimed: a second worker runs nothing
    [run] = platform.integration_checks.runs(owner, made.id).items
    assert (run.check_id, run.trigger, run.status) == ("all", CheckRunTrigger.SCHEDULE, CheckRunStatus.SUCCESS)
    assert platform.integration_checks.runs(owner, paused.id).total == 0
    assert platform.integration_checks.run_due(now + dt.timedelta(days=1, minutes=1)) == 1


def test_deleting_a_connection_keeps_its_findings(platform: Platform, owner: Actor, provider: Scripted) -> None:
    made = _connect(platform, owner)
    provider.answers["mfa"] = [user_result("bob", False)]
    run = platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))
    platform.integration_connections.delete(owner, made.id)
    with pytest.raises(NotFound):
        platform.integration_checks.results(owner, made.id, run.id)
    assert len(_findings(platform, owner)) == 1


# -- cloud security ------------------------------------------------------------------------


def test_the_posture_is_each_resources_latest_verdict_with_the_trend(
    platform: Platform, owner: Actor, provider: Scripted
) -> None:
    made = _connect(platform, owner)
    provider.answers["mfa"] = [user_result("ada", False), user_result("bob", False)]
    provider.answers["tls"] = [ResourceResult(passed=True, resource_type="endpoint", resource_id="idp", title="TLS")]
    platform.integration_checks.run_checks(owner, made.id, RunChecks())
    provider.answers["mfa"] = [user_result("ada", True), user_result("bob", False)]
    platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))  # tls stays as it was
    provider.answers["mfa"] = ProviderError("the service answered 503")
    platform.integration_checks.run_checks(owner, made.id, RunChecks(check_id="mfa"))  # knows nothing new

    state = platform.cloud_security.state(owner)
    [posture] = state.connections
    assert (posture.resources, posture.passed, posture.failed) == (3, 2, 1)
    assert (posture.failing.high, state.failing.high, state.failed) == (1, 1, 1)
    assert [(point.check_id, point.failed) for point in posture.trend] == [("all", 2), ("mfa", 1), ("mfa", 0)]
    platform.integration_connections.disconnect(owner, made.id)
    assert platform.cloud_security.state(owner).connections == ()
