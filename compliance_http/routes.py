"""The /v1 route table: one row per operation.

The Falcon app, the OpenAPI document and ``HTTPTransport`` are all driven by this table, so a
path, a status or a query parameter is written once. Path parameters carry the core argument
names (``{vendor_id}``); the OpenAPI document shows them in camelCase.
"""

from __future__ import annotations

import functools
import re

import attrs

from compliance_core.api_keys import ApiKey, IssuedKey, KeyUsage, NewApiKey
from compliance_core.findings import Finding, FindingFilter, FindingPatch, NewFinding
from compliance_core.organizations import Organization
from compliance_core.people import NewPerson, Person, PersonFilter, PersonPatch
from compliance_core.validation import wire_name
from compliance_core.vendors import NewVendor, Vendor, VendorFilter, VendorPatch

__all__ = ["Route", "ROUTES", "OPENAPI", "PAGE_PARAMETERS", "route_index"]

OPENAPI = "openapi"
"""The pseudo-operation serving the OpenAPI document itself (not a core operation)."""

PAGE_PARAMETERS = ("page", "perPage")
_PATH_PARAM = re.compile(r"{(\w+)}")


@attrs.frozen(kw_only=True)
class Route:
    """One operation on the wire.

    :param operation: the core operation (``compliance_core.client.OPERATIONS``) it calls
    :param action: the permission core checks for it; None on public routes (no API key)
    :param filters: the filter model whose fields are this list's query parameters
    :param paged: takes ``page`` and ``perPage`` and answers with the list envelope
    :param body: the command model the JSON body becomes
    :param batch: the body is ``{"members": [...]}`` and the answer ``{"data": [...], "count"}``
    :param idempotent: takes an Idempotency-Key header
    :param response: the model the answer holds (``dict`` for health, None for the document)
    """

    operation: str
    method: str
    path: str
    tag: str
    summary: str
    action: str | None = None
    status: int = 200
    filters: type | None = None
    paged: bool = False
    body: type | None = None
    batch: bool = False
    idempotent: bool = False
    response: type | None = None

    @property
    def public(self) -> bool:
        return self.action is None

    @functools.cached_property
    def path_params(self) -> tuple[str, ...]:
        return tuple(_PATH_PARAM.findall(self.path))

    @property
    def body_argument(self) -> str | None:
        """The keyword under which core's service method takes the body."""
        if self.body is None:
            return None
        if self.batch:
            return "members"
        return "patch" if self.method == "PATCH" else "data"

    @functools.cached_property
    def query_parameters(self) -> frozenset[str]:
        """The query parameters it takes (checked on every request, so worked out once)."""
        filters = attrs.fields(self.filters) if self.filters is not None else ()
        return frozenset(wire_name(f.name) for f in filters) | frozenset(PAGE_PARAMETERS if self.paged else ())


_VENDOR = "/v1/vendors/{vendor_id}"
_PERSON = "/v1/people/{person_id}"
_FINDING = "/v1/findings/{finding_id}"
_KEY = "/v1/api-keys/{key_id}"

ROUTES: tuple[Route, ...] = (
    Route(operation="health", method="GET", path="/v1/health", tag="Health",
          summary="Service and store health (200 when ok, 503 when degraded)", response=dict),
    Route(operation=OPENAPI, method="GET", path="/v1/openapi.json", tag="Health",
          summary="This OpenAPI 3.0 document"),
    Route(operation="organizations.get", method="GET", path="/v1/organization", tag="Organization",
          summary="The calling key's organization", action="organization:read", response=Organization),
    Route(operation="vendors.list", method="GET", path="/v1/vendors", tag="Vendors",
          summary="List the vendor register", action="vendor:read", filters=VendorFilter, paged=True,
          response=Vendor),
    Route(operation="vendors.create", method="POST", path="/v1/vendors", tag="Vendors",
          summary="Add a vendor", action="vendor:create", status=201, body=NewVendor, idempotent=True,
          response=Vendor),
    Route(operation="vendors.get", method="GET", path=_VENDOR, tag="Vendors", summary="Read one vendor",
          action="vendor:read", response=Vendor),
    Route(operation="vendors.update", method="PATCH", path=_VENDOR, tag="Vendors",
          summary="Change some of a vendor's fields", action="vendor:update", body=VendorPatch,
          response=Vendor),
    Route(operation="vendors.archive", method="POST", path=_VENDOR + "/archive", tag="Vendors",
          summary="Archive a vendor (kept for audits, dropped from the register)",
          action="vendor:archive", response=Vendor),
    Route(operation="vendors.restore", method="POST", path=_VENDOR + "/restore", tag="Vendors",
          summary="Bring an archived vendor back into the register", action="vendor:archive",
          response=Vendor),
    Route(operation="people.list", method="GET", path="/v1/people", tag="People",
          summary="List the organization's people", action="person:read", filters=PersonFilter,
          paged=True, response=Person),
    Route(operation="people.create", method="POST", path="/v1/people", tag="People", summary="Add a person",
          action="person:create", status=201, body=NewPerson, idempotent=True, response=Person),
    Route(operation="people.bulk_create", method="POST", path="/v1/people/bulk", tag="People",
          summary="Add up to 1000 people at once; any invalid entry rejects the whole batch",
          action="person:create", status=201, body=NewPerson, batch=True, idempotent=True,
          response=Person),
    Route(operation="people.get", method="GET", path=_PERSON, tag="People", summary="Read one person",
          action="person:read", response=Person),
    Route(operation="people.update", method="PATCH", path=_PERSON, tag="People",
          summary="Change some of a person's fields", action="person:update", body=PersonPatch,
          response=Person),
    Route(operation="findings.list", method="GET", path="/v1/findings", tag="Findings",
          summary="List findings", action="finding:read", filters=FindingFilter, paged=True,
          response=Finding),
    Route(operation="findings.create", method="POST", path="/v1/findings", tag="Findings",
          summary="Raise a finding", action="finding:create", status=201, body=NewFinding,
          idempotent=True, response=Finding),
    Route(operation="findings.get", method="GET", path=_FINDING, tag="Findings", summary="Read one finding",
          action="finding:read", response=Finding),
    Route(operation="findings.update", method="PATCH", path=_FINDING, tag="Findings",
          summary="Change a finding's status, severity, type or text", action="finding:update",
          body=FindingPatch, response=Finding),
    Route(operation="findings.close", method="POST", path=_FINDING + "/close", tag="Findings",
          summary="Close a finding", action="finding:close", response=Finding),
    Route(operation="api_keys.list", method="GET", path="/v1/api-keys", tag="API Keys",
          summary="List the organization's API keys", action="api_key:read", paged=True,
          response=ApiKey),
    Route(operation="api_keys.create", method="POST", path="/v1/api-keys", tag="API Keys",
          summary="Issue an API key; its value is in `key`, shown this once",
          action="api_key:create", status=201, body=NewApiKey, idempotent=True, response=IssuedKey),
    Route(operation="api_keys.get", method="GET", path=_KEY, tag="API Keys", summary="Read one API key",
          action="api_key:read", response=ApiKey),
    Route(operation="api_keys.revoke", method="POST", path=_KEY + "/revoke", tag="API Keys",
          summary="Revoke an API key", action="api_key:revoke", response=ApiKey),
    Route(operation="api_keys.usage", method="GET", path=_KEY + "/usage", tag="API Keys",
          summary="Requests per day over the last 30 days", action="api_key:read", response=KeyUsage),
)


def route_index() -> dict[tuple[str, str], Route]:
    """(method, path template) -> route, as the middleware looks a request up after routing."""
    return {(r.method, r.path): r for r in ROUTES}
