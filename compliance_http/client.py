"""``HTTPTransport``: ``compliance_core.Client`` over HTTP, driven by the operations' routes.

It returns the same models and raises the same error classes (same message, same details) as
``LocalTransport``, so one scenario runs in-process, over a WSGI app without a socket
(``httpx.WSGITransport``) or against a real server. A server that cannot be reached (connection
refused, time-out, unknown host, connection cut) raises ``ServiceUnavailable``, core's
``InternalError`` with the URL in its message and details.

    >>> from compliance_core import Client
    >>> client = Client(HTTPTransport("http://localhost:3333", "comp_..."))  # doctest: +SKIP
    >>> client.vendors.list().total  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote, unquote

import httpx
import orjson

from compliance_core.areas import AREAS
from compliance_core.client import HEALTH
from compliance_core.kernel.errors import (
    ERROR_CLASSES,
    ComplianceError,
    InternalError,
    RateLimited,
    ValidationError,
)
from compliance_core.kernel.errors import ServiceUnavailable as Busy
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.registry import Accepted, Area, Download, Operation
from compliance_core.platform import version

from .routes import OPENAPI, Endpoint, endpoints
from .wire import JSON, Wire

__all__ = ["HTTPTransport", "ServiceUnavailable"]


class ServiceUnavailable(InternalError):
    """The server could not be reached, or the exchange broke off (httpx's ``TransportError``:
    connection refused, time-out, DNS, a connection cut mid-answer). Code ``internal_error``, as
    the spec's 5xx: safe to retry with the same idempotency key. ``details``: ``url`` and
    ``reason``."""

    @classmethod
    def of(cls, url: str, error: httpx.TransportError) -> ServiceUnavailable:
        reason = str(error) or type(error).__name__
        return cls(f"could not reach {url}: {reason}", {"url": url, "reason": reason})


class HTTPTransport:
    """
    :param base_url: the server's root, e.g. ``http://localhost:3333`` (paths start with /v1)
    :param api_key: sent as X-API-Key on every request
    :param organization_id: sent as X-Organization-Id when given
    :param transport: an httpx transport, e.g. ``httpx.WSGITransport(app=create_app(platform))``
    :param timeout: seconds per request
    :param areas: the areas whose operations it calls (default: every registered area); give the
        same ``areas`` to ``Client``, and a server's platform the same (``Platform(store,
        areas=[*AREAS, EXTRA])``) to speak to it about more areas than the registered ones
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        organization_id: str | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        areas: Sequence[Area[Any]] = AREAS,
    ) -> None:
        headers = {"X-API-Key": api_key, "Accept": JSON, "User-Agent": f"compliance-client/{version()}"}
        if organization_id is not None:
            headers["X-Organization-Id"] = organization_id
        self._http = httpx.Client(base_url=base_url, headers=headers, transport=transport, timeout=timeout)
        self._wire = Wire()
        bound = endpoints(areas)
        self._endpoints = {e.operation.name: e for e in bound if e.operation is not OPENAPI}

    def call(self, operation: Operation, arguments: dict[str, Any]) -> Any:
        route = self._endpoints[operation.name]
        path = route.path.format(**{name: quote(str(arguments[name]), safe="") for name in route.path_params})
        headers: dict[str, str] = {}
        content = None
        if operation.idempotent and arguments.get("idempotency_key") is not None:
            headers["Idempotency-Key"] = arguments["idempotency_key"]
        if operation.body_argument is not None:
            value = arguments[operation.body_argument]
            if operation.batch is not None:
                body: Any = {"members": [self._wire.command_json(m) for m in value]}
            else:
                body = self._wire.command_json(value)
            content = self._wire.dumps(body)
            headers["Content-Type"] = JSON
        wants_query = operation.paged or operation.filters is not None
        params = (
            self._wire.query(arguments.get("filters"), arguments.get("page"), search=arguments.get("search"))
            if wants_query
            else None
        )
        request = self._http.build_request(route.method, path, params=params, content=content, headers=headers)
        url = str(request.url)
        try:
            if route.download:
                response = self._http.send(request, stream=True)
                if not response.is_error:  # the file arrives as the caller reads the chunks
                    return Download(
                        filename=_filename(response),
                        media_type=response.headers.get("content-type", ""),
                        chunks=_chunks(response, url),
                        inline=response.headers.get("content-disposition", "").lower().startswith("inline"),
                    )
                response.read()
                response.close()
            else:
                response = self._http.send(request)
        except httpx.TransportError as error:
            raise ServiceUnavailable.of(url, error) from error
        return self._result(route, response, arguments.get("page"))

    def _result(self, route: Endpoint, response: httpx.Response, page: PageRequest | None = None) -> Any:
        operation = route.operation
        if not response.is_error and operation.result is None:
            return None
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise InternalError(
                f"HTTP {response.status_code} with a body that is not JSON", {"status": response.status_code}
            ) from None
        if response.is_error and isinstance(data, dict) and "error" in data:
            raise _error(response.status_code, data["error"])
        if response.is_error and operation is not HEALTH:  # health answers 503 with its report
            raise InternalError(f"HTTP {response.status_code}", {"status": response.status_code})
        if operation is HEALTH:
            return self._wire.structure_health(data)
        if operation.paged:
            return self._wire.structure_page(data, operation.result, page)
        if operation.batch is not None:
            return tuple(self._wire.structure(item, operation.result) for item in data["data"])
        if route.accepted is not None:
            job: Any = self._wire.structure(data, route.accepted)
            status, ids = self._status_of(response)
            return Accepted(job=job, status=status, ids=() if ids == (str(job.id),) else ids)
        return self._wire.structure(data, operation.result)

    def _status_of(self, response: httpx.Response) -> tuple[str, tuple[str, ...]]:
        """The operation whose endpoint the Location of a 202 names, and the ids it names."""
        location = response.headers.get("location", "")
        path = httpx.URL(location).path
        for endpoint in self._endpoints.values():
            match = endpoint.pattern.match(path) if endpoint.method == "GET" else None
            if match is not None:
                return endpoint.operation.name, tuple(match.group(name) for name in endpoint.path_params)
        raise InternalError("HTTP 202 without a known Location", {"location": location})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HTTPTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error(status: int, error: dict[str, Any]) -> ComplianceError:
    """The exception core would have raised in-process for this error body."""
    message, details = error.get("message", ""), error.get("details") or {}
    cls = ERROR_CLASSES.get(error.get("code", ""))
    rest = {k: v for k, v in details.items() if k != "retryAfter"}
    if cls is RateLimited:
        return RateLimited(message, details.get("retryAfter", 1), rest)
    if cls is InternalError and status == 503:
        return Busy(message, details.get("retryAfter", 1), rest)
    if cls is None:
        cls = ValidationError if status < 500 else InternalError
    return cls(message, details)


def _chunks(response: httpx.Response, url: str) -> Iterator[bytes]:
    """A streamed response's content as it arrives. The response is closed at the end, or when
    the caller closes or drops the iterator (which is started here, before any content is read,
    so that dropping it unread runs its ``finally`` too and frees the connection). A connection
    cut meanwhile raises ``ServiceUnavailable``."""

    def body() -> Iterator[bytes]:
        try:
            yield b""
            yield from response.iter_bytes()
        except httpx.TransportError as error:
            raise ServiceUnavailable.of(url, error) from error
        finally:
            response.close()

    chunks = body()
    next(chunks)
    return chunks


def _filename(response: httpx.Response) -> str:
    """The file name of a Content-Disposition. RFC 6266: ``filename*`` (UTF-8, percent-encoded)
    wins over ``filename``, which a server sends first as an ASCII fallback for old agents."""
    disposition = response.headers.get("content-disposition", "")
    fallback = ""
    for part in disposition.split(";"):
        name, _, value = part.strip().partition("=")
        name = name.strip().lower()
        if name == "filename*" and "''" in value:
            return unquote(value.split("''", 1)[1])
        if name == "filename":
            fallback = value.strip().strip('"')
    return fallback
