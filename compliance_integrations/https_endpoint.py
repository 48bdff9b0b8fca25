"""The HTTPS endpoint provider: checks one URL's certificate, TLS versions, cipher suites and
security headers. It needs no account; a connection names the URL.

Probing uses the standard library's ``ssl`` rather than sslyze, which requires cryptography<47
while this project pins cryptography 50. Certificates are parsed with ``cryptography``.

- Protocol versions are probed with ``ssl``, pinning ``minimum_version = maximum_version``. For
  TLS 1.0 and 1.1 the client also sets ``ALL:@SECLEVEL=0``, because OpenSSL 3 refuses to offer
  them by default. SSL 3.0 cannot be probed: OpenSSL 3 no longer implements it.
- Weak cipher suites are probed with a hand-built TLS 1.2 ClientHello that offers only the suites
  under test. The probe reads which suite the ServerHello picks, then hangs up before any key
  exchange, so no cryptography is written here. This is done without ``ssl`` on purpose: the
  OpenSSL 3.0 in use cannot even offer RC4, 3DES, DES, IDEA or EXPORT suites. A probe made with
  ``ssl`` would pass a server that accepts exactly those suites.
- CBC-mode suites with SHA-1 MACs are reported as their own family at LOW severity. They are not
  broken, but their MAC-then-encrypt construction led to padding-oracle attacks (Lucky Thirteen,
  POODLE against TLS), Mozilla's "intermediate" profile leaves them out, and SSL Labs rates them
  weak. Some old clients still need them, so their failure is LOW, not HIGH.

Outbound rule: the host is resolved once per call, and every address it resolves to is judged by
the platform's outbound rule (``kernel.outbound.address_problem``). A URL with a private,
loopback or link-local address is refused unless ``Access.allow_private`` is set, and a cloud
metadata address is always refused. Every connection then goes to one of those checked addresses,
never to a fresh DNS answer, so a tenant cannot use rebinding to probe an internal network.
Every connection has a timeout. Evidence holds no query string and no header other than the
judged security headers.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import socket
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from compliance_core.areas.integrations.providers import (
    Access,
    AuthType,
    Category,
    CheckSpec,
    Manifest,
    ProviderError,
    ResourceResult,
    Variable,
    VariableType,
)
from compliance_core.kernel.clock import Clock, SystemClock
from compliance_core.kernel.outbound import Resolver, SystemResolver, address_problem
from compliance_core.kernel.severities import Severity

from .tls_hello import WEAK_CIPHER_FAMILIES, cipher_families, client_hello, read_server_hello

__all__ = ["HttpsEndpoint", "MANIFEST", "provider"]

HSTS_MIN_MAX_AGE = 15_552_000
"""180 days: the shortest Strict-Transport-Security max-age accepted."""
_MAX_REDIRECTS = 5
_EVIDENCE_TEXT = 300
_NEVER_RESOLVE = frozenset({"invalid"})
"""The top-level domain RFC 6761 reserves never to resolve, anywhere (``.test`` may resolve on a
test network): answered at once, without a DNS query a resolver may take seconds to give up on."""
"""Header values in evidence are cut to this many characters."""

MANIFEST = Manifest(
    slug="https-endpoint",
    name="HTTPS endpoint",
    description="Checks a public HTTPS endpoint's certificate, TLS protocol versions, cipher suites and "
    "HTTP security headers. It needs no account: a connection names the URL.",
    category=Category.ENDPOINT,
    auth_type=AuthType.NONE,
    variables=(
        Variable(id="url", label="URL", type=VariableType.URL, required=True, help_text="The https URL to check."),
        Variable(
            id="expiry_warning_days",
            label="Expiry warning (days)",
            type=VariableType.NUMBER,
            default="30",
            help_text="Fail the certificate check when the certificate expires within this many days.",
        ),
        Variable(
            id="ca_bundle",
            label="Extra CA certificates (PEM)",
            help_text="Certificates of private CAs to trust besides the system's, for internal endpoints.",
        ),
    ),
    checks=(
        CheckSpec(
            id="certificate",
            name="Certificate is valid and not about to expire",
            description="The server's certificate chains to a trusted CA (the system's trust store, plus any "
            "extra CA certificates the connection gives), names the host, is within its validity period, and "
            "does not expire within the warning period.",
            severity=Severity.HIGH,
            control_refs=("iso27001:A.8.24", "soc2:CC6.7"),
        ),
        CheckSpec(
            id="tls-versions",
            name="Only current TLS versions are accepted",
            description="The server refuses TLS 1.0 and TLS 1.1 and accepts TLS 1.2 or TLS 1.3.",
            severity=Severity.MEDIUM,
            control_refs=("iso27001:A.8.24", "iso27001:A.8.20", "soc2:CC6.7"),
        ),
        CheckSpec(
            id="weak-ciphers",
            name="No weak cipher suites are accepted",
            description="Over TLS 1.2, the server refuses cipher suites that offer no protection (NULL, "
            "anonymous), are deliberately weakened (EXPORT), are broken (RC4), or use 64-bit blocks (3DES, DES, "
            "IDEA). It should also refuse CBC-mode suites with SHA-1 MACs (reported at low severity).",
            severity=Severity.HIGH,
            control_refs=("iso27001:A.8.24", "iso27001:A.8.20", "soc2:CC6.7"),
        ),
        CheckSpec(
            id="security-headers",
            name="HTTP security headers are set",
            description="The HTTPS response has Strict-Transport-Security with a max-age of at least 180 days, "
            "X-Content-Type-Options: nosniff, and a protection against framing (Content-Security-Policy with "
            "frame-ancestors, or X-Frame-Options).",
            severity=Severity.MEDIUM,
            control_refs=("iso27001:A.8.26", "iso27001:A.8.20", "soc2:CC6.7"),
        ),
    ),
    docs_url="https://developer.mozilla.org/en-US/docs/Web/Security",
)


_PROTOCOLS = (
    (ssl.TLSVersion.TLSv1, "TLSv1.0", "TLS 1.0", True),
    (ssl.TLSVersion.TLSv1_1, "TLSv1.1", "TLS 1.1", True),
    (ssl.TLSVersion.TLSv1_2, "TLSv1.2", "TLS 1.2", False),
    (ssl.TLSVersion.TLSv1_3, "TLSv1.3", "TLS 1.3", False),
)
"""(version, resource id, label, legacy): legacy versions must be refused, and at least one of
the others must be accepted."""


@attrs.frozen(kw_only=True)
class _Target:
    """A connection's URL once checked: the host named in the TLS handshake and the Host header,
    and the addresses already judged by the outbound rule (the only ones connected to)."""

    host: str
    port: int
    path: str
    addresses: tuple[str, ...]
    warning_days: int
    extra_cas: bytes
    """The ca_bundle variable's certificates, DER, concatenated."""

    @property
    def name(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def sni(self) -> str | None:
        """The name sent as SNI: none for an IP literal (RFC 6066 forbids it)."""
        return None if _is_ip(self.host) else self.host


@attrs.frozen
class _Subject:
    """What one result is about, so each verdict is written once as passed or failed."""

    resource_type: str
    resource_id: str
    evidence: Mapping[str, Any]

    def passed(self, title: str, description: str = "") -> ResourceResult:
        return ResourceResult(
            passed=True,
            resource_type=self.resource_type,
            resource_id=self.resource_id,
            title=title,
            description=description,
            evidence=self.evidence,
        )

    def failed(self, title: str, description: str, severity: Severity, remediation: str) -> ResourceResult:
        return ResourceResult(
            passed=False,
            resource_type=self.resource_type,
            resource_id=self.resource_id,
            title=title,
            description=description,
            severity=severity,
            remediation=remediation,
            evidence=self.evidence,
        )


_FIX_CERTIFICATE = (
    "Install a certificate from a trusted CA that names this host, with its full intermediate chain, "
    "and renew it automatically (ACME) before it expires."
)
_FIX_EXPIRY = "Renew the certificate now, and automate renewal (ACME) so it never comes this close."
_FIX_CIPHERS = (
    "Remove these suites from the server's cipher list; keep ECDHE with AES-GCM or ChaCha20-Poly1305 "
    "(Mozilla's intermediate configuration, for example)."
)
_RISK_HSTS = "Without HSTS, a first plain-http request can be intercepted and downgraded (SSL stripping)."
_FIX_HSTS = 'Send "Strict-Transport-Security: max-age=31536000; includeSubDomains" (at least 15552000 s, 180 days).'
_RISK_SNIFF = "Browsers may sniff a response into an executable type (a script or a stylesheet)."
_FIX_SNIFF = 'Send "X-Content-Type-Options: nosniff" on every response.'
_RISK_FRAMING = (
    "Neither a Content-Security-Policy frame-ancestors directive limited to known sites nor "
    "X-Frame-Options DENY or SAMEORIGIN: other sites may frame the pages (clickjacking)."
)
_FIX_FRAMING = "Send \"Content-Security-Policy: frame-ancestors 'self'\" (or 'none'), or \"X-Frame-Options: DENY\"."


def provider(settings: Mapping[str, Any]) -> HttpsEndpoint:
    """The ``compliance.providers`` entry point: nothing in the settings configures this provider."""
    return HttpsEndpoint()


class HttpsEndpoint:
    """Checks one HTTPS endpoint per connection.

    :param resolver: how host names are resolved (default: the operating system's)
    :param clock: the time certificates are judged at (default: the system clock)
    :param timeout: seconds each connection may take to connect, and each read to answer
    """

    def __init__(self, *, resolver: Resolver | None = None, clock: Clock | None = None, timeout: float = 5.0) -> None:
        self._resolver = resolver or SystemResolver()
        self._clock = clock or SystemClock()
        self._timeout = timeout
        self._checks: dict[str, Callable[[_Target], list[ResourceResult]]] = {
            "certificate": self._certificate,
            "tls-versions": self._tls_versions,
            "weak-ciphers": self._weak_ciphers,
            "security-headers": self._security_headers,
        }

    @property
    def manifest(self) -> Manifest:
        return MANIFEST

    def test(self, access: Access) -> None:
        target = self._target(access)
        try:
            with self._tls(target, _permissive_context(ssl.TLSVersion.MINIMUM_SUPPORTED)):
                pass
        except (ssl.SSLError, OSError) as error:
            raise ProviderError(f"{target.name} does not speak TLS: {_reason(error)}") from None

    def run(self, check_id: str, access: Access) -> Sequence[ResourceResult]:
        check = self._checks.get(check_id)
        if check is None:
            raise ProviderError(f"unknown check {check_id!r}; this provider runs {', '.join(self._checks)}")
        return check(self._target(access))

    # -- variables and the outbound rule

    def _target(self, access: Access) -> _Target:
        url = (access.variables.get("url") or "").strip()
        parts = urlsplit(url)
        if parts.scheme.lower() != "https":  # the URL is not echoed: its query may hold a token
            raise ProviderError(f"the url must be an https URL (it starts with {(parts.scheme or 'no scheme')[:20]!r})")
        if parts.username is not None or parts.password is not None:
            raise ProviderError("the url must not carry a user name or password")
        host = parts.hostname
        if not host:
            raise ProviderError("the url has no host")
        try:
            port = parts.port or 443
        except ValueError:
            raise ProviderError("the url has an invalid port") from None
        raw_days = (access.variables.get("expiry_warning_days") or "30").strip()
        try:
            warning_days = int(raw_days)
        except ValueError:
            raise ProviderError(f"expiry_warning_days must be a whole number of days, not {raw_days[:50]!r}") from None
        if not 0 <= warning_days <= 3650:
            raise ProviderError("expiry_warning_days must be between 0 and 3650")
        extra_cas = b""
        if bundle := (access.variables.get("ca_bundle") or "").strip():
            try:  # only the certificates reach OpenSSL, whatever else was pasted beside them
                certificates = x509.load_pem_x509_certificates(bundle.encode())
            except ValueError:
                raise ProviderError("ca_bundle holds no valid PEM certificate") from None
            extra_cas = b"".join(cert.public_bytes(serialization.Encoding.DER) for cert in certificates)
        if host.rstrip(".").lower().rsplit(".", 1)[-1] in _NEVER_RESOLVE:
            raise ProviderError(f"the host {host} does not resolve (.invalid never resolves, RFC 6761)")
        try:
            addresses = tuple(self._resolver.resolve(host, port))
        except (OSError, UnicodeError) as error:
            raise ProviderError(f"the host {host} does not resolve ({error})") from None
        if not addresses:
            raise ProviderError(f"the host {host} does not resolve")
        for address in addresses:
            problem = address_problem(address, access.allow_private)
            if problem is not None:
                raise ProviderError(f"refused to connect to {host}: {problem}")
        path = parts.path or "/"
        if parts.query:
            path += f"?{parts.query}"
        return _Target(
            host=host, port=port, path=path, addresses=addresses, warning_days=warning_days, extra_cas=extra_cas
        )

    # -- connections

    def _connect(self, target: _Target) -> socket.socket:
        """A TCP connection to the first checked address that answers."""
        failures: list[str] = []
        for address in target.addresses:
            try:
                return socket.create_connection((address, target.port), timeout=self._timeout)
            except OSError as error:
                failures.append(f"{address}: {_reason(error)}")
        raise ProviderError(f"cannot reach {target.name} ({'; '.join(failures)})")

    @contextlib.contextmanager
    def _tls(self, target: _Target, context: ssl.SSLContext) -> Iterator[ssl.SSLSocket]:
        """A completed handshake. ``ProviderError`` when the host cannot be reached at all;
        ``ssl.SSLError`` or ``OSError`` when the handshake fails."""
        with self._connect(target) as plain, context.wrap_socket(plain, server_hostname=target.host) as tls:
            yield tls

    # -- certificate

    def _certificate(self, target: _Target) -> list[ResourceResult]:
        context = ssl.create_default_context()
        if target.extra_cas:
            context.load_verify_locations(cadata=target.extra_cas)
        untrusted: str | None = None
        der: bytes | None = None
        try:
            with self._tls(target, context) as tls:
                der = tls.getpeercert(True)
        except ssl.SSLCertVerificationError as error:
            untrusted = str(error.verify_message or _reason(error))
        except (ssl.SSLError, OSError) as error:
            untrusted = f"no handshake at TLS 1.2 or later with default security settings ({_reason(error)})"
        if der is None:  # read the certificate anyway, so the evidence says what was refused
            try:
                with self._tls(target, _permissive_context(ssl.TLSVersion.MINIMUM_SUPPORTED)) as tls:
                    der = tls.getpeercert(True)
            except (ssl.SSLError, OSError) as error:
                raise ProviderError(f"{target.name} does not speak TLS: {_reason(error)}") from None
        if not der:
            raise ProviderError(f"{target.name} sent no certificate")
        certificate = x509.load_der_x509_certificate(der)
        now = self._clock.now()
        not_before, not_after = certificate.not_valid_before_utc, certificate.not_valid_after_utc
        days_left = math.floor((not_after - now).total_seconds() / 86400)
        evidence: dict[str, Any] = {
            "host": target.host,
            "port": target.port,
            "subject": certificate.subject.rfc4514_string(),
            "issuer": certificate.issuer.rfc4514_string(),
            "subject_alt_names": _alt_names(certificate),
            "serial_number": format(certificate.serial_number, "x"),
            "not_before": not_before.isoformat(),
            "not_after": not_after.isoformat(),
            "days_left": days_left,
            "sha256_fingerprint": certificate.fingerprint(hashes.SHA256()).hex(":").upper(),
            "public_key": _key_description(certificate),
            "trusted": untrusted is None,
            "verify_error": untrusted,
            "expiry_warning_days": target.warning_days,
        }
        problems: list[str] = []
        if now < not_before:
            problems.append(f"it is not valid before {not_before:%Y-%m-%d}")
        if now >= not_after:
            problems.append(f"it expired on {not_after:%Y-%m-%d} ({-days_left} days ago)")
        if untrusted is not None:
            problems.append(f"verification failed: {untrusted}")
        subject = _Subject("certificate", target.name, evidence)
        if problems:
            return [
                subject.failed(
                    f"The certificate of {target.name} is not valid",
                    _sentence("; ".join(problems)),
                    Severity.HIGH,
                    _FIX_CERTIFICATE,
                )
            ]
        if days_left < target.warning_days:
            warning = f"It expires on {not_after:%Y-%m-%d}, within the {target.warning_days}-day warning."
            return [
                subject.failed(
                    f"The certificate of {target.name} expires in {days_left} days",
                    warning,
                    Severity.MEDIUM,
                    _FIX_EXPIRY,
                )
            ]
        valid = f"Trusted, names {target.host}, and expires on {not_after:%Y-%m-%d}."
        return [subject.passed(f"The certificate of {target.name} is valid for {days_left} more days", valid)]

    # -- protocol versions

    def _tls_versions(self, target: _Target) -> list[ResourceResult]:
        probes = {label: self._accepts(target, version) for version, label, _, _ in _PROTOCOLS}
        current = [label for _, label, _, legacy in _PROTOCOLS if not legacy and probes[label][0]]
        results = []
        for _, label, words, legacy in _PROTOCOLS:
            accepted, detail = probes[label]
            evidence = {
                "protocol": label,
                "accepted": accepted,
                "cipher": detail if accepted else None,
                "refusal": None if accepted else detail,
            }
            subject = _Subject("tls_protocol", f"{target.name}/{label}", evidence)
            if legacy and accepted:
                why = f"{words} is deprecated (RFC 8996) and has known weaknesses (BEAST, SHA-1 and MD5 in its handshake)."
                fix = f"Turn {words} off in the server or load balancer; allow TLS 1.2 and 1.3 only."
                results.append(subject.failed(f"{target.name} accepts {words}", why, Severity.MEDIUM, fix))
            elif legacy:
                results.append(subject.passed(f"{target.name} refuses {words}"))
            elif accepted:
                results.append(subject.passed(f"{target.name} accepts {words}"))
            elif current:
                enough = f"It accepts {' and '.join(current)}, which is enough."
                results.append(subject.passed(f"{target.name} does not accept {words}", enough))
            else:
                why = "Current clients need TLS 1.2 or TLS 1.3."
                fix = "Enable TLS 1.2 and TLS 1.3 in the server or load balancer."
                results.append(
                    subject.failed(f"{target.name} accepts neither TLS 1.2 nor TLS 1.3", why, Severity.HIGH, fix)
                )
        return results

    def _accepts(self, target: _Target, version: ssl.TLSVersion) -> tuple[bool, str]:
        """Whether a handshake pinned to ``version`` completes: (True, the cipher suite) or
        (False, the refusal)."""
        try:
            with self._tls(target, _permissive_context(version, pinned=True)) as tls:
                cipher = tls.cipher()
                return True, cipher[0] if cipher else ""
        except ssl.SSLError as error:
            if error.reason in {"NO_PROTOCOLS_AVAILABLE", "NO_CIPHERS_AVAILABLE"}:
                raise ProviderError(
                    f"this system's OpenSSL cannot offer {version.name}, so it cannot be checked"
                ) from None
            return False, _reason(error)
        except OSError as error:
            return False, _reason(error)

    # -- weak cipher suites

    def _weak_ciphers(self, target: _Target) -> list[ResourceResult]:
        results = []
        grouped = cipher_families()
        for family in WEAK_CIPHER_FAMILIES:
            names = grouped[family.id]
            accepted = [names[code] for code in self._accepted_suites(target, list(names))]
            evidence = {"family": family.id, "offered": list(names.values()), "accepted": accepted}
            subject = _Subject("tls_cipher_family", f"{target.name}/{family.id}", evidence)
            if accepted:
                why = f"Over TLS 1.2 it accepts {', '.join(accepted)}: {family.reason}."
                title = f"{target.name} accepts {family.label} cipher suites"
                results.append(subject.failed(title, why, family.severity, _FIX_CIPHERS))
            else:
                results.append(subject.passed(f"{target.name} refuses {family.label} cipher suites"))
        return results

    def _accepted_suites(self, target: _Target, suites: Sequence[int]) -> list[int]:
        """Every one of ``suites`` the server picks, found by offering the rest again after each
        pick (a server picks one suite per handshake)."""
        remaining = list(suites)
        accepted: list[int] = []
        while remaining:
            chosen = self._server_choice(target, remaining)
            if chosen is None:
                break
            accepted.append(chosen)
            remaining.remove(chosen)
        return accepted

    def _server_choice(self, target: _Target, suites: Sequence[int]) -> int | None:
        """The suite the ServerHello picks from ``suites``, or None when the server refuses
        (an alert, or a closed connection)."""
        with self._connect(target) as connection:
            try:
                connection.sendall(client_hello(target.sni, suites))
                chosen = read_server_hello(connection, target.name)
            except OSError:
                return None
        if chosen is not None and chosen not in suites:
            raise ProviderError(f"{target.name} picked cipher suite {chosen:#06x}, which was not offered")
        return chosen

    # -- security headers

    def _security_headers(self, target: _Target) -> list[ResourceResult]:
        response, path = self._fetch(target)
        headers = response.headers
        seen = {"status": response.status_code, "path": path.split("?", 1)[0]}
        hsts_values = headers.get_list("strict-transport-security")
        max_age = _hsts_max_age(hsts_values[0]) if hsts_values else None
        nosniff = headers.get("x-content-type-options")
        policies = headers.get_list("content-security-policy")
        frame_options = headers.get("x-frame-options")
        ancestors = _frame_ancestors(policies)
        framing_ok = (ancestors is not None and not _allows_any_framer(ancestors)) or (
            frame_options is not None and frame_options.strip().upper() in {"DENY", "SAMEORIGIN"}
        )
        name = target.name
        hsts_ok = max_age is not None and max_age >= HSTS_MIN_MAX_AGE
        hsts = _Subject(
            "http_header",
            f"{name}/Strict-Transport-Security",
            {
                **seen,
                "value": _cut(hsts_values[0]) if hsts_values else None,
                "max_age": max_age,
                "required_max_age": HSTS_MIN_MAX_AGE,
            },
        )
        sniff = _Subject("http_header", f"{name}/X-Content-Type-Options", {**seen, "value": _cut(nosniff)})
        framing = _Subject(
            "http_header",
            f"{name}/frame-protection",
            {
                **seen,
                "content_security_policy": _cut(", ".join(policies)) if policies else None,
                "frame_ancestors": ancestors,
                "x_frame_options": _cut(frame_options),
            },
        )
        return [
            hsts.passed(f"{name} sends Strict-Transport-Security for {max_age} s")
            if hsts_ok
            else hsts.failed(
                f"{name} sends no Strict-Transport-Security of at least 180 days",
                _RISK_HSTS,
                Severity.MEDIUM,
                _FIX_HSTS,
            ),
            sniff.passed(f"{name} sends X-Content-Type-Options: nosniff")
            if nosniff is not None and nosniff.strip().lower() == "nosniff"
            else sniff.failed(
                f"{name} does not send X-Content-Type-Options: nosniff", _RISK_SNIFF, Severity.LOW, _FIX_SNIFF
            ),
            framing.passed(f"{name} forbids framing by other sites")
            if framing_ok
            else framing.failed(f"{name} lets any site frame its pages", _RISK_FRAMING, Severity.LOW, _FIX_FRAMING),
        ]

    def _fetch(self, target: _Target) -> tuple[httpx.Response, str]:
        """GET the URL from a checked address, following redirects only to the same host and port
        over https: the headers judged are those of the last answer from this endpoint. The
        certificate is not verified here; the certificate check judges it, and the request
        carries nothing secret."""
        address = target.addresses[0]
        url_host = f"[{address}]" if ":" in address else address
        host_header = target.name if target.port != 443 else (f"[{target.host}]" if ":" in target.host else target.host)
        extensions: dict[str, Any] = {"sni_hostname": target.sni} if target.sni else {}
        path = target.path
        origin = httpx.URL(f"https://{host_header}")
        with httpx.Client(
            verify=_permissive_context(ssl.TLSVersion.MINIMUM_SUPPORTED),
            follow_redirects=False,
            trust_env=False,
            timeout=self._timeout,
        ) as client:
            for _ in range(_MAX_REDIRECTS + 1):
                request = client.build_request(
                    "GET",
                    f"https://{url_host}:{target.port}{path}",
                    headers={"Host": host_header, "Accept-Encoding": "identity"},
                    extensions=extensions,
                )
                try:
                    response = client.send(request, stream=True)
                    response.close()
                except (httpx.HTTPError, OSError) as error:
                    raise ProviderError(f"GET {target.name} failed: {type(error).__name__}: {error}") from None
                location = response.headers.get("location") if response.is_redirect else None
                if location is None:
                    return response, path
                following = origin.copy_with(raw_path=path.encode()).join(location)
                same_endpoint = following.host == target.host and (following.port or 443) == target.port
                if following.scheme != "https" or not same_endpoint:
                    return response, path
                path = following.raw_path.decode("ascii")
        return response, path


# -- small helpers


def _permissive_context(version: ssl.TLSVersion, *, pinned: bool = False) -> ssl.SSLContext:
    """A context that verifies nothing and offers every protocol and cipher OpenSSL still has:
    for probing and reading, never for trusting."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = version
    if pinned:
        context.maximum_version = version
    context.set_ciphers("ALL:@SECLEVEL=0" if pinned else "ALL:!aNULL:!eNULL:@SECLEVEL=0")
    return context


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLError) and error.reason:
        return str(error.reason)
    if isinstance(error, TimeoutError):
        return "timed out"
    return str(error) or type(error).__name__


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _alt_names(certificate: x509.Certificate) -> list[str]:
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [*names.get_values_for_type(x509.DNSName), *(str(ip) for ip in names.get_values_for_type(x509.IPAddress))]


def _key_description(certificate: x509.Certificate) -> str:
    key = certificate.public_key()
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA {key.key_size}"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC {key.curve.name}"
    return type(key).__name__


def _hsts_max_age(value: str) -> int | None:
    for directive in value.split(";"):
        name, _, argument = directive.strip().partition("=")
        if name.strip().lower() == "max-age":
            try:
                return int(argument.strip().strip('"'))
            except ValueError:
                return None
    return None


def _frame_ancestors(policies: Sequence[str]) -> list[str] | None:
    """The sources of the first frame-ancestors directive of the Content-Security-Policy headers
    (several policies may share one header, separated by commas)."""
    for header in policies:
        for policy in header.split(","):
            for directive in policy.split(";"):
                tokens = directive.split()
                if tokens and tokens[0].lower() == "frame-ancestors":
                    return tokens[1:]
    return None


def _allows_any_framer(sources: Sequence[str]) -> bool:
    """Whether frame-ancestors lets any site frame the page: no source, a wildcard, or a bare scheme."""
    return not sources or any(source.lower() in {"*", "https:", "http:"} for source in sources)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _cut(value: str | None) -> str | None:
    return value if value is None or len(value) <= _EVIDENCE_TEXT else value[:_EVIDENCE_TEXT] + "…"
