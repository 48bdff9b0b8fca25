"""Weak TLS 1.2 cipher suites by family, and the two TLS records the HTTPS provider writes and
reads by hand to probe them: a ClientHello offering only the suites under test, and the
ServerHello's chosen suite. The OpenSSL this runs on cannot offer RC4, 3DES, DES, IDEA or EXPORT
suites through ``ssl``, so a probe made with it would pass a server accepting exactly those. The
probe hangs up before any key exchange: no cryptography is written here."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Mapping, Sequence

import attrs

from compliance_core.areas.integrations.providers import ProviderError
from compliance_core.kernel.severities import Severity

__all__ = [
    "CipherFamily",
    "WEAK_CIPHER_FAMILIES",
    "WEAK_CIPHER_SUITES",
    "cipher_families",
    "client_hello",
    "read_server_hello",
]


@attrs.frozen(kw_only=True)
class CipherFamily:
    """Weak cipher suites that fail for the same reason: the suites of ``WEAK_CIPHER_SUITES``
    whose IANA name holds one of ``marks`` and that no earlier family took."""

    id: str
    label: str
    severity: Severity
    reason: str
    marks: tuple[str, ...]


WEAK_CIPHER_FAMILIES = (
    CipherFamily(
        id="null",
        label="NULL encryption",
        severity=Severity.HIGH,
        reason="the traffic is not encrypted at all",
        marks=("_NULL_",),
    ),
    CipherFamily(
        id="export",
        label="EXPORT-grade",
        severity=Severity.HIGH,
        reason="the keys are cut to 40 or 56 bits and can be broken (FREAK, Logjam)",
        marks=("_EXPORT_",),
    ),
    CipherFamily(
        id="anonymous",
        label="anonymous key exchange",
        severity=Severity.HIGH,
        reason="the server is not authenticated, so anyone on the path can impersonate it",
        marks=("_anon_",),
    ),
    CipherFamily(
        id="rc4",
        label="RC4",
        severity=Severity.HIGH,
        reason="RC4's keystream biases let an attacker recover plaintext (RFC 7465 prohibits it)",
        marks=("_RC4_",),
    ),
    CipherFamily(
        id="64-bit-block",
        label="64-bit block ciphers (3DES, DES, IDEA)",
        severity=Severity.MEDIUM,
        reason="a 64-bit block lets a long connection leak plaintext (Sweet32), and single DES is brute-forceable",
        marks=("_3DES_", "_DES_", "_IDEA_"),
    ),
    CipherFamily(
        id="cbc-sha1",
        label="CBC mode with SHA-1 MAC",
        severity=Severity.LOW,
        reason="MAC-then-encrypt CBC suites have a history of padding-oracle attacks (Lucky Thirteen) and "
        "current guidance (Mozilla intermediate) drops them",
        marks=("_CBC_SHA",),
    ),
)

WEAK_CIPHER_SUITES: Mapping[int, str] = {
    0x0001: "TLS_RSA_WITH_NULL_MD5",
    0x0002: "TLS_RSA_WITH_NULL_SHA",
    0x0003: "TLS_RSA_EXPORT_WITH_RC4_40_MD5",
    0x0004: "TLS_RSA_WITH_RC4_128_MD5",
    0x0005: "TLS_RSA_WITH_RC4_128_SHA",
    0x0006: "TLS_RSA_EXPORT_WITH_RC2_CBC_40_MD5",
    0x0007: "TLS_RSA_WITH_IDEA_CBC_SHA",
    0x0008: "TLS_RSA_EXPORT_WITH_DES40_CBC_SHA",
    0x0009: "TLS_RSA_WITH_DES_CBC_SHA",
    0x000A: "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    0x000B: "TLS_DH_DSS_EXPORT_WITH_DES40_CBC_SHA",
    0x000C: "TLS_DH_DSS_WITH_DES_CBC_SHA",
    0x000D: "TLS_DH_DSS_WITH_3DES_EDE_CBC_SHA",
    0x000E: "TLS_DH_RSA_EXPORT_WITH_DES40_CBC_SHA",
    0x000F: "TLS_DH_RSA_WITH_DES_CBC_SHA",
    0x0010: "TLS_DH_RSA_WITH_3DES_EDE_CBC_SHA",
    0x0011: "TLS_DHE_DSS_EXPORT_WITH_DES40_CBC_SHA",
    0x0012: "TLS_DHE_DSS_WITH_DES_CBC_SHA",
    0x0013: "TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA",
    0x0014: "TLS_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA",
    0x0015: "TLS_DHE_RSA_WITH_DES_CBC_SHA",
    0x0016: "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA",
    0x0017: "TLS_DH_anon_EXPORT_WITH_RC4_40_MD5",
    0x0018: "TLS_DH_anon_WITH_RC4_128_MD5",
    0x0019: "TLS_DH_anon_EXPORT_WITH_DES40_CBC_SHA",
    0x001A: "TLS_DH_anon_WITH_DES_CBC_SHA",
    0x001B: "TLS_DH_anon_WITH_3DES_EDE_CBC_SHA",
    0x002F: "TLS_RSA_WITH_AES_128_CBC_SHA",
    0x0030: "TLS_DH_DSS_WITH_AES_128_CBC_SHA",
    0x0031: "TLS_DH_RSA_WITH_AES_128_CBC_SHA",
    0x0032: "TLS_DHE_DSS_WITH_AES_128_CBC_SHA",
    0x0033: "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
    0x0034: "TLS_DH_anon_WITH_AES_128_CBC_SHA",
    0x0035: "TLS_RSA_WITH_AES_256_CBC_SHA",
    0x0036: "TLS_DH_DSS_WITH_AES_256_CBC_SHA",
    0x0037: "TLS_DH_RSA_WITH_AES_256_CBC_SHA",
    0x0038: "TLS_DHE_DSS_WITH_AES_256_CBC_SHA",
    0x0039: "TLS_DHE_RSA_WITH_AES_256_CBC_SHA",
    0x003A: "TLS_DH_anon_WITH_AES_256_CBC_SHA",
    0x003B: "TLS_RSA_WITH_NULL_SHA256",
    0x0041: "TLS_RSA_WITH_CAMELLIA_128_CBC_SHA",
    0x0044: "TLS_DHE_DSS_WITH_CAMELLIA_128_CBC_SHA",
    0x0045: "TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA",
    0x0046: "TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA",
    0x006C: "TLS_DH_anon_WITH_AES_128_CBC_SHA256",
    0x006D: "TLS_DH_anon_WITH_AES_256_CBC_SHA256",
    0x0084: "TLS_RSA_WITH_CAMELLIA_256_CBC_SHA",
    0x0087: "TLS_DHE_DSS_WITH_CAMELLIA_256_CBC_SHA",
    0x0088: "TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA",
    0x0089: "TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA",
    0x0096: "TLS_RSA_WITH_SEED_CBC_SHA",
    0x009B: "TLS_DH_anon_WITH_SEED_CBC_SHA",
    0x00A6: "TLS_DH_anon_WITH_AES_128_GCM_SHA256",
    0x00A7: "TLS_DH_anon_WITH_AES_256_GCM_SHA384",
    0x00BF: "TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA256",
    0x00C5: "TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA256",
    0xC001: "TLS_ECDH_ECDSA_WITH_NULL_SHA",
    0xC002: "TLS_ECDH_ECDSA_WITH_RC4_128_SHA",
    0xC003: "TLS_ECDH_ECDSA_WITH_3DES_EDE_CBC_SHA",
    0xC004: "TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA",
    0xC005: "TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA",
    0xC006: "TLS_ECDHE_ECDSA_WITH_NULL_SHA",
    0xC007: "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    0xC008: "TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA",
    0xC009: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    0xC00A: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    0xC00B: "TLS_ECDH_RSA_WITH_NULL_SHA",
    0xC00C: "TLS_ECDH_RSA_WITH_RC4_128_SHA",
    0xC00D: "TLS_ECDH_RSA_WITH_3DES_EDE_CBC_SHA",
    0xC00E: "TLS_ECDH_RSA_WITH_AES_128_CBC_SHA",
    0xC00F: "TLS_ECDH_RSA_WITH_AES_256_CBC_SHA",
    0xC010: "TLS_ECDHE_RSA_WITH_NULL_SHA",
    0xC011: "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    0xC012: "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    0xC013: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    0xC014: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    0xC015: "TLS_ECDH_anon_WITH_NULL_SHA",
    0xC016: "TLS_ECDH_anon_WITH_RC4_128_SHA",
    0xC017: "TLS_ECDH_anon_WITH_3DES_EDE_CBC_SHA",
    0xC018: "TLS_ECDH_anon_WITH_AES_128_CBC_SHA",
    0xC019: "TLS_ECDH_anon_WITH_AES_256_CBC_SHA",
    0xC05A: "TLS_DH_anon_WITH_ARIA_128_GCM_SHA256",
    0xC05B: "TLS_DH_anon_WITH_ARIA_256_GCM_SHA384",
}
"""The TLS 1.2 suites probed, by IANA code and name (PSK and SRP suites are left out: a server
picks them only for clients holding a pre-shared key or password)."""


def cipher_families() -> dict[str, dict[int, str]]:
    """The weak suites of each family, by family id: each suite in the first family it marks
    (``TLS_DH_anon_EXPORT_WITH_RC4_40_MD5`` counts as EXPORT, not as anonymous or RC4)."""
    grouped: dict[str, dict[int, str]] = {family.id: {} for family in WEAK_CIPHER_FAMILIES}
    for code, name in WEAK_CIPHER_SUITES.items():
        family = next(family for family in WEAK_CIPHER_FAMILIES if any(mark in name for mark in family.marks))
        grouped[family.id][code] = name
    return grouped


# -- TLS records, by hand only as far as the ServerHello


def client_hello(sni: str | None, suites: Sequence[int]) -> bytes:
    """A TLS 1.2 ClientHello offering ``suites`` (plus the renegotiation SCSV), with the
    extensions servers expect (SNI, groups, point formats, signature algorithms)."""
    extensions = b""
    if sni:
        name = sni.encode("idna")
        entry = b"\x00" + struct.pack("!H", len(name)) + name
        extensions += _extension(0x0000, struct.pack("!H", len(entry)) + entry)
    groups = (0x001D, 0x0017, 0x0018, 0x0019)  # x25519, P-256, P-384, P-521
    extensions += _extension(0x000A, _vector(struct.pack(f"!{len(groups)}H", *groups)))
    extensions += _extension(0x000B, b"\x01\x00")  # uncompressed points
    schemes = (0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0403, 0x0503, 0x0603, 0x0807, 0x0201, 0x0203, 0x0202)
    extensions += _extension(0x000D, _vector(struct.pack(f"!{len(schemes)}H", *schemes)))
    offered = (*suites, 0x00FF)
    body = (
        b"\x03\x03"
        + os.urandom(32)
        + b"\x00"  # no session id
        + _vector(struct.pack(f"!{len(offered)}H", *offered))
        + b"\x01\x00"  # no compression
        + _vector(extensions)
    )
    handshake = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack("!H", len(handshake)) + handshake


def _extension(kind: int, data: bytes) -> bytes:
    return struct.pack("!HH", kind, len(data)) + data


def _vector(data: bytes) -> bytes:
    return struct.pack("!H", len(data)) + data


def read_server_hello(connection: socket.socket, name: str) -> int | None:
    """The cipher suite of the ServerHello, or None on an alert or a closed connection."""
    handshake = b""
    while len(handshake) < 4 or len(handshake) < 4 + int.from_bytes(handshake[1:4], "big"):
        header = _read_exactly(connection, 5)
        if header is None:
            return None
        content_type, length = header[0], struct.unpack("!H", header[3:5])[0]
        if content_type == 0x15:  # alert: the server refuses every suite offered
            return None
        if content_type != 0x16 or header[1] != 0x03 or length > 18_432:
            raise ProviderError(f"{name} does not speak TLS (it answered {header[:5]!r})")
        fragment = _read_exactly(connection, length)
        if fragment is None:
            return None
        handshake += fragment
        if len(handshake) > 65_536:
            break
    if handshake[0] != 0x02 or len(handshake) < 4 + 35:
        raise ProviderError(f"{name} answered the ClientHello with no ServerHello")
    session_id_length = handshake[4 + 34]
    offset = 4 + 35 + session_id_length
    if len(handshake) < offset + 2:
        raise ProviderError(f"{name} sent a truncated ServerHello")
    return int(struct.unpack("!H", handshake[offset : offset + 2])[0])


def _read_exactly(connection: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data
