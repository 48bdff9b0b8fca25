"""Where a webhook may point: public addresses only, unless the embedding application allows
private ones (development, tests).

The same check runs twice: when an endpoint is created or its URL changed (the host is resolved
and every address it resolves to is checked, so the caller learns at once), and again by the
sender just before each delivery, against the address it is about to connect to. A host whose DNS
answer changes after creation (DNS rebinding) therefore gains nothing. The cloud metadata
addresses are refused even when private targets are allowed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Protocol
from urllib.parse import urlsplit

import attrs

from ...kernel.errors import ValidationError

__all__ = [
    "Resolver",
    "SystemResolver",
    "WebhookPolicy",
    "METADATA_ADDRESSES",
    "address_problem",
    "check_url",
]

METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})
"""Cloud instance metadata services: credentials live there, so never a webhook target."""


class Resolver(Protocol):
    def resolve(self, host: str, port: int) -> list[str]:
        """The addresses ``host`` resolves to (an IP literal resolves to itself); ``OSError``
        when it does not resolve."""
        ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo``): works offline for IP literals and
    ``/etc/hosts`` names."""

    def resolve(self, host: str, port: int) -> list[str]:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


@attrs.frozen(kw_only=True)
class WebhookPolicy:
    """What the embedding application allows.

    :param allow_private: private, loopback and link-local targets are allowed, and plain http
        (``COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1`` for ``compliance serve`` and ``compliance
        worker``); the metadata addresses stay refused
    :param resolver: how hosts are resolved when an endpoint is created or changed
    """

    allow_private: bool = False
    resolver: Resolver = attrs.field(factory=SystemResolver)


def address_problem(address: str, allow_private: bool) -> str | None:
    """Why a webhook may not connect to ``address``, or None when it may."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if allow_private:
        return None
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved or not ip.is_global:
        return f"{ip} is not a public address (private, loopback, link-local or reserved)"
    return None


def check_url(url: str, policy: WebhookPolicy, field: str = "url") -> None:
    """Refuse (``ValidationError`` on ``field``) a URL a webhook may not point at: not https
    while private targets are not allowed, a host that does not resolve, or one that resolves to
    any refused address."""
    parts = urlsplit(url)
    if parts.scheme != "https" and not policy.allow_private:
        raise ValidationError.field(field, url, "must be an https URL")
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValidationError.field(field, url, "has an invalid port") from None
    try:
        addresses: Sequence[str] = policy.resolver.resolve(host, port)
    except (OSError, UnicodeError):
        raise ValidationError.field(field, url, f"the host {host} does not resolve") from None
    if not addresses:
        raise ValidationError.field(field, url, f"the host {host} does not resolve")
    for address in addresses:
        problem = address_problem(address, policy.allow_private)
        if problem is not None:
            raise ValidationError.field(field, url, f"refused: {problem}")
