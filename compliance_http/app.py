"""The Falcon app for /v1, built from the operations of one ``Platform``'s areas."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, cast

import falcon
from falcon.media.multipart import MultipartFormHandler
from falcon.routing import map_http_methods

from compliance_core.client import HEALTH
from compliance_core.platform import Platform, version

from . import errors
from .cors import Cors
from .middleware import AccessLog, Authenticate, RequestContext
from .openapi import openapi_document
from .resources import OperationResource
from .resources.health import Health
from .resources.openapi import OpenApiDocument
from .resources.pages import add_pages
from .routes import OPENAPI, Endpoint, endpoints, route_index
from .wire import Wire

__all__ = ["create_app"]


def create_app(
    platform: Platform, *, access_log: AccessLog | None = None, cors_origins: Iterable[str] = ()
) -> falcon.App[Any, Any]:
    """A WSGI app serving ``platform`` over /v1: every operation of its areas, on the route
    each declares, and the pages a browser opens (``/``, ``/v1``, ``/docs``).

    :param platform: the composition root whose services the resources call
    :param access_log: where one JSON line per request goes (None: nowhere)
    :param cors_origins: the origins (``https://app.example.com``) whose scripts may call the API
        from a browser (``cors.Cors``); none by default

    >>> from compliance_core import Platform
    >>> app = create_app(Platform.open("memory://"))
    """
    wire = Wire(platform.renderer)
    bound = endpoints(platform.areas)
    middleware: list[Any] = [RequestContext(access_log), Authenticate(platform.access, route_index(bound), wire)]
    origins = list(cors_origins)
    if origins:
        middleware.insert(0, Cors(origins))
    app = falcon.App(middleware=middleware)
    # A form sends a list field as one part per value (up to a few hundred control ids), past
    # falcon's default of 64 parts; the server bounds the body's bytes (FileBodyLimits).
    form = cast(MultipartFormHandler, app.req_options.media_handlers[falcon.MEDIA_MULTIPART])
    form.parse_options.max_body_part_count = 1024
    errors.install(app, wire)
    by_path: defaultdict[str, list[Endpoint]] = defaultdict(list)
    for endpoint in bound:
        for path in endpoint.paths:  # an alias path is served like the path itself
            by_path[path].append(endpoint)
    special = {
        HEALTH.name: Health(platform, wire),
        OPENAPI.name: OpenApiDocument(
            lambda: openapi_document(
                bound, event_types=(event.type for area in platform.areas for event in area.events)
            )
        ),
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
        resource: object
        if names & special.keys():
            if len(group) != 1:
                raise RuntimeError(f"{path}: a special resource serves one method only")
            resource = special[group[0].operation.name]
        else:
            resource = OperationResource(group, platform.services, wire, locate)
        app.add_route(path, _with_options(resource))
    add_pages(app, version)
    return app


def _with_options(resource: object) -> object:
    """``resource`` answering OPTIONS itself: 204 with the same Allow header as its 405 (Falcon's
    own OPTIONS leaves OPTIONS out of Allow while its 405 lists it). Falcon's 405 lists the
    methods with a responder, sorted, and so does this; HEAD is among them wherever GET is."""
    allow = ", ".join(sorted({*map_http_methods(resource), "OPTIONS"}))

    def on_options(req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        resp.status = 204
        resp.set_header("Allow", allow)

    setattr(resource, "on_options", on_options)  # noqa: B010 (an instance's own responder)
    return resource
