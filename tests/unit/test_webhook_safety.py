"""Where a webhook may point, through every way an IPv6 address can carry an IPv4 one: a relay or
translator on the way connects to the embedded address, so it is checked as if named directly."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compliance_core import FrozenClock, Platform, SequentialIds, ValidationError
from compliance_core.areas.webhooks import NewWebhook, WebhookPolicy, address_problem
from compliance_store.memory import MemoryStore


def embeddings(v4: ipaddress.IPv4Address) -> dict[str, ipaddress.IPv6Address]:
    """Every IPv6 form that delivers to ``v4``."""
    n = int(v4)
    u = (n >> 16) & 0xFFFF, n & 0xFFFF
    return {
        "mapped": ipaddress.IPv6Address((0xFFFF << 32) | n),
        "translated": ipaddress.IPv6Address((0xFFFF << 48) | n),
        "compatible": ipaddress.IPv6Address(n),
        "6to4": ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1),
        "nat64": ipaddress.IPv6Address(f"64:ff9b::{u[0]:x}:{u[1]:x}"),
        "local nat64 /96": ipaddress.IPv6Address(f"64:ff9b:1::{u[0]:x}:{u[1]:x}"),
        "local nat64 /48": ipaddress.IPv6Address(
            int(ipaddress.IPv6Address("64:ff9b:1::")) | ((n >> 16) << 64) | ((n & 0xFFFF) << 40)
        ),
        "local nat64 /64": ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b:1::")) | (n << 24)),
        # Teredo: server in bits 32-63, client inverted in the last 32 bits
        "teredo server": ipaddress.IPv6Address((0x20010000 << 96) | (n << 64) | 0xFFFFFFFF),
        "teredo client": ipaddress.IPv6Address(
            (0x20010000 << 96) | (int(ipaddress.IPv4Address("65.54.227.120")) << 64) | (n ^ 0xFFFFFFFF)
        ),
    }


@pytest.mark.parametrize(
    "address, embedded",
    [
        ("2002:7f00:1::", "127.0.0.1"),
        ("2002:a9fe:a9fe::", "169.254.169.254"),
        ("2002:0a00:0001::1", "10.0.0.1"),
        ("64:ff9b::7f00:1", "127.0.0.1"),
        ("::7f00:1", "127.0.0.1"),
        ("::ffff:0:a9fe:a9fe", "169.254.169.254"),
    ],
)
def test_the_issues_addresses_are_refused_naming_what_they_embed(address: str, embedded: str) -> None:
    problem = address_problem(address, allow_private=False)
    assert problem is not None
    if address.startswith("2002:"):  # a 6to4 address is global in itself: only its embedding refuses it
        assert f"embeds an IPv4 address: {embedded}" in problem


def test_a_6to4_address_of_a_public_host_is_allowed() -> None:
    assert address_problem("2002:5db8:d70e::1", allow_private=False) is None


@pytest.mark.parametrize("form", sorted(embeddings(ipaddress.IPv4Address("169.254.169.254"))))
def test_the_metadata_address_is_refused_in_every_embedding_even_when_private_targets_are_allowed(form: str) -> None:
    address = embeddings(ipaddress.IPv4Address("169.254.169.254"))[form]
    assert "metadata" in (address_problem(str(address), allow_private=True) or "")


@given(st.ip_addresses(v=4), st.booleans())
@example(ipaddress.IPv4Address("127.0.0.1"), False)
@example(ipaddress.IPv4Address("10.0.0.1"), False)
@example(ipaddress.IPv4Address("169.254.169.254"), True)
def test_every_embedding_of_a_refused_ipv4_address_is_refused(v4: ipaddress.IPv4Address, allow_private: bool) -> None:
    if address_problem(str(v4), allow_private) is None:
        return
    for form, address in embeddings(v4).items():
        assert address_problem(str(address), allow_private) is not None, (form, str(address))


class _Literal:
    def resolve(self, host: str, port: int) -> list[str]:
        return [host]


@pytest.mark.parametrize(
    "url, reason",
    [
        ("https://[2002:7f00:1::]/hook", "127.0.0.1"),
        ("https://[2002:a9fe:a9fe::]/hook", "metadata"),
        ("https://[64:ff9b::a00:1]/hook", "not a public address"),
        ("https://93.184.215.14:0/hook", "port 0"),
    ],
)
def test_endpoints_through_an_embedding_or_on_port_0_are_refused_at_configure_time(url: str, reason: str) -> None:
    platform = Platform(
        MemoryStore(),
        clock=FrozenClock(),
        ids=SequentialIds(),
        settings={"webhooks": WebhookPolicy(resolver=_Literal())},
    )
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    with pytest.raises(ValidationError) as raised:
        platform.webhooks.create(owner, NewWebhook(url=url, events=["*"]))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("url", url)
    assert reason in raised.value.details["reason"]
