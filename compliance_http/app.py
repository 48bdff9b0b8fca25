"""The Falcon app for /v1, built from the route table around one ``Platform``."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import falcon

from compliance_core.client import HEALTH
from compliance_core.platform import Platform

from . import errors
from .middleware import Authenticate, RequestContext
from .openapi import openapi_document
from .resources import OperationResource
from .resources.health import Health
from .resources.openapi import OpenApiDocument
from .routes import OPENAPI, ROUTES, Endpoint, Route, endpoints, route_index
from .wire import Wire

__all__ = ["create_app"]


def create_app(platform: Platform, *, routes: tuple[Route, ...] = ROUTES) -> falcon.App:
    """A WSGI app serving ``platform`` over /v1.

    :param platform: the composition root whose services the resources call
    :param routes: the route rows (default: every area's)

    >>> from compliance_core import Platform
    >>> app = create_app(Platform.open("memory://"))
    """
    wire = Wire(platform.renderer)
    bound = endpoints(platform.operations, routes)
    middleware: list[Any] = [RequestContext(), Authenticate(platform.access, route_index(bound), wire)]
    app = falcon.App(middleware=middleware)
    errors.install(app, wire)
    by_path: defaultdict[str, list[Endpoint]] = defaultdict(list)
    for endpoint in bound:
        by_path[endpoint.path].append(endpoint)
    special = {
        HEALTH.name: Health(platform, wire),
        OPENAPI.name: OpenApiDocument(openapi_document(bound)),
    }

    readers = {e.operation.name: e for e in bound if e.method == "GET"}

    def locate(operation: str, ids: tuple[str, ...]) -> str:
        """The path of ``operation``'s GET route for ``ids`` (the Location of a 202)."""
        endpoint = readers.get(operation)
        if endpoint is None or len(endpoint.operation.ids) != len(ids):
            raise RuntimeError(f"Accepted names {operation!r} as its status, which has no GET route taking {ids}")
        return endpoint.path.format(**dict(zip(endpoint.operation.ids, ids, strict=True)))

    for path, group in by_path.items():
        names = {e.operation.name for e in group}
        if names & special.keys():
            if len(group) != 1:
                raise RuntimeError(f"{path}: a special resource serves one method only")
            app.add_route(path, special[group[0].operation.name])
        else:
            app.add_route(path, OperationResource(group, platform.services, wire, locate))
    return app
