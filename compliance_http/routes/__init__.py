"""The /v1 endpoints, derived from the operations core declares.

Each operation carries its route (method, path, summary, status) and its area the tag; this adds
only what HTTP works out from them (the status a result implies, the path pattern, the query
parameters). The Falcon app, the OpenAPI document and ``HTTPTransport`` are all built from
``endpoints(areas)``, so a path or a status is written once, beside its operation. Path
parameters carry core's argument names (``{vendor_id}``); the OpenAPI document shows them in
camelCase. Adding an area adds nothing here.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Sequence
from typing import Any

import attrs

from compliance_core.areas import AREAS
from compliance_core.client import HEALTH
from compliance_core.kernel.pages import Listing
from compliance_core.kernel.registry import Accepted, Area, Download, Operation, Route
from compliance_core.kernel.rendering import wire_name

__all__ = [
    "Endpoint",
    "OPENAPI",
    "PAGE_PARAMETERS",
    "endpoints",
    "default_endpoints",
    "route_index",
    "search_parameters",
]

OPENAPI = Operation(
    name="openapi", action=None, result=dict, route=Route("GET", "/v1/openapi.json", "This OpenAPI 3.0 document")
)
"""The pseudo-operation serving the OpenAPI document itself (not a core operation)."""

PUBLIC_TAG = "Health"
"""The tag of the platform's own public operations (health and this document)."""

PAGE_PARAMETERS = ("page", "perPage", "cursor")
_PATH_PARAM = re.compile(r"{(\w+)}")


@attrs.frozen(kw_only=True)
class Endpoint:
    """An operation on the wire: what the app, the document and the client read."""

    operation: Operation
    tag: str

    @property
    def route(self) -> Route:
        route = self.operation.route
        assert route is not None  # endpoints() binds only routed operations
        return route

    @property
    def method(self) -> str:
        return self.route.method

    @property
    def path(self) -> str:
        return self.route.path

    @property
    def summary(self) -> str:
        return self.route.summary

    @property
    def aliases(self) -> tuple[str, ...]:
        """Earlier paths answered exactly as ``path`` (deprecated in the document)."""
        return self.route.aliases

    @property
    def paths(self) -> tuple[str, ...]:
        """``path`` and its aliases: every path template this endpoint is served on."""
        return (self.route.path, *self.route.aliases)

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
        return (
            frozenset(wire_name(f.name) for f in filters)
            | frozenset(PAGE_PARAMETERS if op.paged else ())
            | frozenset(search_parameters(op.listing))
        )


def search_parameters(listing: Listing | None) -> tuple[str, ...]:
    """The query parameters of a list's search, sort and range, as its ``Listing`` offers them."""
    if listing is None:
        return ()
    return (
        *(("q",) if listing.searchable else ()),
        "sort",
        *(("from", "to") if listing.ranged is not None else ()),
    )


def endpoints(areas: Sequence[Area[Any]]) -> tuple[Endpoint, ...]:
    """Every operation of ``areas`` on the wire, after health and the document; an operation
    without a route, an area without a tag, or a route whose path parameters are not the
    operation's ids fails here, at start-up."""
    bound = [Endpoint(operation=HEALTH, tag=PUBLIC_TAG), Endpoint(operation=OPENAPI, tag=PUBLIC_TAG)]
    for area in areas:
        for operation in area.operations:
            if operation.route is None or area.tag is None:
                raise RuntimeError(f"{operation.name}: no route, or area {area.name} has no tag")
            bound.append(Endpoint(operation=operation, tag=area.tag))
    for endpoint in bound:
        for path in endpoint.paths:
            if tuple(_PATH_PARAM.findall(path)) != endpoint.operation.ids:
                raise RuntimeError(
                    f"{path}: path parameters {tuple(_PATH_PARAM.findall(path))} but {endpoint.operation.name} "
                    f"takes ids {endpoint.operation.ids}"
                )
    return tuple(bound)


def default_endpoints() -> tuple[Endpoint, ...]:
    """Every registered area's endpoints, without a platform (the committed document, tooling)."""
    return endpoints(AREAS)


def route_index(bound: tuple[Endpoint, ...]) -> dict[tuple[str, str], Endpoint]:
    """(method, path template) -> endpoint, as the middleware looks a request up after routing
    (an alias path finds its endpoint too); ``HEAD`` is answered wherever ``GET`` is."""
    index = {(e.method, path): e for e in bound for path in e.paths}
    for endpoint in bound:
        if endpoint.method == "GET":
            for path in endpoint.paths:
                index.setdefault(("HEAD", path), endpoint)
    return index
