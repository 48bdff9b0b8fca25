"""One client, interchangeable transports.

``Client`` has a method per operation and does nothing else; a transport carries the call.
``LocalTransport`` calls the services directly; ``compliance_http.client.HTTPTransport`` calls a
server (or a WSGI app without a socket). Both return the same models and raise the same errors,
so one scenario can run over either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .api_keys import ApiKey, IssuedKey, KeyUsage, NewApiKey
from .findings import Finding, FindingFilter, FindingPatch, NewFinding
from .organizations import Organization
from .pagination import Page, PageRequest
from .people import NewPerson, Person, PersonFilter, PersonPatch
from .permissions import Actor
from .vendors import NewVendor, Vendor, VendorFilter, VendorPatch

if TYPE_CHECKING:
    from .platform import Platform

__all__ = ["Transport", "LocalTransport", "Client", "OPERATIONS"]

OPERATIONS = (
    "health",
    "organizations.get",
    "vendors.list", "vendors.get", "vendors.create", "vendors.update", "vendors.archive", "vendors.restore",
    "people.list", "people.get", "people.create", "people.bulk_create", "people.update",
    "findings.list", "findings.get", "findings.create", "findings.update", "findings.close",
    "api_keys.list", "api_keys.get", "api_keys.create", "api_keys.revoke", "api_keys.usage",
)


class Transport(Protocol):
    def call(self, operation: str, arguments: dict[str, Any]) -> Any: ...


class LocalTransport:
    """Calls the platform's services in this process, as ``actor``."""

    def __init__(self, platform: "Platform", actor: Actor) -> None:
        self.platform = platform
        self.actor = actor

    def call(self, operation: str, arguments: dict[str, Any]) -> Any:
        if operation not in OPERATIONS:
            raise KeyError(operation)
        if operation == "health":
            return self.platform.health()
        area, method = operation.split(".")
        return getattr(getattr(self.platform, area), method)(self.actor, **arguments)


class _Area:
    def __init__(self, transport: Transport, area: str) -> None:
        self._transport = transport
        self._area = area

    def _call(self, method: str, **arguments: Any) -> Any:
        return self._transport.call(f"{self._area}.{method}", arguments)


class Vendors(_Area):
    def list(self, filters: VendorFilter | None = None, page: PageRequest | None = None) -> Page[Vendor]:
        return self._call("list", filters=filters, page=page)

    def get(self, vendor_id: str) -> Vendor:
        return self._call("get", vendor_id=vendor_id)

    def create(self, data: NewVendor, *, idempotency_key: str | None = None) -> Vendor:
        return self._call("create", data=data, idempotency_key=idempotency_key)

    def update(self, vendor_id: str, patch: VendorPatch) -> Vendor:
        return self._call("update", vendor_id=vendor_id, patch=patch)

    def archive(self, vendor_id: str) -> Vendor:
        return self._call("archive", vendor_id=vendor_id)

    def restore(self, vendor_id: str) -> Vendor:
        return self._call("restore", vendor_id=vendor_id)


class People(_Area):
    def list(self, filters: PersonFilter | None = None, page: PageRequest | None = None) -> Page[Person]:
        return self._call("list", filters=filters, page=page)

    def get(self, person_id: str) -> Person:
        return self._call("get", person_id=person_id)

    def create(self, data: NewPerson, *, idempotency_key: str | None = None) -> Person:
        return self._call("create", data=data, idempotency_key=idempotency_key)

    def bulk_create(self, members: Sequence[NewPerson | Mapping[str, Any]], *,
                    idempotency_key: str | None = None) -> tuple[Person, ...]:
        return self._call("bulk_create", members=members, idempotency_key=idempotency_key)

    def update(self, person_id: str, patch: PersonPatch) -> Person:
        return self._call("update", person_id=person_id, patch=patch)


class Findings(_Area):
    def list(self, filters: FindingFilter | None = None, page: PageRequest | None = None) -> Page[Finding]:
        return self._call("list", filters=filters, page=page)

    def get(self, finding_id: str) -> Finding:
        return self._call("get", finding_id=finding_id)

    def create(self, data: NewFinding, *, idempotency_key: str | None = None) -> Finding:
        return self._call("create", data=data, idempotency_key=idempotency_key)

    def update(self, finding_id: str, patch: FindingPatch) -> Finding:
        return self._call("update", finding_id=finding_id, patch=patch)

    def close(self, finding_id: str) -> Finding:
        return self._call("close", finding_id=finding_id)


class ApiKeys(_Area):
    def list(self, page: PageRequest | None = None) -> Page[ApiKey]:
        return self._call("list", page=page)

    def get(self, key_id: str) -> ApiKey:
        return self._call("get", key_id=key_id)

    def create(self, data: NewApiKey, *, idempotency_key: str | None = None) -> IssuedKey:
        return self._call("create", data=data, idempotency_key=idempotency_key)

    def revoke(self, key_id: str) -> ApiKey:
        return self._call("revoke", key_id=key_id)

    def usage(self, key_id: str) -> KeyUsage:
        return self._call("usage", key_id=key_id)


class Organizations(_Area):
    def get(self) -> Organization:
        return self._call("get")


class Client:
    """
    >>> from compliance_core import Platform, Client, LocalTransport, NewVendor
    >>> platform = Platform.open("memory://")
    >>> boot = platform.bootstrap("Acme")
    >>> client = Client(LocalTransport(platform, platform.actor(boot.organization.id)))
    >>> client.vendors.create(NewVendor(name="Hosting Co")).name
    'Hosting Co'
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.vendors = Vendors(transport, "vendors")
        self.people = People(transport, "people")
        self.findings = Findings(transport, "findings")
        self.api_keys = ApiKeys(transport, "api_keys")
        self.organizations = Organizations(transport, "organizations")

    def health(self) -> dict[str, Any]:
        return self.transport.call("health", {})  # type: ignore[no-any-return]
