"""One client, interchangeable transports.

``Client`` has a method per declared operation (``client.vendors.create(data)``), derived from
the areas' ``Operation`` declarations, and does nothing else; a transport carries the call.
``LocalTransport`` calls the services directly; ``compliance_http.client.HTTPTransport`` calls a
server (or a WSGI app without a socket). Both return the same models and raise the same errors,
so one scenario can run over either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .areas import AREAS
from .kernel.permissions import Actor
from .kernel.registry import Area, Operation, Route

if TYPE_CHECKING:
    from .platform import Platform

__all__ = ["Transport", "LocalTransport", "Client", "HEALTH"]

HEALTH = Operation(
    name="health",
    action=None,
    result=dict,
    route=Route("GET", "/v1/health", "Service and store health (200 when ok, 503 when degraded)"),
)
"""The platform's public health report (not an area's)."""


class Transport(Protocol):
    def call(self, operation: Operation, arguments: dict[str, Any]) -> Any: ...


class LocalTransport:
    """Calls the platform's services in this process, as ``actor``."""

    def __init__(self, platform: Platform, actor: Actor) -> None:
        self.platform = platform
        self.actor = actor

    def call(self, operation: Operation, arguments: dict[str, Any]) -> Any:
        if operation is HEALTH:
            return self.platform.health()
        method = getattr(self.platform.services[operation.area], operation.method)
        return method(self.actor, **arguments)


class AreaClient:
    """The operations of one area as methods: ``call(*args, **kwargs)`` binds the arguments the
    way the service does (ids first, then filters and page, or the body; ``idempotency_key``
    by keyword) and hands them to the transport."""

    def __init__(self, transport: Transport, area: Area[Any]) -> None:
        self._transport = transport
        self._operations = {op.method: op for op in area.operations}
        self.name = area.name

    def __getattr__(self, method: str) -> Callable[..., Any]:
        operation = self.__dict__["_operations"].get(method)
        if operation is None:
            raise AttributeError(f"{self.name} has no operation {method!r}")
        transport = self._transport

        def call(*args: Any, **kwargs: Any) -> Any:
            return transport.call(operation, operation.bind(args, kwargs))

        call.__name__ = method
        return call

    def __dir__(self) -> list[str]:
        return sorted(self._operations)


class Client:
    """
    >>> from compliance_core import Platform, Client, LocalTransport
    >>> from compliance_core.areas.vendors import NewVendor
    >>> platform = Platform.open("memory://")
    >>> boot = platform.bootstrap("Acme")
    >>> client = Client(LocalTransport(platform, platform.actor(boot.organization.id)))
    >>> client.vendors.create(NewVendor(name="Hosting Co")).name
    'Hosting Co'
    """

    def __init__(self, transport: Transport, areas: Sequence[Area[Any]] = AREAS) -> None:
        self.transport = transport
        self.areas: Mapping[str, AreaClient] = {area.name: AreaClient(transport, area) for area in areas}

    def __getattr__(self, name: str) -> AreaClient:
        areas: Mapping[str, AreaClient] = self.__dict__.get("areas", {})
        if name in areas:
            return areas[name]
        raise AttributeError(name)

    def health(self) -> dict[str, Any]:
        report: dict[str, Any] = self.transport.call(HEALTH, {})
        return report
