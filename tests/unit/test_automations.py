"""Task automations in-process: definitions and their versions, runs against REAL local HTTP and
HTTPS servers on loopback (through the httpx prober), callables installed as real entry points,
what a verdict does to the task, the findings and the evidence, and the schedule's chore, run
by two workers at once on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import http.server
import ipaddress
import json
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.automations import (
    AutomationPatch,
    AutomationSettings,
    NewAutomation,
    ProbeResponse,
    RunStatus,
    RunTrigger,
    judge,
)
from compliance_core.areas.automations.models import Assertion, AssertionType
from compliance_core.areas.evidence import EvidenceSource
from compliance_core.areas.findings import FindingFilter, FindingSource, FindingStatus
from compliance_core.areas.tasks import NewTask, TaskAutomationStatus, TaskPatch, TaskStatus
from compliance_core.areas.webhooks import WebhookPolicy
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.errors import Forbidden, NotFound, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.permissions import Actor, Role
from compliance_http.probe import HttpxProber
from compliance_store.memory import MemoryStore

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
"""The platform's frozen clock starts at the real time: TLS checks certificates against it."""


# -- local servers ---------------------------------------------------------------------------


Route = tuple[int, dict[str, str], bytes]


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, Route]
    delay: float = 0.0
    seen: list[tuple[str, str, str | None]]

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        self.seen.append((self.command, self.path, self.headers.get("Host")))
        if self.delay:
            time.sleep(self.delay)
        status, headers, content = self.routes.get(self.path, (404, {}, b"not here"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        if body:
            self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Quiet(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a probe past its timeout) is no test failure."""


class LocalServer:
    """A real HTTP(S) server on 127.0.0.1 in a thread, answering ``routes``."""

    def __init__(self, routes: dict[str, Route], *, tls: ssl.SSLContext | None = None, delay: float = 0.0) -> None:
        handler = type("Handler", (_Handler,), {"routes": routes, "delay": delay, "seen": []})
        self.handler = handler
        self.server = _Quiet(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}{path}"

    @property
    def seen(self) -> list[tuple[str, str, str | None]]:
        return self.handler.seen

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def self_signed(days: int) -> tuple[bytes, bytes]:
    """A certificate for 127.0.0.1 and localhost valid from yesterday for ``days`` days, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    real_now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(real_now - dt.timedelta(days=1))
        .not_valid_after(real_now + dt.timedelta(days=days))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, key_pem


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate valid 30 more days, and a client context trusting it."""
    pem, key_pem = self_signed(30)
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(pem)
    (folder / "key.pem").write_bytes(key_pem)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    client = ssl.create_default_context(cadata=pem.decode())
    return server, client


def _passes(context: dict[str, Any]) -> dict[str, Any]:
    return {"passed": True, "output": {"checked": context["automation_id"], "users": 3}}


def _fails(context: dict[str, Any]) -> dict[str, Any]:
    return {"passed": False, "output": "2 admins without MFA", "reason": "MFA is not enforced"}


def _raises(context: dict[str, Any]) -> Any:
    raise RuntimeError("the cloud API said no")


def make_platform(
    tls: tuple[ssl.SSLContext, ssl.SSLContext] | None = None,
    *,
    allow_private: bool = True,
    callables: dict[str, Callable[[dict[str, Any]], Any]] | None = None,
    store: Any = None,
    clock: FrozenClock | None = None,
) -> Platform:
    prober = HttpxProber(verify=tls[1]) if tls is not None else HttpxProber()
    settings = {
        "webhooks": WebhookPolicy(allow_private=allow_private),
        "automations": AutomationSettings(
            prober=prober,
            callables=callables if callables is not None else {"passes": _passes, "fails": _fails, "raises": _raises},
        ),
    }
    return Platform(
        store if store is not None else MemoryStore(),
        clock=clock or FrozenClock(NOW),
        ids=SequentialIds(),
        settings=settings,
    )


@pytest.fixture
def platform(tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> Platform:
    return make_platform(tls)


@pytest.fixture
def owner(platform: Platform) -> Actor:
    return platform.actor(platform.bootstrap("Acme").organization.id)


@pytest.fixture
def task(platform: Platform, owner: Actor) -> Any:
    return platform.tasks.create(owner, NewTask(title="Status page is up"))


@pytest.fixture
def server() -> Iterator[LocalServer]:
    routes: dict[str, Route] = {
        "/status.json": (
            200,
            {"Content-Type": "application/json", "X-Served-By": "edge-1 eu-west"},
            json.dumps({"status": {"indicator": "none", "up": True, "components": [{"name": "api"}]}}).encode(),
        ),
        "/down": (503, {"Content-Type": "text/plain"}, b"maintenance"),
        "/moved": (302, {"Location": "/elsewhere"}, b""),
        "/text": (200, {"Content-Type": "text/plain"}, b"plain text"),
    }
    with LocalServer(routes) as running:
        yield running


def _probe(url: str, *assertions: dict[str, Any], **fields: Any) -> NewAutomation:
    return NewAutomation(
        url=url, assertions=list(assertions), timeout_seconds=fields.pop("timeout_seconds", 5), **fields
    )


# -- definitions and versions ----------------------------------------------------------------


def test_an_empty_automation_is_named_after_its_task_and_its_runs_say_it_has_no_definition(
    platform: Platform, owner: Actor, task: Any
) -> None:
    made = platform.automations.add(owner, task.id, NewAutomation())
    assert made.name == "Status page is up - Evidence Collection"
    assert (made.version, made.url, made.assertions, made.next_run_at) == (1, None, (), None)
    assert platform.automations.get(owner, task.id, made.id) == made
    assert [a.id for a in platform.automations.list(owner, task.id).items] == [made.id]
    run = platform.automations.run(owner, task.id, made.id)
    assert run.status is RunStatus.ERROR and "no URL" in run.reason
    assert platform.tasks.get(owner, task.id).status is TaskStatus.TODO  # an error judges nothing


def test_each_change_of_the_definition_is_a_version_and_naming_is_not(
    platform: Platform, owner: Actor, task: Any
) -> None:
    made = platform.automations.add(
        owner, task.id, _probe("https://status.example.com/", {"type": "status_equals", "status": 200}, changelog="v1")
    )
    renamed = platform.automations.update(owner, task.id, made.id, AutomationPatch(name="Status", description="x"))
    assert renamed.version == 1
    changed = platform.automations.update(
        owner,
        task.id,
        made.id,
        AutomationPatch(assertions=[{"type": "status_in", "statuses": [200, 204]}], changelog="204 too"),
    )
    assert changed.version == 2
    rescheduled = platform.automations.update(owner, task.id, made.id, AutomationPatch(schedule="monthly"))
    assert rescheduled.version == 3
    versions = platform.automations.versions(owner, task.id, made.id).items
    assert [(v.version, v.changelog) for v in versions] == [(3, ""), (2, "204 too"), (1, "v1")]
    assert versions[2].definition.assertions == (Assertion(type=AssertionType.STATUS_EQUALS, status=200),)
    assert versions[1].definition.assertions == (Assertion(type=AssertionType.STATUS_IN, statuses=(200, 204)),)
    assert versions[0].definition.schedule == "monthly" and versions[0].published_by == owner.principal
    same = platform.automations.update(owner, task.id, made.id, AutomationPatch(schedule="monthly", changelog="no-op"))
    assert same == rescheduled  # nothing changed: no version, no write


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"url": "http://status.example.com/"}, "url", "must be an https URL"),
        ({"url": "https://169.254.169.254/latest"}, "url", "cloud metadata address"),
        ({"url": "ftp://status.example.com/"}, "url", "http(s) URL"),
        ({"assertions": [{"type": "status_equals"}], "url": "https://a.example/"}, "assertions[0].status", "required"),
        (
            {"assertions": [{"type": "status_equals", "status": 200, "path": "$.a"}], "url": "https://a.example/"},
            "assertions[0].path",
            "not read",
        ),
        (
            {"assertions": [{"type": "json_path_exists", "path": "$..a"}], "url": "https://a.example/"},
            "assertions[0].path",
            "use .name",
        ),
        (
            {"assertions": [{"type": "json_path_exists", "path": "a.b"}], "url": "https://a.example/"},
            "assertions[0].path",
            "start with $",
        ),
        (
            {
                "assertions": [{"type": "header_equals", "header": "bad header", "value": "x"}],
                "url": "https://a.example/",
            },
            "assertions[0].header",
            "header name",
        ),
        ({"assertions": [{"type": "nope"}], "url": "https://a.example/"}, "assertions[0].type", None),
        (
            {"assertions": [{"type": "status_in", "statuses": [200], "extra": 1}], "url": "https://a.example/"},
            "assertions[0].extra",
            "unknown",
        ),
        ({"assertions": [{"type": "status_equals", "status": 200}]}, "url", "required when assertions"),
        ({"kind": "callable"}, "callableName", "is required"),
        ({"kind": "callable", "callableName": "nobody"}, "callableName", "installed: fails, passes, raises"),
        (
            {"kind": "callable", "callableName": "passes", "url": "https://a.example/"},
            "url",
            "http_probe automations only",
        ),
        ({"callableName": "passes"}, "callableName", "callable automations only"),
        ({"schedule": "FREQ=MONTHLY;BYMONTHDAY=30;BYMONTH=2"}, "schedule", None),
        ({"timeoutSeconds": 31}, "timeoutSeconds", "1 to 30"),
        ({"method": "POST"}, "method", None),
    ],
)
def test_a_bad_definition_is_a_validation_error_naming_its_field(
    body: dict[str, Any], field: str, reason: str | None, tls: Any
) -> None:
    platform = make_platform(tls, allow_private=False)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="T"))
    snake = {
        "callableName": "callable_name",
        "timeoutSeconds": "timeout_seconds",
    }
    with pytest.raises(ValidationError) as raised:
        platform.automations.add(owner, task.id, NewAutomation(**{snake.get(k, k): v for k, v in body.items()}))
    fields = [raised.value.details["field"]] + [e["field"] for e in raised.value.details.get("errors", [])]
    assert field in fields, raised.value.details
    if reason is not None:
        assert reason in str(raised.value.details), raised.value.details


def test_plain_http_and_loopback_are_allowed_only_where_private_targets_are(tls: Any) -> None:
    platform = make_platform(tls, allow_private=True)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="T"))
    made = platform.automations.add(owner, task.id, _probe("http://127.0.0.1:9/health"))
    assert made.url == "http://127.0.0.1:9/health"
    with pytest.raises(ValidationError, match="metadata"):
        platform.automations.add(owner, task.id, _probe("http://169.254.169.254/"))


def test_a_probe_of_a_host_resolving_to_loopback_is_refused_at_run_time_unless_allowed(
    tls: Any, server: LocalServer
) -> None:
    """A host name is judged when it is probed, by every address it resolves to then (DNS
    rebinding gains nothing); ``localhost`` resolves to loopback."""
    platform = make_platform(tls, allow_private=False)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="T"))
    port = server.server.server_address[1]
    made = platform.automations.add(owner, task.id, _probe(f"https://localhost:{port}/status.json"))
    run = platform.automations.run(owner, task.id, made.id)
    assert run.status is RunStatus.ERROR and "not a public address" in run.reason
    assert server.seen == []  # nothing was sent


def test_access_is_the_actions(platform: Platform, owner: Actor, task: Any) -> None:
    made = platform.automations.add(owner, task.id, NewAutomation())
    auditor = platform.actor(owner.organization_id, Role.AUDITOR)
    assert platform.automations.get(auditor, task.id, made.id) == made
    with pytest.raises(Forbidden):
        platform.automations.run(auditor, task.id, made.id)
    with pytest.raises(Forbidden):
        platform.automations.add(auditor, task.id, NewAutomation())


def test_an_automation_is_found_only_under_its_own_task_and_organization(
    platform: Platform, owner: Actor, task: Any
) -> None:
    made = platform.automations.add(owner, task.id, NewAutomation())
    other_task = platform.tasks.create(owner, NewTask(title="Other"))
    with pytest.raises(NotFound):
        platform.automations.get(owner, other_task.id, made.id)
    with pytest.raises(NotFound):
        platform.automations.list(owner, "tsk_missing")
    stranger = platform.actor(platform.bootstrap("Globex").organization.id)
    with pytest.raises(NotFound):
        platform.automations.get(stranger, task.id, made.id)
    with pytest.raises(NotFound):
        platform.automations.add(stranger, task.id, NewAutomation())


# -- runs against real servers --------------------------------------------------------------------


def test_a_passing_probe_adds_evidence_and_the_next_pass_a_version_of_it(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(
        owner,
        task.id,
        _probe(
            server.url("/status.json"),
            {"type": "status_equals", "status": 200},
            {"type": "json_path_equals", "path": "$.status.indicator", "value": "none"},
            {"type": "json_path_equals", "path": "$.status.up", "value": "true"},
            {"type": "json_path_exists", "path": "$.status.components[-1]['name']"},
            {"type": "header_equals", "header": "Content-Type", "value": "application/json"},
            {"type": "header_contains", "header": "x-served-by", "value": "eu-west"},
        ),
    )
    run = platform.automations.run(owner, task.id, made.id)
    assert run.status is RunStatus.PASSED, run.reason
    assert run.reason == "all 6 assertion(s) held (status 200)"
    assert run.output.startswith("HTTP 200\n") and '"indicator": "none"' in run.output
    assert (run.triggered_by, run.triggered_by_id, run.version) == (RunTrigger.PERSON, owner.principal, 1)
    assert run.completed_at is not None and run.duration_ms is not None and run.finding_id is None
    [evidence] = platform.evidence.list(owner, task.id).items
    assert (evidence.id, evidence.source, evidence.kind.value, evidence.version) == (
        run.evidence_id,
        EvidenceSource.AUTOMATION,
        "note",
        1,
    )
    assert '"indicator": "none"' in (evidence.note or "")
    again = platform.automations.run(owner, task.id, made.id)
    assert again.evidence_id == run.evidence_id
    assert platform.evidence.get(owner, task.id, run.evidence_id).version == 2
    assert platform.automations.get(owner, task.id, made.id).last_run_status is RunStatus.PASSED
    assert server.seen[0][0] == "GET" and server.seen[0][2] == f"127.0.0.1:{server.server.server_address[1]}"


def test_a_failing_probe_fails_the_task_and_opens_one_finding_until_it_is_closed(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(
        owner, task.id, _probe(server.url("/down"), {"type": "status_equals", "status": 200})
    )
    run = platform.automations.run(owner, task.id, made.id)
    assert run.status is RunStatus.FAILED
    assert run.reason == "assertions[0] (status_equals): status is 503, not 200"
    assert "maintenance" in run.output and run.evidence_id is None
    assert platform.tasks.get(owner, task.id).status is TaskStatus.FAILED
    finding = platform.findings.get(owner, run.finding_id)
    assert (finding.task_id, finding.source, finding.status) == (task.id, FindingSource.INTEGRATION, FindingStatus.OPEN)
    assert finding.title == f"Automation failed: {made.name}" and "503" in finding.content
    second = platform.automations.run(owner, task.id, made.id)
    assert second.finding_id == run.finding_id  # still open: the same finding
    platform.findings.close(owner, run.finding_id)
    third = platform.automations.run(owner, task.id, made.id)
    assert third.finding_id not in (None, run.finding_id)
    assert platform.findings.list(owner, FindingFilter(task_id=task.id)).total == 2


def test_no_assertions_means_a_2xx_answer_and_redirects_are_answers_not_followed(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    plain = platform.automations.add(owner, task.id, _probe(server.url("/text")))
    assert platform.automations.run(owner, task.id, plain.id).status is RunStatus.PASSED
    moved = platform.automations.add(
        owner, task.id, _probe(server.url("/moved"), {"type": "status_in", "statuses": [301, 302]})
    )
    assert platform.automations.run(owner, task.id, moved.id).status is RunStatus.PASSED
    assert [path for _, path, _ in server.seen] == ["/text", "/moved"]  # /elsewhere never asked for
    head = platform.automations.add(owner, task.id, _probe(server.url("/text"), method="HEAD"))
    assert platform.automations.run(owner, task.id, head.id).status is RunStatus.PASSED
    assert server.seen[-1][0] == "HEAD"
    text = platform.automations.add(
        owner, task.id, _probe(server.url("/text"), {"type": "json_path_exists", "path": "$.a"})
    )
    run = platform.automations.run(owner, task.id, text.id)
    assert run.status is RunStatus.FAILED and "not JSON" in run.reason


def test_an_unreachable_or_slow_target_is_an_error_within_the_timeout(
    platform: Platform, owner: Actor, task: Any
) -> None:
    with LocalServer({"/slow": (200, {}, b"late")}, delay=3) as slow:
        made = platform.automations.add(owner, task.id, _probe(slow.url("/slow"), timeout_seconds=1))
        started = time.monotonic()
        run = platform.automations.run(owner, task.id, made.id)
        assert time.monotonic() - started < 2.5
    assert run.status is RunStatus.ERROR and "timed out after 1 s" in run.reason
    closed = platform.automations.add(owner, task.id, _probe(slow.url("/slow")))  # the server is gone
    assert platform.automations.run(owner, task.id, closed.id).status is RunStatus.ERROR
    assert platform.tasks.get(owner, task.id).status is TaskStatus.TODO
    assert platform.findings.list(owner).total == 0


def test_the_tls_certificates_remaining_days_over_a_real_tls_server(
    platform: Platform, owner: Actor, task: Any, tls: tuple[ssl.SSLContext, ssl.SSLContext]
) -> None:
    with LocalServer({"/": (200, {}, b"ok")}, tls=tls[0]) as secure:
        enough = platform.automations.add(
            owner, task.id, _probe(secure.url("/"), {"type": "tls_expires_after_days", "days": 14})
        )
        run = platform.automations.run(owner, task.id, enough.id)
        assert run.status is RunStatus.PASSED, run.reason
        assert "tls certificate valid until" in run.output
        short = platform.automations.add(
            owner, task.id, _probe(secure.url("/"), {"type": "tls_expires_after_days", "days": 45})
        )
        failed = platform.automations.run(owner, task.id, short.id)
        assert failed.status is RunStatus.FAILED
        assert "expires in 30.0 days, not more than 45" in failed.reason or "expires in 29." in failed.reason
        untrusting = make_platform(None)  # the system's trust store: the self-signed certificate is refused
        stranger = untrusting.actor(untrusting.bootstrap("Acme").organization.id)
        their_task = untrusting.tasks.create(stranger, NewTask(title="T"))
        theirs = untrusting.automations.add(stranger, their_task.id, _probe(secure.url("/")))
        refused = untrusting.automations.run(stranger, their_task.id, theirs.id)
        assert refused.status is RunStatus.ERROR and "CERTIFICATE_VERIFY_FAILED" in refused.reason


def test_a_tls_assertion_over_plain_http_fails_saying_so(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(
        owner, task.id, _probe(server.url("/text"), {"type": "tls_expires_after_days", "days": 1})
    )
    run = platform.automations.run(owner, task.id, made.id)
    assert run.status is RunStatus.FAILED and "not https" in run.reason


def test_judge_compares_json_values_by_their_json_text() -> None:
    response = ProbeResponse(
        status=200, headers=(("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")), body=b'{"n": 42, "s": "42"}'
    )

    def check(*assertions: Assertion) -> tuple[RunStatus, str]:
        return judge(assertions, response, NOW)

    assert check(Assertion(type=AssertionType.JSON_PATH_EQUALS, path="$.n", value="42"))[0] is RunStatus.PASSED
    assert check(Assertion(type=AssertionType.JSON_PATH_EQUALS, path="$.s", value="42"))[0] is RunStatus.PASSED
    assert check(Assertion(type=AssertionType.JSON_PATH_EQUALS, path="$.s", value='"42"'))[0] is RunStatus.FAILED
    assert check(Assertion(type=AssertionType.HEADER_EQUALS, header="set-cookie", value="b=2"))[0] is RunStatus.PASSED
    status, reason = check(Assertion(type=AssertionType.JSON_PATH_EXISTS, path="$.missing[0]"))
    assert status is RunStatus.FAILED and "no value at $.missing[0]" in reason


# -- callables -----------------------------------------------------------------------------------


def test_callables_run_with_the_runs_context_and_judge_it(platform: Platform, owner: Actor, task: Any) -> None:
    passing = platform.automations.add(owner, task.id, NewAutomation(kind="callable", callable_name="passes"))
    run = platform.automations.run(owner, task.id, passing.id)
    assert run.status is RunStatus.PASSED and json.loads(run.output) == {"checked": passing.id, "users": 3}
    failing = platform.automations.add(owner, task.id, NewAutomation(kind="callable", callable_name="fails"))
    run = platform.automations.run(owner, task.id, failing.id)
    assert (run.status, run.reason, run.output) == (RunStatus.FAILED, "MFA is not enforced", "2 admins without MFA")
    raising = platform.automations.add(owner, task.id, NewAutomation(kind="callable", callable_name="raises"))
    run = platform.automations.run(owner, task.id, raising.id)
    assert run.status is RunStatus.ERROR and "RuntimeError: the cloud API said no" in run.reason


def test_callables_are_found_through_the_compliance_automations_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls: Any
) -> None:
    """A distribution installed on the path (its metadata and module written here) registers a
    callable as any package would, in its entry points."""
    (tmp_path / "acme_checks.py").write_text(
        "def mfa(context):\n    return {'passed': True, 'output': 'all admins use MFA', 'reason': 'checked'}\n"
    )
    info = tmp_path / "acme_checks-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[compliance.automations]\nacme.mfa = acme_checks:mfa\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    platform = Platform(
        MemoryStore(),
        clock=FrozenClock(NOW),
        settings={"automations": AutomationSettings(prober=HttpxProber(verify=tls[1]))},
    )
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="MFA"))
    with pytest.raises(ValidationError, match="installed: .*acme.mfa"):
        platform.automations.add(owner, task.id, NewAutomation(kind="callable", callable_name="acme.sso"))
    made = platform.automations.add(owner, task.id, NewAutomation(kind="callable", callable_name="acme.mfa"))
    run = platform.automations.run(owner, task.id, made.id)
    assert (run.status, run.output, run.reason) == (RunStatus.PASSED, "all admins use MFA", "checked")
    sys.modules.pop("acme_checks", None)


def test_the_default_prober_is_the_installed_httpx_adapter(server: LocalServer) -> None:
    platform = Platform(MemoryStore(), clock=FrozenClock(NOW), settings={"webhooks": WebhookPolicy(allow_private=True)})
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    task = platform.tasks.create(owner, NewTask(title="T"))
    made = platform.automations.add(owner, task.id, _probe(server.url("/text")))
    assert platform.automations.run(owner, task.id, made.id).status is RunStatus.PASSED


# -- the schedule --------------------------------------------------------------------------------


def test_the_schedule_runs_each_due_time_once_and_moves_on(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(owner, task.id, _probe(server.url("/text"), schedule="FREQ=DAILY"))
    tomorrow = dt.datetime.combine(NOW.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    assert made.next_run_at == tomorrow
    disabled = platform.automations.add(
        owner, task.id, _probe(server.url("/text"), schedule="FREQ=DAILY", is_enabled=False)
    )
    assert disabled.next_run_at is None
    assert platform.automations.run_due() == 0
    platform.clock.advance(days=1)  # type: ignore[attr-defined]
    assert platform.automations.run_due() == 1
    assert platform.automations.run_due() == 0
    [run] = platform.automations.run_log(owner, task.id, made.id).items
    assert (run.triggered_by, run.triggered_by_id, run.due_at, run.status) == (
        RunTrigger.SCHEDULE,
        None,
        tomorrow,
        RunStatus.PASSED,
    )
    assert platform.automations.get(owner, task.id, made.id).next_run_at == tomorrow + dt.timedelta(days=1)
    platform.clock.advance(days=3)  # type: ignore[attr-defined]  # missed days run once, late
    assert platform.automations.run_due() == 1
    assert platform.automations.run_log(owner, task.id, disabled.id).total == 0
    enabled = platform.automations.update(owner, task.id, disabled.id, AutomationPatch(is_enabled=True))
    assert enabled.next_run_at is not None and enabled.version == 1
    report = platform.run_chores()
    assert report.counts["automationRuns"] == 0 and not report.failures  # declared as a chore: nothing due now


class _Stops:
    """A prober whose process stops mid-check (what a killed worker leaves behind)."""

    def probe(self, request: Any) -> ProbeResponse:
        raise KeyboardInterrupt


def test_a_run_left_running_by_a_stopped_process_ends_in_error_at_the_next_sweep(tls: Any) -> None:
    store = MemoryStore()
    clock = FrozenClock(NOW)
    stopping = Platform(store, clock=clock, settings={"automations": AutomationSettings(prober=_Stops())})
    owner = stopping.actor(stopping.bootstrap("Acme").organization.id)
    task = stopping.tasks.create(owner, NewTask(title="T"))
    made = stopping.automations.add(owner, task.id, _probe("https://status.example.com/"))
    with pytest.raises(KeyboardInterrupt):
        stopping.automations.run(owner, task.id, made.id)
    [left] = stopping.automations.run_log(owner, task.id, made.id).items
    assert left.status is RunStatus.RUNNING
    survivor = make_platform(tls, store=store, clock=clock)
    assert survivor.automations.run_due() == 0
    assert survivor.automations.run_log(owner, task.id, made.id).items[0].status is RunStatus.RUNNING  # not yet
    clock.advance(hours=1)
    survivor.automations.run_due()
    [ended] = survivor.automations.run_log(owner, task.id, made.id).items
    assert ended.status is RunStatus.ERROR and ended.reason.startswith("abandoned")


def test_deleting_an_automation_or_its_task_takes_its_versions_and_runs(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(owner, task.id, _probe(server.url("/text")))
    platform.automations.run(owner, task.id, made.id)
    platform.automations.delete(owner, task.id, made.id)
    with pytest.raises(NotFound):
        platform.automations.get(owner, task.id, made.id)
    assert platform.automations.runs(owner, task.id).total == 0
    kept = platform.automations.add(owner, task.id, _probe(server.url("/text")))
    platform.automations.run(owner, task.id, kept.id)
    platform.tasks.delete(owner, task.id)
    with platform.uow.read() as session:
        from compliance_core.areas.automations import AUTOMATION_RUNS, AUTOMATION_VERSIONS, AUTOMATIONS

        for table in (AUTOMATIONS, AUTOMATION_VERSIONS, AUTOMATION_RUNS):
            assert session[table].list(owner.organization_id, table.filters(), _page())[1] == 0


def _page() -> Any:
    from compliance_core.kernel.pages import PageRequest

    return PageRequest()


def test_every_write_is_an_event_and_an_audit_entry(
    platform: Platform, owner: Actor, task: Any, server: LocalServer
) -> None:
    made = platform.automations.add(owner, task.id, _probe(server.url("/down")))
    platform.automations.update(owner, task.id, made.id, AutomationPatch(timeout_seconds=3))
    platform.automations.run(owner, task.id, made.id)
    platform.automations.delete(owner, task.id, made.id)
    with platform.uow.read() as session:
        types = [message.type for message in session[OUTBOX].pending(1000)]
    assert [t for t in types if t.startswith(("automation.", "finding.", "task.status"))] == [
        "automation.created",
        "automation.updated",
        "automation.run_started",
        "task.status_changed",
        "finding.created",
        "automation.run_completed",
        "automation.updated",
        "automation.deleted",
    ]
    entries = platform.audit_log.list(owner, AuditFilter(entity_type="automation")).items
    assert sorted(entry.action for entry in entries) == [
        "automation.created",
        "automation.deleted",
        "automation.run_completed",
        "automation.run_started",
        "automation.updated",
        "automation.updated",
    ]


# -- the task's automation status -------------------------------------------------------------

MANUAL, AUTOMATED = TaskAutomationStatus.MANUAL, TaskAutomationStatus.AUTOMATED


def _status_of(platform: Platform, owner: Actor, task_id: str) -> TaskAutomationStatus:
    return platform.tasks.get(owner, task_id).automation_status


def _status_changes(platform: Platform, task_id: str) -> list[tuple[str, str]]:
    """The automation status moves the outbox holds for the task: (from, to), in order."""
    with platform.uow.read() as session:
        messages = session[OUTBOX].pending(1000)
    return [
        (message.payload["previous"]["automationStatus"], message.payload["data"]["automationStatus"])
        for message in messages
        if message.type == "task.updated"
        and message.subject_id == task_id
        and "automationStatus" in message.payload.get("previous", {})
    ]


def test_a_tasks_first_enabled_automation_makes_it_automated_and_its_last_one_deleted_manual(
    platform: Platform, owner: Actor, task: Any
) -> None:
    assert _status_of(platform, owner, task.id) is MANUAL
    first = platform.automations.add(owner, task.id, NewAutomation())
    assert _status_of(platform, owner, task.id) is AUTOMATED
    second = platform.automations.add(owner, task.id, NewAutomation(name="Second"))
    platform.automations.delete(owner, task.id, first.id)
    assert _status_of(platform, owner, task.id) is AUTOMATED  # the second one is still enabled
    platform.automations.delete(owner, task.id, second.id)
    assert _status_of(platform, owner, task.id) is MANUAL
    assert _status_changes(platform, task.id) == [("manual", "automated"), ("automated", "manual")]


def test_a_disabled_automation_leaves_the_task_manual_until_it_is_enabled_and_disabling_the_last_makes_it_manual(
    platform: Platform, owner: Actor, task: Any
) -> None:
    made = platform.automations.add(owner, task.id, NewAutomation(is_enabled=False))
    assert _status_of(platform, owner, task.id) is MANUAL
    platform.automations.update(owner, task.id, made.id, AutomationPatch(name="Renamed"))
    assert _status_of(platform, owner, task.id) is MANUAL
    platform.automations.update(owner, task.id, made.id, AutomationPatch(is_enabled=True))
    assert _status_of(platform, owner, task.id) is AUTOMATED
    other = platform.automations.add(owner, task.id, NewAutomation(name="Other"))
    platform.automations.update(owner, task.id, made.id, AutomationPatch(is_enabled=False))
    assert _status_of(platform, owner, task.id) is AUTOMATED  # the other one is still enabled
    platform.automations.update(owner, task.id, other.id, AutomationPatch(is_enabled=False))
    assert _status_of(platform, owner, task.id) is MANUAL
    platform.automations.delete(owner, task.id, made.id)  # a disabled one: nothing crosses
    assert _status_changes(platform, task.id) == [("manual", "automated"), ("automated", "manual")]


def test_each_change_of_the_automation_status_is_one_task_updated_event_and_one_audit_entry(
    platform: Platform, owner: Actor, task: Any
) -> None:
    made = platform.automations.add(owner, task.id, NewAutomation())
    platform.automations.add(owner, task.id, NewAutomation(name="Second"))  # no change: no event
    platform.automations.update(owner, task.id, made.id, AutomationPatch(is_enabled=False))  # the second holds
    platform.automations.delete(owner, task.id, made.id)
    assert _status_changes(platform, task.id) == [("manual", "automated")]
    entries = platform.audit_log.list(owner, AuditFilter(entity_id=task.id, action="task.updated")).items
    assert [entry.changes for entry in entries] == [{"automationStatus": {"old": "manual", "new": "automated"}}]
    assert entries[0].actor_role is owner.role  # the caller who changed the automations


def test_a_status_set_by_hand_holds_until_the_automations_next_cross_between_none_enabled_and_some(
    platform: Platform, owner: Actor, task: Any
) -> None:
    platform.tasks.update(owner, task.id, TaskPatch(automation_status="automated"))
    made = platform.automations.add(owner, task.id, NewAutomation(is_enabled=False))
    assert _status_of(platform, owner, task.id) is AUTOMATED  # a disabled automation says nothing
    platform.automations.update(owner, task.id, made.id, AutomationPatch(is_enabled=True))
    platform.tasks.update(owner, task.id, TaskPatch(automation_status="manual"))
    platform.automations.add(owner, task.id, NewAutomation(name="Second"))
    assert _status_of(platform, owner, task.id) is MANUAL  # not its first enabled automation
    platform.automations.update(owner, task.id, made.id, AutomationPatch(is_enabled=False))
    assert _status_of(platform, owner, task.id) is MANUAL


def test_deleting_a_task_with_enabled_automations_deletes_them_without_updating_the_task(
    platform: Platform, owner: Actor, task: Any
) -> None:
    platform.automations.add(owner, task.id, NewAutomation())
    platform.automations.add(owner, task.id, NewAutomation(name="Second"))
    platform.tasks.delete(owner, task.id)
    with pytest.raises(NotFound):
        platform.tasks.get(owner, task.id)
    with platform.uow.read() as session:
        types = [m.type for m in session[OUTBOX].pending(1000) if m.subject_id == task.id]
    assert types[-1] == "task.deleted" and types.count("task.updated") == 1  # only the first automation's


# -- two workers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_two_workers_run_each_due_time_exactly_once(
    store: str, request: pytest.FixtureRequest, tmp_path: Path, server: LocalServer, tls: Any
) -> None:
    """Two platforms over one database (two workers) run the chore at the same moment, again and
    again: every due time runs once."""
    if store == "sqlite":
        url = request.getfixturevalue("migrated_sqlite")(tmp_path / "workers.db")
    else:
        url = request.getfixturevalue("postgres_url")
    clock = FrozenClock(NOW)
    settings = {
        "webhooks": WebhookPolicy(allow_private=True),
        "automations": AutomationSettings(prober=HttpxProber(verify=tls[1])),
    }
    first = Platform.open(url, clock=clock, settings=settings)
    second = Platform.open(url, clock=clock, settings=settings)
    try:
        owner = first.actor(first.bootstrap("Acme").organization.id)
        task = first.tasks.create(owner, NewTask(title="T"))
        made = [
            first.automations.add(owner, task.id, _probe(server.url("/text"), schedule="FREQ=DAILY")) for _ in range(3)
        ]
        for day in range(1, 4):
            clock.current = dt.datetime.combine(NOW.date() + dt.timedelta(days=day), dt.time(1), dt.UTC)
            barrier = threading.Barrier(2)
            counts: list[int] = []

            def work(platform: Platform, barrier: threading.Barrier, counts: list[int]) -> None:
                barrier.wait()
                counts.append(platform.automations.run_due())

            threads = [threading.Thread(target=work, args=(p, barrier, counts)) for p in (first, second)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            assert sum(counts) == 3, counts
        for automation in made:
            runs = first.automations.run_log(owner, task.id, automation.id).items
            assert sorted(run.due_at for run in runs) == [
                dt.datetime.combine(NOW.date() + dt.timedelta(days=day), dt.time(), dt.UTC) for day in range(1, 4)
            ]
            assert {run.status for run in runs} == {RunStatus.PASSED}
    finally:
        first.close()
        second.close()
