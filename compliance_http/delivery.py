"""Webhook deliveries over the network: the real ``Sender`` and the thread that runs the engine.

``HttpSender`` resolves the endpoint's host itself, checks every address it resolves to (the
same rule as at creation, ``webhooks.safety.address_problem``), and connects to the CHECKED
address: the URL it requests names the IP, the ``Host`` header the real host, and for https the
TLS handshake is told the real name (httpx's ``sni_hostname`` extension), so certificates are
verified against it. A DNS answer that changes between the check and the connection (rebinding)
therefore cannot steer the request elsewhere. Redirects are never followed, the whole exchange is
bounded by the timeout, and at most 64 KB of the response is read.

The timeout is a wall-clock deadline for the whole attempt, not httpx's per-operation timeouts (a
read timeout restarts at every byte, so a receiver answering one byte a second held an attempt
for a minute): the sender's network backend gives every connect, TLS handshake, send and read only
what is left until the attempt's deadline, and fails the attempt as a timeout once none is left.
"""

from __future__ import annotations

import contextlib
import email.utils
import ipaddress
import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import httpcore
import httpx

from compliance_core.areas.webhooks import Resolver, SendResult, WebhookPolicy, address_problem
from compliance_core.platform import Platform

__all__ = ["HttpSender", "delivering", "TIMEOUT", "MAX_RESPONSE_BYTES", "POLL_INTERVAL"]

log = logging.getLogger("compliance_http.delivery")

TIMEOUT = 10.0
"""Seconds one attempt may take, from resolving the host to the end of the read."""
MAX_RESPONSE_BYTES = 64 * 1024
"""The most of a response body read (and kept, as the log's excerpt)."""
POLL_INTERVAL = 1.0
"""Seconds between two engine steps when there was nothing to do."""


class HttpSender:
    """POSTs deliveries with httpx (see the module's description).

    :param policy: whether private targets (and plain http) are allowed
    :param resolver: how hosts are resolved (default: the policy's, which defaults to the system's)
    :param timeout: seconds per attempt
    """

    def __init__(
        self, policy: WebhookPolicy | None = None, *, resolver: Resolver | None = None, timeout: float = TIMEOUT
    ) -> None:
        self.policy = policy or WebhookPolicy()
        self._resolver = resolver or self.policy.resolver
        self._timeout = timeout
        self._attempt = threading.local()  # each delivery thread's own deadline
        transport = httpx.HTTPTransport(trust_env=False)
        transport._pool = httpcore.ConnectionPool(  # the same pool httpx builds, on the deadline backend
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_DeadlineBackend(self._deadline_left),
        )
        self._client = httpx.Client(follow_redirects=False, timeout=timeout, trust_env=False, transport=transport)

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        started = time.monotonic()
        self._attempt.deadline = started + self._timeout
        try:
            return self._send(url, body, headers, started)
        finally:
            self._attempt.deadline = None

    def _deadline_left(self) -> float | None:
        """Seconds left to this thread's attempt (None outside one)."""
        deadline: float | None = getattr(self._attempt, "deadline", None)
        return None if deadline is None else deadline - time.monotonic()

    def _send(self, url: str, body: bytes, headers: Mapping[str, str], started: float) -> SendResult:

        def result(**fields: Any) -> SendResult:
            return SendResult(duration_ms=round((time.monotonic() - started) * 1000), **fields)

        try:
            target = httpx.URL(url)
        except httpx.InvalidURL as error:
            return result(error="refused", detail=f"invalid URL: {error}")
        if target.scheme != "https" and not (target.scheme == "http" and self.policy.allow_private):
            return result(error="refused", detail="only https URLs are allowed")
        host = target.host
        port = (443 if target.scheme == "https" else 80) if target.port is None else target.port
        if port == 0:
            return result(error="refused", detail="port 0 is not a port a receiver can listen on")
        try:
            addresses = self._resolver.resolve(host, port)
        except (OSError, UnicodeError) as error:
            return result(error="network", detail=f"{host} does not resolve: {error}")
        if not addresses:
            return result(error="network", detail=f"{host} does not resolve")
        for address in addresses:
            problem = address_problem(address, self.policy.allow_private)
            if problem is not None:
                return result(error="refused", detail=f"refused {host}: {problem}")
        address = addresses[0]
        extensions: dict[str, Any] = {"timeout": self._deadline(started)}
        if target.scheme == "https" and not _is_ip(host):
            extensions["sni_hostname"] = host
        request = self._client.build_request(
            "POST",
            target.copy_with(host=address),
            content=body,
            headers={
                **headers,
                "Host": target.netloc.decode("ascii").rsplit("@", 1)[-1],
                "Accept-Encoding": "identity",
            },
            extensions=extensions,
        )
        try:
            response = self._client.send(request, stream=True)
            try:
                data = self._read(response, started)
            finally:
                response.close()
        except httpx.TimeoutException as error:
            return result(error="timeout", detail=f"timed out after {self._timeout:g} s ({type(error).__name__})")
        except (httpx.HTTPError, OSError) as error:
            return result(error="network", detail=f"{type(error).__name__}: {error}")
        return result(
            status=response.status_code,
            excerpt=data.decode("utf-8", "replace"),
            retry_after=_retry_after(response.headers.get("retry-after")),
        )

    def _deadline(self, started: float) -> dict[str, float]:
        left = max(0.001, self._timeout - (time.monotonic() - started))
        return {"connect": left, "read": left, "write": left, "pool": left}

    def _read(self, response: httpx.Response, started: float) -> bytes:
        """At most ``MAX_RESPONSE_BYTES`` of the body, within what is left of the timeout."""
        kept = bytearray()
        for chunk in response.iter_raw():
            kept += chunk[: MAX_RESPONSE_BYTES - len(kept)]
            if len(kept) >= MAX_RESPONSE_BYTES:
                break
            if time.monotonic() - started > self._timeout:
                raise httpx.ReadTimeout("the response took longer than the timeout")
        return bytes(kept)

    def close(self) -> None:
        self._client.close()


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation gets at most what is left of the current attempt."""

    CHUNK = 16 * 1024
    """Bytes written per call, so a receiver that reads slowly meets the deadline between two."""

    def __init__(self, stream: httpcore.NetworkStream, left: Callable[[], float | None]) -> None:
        self._stream = stream
        self._left = left

    def _timeout(self, timeout: float | None, expired: type[Exception]) -> float | None:
        left = self._left()
        if left is None:
            return timeout
        if left <= 0:
            raise expired("the attempt's time limit ran out")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._timeout(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), self.CHUNK):
            self._stream.write(buffer[start : start + self.CHUNK], self._timeout(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        # CPython bounds a whole handshake by the socket's timeout, however the peer paces it.
        tls = self._stream.start_tls(ssl_context, server_hostname, self._timeout(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(tls, self._left)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own synchronous backend, with connections bounded by the attempt's deadline."""

    def __init__(self, left: Callable[[], float | None]) -> None:
        self._backend = httpcore.SyncBackend()
        self._left = left

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = self._left()
        if left is not None:
            if left <= 0:
                raise httpcore.ConnectTimeout("the attempt's time limit ran out")
            timeout = left if timeout is None else min(timeout, left)
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream, self._left)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks are delivered over TCP only")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@contextlib.contextmanager
def delivering(
    platform: Platform, *, interval: float = POLL_INTERVAL, sender: HttpSender | None = None, **options: Any
) -> Iterator[threading.Thread]:
    """Run the platform's delivery engine in a thread while the block runs (``compliance serve``'s
    lead worker, ``compliance worker``, or an embedding app); on exit the thread finishes the
    step it is in and stops.

    :param interval: seconds between steps when idle
    :param options: ``DeliveryEngine`` options (batch, lease, concurrency)

    >>> with delivering(platform):  # doctest: +SKIP
    ...     serve()
    """
    own = sender is None
    policy = platform.settings.get("webhooks") or WebhookPolicy()
    sender = sender or HttpSender(policy)
    engine = platform.delivery_engine(sender, **options)
    stop = threading.Event()
    thread = threading.Thread(target=engine.run, args=(stop, interval), name="webhook-delivery", daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
        thread.join()
        if own:
            sender.close()
