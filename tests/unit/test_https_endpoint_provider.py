"""The HTTPS endpoint provider against real TLS servers on loopback, with a test CA made here.

Three servers run in threads (``ThreadingHTTPServer``, each connection's handshake done in its
own thread by an ``ssl.SSLContext``):

- good: TLS 1.2 and 1.3 only, ECDHE with AES-GCM or ChaCha20, every security header;
- expired: the good configuration with an expired certificate and no security headers;
- weak: TLS 1.0 to 1.2 at ``@SECLEVEL=0``, with a certificate that expires in 5 days, weak
  headers, and these weak suites: NULL-SHA (TLS_RSA_WITH_NULL_SHA), AECDH-AES128-SHA (anonymous),
  and AES128-SHA and ECDHE-RSA-AES128-SHA (CBC with SHA-1).

The OpenSSL 3.0 these tests run on cannot serve RC4, 3DES, DES, IDEA or EXPORT suites at all,
so no test server offers them. The probe's ClientHello offers them anyway, by IANA code. Here it
is shown to find every suite this OpenSSL can serve, and to report the families it cannot serve
as refused.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from compliance_core.areas.integrations.providers import (
    Access,
    AuthType,
    Category,
    ProviderError,
    ResourceResult,
    catalogue_of,
)
from compliance_core.kernel.severities import Severity
from compliance_integrations.https_endpoint import HttpsEndpoint, provider
from compliance_integrations.tls_hello import cipher_families

# The servers and the probe pin TLS 1.0 and 1.1 on purpose, which Python reports as deprecated.
pytestmark = pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")

GOOD_HEADERS = {
    "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
}
WEAK_HEADERS = {"Strict-Transport-Security": "max-age=86400", "X-Frame-Options": "ALLOW-FROM https://example.com"}


@attrs.frozen
class Pki:
    ca_pem: str
    good: tuple[Path, Path]
    expired: tuple[Path, Path]
    soon: tuple[Path, Path]
    good_der: bytes


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Compliance Test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=90))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # RSA: NULL-SHA needs RSA kx
    key_path = folder / "server.key"
    key_path.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )

    def leaf(name: str, start: dt.datetime, end: dt.datetime) -> tuple[Path, bytes]:
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name}.localhost")]))
            .issuer_name(ca_name)
            .public_key(server_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        path = folder / f"{name}.pem"
        path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        return path, certificate.public_bytes(serialization.Encoding.DER)

    good, good_der = leaf("good", now - dt.timedelta(days=1), now + dt.timedelta(days=365))
    expired, _ = leaf("expired", now - dt.timedelta(days=60), now - dt.timedelta(days=2))
    soon, _ = leaf("soon", now - dt.timedelta(days=1), now + dt.timedelta(days=5))
    return Pki(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM).decode(),
        good=(good, key_path),
        expired=(expired, key_path),
        soon=(soon, key_path),
        good_der=good_der,
    )


class _Handler(BaseHTTPRequestHandler):
    """Answers every path with the server's headers; ``/old`` redirects to ``/`` on the same host,
    ``/away`` to another host."""

    server: _TestServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/old":
            self.send_response(301)
            self.send_header("Location", "/")
        elif path == "/away":
            self.send_response(302)
            self.send_header("Location", "https://elsewhere.invalid/")
        else:
            self.send_response(200)
        for name, value in self.server.answer_headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _TestServer(ThreadingHTTPServer):
    """An HTTP server on a loopback port; with a context, every connection's TLS handshake runs in
    the connection's own thread, so one probe that hangs up mid-handshake blocks no other."""

    daemon_threads = True

    def __init__(self, context: ssl.SSLContext | None, answer_headers: Mapping[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.context = context
        self.answer_headers = answer_headers

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.context is None:
            super().finish_request(request, client_address)
            return
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a refused probe: what the tests expect of it is judged by the client
        with tls:
            super().finish_request(tls, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"


def _context(
    pair: tuple[Path, Path], *, minimum: ssl.TLSVersion, maximum: ssl.TLSVersion, ciphers: str
) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = minimum
    context.maximum_version = maximum
    context.set_ciphers(ciphers)
    context.load_cert_chain(*pair)
    return context


@contextlib.contextmanager
def _serving(context: ssl.SSLContext | None, headers: Mapping[str, str]) -> Iterator[_TestServer]:
    server = _TestServer(context, headers)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@attrs.frozen
class Servers:
    good: _TestServer
    expired: _TestServer
    weak: _TestServer
    plain: _TestServer


@pytest.fixture(scope="module")
def servers(pki: Pki) -> Iterator[Servers]:
    modern = functools.partial(
        _context, minimum=ssl.TLSVersion.TLSv1_2, maximum=ssl.TLSVersion.TLSv1_3, ciphers="ECDHE+AESGCM:ECDHE+CHACHA20"
    )
    weak = _context(
        pki.soon,
        minimum=ssl.TLSVersion.TLSv1,
        maximum=ssl.TLSVersion.TLSv1_2,
        ciphers="ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-SHA:AES128-SHA:AECDH-AES128-SHA:NULL-SHA:@SECLEVEL=0",
    )
    with contextlib.ExitStack() as stack:
        yield Servers(
            good=stack.enter_context(_serving(modern(pki.good), GOOD_HEADERS)),
            expired=stack.enter_context(_serving(modern(pki.expired), {})),
            weak=stack.enter_context(_serving(weak, WEAK_HEADERS)),
            plain=stack.enter_context(_serving(None, GOOD_HEADERS)),
        )


class StaticHosts:
    """A resolver with a fixed table (the kernel's ``Resolver`` port), for names no DNS knows."""

    def __init__(self, table: Mapping[str, list[str]]) -> None:
        self._table = table

    def resolve(self, host: str, port: int) -> list[str]:
        with contextlib.suppress(ValueError):
            return [str(ipaddress.ip_address(host))]
        if host not in self._table:
            raise OSError(f"{host} is not in the table")
        return list(self._table[host])


@pytest.fixture
def endpoint() -> HttpsEndpoint:
    return HttpsEndpoint(timeout=3.0)


def access(url: str, pki: Pki | None = None, *, allow_private: bool = True, **variables: str) -> Access:
    values = {"url": url, "expiry_warning_days": "30", **variables}
    if pki is not None:
        values["ca_bundle"] = pki.ca_pem
    return Access(credentials={}, variables=values, allow_private=allow_private)


def by_id(results: list[ResourceResult] | Any) -> dict[str, ResourceResult]:
    return {result.resource_id.rsplit("/", 1)[-1]: result for result in results}


# -- manifest and connection test


def test_manifest_declares_an_account_free_endpoint_provider() -> None:
    manifest = catalogue_of({"providers": [provider({})]}).get("https-endpoint").manifest
    assert (manifest.slug, manifest.category, manifest.auth_type) == (
        "https-endpoint",
        Category.ENDPOINT,
        AuthType.NONE,
    )
    assert manifest.credential_fields == ()
    variables = {variable.id: variable for variable in manifest.variables}
    assert variables["url"].required and variables["url"].type == "url"
    assert variables["expiry_warning_days"].default == "30" and not variables["ca_bundle"].required
    assert [check.id for check in manifest.checks] == [
        "certificate",
        "tls-versions",
        "weak-ciphers",
        "security-headers",
    ]
    assert all(check.control_refs and check.description for check in manifest.checks)
    assert "iso27001:A.8.24" in manifest.check("certificate").control_refs


def test_every_weak_suite_belongs_to_one_family() -> None:
    families = cipher_families()
    assert families["export"][0x0003] == "TLS_RSA_EXPORT_WITH_RC4_40_MD5"  # not RC4: EXPORT is marked first
    assert families["64-bit-block"][0x000A] == "TLS_RSA_WITH_3DES_EDE_CBC_SHA"
    assert 0xC013 in families["cbc-sha1"] and 0xC02F not in families["cbc-sha1"]  # AES-GCM is no weak suite
    codes = [code for suites in families.values() for code in suites]
    assert len(codes) == len(set(codes))


def test_a_tls_endpoint_passes_the_connection_test(endpoint: HttpsEndpoint, servers: Servers) -> None:
    endpoint.test(access(servers.good.url))
    endpoint.test(access(servers.expired.url))  # a bad certificate is the certificate check's verdict


def test_an_unreachable_port_or_a_server_without_tls_fails_the_connection_test(
    endpoint: HttpsEndpoint, servers: Servers
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with pytest.raises(ProviderError, match="cannot reach 127.0.0.1"):
        endpoint.test(access(f"https://127.0.0.1:{closed_port}"))
    plain_port = servers.plain.server_address[1]
    with pytest.raises(ProviderError, match="does not speak TLS"):
        endpoint.test(access(f"https://127.0.0.1:{plain_port}"))


def test_private_addresses_are_refused_unless_allowed(servers: Servers) -> None:
    endpoint = HttpsEndpoint(resolver=StaticHosts({"intranet.test": ["8.8.8.8", "10.1.2.3"]}), timeout=1.0)
    with pytest.raises(ProviderError, match="not a public address"):
        endpoint.test(access(servers.good.url, allow_private=False))
    with pytest.raises(ProviderError, match="10.1.2.3 is not a public address"):  # every address is judged
        endpoint.run("certificate", access("https://intranet.test/", allow_private=False))
    with pytest.raises(ProviderError, match="cloud metadata"):  # refused even where private targets are allowed
        HttpsEndpoint().run("tls-versions", access("https://169.254.169.254/", allow_private=True))


@pytest.mark.parametrize(
    ("check", "variables", "reason"),
    [
        ("no-such-check", {}, "unknown check 'no-such-check'"),
        ("certificate", {"url": "http://127.0.0.1/?token=abc"}, r"must be an https URL \(it starts with 'http'\)$"),
        ("certificate", {"url": "https://user:secret@127.0.0.1/"}, "user name or password"),
        ("certificate", {"expiry_warning_days": "soon"}, "whole number of days"),
        ("certificate", {"ca_bundle": "not a certificate"}, "no valid PEM certificate"),
    ],
)
def test_unknown_checks_and_unusable_variables_are_refused(
    endpoint: HttpsEndpoint, servers: Servers, check: str, variables: dict[str, str], reason: str
) -> None:
    with pytest.raises(ProviderError, match=reason):
        endpoint.run(
            check, Access(credentials={}, variables={"url": servers.good.url, **variables}, allow_private=True)
        )


# -- certificate


def test_only_the_certificates_of_a_ca_bundle_are_trusted(endpoint: HttpsEndpoint, servers: Servers, pki: Pki) -> None:
    stray_key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    bundle = stray_key.decode() + pki.ca_pem  # a key pasted by mistake never reaches OpenSSL nor the evidence
    [result] = endpoint.run("certificate", access(servers.good.url, ca_bundle=bundle))
    assert result.passed
    assert "PRIVATE KEY" not in repr(result)


def test_a_trusted_current_certificate_passes_with_its_evidence(
    endpoint: HttpsEndpoint, servers: Servers, pki: Pki
) -> None:
    [result] = endpoint.run("certificate", access(servers.good.url, pki))
    assert result.passed and result.resource_type == "certificate"
    assert result.resource_id == f"127.0.0.1:{servers.good.server_address[1]}"
    evidence = result.evidence
    assert evidence["subject"] == "CN=good.localhost" and evidence["issuer"] == "CN=Compliance Test CA"
    assert evidence["trusted"] is True and evidence["verify_error"] is None
    assert 363 <= evidence["days_left"] <= 365
    assert evidence["subject_alt_names"] == ["localhost", "127.0.0.1"]
    assert evidence["public_key"] == "RSA 2048"
    expected = x509.load_der_x509_certificate(pki.good_der).fingerprint(hashes.SHA256()).hex(":").upper()
    assert evidence["sha256_fingerprint"] == expected
    assert dt.datetime.fromisoformat(evidence["not_after"]) > dt.datetime.fromisoformat(evidence["not_before"])


def test_a_certificate_from_an_unknown_ca_fails_high(endpoint: HttpsEndpoint, servers: Servers) -> None:
    [result] = endpoint.run("certificate", access(servers.good.url))  # no ca_bundle: the test CA is unknown
    assert not result.passed and result.severity == Severity.HIGH
    assert result.evidence["trusted"] is False
    assert "unable to get local issuer certificate" in result.evidence["verify_error"]
    assert result.evidence["subject"] == "CN=good.localhost"  # read anyway, to show what was refused


def test_an_expired_certificate_fails_high(endpoint: HttpsEndpoint, servers: Servers, pki: Pki) -> None:
    [result] = endpoint.run("certificate", access(servers.expired.url, pki))
    assert not result.passed and result.severity == Severity.HIGH
    assert result.evidence["days_left"] < 0 and "certificate has expired" in result.evidence["verify_error"]
    assert "expired on" in result.description


def test_a_certificate_naming_another_host_fails_high(servers: Servers, pki: Pki) -> None:
    endpoint = HttpsEndpoint(resolver=StaticHosts({"wrong.test": ["127.0.0.1"]}), timeout=3.0)
    port = servers.good.server_address[1]
    [result] = endpoint.run("certificate", access(f"https://wrong.test:{port}/", pki))
    assert not result.passed and result.severity == Severity.HIGH
    assert "Hostname mismatch" in result.evidence["verify_error"]


def test_a_certificate_expiring_within_the_warning_fails_medium(
    endpoint: HttpsEndpoint, servers: Servers, pki: Pki
) -> None:
    [soon] = endpoint.run("certificate", access(servers.weak.url, pki))
    assert not soon.passed and soon.severity == Severity.MEDIUM
    assert soon.evidence["trusted"] is True and soon.evidence["days_left"] == 4
    assert "expires in 4 days" in soon.title
    [within] = endpoint.run("certificate", access(servers.weak.url, pki, expiry_warning_days="3"))
    assert within.passed


# -- protocol versions and cipher suites


def test_a_modern_server_refuses_legacy_tls(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("tls-versions", access(servers.good.url)))
    assert list(results) == ["TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"]
    assert all(result.passed and result.resource_type == "tls_protocol" for result in results.values())
    assert results["TLSv1.0"].evidence["accepted"] is False and results["TLSv1.0"].evidence["refusal"]
    assert results["TLSv1.3"].evidence["accepted"] is True and results["TLSv1.3"].evidence["cipher"]


def test_a_server_accepting_tls_1_0_and_1_1_fails(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("tls-versions", access(servers.weak.url)))
    for legacy in ("TLSv1.0", "TLSv1.1"):
        assert not results[legacy].passed and results[legacy].severity == Severity.MEDIUM
        assert results[legacy].evidence["accepted"] is True
        assert results[legacy].evidence["cipher"] == "ECDHE-RSA-AES128-SHA"
    assert results["TLSv1.2"].passed and results["TLSv1.2"].evidence["accepted"] is True
    assert results["TLSv1.3"].passed and results["TLSv1.3"].evidence["accepted"] is False  # TLS 1.2 is enough
    assert "TLSv1.2" in results["TLSv1.3"].description


def test_a_strong_cipher_configuration_passes_every_family(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("weak-ciphers", access(servers.good.url)))
    assert list(results) == ["null", "export", "anonymous", "rc4", "64-bit-block", "cbc-sha1"]
    assert all(result.passed and result.evidence["accepted"] == [] for result in results.values())
    assert "TLS_RSA_WITH_3DES_EDE_CBC_SHA" in results["64-bit-block"].evidence["offered"]


def test_the_weak_suites_a_server_accepts_are_each_named(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("weak-ciphers", access(servers.weak.url)))
    assert results["null"].evidence["accepted"] == ["TLS_RSA_WITH_NULL_SHA"]
    assert results["anonymous"].evidence["accepted"] == ["TLS_ECDH_anon_WITH_AES_128_CBC_SHA"]
    assert sorted(results["cbc-sha1"].evidence["accepted"]) == [
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        "TLS_RSA_WITH_AES_128_CBC_SHA",
    ]
    assert [results[family].severity for family in ("null", "anonymous", "cbc-sha1")] == [
        Severity.HIGH,
        Severity.HIGH,
        Severity.LOW,
    ]
    assert not any(results[family].passed for family in ("null", "anonymous", "cbc-sha1"))
    # this OpenSSL cannot serve them, so the server refuses them: see the module docstring
    assert all(results[family].passed for family in ("export", "rc4", "64-bit-block"))


# -- security headers


def test_a_server_sending_every_security_header_passes(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("security-headers", access(servers.good.url)))
    assert list(results) == ["Strict-Transport-Security", "X-Content-Type-Options", "frame-protection"]
    assert all(result.passed and result.resource_type == "http_header" for result in results.values())
    assert results["Strict-Transport-Security"].evidence["max_age"] == 31536000
    assert results["frame-protection"].evidence["frame_ancestors"] == ["'none'"]
    assert results["X-Content-Type-Options"].evidence["status"] == 200


def test_same_host_redirects_are_followed_and_others_are_not(endpoint: HttpsEndpoint, servers: Servers) -> None:
    followed = by_id(endpoint.run("security-headers", access(servers.good.url + "/old?token=hidden")))
    assert followed["Strict-Transport-Security"].evidence["path"] == "/"
    assert followed["Strict-Transport-Security"].evidence["status"] == 200
    stayed = by_id(endpoint.run("security-headers", access(servers.good.url + "/away")))
    assert stayed["Strict-Transport-Security"].evidence["status"] == 302  # elsewhere.invalid is never asked
    assert stayed["Strict-Transport-Security"].passed
    assert "hidden" not in repr([result.evidence for result in followed.values()])


def test_weak_or_missing_security_headers_fail(endpoint: HttpsEndpoint, servers: Servers) -> None:
    results = by_id(endpoint.run("security-headers", access(servers.weak.url)))
    hsts, sniff, framing = (
        results["Strict-Transport-Security"],
        results["X-Content-Type-Options"],
        results["frame-protection"],
    )
    assert not hsts.passed and hsts.severity == Severity.MEDIUM and hsts.evidence["max_age"] == 86400
    assert not sniff.passed and sniff.severity == Severity.LOW and sniff.evidence["value"] is None
    assert not framing.passed and framing.evidence["x_frame_options"] == "ALLOW-FROM https://example.com"
    assert all(result.remediation for result in results.values())
    # the headers are judged even where the certificate is not trusted (that is the certificate check's verdict)
    expired = endpoint.run("security-headers", access(servers.expired.url))
    assert [result.passed for result in expired] == [False, False, False]


def test_an_invalid_name_is_answered_without_asking_the_resolver() -> None:
    """``.invalid`` never resolves (RFC 6761): no DNS query, which a resolver may take seconds on."""
    endpoint = HttpsEndpoint(resolver=StaticHosts({"status.example.invalid": ["127.0.0.1"]}), timeout=1.0)
    with pytest.raises(ProviderError, match="never resolves"):
        endpoint.test(access("https://status.example.invalid/"))
