"""Guard rails every operation keeps, at the edges of what a request may be: nesting depth, body
size, over-long numbers and paths, permission before the query, OPTIONS and 405 agreeing, what
public health reveals, the access log, an unreachable server seen from the client, and the purge
the server schedules."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import falcon
import falcon.testing
import httpx
import orjson
import pytest

from compliance_core import Client, FrozenClock, Platform, Role
from compliance_core.access import AccessService
from compliance_core.kernel.errors import InternalError
from compliance_core.kernel.permissions import can
from compliance_core.kernel.registry import Chore
from compliance_core.platform import Bootstrap
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport, ServiceUnavailable
from compliance_http.errors import MAX_ECHOED_PATH
from compliance_http.middleware import ACCESS_LOG, AccessLog
from compliance_http.resources import MAX_BODY_BYTES
from compliance_http.routes import Endpoint, default_endpoints
from compliance_http.server import running_chores
from compliance_http.wire import MAX_INTEGER_DIGITS, MAX_JSON_DEPTH, Wire
from http_support import Api, error, issue_key

ENDPOINTS = default_endpoints()
PATHS = sorted({e.path for e in ENDPOINTS})
LISTS = [e for e in ENDPOINTS if e.operation.paged and not e.public]


def _nested(depth: int) -> bytes:
    """``{"name": [[...]]}`` with ``depth`` levels of arrays and objects in all."""
    return b'{"name":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# -- 1. nesting depth, and error rendering that cannot fail ---------------------------------


def test_a_body_nested_just_under_orjsons_limit_is_a_400_not_a_500(api: Api) -> None:
    # orjson reads up to 1024 levels; the error that echoed the value once raised RecursionError
    for depth in (990, 1000, 1023):
        details = error(api.post("/v1/vendors", raw=_nested(depth)), 400, "validation_error", "body")
        assert "nested too deeply" in details["reason"]
        assert details["value"] is None  # the value is not echoed


def test_the_depth_limit_is_exact() -> None:
    assert Wire.loads(_nested(MAX_JSON_DEPTH))["name"] is not None
    with pytest.raises(Exception, match="nested too deeply") as raised:
        Wire.loads(_nested(MAX_JSON_DEPTH + 1))
    assert raised.value.details["field"] == "body"  # type: ignore[attr-defined]
    # brackets inside strings are text, not nesting
    assert Wire.loads(orjson.dumps({"name": "[" * 5000}))["name"] == "[" * 5000


class _Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def _deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    inner = root
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return root


@pytest.mark.parametrize(
    "details",
    [
        {"field": "name", "value": _deep_list(5000)},  # str() of it raises RecursionError
        {"field": "name", "value": _Hostile()},
        {1: 2**200, "when": _deep_list(300), "many": [_deep_list(300)] * 10_000, "long": "x" * 100_000},
    ],
    ids=["deep", "hostile-str", "odd-values"],
)
def test_rendering_an_error_cannot_fail_and_stays_bounded(details: dict[Any, Any]) -> None:
    body = orjson.loads(Wire.error("validation_error", "name: bad", details, "req_1"))
    assert body["error"]["code"] == "validation_error" and body["requestId"] == "req_1"
    assert body["error"]["message"] == "name: bad"
    assert isinstance(body["error"]["details"], dict)
    assert len(orjson.dumps(body)) < 32 * 1024


def test_an_error_whose_every_part_is_hostile_still_renders() -> None:
    body = orjson.loads(Wire.error(_Hostile(), _Hostile(), {"x": _Hostile()}, _Hostile()))  # type: ignore[arg-type]
    assert body["error"]["details"] == {"x": "<_Hostile>"}
    assert set(body) == {"error", "requestId"}


# -- 2. the body-size limit, checked before reading ------------------------------------------


class _Unread(io.RawIOBase):
    """A request body that must not be read."""

    reads = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.reads += 1
        raise AssertionError("the body was read")


def test_a_body_announced_over_the_limit_is_refused_before_it_is_read(app: falcon.App, boot: Bootstrap) -> None:
    stream = _Unread()
    environ = falcon.testing.create_environ(
        path="/v1/vendors",
        method="POST",
        headers={"X-API-Key": boot.owner_key.secret or "", "Content-Type": "application/json"},
    )
    environ["CONTENT_LENGTH"] = str(MAX_BODY_BYTES + 1)
    environ["wsgi.input"] = stream
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = status, {k.lower(): v for k, v in headers}

    body = orjson.loads(b"".join(app(environ, start_response)))
    assert seen["status"].startswith("413") and stream.reads == 0
    assert body["error"]["code"] == "validation_error"
    assert body["error"]["details"] == {
        "field": "body",
        "value": MAX_BODY_BYTES + 1,
        "reason": f"must be at most {MAX_BODY_BYTES} bytes",
    }
    assert body["requestId"] == seen["headers"]["x-request-id"]


def test_a_body_just_over_the_limit_is_413_and_one_at_the_limit_is_read(api: Api) -> None:
    details = error_413(api.post("/v1/vendors", raw=b" " * (MAX_BODY_BYTES + 1)))
    assert details["reason"] == f"must be at most {MAX_BODY_BYTES} bytes"
    at_limit = b'{"name": "Edge"}'.ljust(MAX_BODY_BYTES, b" ")
    assert api.post("/v1/vendors", raw=at_limit).status_code == 201


def error_413(result: falcon.testing.Result) -> dict[str, Any]:
    assert result.status_code == 413, result.text
    body = result.json
    assert body["error"]["code"] == "validation_error" and body["requestId"] == result.headers["X-Request-Id"]
    return body["error"]["details"]  # type: ignore[no-any-return]


# -- 3. permission before the query ------------------------------------------------------------


def test_a_contractor_gets_403_on_people_whatever_the_query(as_role: Callable[[str], Api]) -> None:
    contractor = as_role("contractor")
    error(contractor.get("/v1/people", query="bad=1"), 403, "forbidden")
    error(contractor.get("/v1/people", query="page=0"), 403, "forbidden")
    error(as_role("owner").get("/v1/people", query="bad=1"), 400, "validation_error", "bad")


@pytest.fixture(scope="module")
def before_any_store() -> Iterator[tuple[falcon.App, dict[Role, Api]]]:
    """An app and a caller per role for what is decided before a store is reached (routing, a
    query's rules, the permission): on memory, once for the module."""
    with Platform.open("memory://", clock=FrozenClock()) as platform:
        organization = platform.bootstrap("Acme").organization.id
        app = create_app(platform)
        yield app, {role: Api(app, issue_key(platform, organization, role)) for role in Role}


@pytest.mark.parametrize("endpoint", LISTS, ids=lambda e: f"{e.method} {e.path}")
def test_every_list_checks_permission_before_its_query(
    endpoint: Endpoint, before_any_store: tuple[falcon.App, dict[Role, Api]]
) -> None:
    action = endpoint.operation.action
    assert action is not None
    path = endpoint.path.format(**{name: "x_1" for name in endpoint.operation.ids})
    for role, caller in before_any_store[1].items():
        result = caller.get(path, query="bogus=1&page=abc")
        if can(role, action):
            error(result, 400, "validation_error")
        else:
            error(result, 403, "forbidden")


# -- 4. what public health reveals -------------------------------------------------------------


def test_public_health_tells_no_deployment_details(app: falcon.App, tmp_path: Any) -> None:
    result = Api(app, None).get("/v1/health")
    assert set(result.json) == {"status", "version", "timestamp"}
    assert "store" not in result.text and str(tmp_path) not in result.text
    assert "X-RateLimit-Limit" not in result.headers


@pytest.mark.parametrize("role", list(Role))
def test_health_details_need_a_role_that_reads_the_organization(role: Role, as_role: Callable[[str], Api]) -> None:
    result = as_role(role).get("/v1/health")
    assert result.status_code == 200
    if role is Role.CONTRACTOR:
        assert set(result.json) == {"status", "version", "timestamp"}
    else:
        assert set(result.json) == {"status", "version", "timestamp", "uptimeSeconds", "store"}
    assert result.headers["X-RateLimit-Limit"]  # a key sent is a key admitted (and counted)


# -- 5. OPTIONS and 405 agree --------------------------------------------------------------------

CANDIDATES = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


@pytest.mark.parametrize("path", PATHS)
def test_options_and_405_list_the_same_methods(before_any_store: tuple[falcon.App, dict[Role, Api]], path: str) -> None:
    endpoint = next(e for e in ENDPOINTS if e.path == path)
    concrete = path.format(**{name: "x_1" for name in endpoint.path_params})
    anonymous = Api(before_any_store[0], None)
    options = anonymous.request("OPTIONS", concrete)
    assert options.status_code == 204 and options.headers["X-Request-Id"]
    allowed = options.headers["Allow"]
    methods = [m.strip() for m in allowed.split(",")]
    declared = {e.method for e in ENDPOINTS if e.path == path}
    assert set(methods) == declared | {"OPTIONS"} | ({"HEAD"} if "GET" in declared else set())
    for method in CANDIDATES:
        if method in methods:
            continue
        refused = anonymous.request(method, concrete)
        assert refused.status_code == 405 and refused.headers["Allow"] == allowed
        if method != "HEAD":  # (a HEAD answer has no body)
            assert error(refused, 405, "method_not_allowed")["allowed"] == methods


# -- 6. over-long numbers and paths -------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        ("1000000000000", "is too large"),
        ("9" * (MAX_INTEGER_DIGITS + 1), f"is too large (at most {MAX_INTEGER_DIGITS} digits)"),
        ("1" * 5000, f"is too large (at most {MAX_INTEGER_DIGITS} digits)"),
        ("12x", "must be an integer"),
        ("0", "at least 1"),
    ],
    ids=["13-digits", "19-digits", "5000-digits", "not-a-number", "zero"],
)
def test_page_numbers_say_what_is_wrong(api: Api, page: str, reason: str) -> None:
    details = error(api.get("/v1/vendors", query=f"page={page}"), 400, "validation_error", "page")
    assert reason in details["reason"], details
    assert len(str(details["value"])) <= 210


def test_a_zero_padded_page_is_still_a_page(api: Api) -> None:
    assert api.get("/v1/vendors", query="page=" + "0" * 40 + "1").json["meta"]["page"] == 1


def test_an_unknown_route_does_not_echo_a_huge_path(app: falcon.App) -> None:
    path = "/v1/" + "x" * 100_000
    result = Api(app, None).get(path)
    details = error(result, 404, "not_found")
    assert len(details["path"]) <= MAX_ECHOED_PATH + 3
    assert len(result.content) < 2 * MAX_ECHOED_PATH + 300


# -- 7. the access log ---------------------------------------------------------------------------


def test_one_json_access_line_per_request_without_secrets(platform: Platform, boot: Bootstrap) -> None:
    secret = boot.owner_key.secret or ""
    written = io.StringIO()
    sink = AccessLog(written)
    app = create_app(platform, access_log=sink)
    api = Api(app, secret)
    ok = api.get("/v1/vendors", query="perPage=5&category=Confidential+Cloud")
    api.post("/v1/vendors", {"name": "Secret Vendor Name"})
    missing = Api(app, None).get("/v1/vendors/vnd_1")
    nowhere = Api(app, None).get("/v1/nowhere/at/all")
    assert written.getvalue() == ""  # kept until the worker's periodic flush
    sink.flush()
    lines = written.getvalue().splitlines()
    assert len(lines) == 4
    entries = [json.loads(line) for line in lines]
    for entry in entries:
        assert set(entry) == {"time", "requestId", "keyId", "method", "route", "status", "durationMs"}
        assert entry["time"].endswith("Z") and entry["durationMs"] >= 0
    first, created, unauthorized, unknown = entries
    assert first == {
        **first,
        "requestId": ok.headers["X-Request-Id"],
        "keyId": boot.owner_key.key.id,
        "method": "GET",
        "route": "/v1/vendors",
        "status": 200,
    }
    assert created["status"] == 201 and created["method"] == "POST"
    assert unauthorized["route"] == "/v1/vendors/{vendor_id}" and unauthorized["keyId"] is None
    assert unauthorized["requestId"] == missing.headers["X-Request-Id"] and unauthorized["status"] == 401
    assert unknown["route"] is None and unknown["status"] == 404 and nowhere.status_code == 404
    text = "\n".join(lines)
    for leak in (secret, "Confidential", "perPage", "Secret Vendor", "vnd_1", "nowhere"):
        assert leak not in text


def test_no_access_line_unless_enabled(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        api.get("/v1/vendors")
    assert not [r for r in caplog.records if r.name == ACCESS_LOG.name]


def test_the_access_log_writes_when_enough_lines_wait() -> None:
    written = io.StringIO()
    sink = AccessLog(written)
    line = "x" * 1000
    for _ in range(AccessLog.LIMIT // 1001):
        sink.write(line)
    assert written.getvalue() == ""
    sink.write(line)
    assert written.getvalue().count("\n") == AccessLog.LIMIT // 1001 + 1


def test_an_error_in_middleware_is_logged_with_its_request_id(
    app: falcon.App, platform: Platform, boot: Bootstrap, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("admission exploded")

    monkeypatch.setattr(AccessService, "admit", broken)
    with caplog.at_level(logging.ERROR, logger="compliance_http"):
        result = Api(app, boot.owner_key.secret).get("/v1/vendors")
    error(result, 500, "internal_error")
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert result.headers["X-Request-Id"] in record.getMessage()
    assert record.exc_info is not None and "admission exploded" in str(record.exc_info[1])
    assert "admission exploded" not in result.text


# -- 8. the client and an unreachable server -----------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_a_library_error_naming_the_url() -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    client = Client(HTTPTransport(base, "comp_x", timeout=2))
    with pytest.raises(ServiceUnavailable) as raised:
        client.vendors.list()
    failure = raised.value
    assert isinstance(failure, InternalError) and failure.code == "internal_error"
    assert failure.details["url"].startswith(f"{base}/v1/vendors")
    assert failure.details["url"] in failure.message and failure.details["reason"]


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectTimeout("timed out"), httpx.ConnectError("Name or service not known"), httpx.ReadError("reset")],
    ids=["timeout", "dns", "cut"],
)
def test_every_transport_failure_maps_to_service_unavailable(failure: httpx.TransportError) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise failure

    transport = HTTPTransport("http://api.example", "comp_x", transport=httpx.MockTransport(handler))
    with pytest.raises(ServiceUnavailable) as raised:
        Client(transport).health()
    assert raised.value.details == {"url": "http://api.example/v1/health", "reason": str(failure)}
    assert "http://api.example/v1/health" in raised.value.message


# -- 9. the chores the server schedules ---------------------------------------------------------


class _FakePlatform:
    """A platform with one chore, run every 10 ms, answering ``results`` in turn."""

    def __init__(self, results: list[int | Exception], every: float = 0.01) -> None:
        self.results = results
        self.calls = 0
        self.called = threading.Event()
        self.store: object = None
        self.chores = (
            Chore(
                name="purge expired idempotency records",
                every=dt.timedelta(seconds=every),
                run=lambda target, now: 0,
                report="purged",
                done="purged %d expired idempotency record(s)",
                log_zero=True,
            ),
        )

    def run_chore(self, chore: Chore[Any], now: Any = None) -> int:
        assert chore is self.chores[0] and now is None
        result = self.results[min(self.calls, len(self.results) - 1)]
        self.calls += 1
        if self.calls >= len(self.results):
            self.called.set()
        if isinstance(result, Exception):
            raise result
        return result


def _server_messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("compliance_http.server")]


def test_a_chore_runs_at_once_then_on_its_schedule_and_logs_its_count(caplog: pytest.LogCaptureFixture) -> None:
    fake = _FakePlatform([3, RuntimeError("database is locked"), 0])
    with caplog.at_level(logging.INFO, logger="compliance_http.server"), running_chores(fake):
        assert fake.called.wait(5)
    messages = _server_messages(caplog)
    assert messages[0] == "purged 3 expired idempotency record(s)"
    assert any("could not purge" in m for m in messages)  # logged with its traceback, tried again
    assert "purged 0 expired idempotency record(s)" in messages


def test_the_chores_run_once_at_start_and_stop_with_their_block() -> None:
    fake = _FakePlatform([1], every=3600)
    with running_chores(fake) as thread:
        assert fake.called.wait(5)
    assert not thread.is_alive() and fake.calls == 1


class _FakeStore:
    def __init__(self, results: list[list[str] | Exception]) -> None:
        self.results = results
        self.calls = 0

    def refresh_statistics(self) -> list[str]:
        result = self.results[min(self.calls, len(self.results) - 1)]
        self.calls += 1
        if isinstance(result, Exception):
            raise result
        return result


def test_a_store_keeping_statistics_has_them_refreshed_periodically(caplog: pytest.LogCaptureFixture) -> None:
    fake = _FakePlatform([0, 0, 0])
    fake.store = _FakeStore([["vendors"], RuntimeError("database is locked"), []])
    with caplog.at_level(logging.INFO, logger="compliance_http.server"):
        with running_chores(fake, statistics_every=0.01):
            deadline = time.monotonic() + 5
            while fake.store.calls < 3:
                assert time.monotonic() < deadline
                time.sleep(0.01)
    messages = _server_messages(caplog)
    assert "refreshed the planner statistics (tables grown or shrunk: vendors)" in messages
    assert any("could not refresh the planner statistics" in m for m in messages)  # and the chores went on
    assert fake.calls >= 2


def test_an_areas_chore_runs_in_the_lead_by_its_registration_alone(caplog: pytest.LogCaptureFixture) -> None:
    from tally_area import WITH_A_JAM

    from compliance_store.memory import MemoryStore

    platform = Platform(MemoryStore(), areas=WITH_A_JAM)
    platform.bootstrap("Acme")
    with caplog.at_level(logging.INFO, logger="compliance_http.server"), running_chores(platform):
        pass  # the block waits for the first run of every chore
    messages = _server_messages(caplog)
    assert "counted 1 organization(s)" in messages
    assert any(m.startswith("could not jam the tally machine") for m in messages)


def test_platform_app_of_the_lead_purges_and_the_others_do_not(tmp_path: Any, caplog: Any) -> None:
    from compliance_http.server import serving

    url = f"sqlite:///{tmp_path / 'lead.db'}"
    with caplog.at_level(logging.INFO, logger="compliance_http.server"):
        with serving._platform_app(url):
            pass
        assert not [r for r in caplog.records if "purged" in r.getMessage()]
        with serving._platform_app(url, lead=True) as served:
            assert Api(served.app, None).get("/v1/health").status_code == 200
    assert [r.getMessage() for r in caplog.records if "purged" in r.getMessage()] == [
        "purged 0 expired idempotency record(s)"
    ]


def test_the_lead_sweeps_policy_reviews_at_once_and_stops_with_its_block(tmp_path: Any) -> None:
    from compliance_core.areas.policies import NewPolicy, PolicyStatus, PublishPolicy

    url = f"sqlite:///{tmp_path / 'sweep.db'}"
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
    with Platform.open(url, clock=FrozenClock(long_ago)) as old:
        owner = old.actor(old.bootstrap("Acme").organization.id)
        policy = old.policies.create(owner, NewPolicy(name="Monthly", content="x", frequency="monthly"))
        old.policies.publish(owner, policy.id, PublishPolicy())
    with Platform.open(url) as platform:
        with running_chores(platform) as thread:
            deadline = time.monotonic() + 5
            while platform.policies.get(owner, policy.id).status != PolicyStatus.NEEDS_REVIEW:
                assert time.monotonic() < deadline, "the sweep did not run at start"
                time.sleep(0.01)
        assert not thread.is_alive()
