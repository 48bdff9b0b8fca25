"""The /v1 route table: per area, the rows that put its core operations on the wire.

A row adds only what HTTP needs (method, path, status, summary); everything else (permission,
body, filters, paging, idempotency, result) comes from the operation core declares. The Falcon
app, the OpenAPI document and ``HTTPTransport`` are all built from ``endpoints(...)``, so a path
or a status is written once. Path parameters carry core's argument names (``{vendor_id}``); the
OpenAPI document shows them in camelCase. Adding an area is adding its module here and one line
to ``ROUTES``.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Mapping

import attrs

from compliance_core.areas import AREAS
from compliance_core.client import HEALTH
from compliance_core.kernel.registry import Accepted, Download, Operation
from compliance_core.kernel.rendering import wire_name

from . import (
    api_keys,
    audit_log,
    finding_templates,
    findings,
    health,
    organization,
    people,
    policies,
    risks,
    vendors,
    webhooks,
)
from .rows import Route

__all__ = ["Route", "Endpoint", "ROUTES", "OPENAPI", "PAGE_PARAMETERS", "endpoints", "default_endpoints", "route_index"]

OPENAPI = Operation(name="openapi", action=None, result=dict)
"""The pseudo-operation serving the OpenAPI document itself (not a core operation)."""

PAGE_PARAMETERS = ("page", "perPage", "cursor")
_PATH_PARAM = re.compile(r"{(\w+)}")


ROUTES: tuple[Route, ...] = (
    *health.ROUTES,
    *organization.ROUTES,
    *vendors.ROUTES,
    *people.ROUTES,
    *findings.ROUTES,
    *finding_templates.ROUTES,
    *policies.ROUTES,
    *risks.ROUTES,
    *api_keys.ROUTES,
    *audit_log.ROUTES,
    *webhooks.ROUTES,
)


@attrs.frozen(kw_only=True)
class Endpoint:
    """A route bound to its core operation: what the app, the document and the client read."""

    route: Route
    operation: Operation

    @property
    def method(self) -> str:
        return self.route.method

    @property
    def path(self) -> str:
        return self.route.path

    @property
    def tag(self) -> str:
        return self.route.tag

    @property
    def summary(self) -> str:
        return self.route.summary

    @property
    def public(self) -> bool:
        return self.operation.public

    @functools.cached_property
    def status(self) -> int:
        if self.route.status is not None:
            return self.route.status
        if self.operation.result is None:
            return 204
        if self.accepted is not None:
            return 202
        return 200

    @property
    def download(self) -> bool:
        return self.operation.result is Download

    @property
    def accepted(self) -> type | None:
        """The job model of an operation that answers ``Accepted[Job]``."""
        result = self.operation.result
        if typing.get_origin(result) is Accepted:
            job: type = typing.get_args(result)[0]
            return job
        return None

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """Matches a concrete path of this endpoint, capturing its ids."""
        return re.compile(
            "^" + _PATH_PARAM.sub(r"(?P<\1>[^/]+)", re.escape(self.path).replace(r"\{", "{").replace(r"\}", "}")) + "$"
        )

    @functools.cached_property
    def path_params(self) -> tuple[str, ...]:
        return tuple(_PATH_PARAM.findall(self.path))

    @functools.cached_property
    def query_parameters(self) -> frozenset[str]:
        """The query parameters it takes (checked on every request, so worked out once)."""
        op = self.operation
        filters = attrs.fields(op.filters) if op.filters is not None else ()
        return frozenset(wire_name(f.name) for f in filters) | frozenset(PAGE_PARAMETERS if op.paged else ())


def endpoints(operations: Mapping[str, Operation], routes: tuple[Route, ...] = ROUTES) -> tuple[Endpoint, ...]:
    """Bind each row to the platform's operation of that name; a row naming no operation, or
    whose path parameters are not the operation's ids, fails here, at start-up."""
    known = {**operations, HEALTH.name: HEALTH, OPENAPI.name: OPENAPI}
    bound = []
    for route in routes:
        operation = known.get(route.operation)
        if operation is None:
            raise RuntimeError(f"{route.method} {route.path}: no operation {route.operation!r}")
        endpoint = Endpoint(route=route, operation=operation)
        if endpoint.path_params != operation.ids:
            raise RuntimeError(
                f"{route.path}: path parameters {endpoint.path_params} but {operation.name} takes ids {operation.ids}"
            )
        bound.append(endpoint)
    return tuple(bound)


def default_endpoints() -> tuple[Endpoint, ...]:
    """Every registered area's endpoints, without a platform (the committed document, tooling)."""
    return endpoints({op.name: op for area in AREAS for op in area.operations})


def route_index(bound: tuple[Endpoint, ...]) -> dict[tuple[str, str], Endpoint]:
    """(method, path template) -> endpoint, as the middleware looks a request up after routing;
    ``HEAD`` is answered wherever ``GET`` is."""
    index = {(e.method, e.path): e for e in bound}
    for endpoint in bound:
        if endpoint.method == "GET":
            index.setdefault(("HEAD", endpoint.path), endpoint)
    return index
