"""Where the platform may connect on a customer's behalf: public addresses only, unless the
embedding application allows private ones (development, tests).

Webhook deliveries and task automations' HTTP probes both reach out to URLs a customer wrote, so
both follow this one rule rather than a copy each. A host name is checked against every address
it resolves to, just before connecting (a host whose DNS answer changes after the URL was saved,
DNS rebinding, gains nothing); the cloud metadata addresses are refused even when private
targets are allowed.

The switch is the webhooks' setting (``WebhookPolicy(allow_private=...)``, set for ``compliance
serve`` and ``compliance worker`` by ``COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1``): one switch for
every outbound connection, read through ``private_targets_allowed``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from .errors import ValidationError

__all__ = [
    "ALLOW_PRIVATE_HINT",
    "Resolver",
    "SystemResolver",
    "METADATA_ADDRESSES",
    "NAT64",
    "LOCAL_NAT64",
    "address_problem",
    "embedded_ipv4",
    "check_target",
    "private_targets_allowed",
]

ALLOW_PRIVATE_HINT = (
    "plain http and private or loopback addresses are allowed for development by "
    "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1 in the environment of compliance serve and compliance worker "
    "(in-process: settings={'webhooks': WebhookPolicy(allow_private=True)})"
)
"""Said by each refusal that allowing private targets would lift, so a developer with a receiver
on localhost learns the setting from the error itself."""

METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})
"""Cloud instance metadata services: credentials live there, so never a target."""


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


NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix (RFC 6052): a translator sends what is addressed to it to the IPv4
address in its last 32 bits."""
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
"""The local-use NAT64 prefix (RFC 8215): the operator picks a prefix length of /48 or longer
inside it, so the IPv4 address may sit at any of the RFC 6052 positions those lengths use."""
_LOCAL_NAT64_LENGTHS = (48, 56, 64, 96)
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address an IPv6 address may deliver to: IPv4-mapped (``::ffff:a.b.c.d``),
    IPv4-translated (``::ffff:0:a.b.c.d``), IPv4-compatible (``::a.b.c.d``), 6to4 (``2002::/16``),
    Teredo (``2001::/32``: its server and its client) and NAT64 (``64:ff9b::/96``,
    ``64:ff9b:1::/48``). A relay or translator on the way connects to that IPv4 address, so the
    check must see it: ``[2002:7f00:1::]`` reaches 127.0.0.1 through any 6to4 relay."""
    found: list[ipaddress.IPv4Address] = []
    value = int(ip)
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip in _IPV4_TRANSLATED or (ip in _IPV4_COMPATIBLE and value > 1) or ip in NAT64:
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if ip in LOCAL_NAT64:
        found.extend(_rfc6052(value, length) for length in _LOCAL_NAT64_LENGTHS)
    return tuple(dict.fromkeys(found))


def _rfc6052(value: int, length: int) -> ipaddress.IPv4Address:
    """The IPv4 address after a NAT64 prefix of ``length`` bits (RFC 6052 section 2.2: bits 64
    to 71 are always zero and skipped)."""
    if length == 96:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    without_u = ((value >> 64) << 56) | (value & ((1 << 56) - 1))
    return ipaddress.IPv4Address((without_u >> (120 - length - 32)) & 0xFFFFFFFF)


def address_problem(address: str, allow_private: bool) -> str | None:
    """Why the platform may not connect to ``address``, or None when it may. An IPv6 address is
    refused when it is, or when any IPv4 address it embeds is (``embedded_ipv4``)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address} is not an IP address"
    candidates: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, ...] = (ip,)
    if isinstance(ip, ipaddress.IPv6Address):
        candidates += embedded_ipv4(ip)
    for candidate in candidates:  # the metadata addresses first: refused whatever the policy
        if candidate in METADATA_ADDRESSES:
            return _naming(ip, candidate, f"{candidate} is a cloud metadata address")
    if allow_private:
        return None
    for candidate in candidates:
        if candidate.is_unspecified or candidate.is_multicast or candidate.is_reserved or not candidate.is_global:
            return _naming(
                ip, candidate, f"{candidate} is not a public address (private, loopback, link-local or reserved)"
            )
    return None


def _naming(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, candidate: object, problem: str) -> str:
    return problem if candidate == ip else f"{ip} embeds an IPv4 address: {problem}"


def check_target(url: str, *, allow_private: bool, resolver: Resolver | None, field: str = "url") -> None:
    """Refuse (``ValidationError`` on ``field``) a URL the platform may not connect to: not https
    while private targets are not allowed, an invalid port, and, when ``resolver`` is given, a
    host that does not resolve or resolves to any refused address. Without a resolver only an IP
    literal's address is checked (the host name is checked by whoever connects, at that time)."""
    parts = urlsplit(url)
    if parts.scheme != "https" and not allow_private:
        raise ValidationError.field(field, url, f"must be an https URL; {ALLOW_PRIVATE_HINT}")
    host = parts.hostname or ""
    try:
        given = parts.port
    except ValueError:
        raise ValidationError.field(field, url, "has an invalid port") from None
    port = (443 if parts.scheme == "https" else 80) if given is None else given
    if port == 0:
        raise ValidationError.field(field, url, "port 0 is not a port a receiver can listen on")
    if resolver is None:
        if address_problem(host, True) == f"{host} is not an IP address":
            return
        addresses: Sequence[str] = [host]
    else:
        try:
            addresses = resolver.resolve(host, port)
        except (OSError, UnicodeError):
            raise ValidationError.field(field, url, f"the host {host} does not resolve") from None
        if not addresses:
            raise ValidationError.field(field, url, f"the host {host} does not resolve")
    for address in addresses:
        problem = address_problem(address, allow_private)
        if problem is not None:
            # a receiver on the developer's own machine is the usual cause: say what allows it
            hint = f"; {ALLOW_PRIVATE_HINT}" if address_problem(address, True) is None else ""
            raise ValidationError.field(field, url, f"refused: {problem}{hint}")


def private_targets_allowed(settings: Mapping[str, Any]) -> bool:
    """Whether the embedding application allows private targets: the webhooks' policy
    (``settings["webhooks"].allow_private``), the platform's one switch for outbound
    connections."""
    return bool(getattr(settings.get("webhooks"), "allow_private", False))
