"""Variables: the settings a provider's checks read (the URL to check, days of warning before a
certificate expires), declared in its manifest and valued per connection. A value is checked
against its declaration when it is set, so a check never starts from a value it cannot use."""

from __future__ import annotations

import attrs

from ...kernel.errors import Conflict, NotFound, ValidationError
from ...kernel.operations import operation
from ...kernel.page_cache import PageCache
from ...kernel.permissions import Actor
from ...kernel.records import fetch
from ...kernel.registry import Route
from ...kernel.uow import UnitOfWork
from .connections import ConnectionService, Integrations
from .models import CONNECTIONS, INTEGRATION_READ, INTEGRATION_WRITE, Connection, VariableValues, settings_map
from .providers import Manifest, Variable, VariableType

__all__ = ["VariableService", "ProviderVariables", "VariableState", "ConnectionVariables"]

_PROVIDER = "/v1/integrations/variables/providers/{provider_slug}"
_CONNECTION = "/v1/integrations/variables/connections/{connection_id}"


@attrs.frozen(kw_only=True)
class ProviderVariables:
    data: tuple[Variable, ...]


@attrs.frozen(kw_only=True)
class VariableState:
    """A declared variable with the connection's value: ``value`` is what its checks read (the
    default when none is set), ``isSet`` whether the connection sets it."""

    id: str
    label: str
    type: VariableType
    required: bool
    default: str | None
    options: tuple[str, ...]
    help_text: str
    value: str | None
    is_set: bool


@attrs.frozen(kw_only=True)
class ConnectionVariables:
    connection_id: str
    provider: str
    data: tuple[VariableState, ...]


def _states(manifest: Manifest, connection: Connection) -> ConnectionVariables:
    values = settings_map(connection.variables)
    return ConnectionVariables(
        connection_id=connection.id,
        provider=connection.provider,
        data=tuple(
            VariableState(
                id=variable.id,
                label=variable.label,
                type=variable.type,
                required=variable.required,
                default=variable.default,
                options=variable.options,
                help_text=variable.help_text,
                value=values.get(variable.id, variable.default),
                is_set=variable.id in values,
            )
            for variable in manifest.variables
        ),
    )


@attrs.define
class VariableService:
    uow: UnitOfWork
    pages: PageCache
    integrations: Integrations
    connections: ConnectionService

    @operation(
        INTEGRATION_READ,
        Route("GET", _PROVIDER, "The variables a provider's checks read, as its manifest declares them"),
        result=ProviderVariables,
    )
    def for_provider(self, actor: Actor, provider_slug: str) -> ProviderVariables:
        return ProviderVariables(data=self.integrations.catalogue.get(provider_slug).manifest.variables)

    @operation(
        INTEGRATION_READ,
        Route("GET", _CONNECTION, "A connection's variables with their current values"),
        result=ConnectionVariables,
    )
    def for_connection(self, actor: Actor, connection_id: str) -> ConnectionVariables:
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        return _states(self.integrations.provider(connection.provider).manifest, connection)

    @operation(
        INTEGRATION_WRITE,
        Route("POST", _CONNECTION, "Set some of a connection's variables (the others are kept)"),
        body=VariableValues,
        result=ConnectionVariables,
        example={"values": {"expiry_warning_days": 21}},
    )
    def set_values(self, actor: Actor, connection_id: str, data: VariableValues) -> ConnectionVariables:
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        manifest = self.integrations.provider(connection.provider).manifest
        errors = self.integrations.variable_errors(manifest, data.values, "values")
        if errors:
            raise ValidationError.every(errors)
        given = settings_map(data.values)
        kept = tuple(setting for setting in connection.variables if setting.id not in given)
        changed = self.connections.change(actor, connection_id, {"variables": kept + data.values})
        return _states(manifest, changed)

    @operation(
        INTEGRATION_WRITE,
        Route("DELETE", _CONNECTION + "/{variable_id}", "Clear a connection's variable back to its default"),
        result=ConnectionVariables,
    )
    def clear(self, actor: Actor, connection_id: str, variable_id: str) -> ConnectionVariables:
        """A variable its provider requires and gives no default for cannot be cleared (409)."""
        with self.uow.read() as session:
            connection = fetch(session, CONNECTIONS, actor.organization_id, connection_id)
        manifest = self.integrations.provider(connection.provider).manifest
        declared = {variable.id: variable for variable in manifest.variables}
        variable = declared.get(variable_id)
        if variable is None:
            raise NotFound.resource("variable", variable_id)
        if variable.required and variable.default is None:
            raise Conflict(
                f"{variable_id} is required by {manifest.slug} and has no default to fall back on",
                {"field": "variableId", "value": variable_id, "reason": "required, with no default"},
            )
        kept = tuple(setting for setting in connection.variables if setting.id != variable_id)
        return _states(manifest, self.connections.change(actor, connection_id, {"variables": kept}))
