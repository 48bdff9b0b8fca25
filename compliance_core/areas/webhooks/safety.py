"""Where a webhook may point: public addresses only, unless the embedding application allows
private ones (development, tests). The address rules are the kernel's (``kernel.outbound``), which
task automations' probes follow too; they are named here as well for the webhook sender.

The same check runs twice: when an endpoint is created or its URL changed (the host is resolved
and every address it resolves to is checked, so the caller learns at once), and again by the
sender just before each delivery, against the address it is about to connect to. A host whose DNS
answer changes after creation (DNS rebinding) therefore gains nothing. The cloud metadata
addresses are refused even when private targets are allowed.
"""

from __future__ import annotations

import attrs

from ...kernel.outbound import (
    ALLOW_PRIVATE_HINT,
    LOCAL_NAT64,
    METADATA_ADDRESSES,
    NAT64,
    Resolver,
    SystemResolver,
    address_problem,
    check_target,
    embedded_ipv4,
)

__all__ = [
    "ALLOW_PRIVATE_HINT",
    "Resolver",
    "SystemResolver",
    "WebhookPolicy",
    "METADATA_ADDRESSES",
    "NAT64",
    "LOCAL_NAT64",
    "address_problem",
    "embedded_ipv4",
    "check_url",
]


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


def check_url(url: str, policy: WebhookPolicy, field: str = "url") -> None:
    """Refuse (``ValidationError`` on ``field``) a URL a webhook may not point at: not https
    while private targets are not allowed, a host that does not resolve, or one that resolves to
    any refused address."""
    check_target(url, allow_private=policy.allow_private, resolver=policy.resolver, field=field)
