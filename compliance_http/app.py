"""The Falcon app for /v1, built from the route table around one ``Platform``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import falcon

from compliance_core.platform import Platform

from . import errors
from .middleware import Authenticate, RequestContext
from .resources import api_keys, findings, health, openapi, organization, people, vendors
from .routes import ROUTES, route_index
from .wire import Wire

__all__ = ["create_app"]


def create_app(platform: Platform) -> falcon.App:
    """A WSGI app serving ``platform`` over /v1.

    :param platform: the composition root whose services the resources call

    >>> from compliance_core import Platform
    >>> app = create_app(Platform.open("memory://"))
    """
    wire = Wire(platform.clock)
    resources = {
        **health.build(platform, wire),
        **openapi.build(),
        **organization.build(platform, wire),
        **vendors.build(platform, wire),
        **people.build(platform, wire),
        **findings.build(platform, wire),
        **api_keys.build(platform, wire),
    }
    app = falcon.App(middleware=[RequestContext(), Authenticate(platform.access, route_index(), wire)])
    errors.install(app, wire)
    for path, resource in _resources_by_path(resources).items():
        app.add_route(path, resource)
    return app


def _resources_by_path(resources: Mapping[str, Any]) -> dict[str, Any]:
    """Check the resources against the table: one resource per path, and exactly the table's
    methods on it. A responder missing from the table would skip authentication, so it is an
    error at start-up rather than an open door."""
    by_path: dict[str, Any] = {}
    methods: dict[str, set[str]] = {}
    for route in ROUTES:
        resource = resources[route.operation]
        if by_path.setdefault(route.path, resource) is not resource:
            raise RuntimeError(f"{route.path}: two resources for one path")
        methods.setdefault(route.path, set()).add(route.method)
    for path, resource in by_path.items():
        responders = {name[3:].upper() for name in dir(resource) if name.startswith("on_")}
        if responders != methods[path]:
            raise RuntimeError(f"{path}: responders {sorted(responders)} but the table has {sorted(methods[path])}")
    return by_path
