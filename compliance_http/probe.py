"""Task automations' HTTP probes over the network: the real ``Prober`` (httpx).

Core declares the port (``compliance_core.areas.automations.Prober``) and finds this adapter
through the ``compliance.probers`` entry points. Like the webhook sender, the prober resolves the
host itself, checks every address against the platform's outbound rule
(``kernel.outbound.address_problem``: public addresses only unless private targets are allowed,
never the cloud metadata addresses) and connects to the CHECKED address, naming the real host in
the ``Host`` header and in the TLS handshake (so the certificate is verified against it). It
follows no redirect (a redirect is an answer the assertions judge), bounds the whole exchange by
the probe's timeout as a wall-clock deadline, and reads at most ``MAX_BODY_BYTES`` of the body.
For https it reports the server certificate's end of validity, which
``tls_expires_after_days`` assertions judge.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import time
from typing import Any

import httpcore
import httpx
from cryptography import x509

from compliance_core.areas.automations import ProbeRequest, ProbeResponse
from compliance_core.kernel.outbound import Resolver, SystemResolver, address_problem

from .delivery import _DeadlineBackend

__all__ = ["HttpxProber", "MAX_BODY_BYTES"]

MAX_BODY_BYTES = 16_000
"""The most of a body read: what a run's output keeps, and enough for a JSON status document."""


class HttpxProber:
    """Makes automations' HTTP probes with httpx.

    :param resolver: how hosts are resolved (default: the operating system's)
    :param verify: how certificates are verified: True (the system's trust store), or an
        ``ssl.SSLContext`` (a private CA, a test's self-signed certificate)
    """

    def __init__(self, *, resolver: Resolver | None = None, verify: ssl.SSLContext | bool = True) -> None:
        self._resolver = resolver or SystemResolver()
        self._context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify=verify)

    def probe(self, request: ProbeRequest) -> ProbeResponse:
        deadline = time.monotonic() + request.timeout
        try:
            target = httpx.URL(request.url)
        except httpx.InvalidURL as error:
            return ProbeResponse(error=f"refused: invalid URL ({error})")
        if target.scheme != "https" and not (target.scheme == "http" and request.allow_private):
            return ProbeResponse(
                error="refused: only https URLs are probed (plain http only where private targets are allowed)"
            )
        host = target.host
        port = (443 if target.scheme == "https" else 80) if target.port is None else target.port
        try:
            addresses = self._resolver.resolve(host, port)
        except (OSError, UnicodeError) as error:
            return ProbeResponse(error=f"the host {host} does not resolve ({error})")
        if not addresses:
            return ProbeResponse(error=f"the host {host} does not resolve")
        for address in addresses:
            problem = address_problem(address, request.allow_private)
            if problem is not None:
                return ProbeResponse(error=f"refused {host}: {problem}")
        extensions: dict[str, Any] = {
            "timeout": {
                "connect": request.timeout,
                "read": request.timeout,
                "write": request.timeout,
                "pool": request.timeout,
            }
        }
        if target.scheme == "https" and not _is_ip(host):
            extensions["sni_hostname"] = host
        transport = httpx.HTTPTransport(trust_env=False)
        transport._pool = httpcore.ConnectionPool(  # httpx's own pool, on a backend bounded by the deadline
            ssl_context=self._context,
            max_connections=1,
            network_backend=_DeadlineBackend(lambda: deadline - time.monotonic()),
        )
        with httpx.Client(transport=transport, follow_redirects=False, trust_env=False) as client:
            built = client.build_request(
                request.method,
                target.copy_with(host=addresses[0]),
                headers={"Host": target.netloc.decode("ascii").rsplit("@", 1)[-1], "Accept-Encoding": "identity"},
                extensions=extensions,
            )
            try:
                response = client.send(built, stream=True)
                try:
                    expires = _certificate_expiry(response)
                    body = _read(response, deadline)
                finally:
                    response.close()
            except httpx.TimeoutException:
                return ProbeResponse(error=f"timed out after {request.timeout:g} s")
            except (httpx.HTTPError, OSError) as error:
                return ProbeResponse(error=f"{type(error).__name__}: {error}")
        return ProbeResponse(
            status=response.status_code,
            headers=tuple((name, value) for name, value in response.headers.items()),
            body=body,
            certificate_expires_at=expires,
        )


def _read(response: httpx.Response, deadline: float) -> bytes:
    kept = bytearray()
    for chunk in response.iter_raw():
        kept += chunk[: MAX_BODY_BYTES - len(kept)]
        if len(kept) >= MAX_BODY_BYTES:
            break
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the response took longer than the timeout")
    return bytes(kept)


def _certificate_expiry(response: httpx.Response) -> dt.datetime | None:
    """The server certificate's ``notAfter`` (None over plain http)."""
    stream = response.extensions.get("network_stream")
    tls = stream.get_extra_info("ssl_object") if stream is not None else None
    if tls is None:
        return None
    der = tls.getpeercert(True)  # the C socket takes no keywords
    if not der:
        return None
    return x509.load_der_x509_certificate(der).not_valid_after_utc


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
