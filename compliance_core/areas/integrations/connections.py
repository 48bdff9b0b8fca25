"""Connections: an organization's links to integration providers, their credentials sealed by the
instance's vault, tested against the provider, paused, resumed and disconnected.

A connection is made ``pending``, then tested at once (outside the write: a provider is a network
away): it turns ``active`` when the provider answers, ``error`` with the provider's reason when it
does not. Secret credential fields are sealed into a credential version, bound to the connection
(the vault's purpose), and never answered: not by a read, not in an event, not in the audit log.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...kernel.directory import every
from ...kernel.errors import Conflict, ValidationError
from ...kernel.operations import Once, Standard, operation
from ...kernel.outbound import check_target, private_targets_allowed
from ...kernel.page_cache import PageCache
from ...kernel.permissions import Actor
from ...kernel.records import changed, fetch
from ...kernel.registry import Route, Session
from ...kernel.uow import Tx, UnitOfWork
from ...kernel.vault import Vault, vault_of
from .models import (
    CHECK_RESULTS,
    CHECK_RUNS,
    CONNECTIONS,
    CREDENTIALS,
    INTEGRATION_READ,
    INTEGRATION_WRITE,
    CheckResultFilter,
    CheckRunFilter,
    Connection,
    ConnectionCreated,
    ConnectionDeleted,
    ConnectionPatch,
    ConnectionStatus,
    ConnectionUpdated,
    CredentialFilter,
    CredentialVersion,
    NewConnection,
    NewCredentials,
    Setting,
    settings_map,
)
from .providers import Access, Catalogue, Manifest, Provider, ProviderError, VariableType, catalogue_of
from .scans import ScannerImport

__all__ = ["Integrations", "ConnectionService", "Providers", "CHECK_EVERY"]

CHECK_EVERY = dt.timedelta(days=1)
"""How often the schedule runs an active connection's checks."""
_ALL = "/v1/integrations/connections"
_ONE = _ALL + "/{connection_id}"
_EXAMPLE = {"provider": "https-endpoint", "name": "Status page", "variables": {"url": "https://status.example.invalid"}}
"""A reserved name (RFC 6761), which the HTTPS provider answers at once: the generated examples and
the generic tests connect with it without waiting on a DNS answer."""


@attrs.frozen(kw_only=True)
class Providers:
    """The providers the instance offers."""

    data: tuple[Manifest, ...]


@attrs.define
class Integrations:
    """What the connections, variables and checks services share: the provider catalogue, the
    vault, and the rules a connection's credentials and variables keep."""

    context: Any = attrs.field(repr=False)
    _catalogue: Catalogue | None = attrs.field(default=None, init=False)

    @property
    def catalogue(self) -> Catalogue:
        if self._catalogue is None:
            self._catalogue = catalogue_of(self.context.settings, built_in=(ScannerImport(),))
        return self._catalogue

    @property
    def vault(self) -> Vault:
        return vault_of(self.context)

    @property
    def allow_private(self) -> bool:
        return private_targets_allowed(self.context.settings)

    def provider(self, slug: str, field: str = "provider") -> Provider:
        found = self.catalogue.providers.get(slug)
        if found is None:
            known = ", ".join(sorted(self.catalogue.providers)) or "none"
            raise ValidationError.field(field, slug, f"is not an installed provider; installed: {known}")
        return found

    def variable_errors(self, manifest: Manifest, values: Sequence[Setting], field: str) -> list[ValidationError]:
        """Each value its provider does not declare, or declares with another type or options."""
        declared = {variable.id: variable for variable in manifest.variables}
        errors: list[ValidationError] = []
        for setting in values:
            where = f"{field}.{setting.id}"
            variable = declared.get(setting.id)
            if variable is None:
                known = ", ".join(sorted(declared)) or "none"
                errors.append(
                    ValidationError.field(where, setting.id, f"is not a variable of {manifest.slug}; known: {known}")
                )
            elif variable.type is VariableType.NUMBER and not _is_number(setting.value):
                errors.append(ValidationError.field(where, setting.value, "must be a number"))
            elif variable.type is VariableType.BOOLEAN and setting.value not in ("true", "false"):
                errors.append(ValidationError.field(where, setting.value, "must be true or false"))
            elif variable.type is VariableType.SELECT and setting.value not in variable.options:
                errors.append(
                    ValidationError.field(where, setting.value, f"must be one of {', '.join(variable.options)}")
                )
            elif variable.type is VariableType.URL:
                try:
                    check_target(setting.value, allow_private=self.allow_private, resolver=None, field=where)
                except ValidationError as error:
                    errors.append(error)
        return errors

    @staticmethod
    def missing_variables(manifest: Manifest, values: Sequence[Setting], field: str) -> list[ValidationError]:
        given = {setting.id for setting in values}
        return [
            ValidationError.field(f"{field}.{variable.id}", None, f"is required by {manifest.slug}")
            for variable in manifest.variables
            if variable.required and variable.default is None and variable.id not in given
        ]

    def credential_errors(self, manifest: Manifest, given: Mapping[str, str], complete: bool) -> list[ValidationError]:
        declared = {field.id: field for field in manifest.credential_fields}
        errors = [
            ValidationError.field(
                f"credentials.{name}",
                name,
                f"is not a credential of {manifest.slug}; known: {', '.join(sorted(declared)) or 'none'}",
            )
            for name in given
            if name not in declared
        ]
        if complete:
            errors += [
                ValidationError.field(f"credentials.{field.id}", None, f"is required by {manifest.slug}")
                for field in manifest.credential_fields
                if field.required and not given.get(field.id)
            ]
        return errors

    @staticmethod
    def split(manifest: Manifest, credentials: Mapping[str, str]) -> tuple[tuple[Setting, ...], dict[str, str]]:
        """The credential fields a connection shows (those the manifest marks not secret), and the
        secret ones, which only a sealed credential version holds."""
        secret = {field.id for field in manifest.credential_fields if field.secret}
        shown = tuple(Setting(id=name, value=value) for name, value in credentials.items() if name not in secret)
        return shown, {name: value for name, value in credentials.items() if name in secret}

    def seal(self, tx: Tx, connection: Connection, secrets: Mapping[str, str], now: dt.datetime) -> int:
        """Store ``secrets`` as the connection's next credential version; returns its number."""
        version = connection.credential_version + 1
        sealed = self.vault.seal(json.dumps(dict(secrets), sort_keys=True).encode(), purpose=_purpose(connection))
        tx[CREDENTIALS].add(
            CredentialVersion(
                id=self.context.uow.ids.new(CREDENTIALS.prefix),
                organization_id=connection.organization_id,
                connection_id=connection.id,
                version=version,
                sealed=sealed,
                created_at=now,
                updated_at=now,
            )
        )
        return version

    def secrets(self, session: Session, connection: Connection) -> dict[str, str]:
        """The connection's secret credentials as its newest version holds them (none stored: {})."""
        versions = every(
            session[CREDENTIALS], connection.organization_id, CredentialFilter(connection_id=connection.id)
        )
        if not versions:
            return {}
        newest = max(versions, key=lambda version: version.version)
        opened: dict[str, str] = json.loads(self.vault.open(newest.sealed, purpose=_purpose(connection)))
        return opened

    @staticmethod
    def defaults(manifest: Manifest) -> dict[str, str]:
        return {variable.id: variable.default for variable in manifest.variables if variable.default is not None}

    def access(self, session: Session, connection: Connection) -> tuple[Provider, Access]:
        provider = self.provider(connection.provider)
        credentials = {**settings_map(connection.settings), **self.secrets(session, connection)}
        return provider, self.access_of(provider.manifest, credentials, connection.variables)

    def access_of(self, manifest: Manifest, credentials: Mapping[str, str], variables: Sequence[Setting]) -> Access:
        """What a provider works with: the credentials, the variables over their defaults."""
        values = {**self.defaults(manifest), **settings_map(variables)}
        return Access(credentials=credentials, variables=values, allow_private=self.allow_private)


def _purpose(connection: Connection) -> str:
    return f"connection:{connection.organization_id}:{connection.id}"


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def usable(connection: Connection, doing: str) -> None:
    """Refuse to test or run a connection that is paused or disconnected (409)."""
    if connection.status in (ConnectionStatus.PAUSED, ConnectionStatus.DISCONNECTED):
        raise Conflict(
            f"the connection is {connection.status}: {doing} needs it resumed or reconnected",
            {
                "field": "status",
                "value": connection.status.value,
                "reason": f"cannot {doing} while {connection.status}",
            },
        )


_TABLE = Standard(CONNECTIONS, id="connection_id")


@attrs.define
class ConnectionService:
    uow: UnitOfWork
    pages: PageCache
    integrations: Integrations

    @operation(
        INTEGRATION_READ,
        Route("GET", _ALL + "/providers", "The providers this instance offers, with their manifests"),
        result=Providers,
    )
    def providers(self, actor: Actor) -> Providers:
        return Providers(data=tuple(self.integrations.catalogue.manifests()))

    @operation(
        INTEGRATION_READ, Route("GET", _ALL + "/providers/{provider_slug}", "One provider's manifest"), result=Manifest
    )
    def provider(self, actor: Actor, provider_slug: str) -> Manifest:
        return self.integrations.catalogue.get(provider_slug).manifest

    list = _TABLE.list(INTEGRATION_READ, Route("GET", _ALL, "List the organization's connections"))
    get = _TABLE.get(INTEGRATION_READ, Route("GET", _ONE, "Read one connection (never its secret credentials)"))

    @operation(
        INTEGRATION_WRITE,
        Route("POST", _ALL, "Connect a provider: credentials sealed, then tested at once", 201),
        body=NewConnection,
        idempotent=True,
        result=Connection,
        example=_EXAMPLE,
    )
    def create(self, actor: Actor, data: NewConnection, once: Once) -> Connection:
        """The provider is tested with what was given before anything is written, so the
        connection is made once, already ``active`` or ``error`` with the provider's reason (kept
        either way, to fix and test again)."""
        provider = self.integrations.provider(data.provider)
        manifest = provider.manifest
        given = settings_map(data.credentials)
        errors = self.integrations.credential_errors(manifest, given, complete=True)
        errors += self.integrations.variable_errors(manifest, data.variables, "variables")
        errors += self.integrations.missing_variables(manifest, data.variables, "variables")
        if errors:
            raise ValidationError.every(errors)
        shown, secrets = self.integrations.split(manifest, given)
        outcome = self._probe(provider, self.integrations.access_of(manifest, given, data.variables))
        now = self.uow.clock.now()

        def make() -> Connection:
            connection = Connection(
                id=self.uow.ids.new(CONNECTIONS.prefix),
                organization_id=actor.organization_id,
                provider=manifest.slug,
                name=data.name or manifest.name,
                settings=shown,
                variables=data.variables,
                created_by=actor.principal,
                created_at=now,
                updated_at=now,
                last_tested_at=now,
                **outcome,
            )
            if secrets:
                connection = attrs.evolve(
                    connection, credential_version=self.integrations.seal(tx, connection, secrets, now)
                )
            tx[CONNECTIONS].add(connection)
            tx.record(ConnectionCreated(organization_id=actor.organization_id, subject=connection))
            return connection

        with self.uow.write(actor) as tx:
            return once(tx, data, now, make)

    @operation(
        INTEGRATION_WRITE,
        Route("PATCH", _ONE, "Rename a connection"),
        body=ConnectionPatch,
        result=Connection,
        example={"name": "Marketing site"},
    )
    def update(self, actor: Actor, connection_id: str, patch: ConnectionPatch) -> Connection:
        return self.change(actor, connection_id, patch.changes())

    @operation(
        INTEGRATION_WRITE,
        Route("DELETE", _ONE, "Delete a connection with its credentials, check runs and results"),
        result=None,
    )
    def delete(self, actor: Actor, connection_id: str) -> None:
        """Findings its checks opened stay (they are the organization's record of the gap)."""
        with self.uow.write(actor) as tx:
            connection = fetch(tx, CONNECTIONS, actor.organization_id, connection_id)
            organization_id = actor.organization_id
            for table, filters in (
                (CHECK_RESULTS, CheckResultFilter(connection_id=connection_id)),
                (CHECK_RUNS, CheckRunFilter(connection_id=connection_id)),
                (CREDENTIALS, CredentialFilter(connection_id=connection_id)),
            ):
                for item in every(tx[table], organization_id, filters):
                    tx[table].delete(organization_id, item.id)
            tx[CONNECTIONS].delete(organization_id, connection_id)
            tx.record(ConnectionDeleted(organization_id=organization_id, subject=connection))

    @operation(
        INTEGRATION_WRITE,
        Route("POST", _ONE + "/test", "Test a connection's credentials against its provider"),
        result=Connection,
    )
    def test(self, actor: Actor, connection_id: str) -> Connection:
        """``active`` when the provider answers (a pending or failing connection is activated),
        ``error`` with the provider's reason when it does not."""
        return self._test(actor, connection_id)

    @operation(
        INTEGRATION_WRITE, Route("POST", _ONE + "/pause", "Pause a connection's scheduled checks"), result=Connection
    )
    def pause(self, actor: Actor, connection_id: str) -> Connection:
        with self.uow.read() as session:
            usable(fetch(session, CONNECTIONS, actor.organization_id, connection_id), "pause")
        return self.change(actor, connection_id, {"status": ConnectionStatus.PAUSED, "next_check_at": None})

    @operation(
        INTEGRATION_WRITE,
        Route("POST", _ONE + "/resume", "Resume a paused connection"),
        result=Connection,
        given=(pause,),
    )
    def resume(self, actor: Actor, connection_id: str) -> Connection:
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        if connection.status is not ConnectionStatus.PAUSED:
            raise Conflict(
                f"the connection is {connection.status}, not paused",
                {"field": "status", "value": connection.status.value, "reason": "only a paused connection resumes"},
            )
        return self._test(actor, connection_id, resuming=True)

    @operation(
        INTEGRATION_WRITE,
        Route("POST", _ONE + "/disconnect", "Disconnect: its credentials are deleted, its history kept"),
        result=Connection,
    )
    def disconnect(self, actor: Actor, connection_id: str) -> Connection:
        with self.uow.write(actor) as tx:
            connection = fetch(tx, CONNECTIONS, actor.organization_id, connection_id)
            for version in every(tx[CREDENTIALS], actor.organization_id, CredentialFilter(connection_id=connection_id)):
                tx[CREDENTIALS].delete(actor.organization_id, version.id)
            return self._apply(
                tx,
                actor,
                connection,
                {"status": ConnectionStatus.DISCONNECTED, "settings": (), "next_check_at": None, "error_message": None},
            )

    @operation(
        INTEGRATION_WRITE,
        Route("PUT", _ONE + "/credentials", "Replace a connection's credentials (a new sealed version), then test it"),
        body=NewCredentials,
        result=Connection,
        example={"credentials": {}},
    )
    def replace_credentials(self, actor: Actor, connection_id: str, data: NewCredentials) -> Connection:
        """Fields left out keep their stored values; a disconnected connection is connected again."""
        given = settings_map(data.credentials)
        with self.uow.write(actor) as tx:
            connection = fetch(tx, CONNECTIONS, actor.organization_id, connection_id)
            manifest = self.integrations.provider(connection.provider).manifest
            stored = (
                {}
                if connection.status is ConnectionStatus.DISCONNECTED
                else {**settings_map(connection.settings), **self.integrations.secrets(tx, connection)}
            )
            merged = {**stored, **given}
            errors = self.integrations.credential_errors(manifest, given, complete=False)
            errors += self.integrations.credential_errors(manifest, merged, complete=True) if not errors else []
            if errors:
                raise ValidationError.every(errors)
            shown, secrets = self.integrations.split(manifest, merged)
            now = self.uow.clock.now()
            changes: dict[str, Any] = {"settings": shown, "status": ConnectionStatus.PENDING}
            if secrets:
                changes["credential_version"] = self.integrations.seal(tx, connection, secrets, now)
            self._apply(tx, actor, connection, changes)
        return self._test(actor, connection_id)

    # -- helpers -------------------------------------------------------------------------------

    def _test(self, actor: Actor, connection_id: str, *, resuming: bool = False) -> Connection:
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
            if not resuming:
                usable(connection, "test")
            provider, access = self.integrations.access(session, connection)
        outcome = self._probe(provider, access)
        now = self.uow.clock.now()
        outcome["last_tested_at"] = now
        with self.uow.write(actor) as tx:
            current = fetch(tx, CONNECTIONS, actor.organization_id, connection_id)
            if current.credential_version != connection.credential_version or current.status != connection.status:
                return current  # changed while the provider answered: that change stands
            if current.next_check_at is not None and outcome["next_check_at"] is not None:
                outcome["next_check_at"] = current.next_check_at  # a test does not delay the schedule
            return self._apply(tx, actor, current, outcome)

    def _probe(self, provider: Provider, access: Access) -> dict[str, Any]:
        """The connection's state after testing ``access``: ``active`` and due for its checks
        now (the schedule runs them), or ``error`` with the provider's reason."""
        try:
            provider.test(access)
        except ProviderError as refused:
            return {"status": ConnectionStatus.ERROR, "error_message": str(refused)[:2000], "next_check_at": None}
        return {"status": ConnectionStatus.ACTIVE, "error_message": None, "next_check_at": self.uow.clock.now()}

    def change(self, actor: Actor, connection_id: str, changes: dict[str, Any]) -> Connection:
        with self.uow.write(actor) as tx:
            return self._apply(tx, actor, fetch(tx, CONNECTIONS, actor.organization_id, connection_id), changes)

    def _apply(self, tx: Tx, actor: Actor, current: Connection, changes: dict[str, Any]) -> Connection:
        previous = changed(current, changes)
        if not previous:
            return current
        updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
        tx[CONNECTIONS].update(updated)
        tx.record(ConnectionUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated
