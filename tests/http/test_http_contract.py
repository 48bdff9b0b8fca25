"""Rules every endpoint keeps: request ids, the error body, authentication, rate limits and
idempotency."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.api_keys import API_KEYS
from compliance_core.areas.vendors import VendorService
from compliance_http import errors
from compliance_http.app import create_app
from compliance_http.wire import Wire
from http_support import Api, error, issue_key

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.mark.parametrize(
    ("method", "path", "keyed", "status"),
    [
        ("GET", "/v1/vendors", True, 200),
        ("GET", "/v1/health", False, 200),
        ("GET", "/v1/openapi.json", False, 200),
        ("GET", "/v1/vendors", False, 401),
        ("GET", "/v1/vendors/vnd_x", True, 404),
        ("GET", "/v1/nowhere", False, 404),
        ("DELETE", "/v1/vendors", True, 405),
        ("POST", "/v1/vendors", True, 400),
    ],
)
def test_every_response_has_a_request_id(
    app: falcon.App, api: Api, method: str, path: str, keyed: bool, status: int
) -> None:
    caller = api if keyed else Api(app, None)
    first, second = caller.request(method, path), caller.request(method, path)
    assert first.status_code == status
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]
    if status >= 400:
        assert first.json["requestId"] == first.headers["X-Request-Id"]


def test_an_app_built_before_a_fork_gives_the_child_its_own_request_ids(app: falcon.App) -> None:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child answers one request (a 404: no store) and reports its id
        try:
            os.write(writer, falcon.testing.simulate_get(app, "/v1/nowhere").headers["X-Request-Id"].encode())
        finally:
            os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    with os.fdopen(reader, "rb") as child:
        child_id = child.read().decode()
    assert child_id.startswith("req_")
    assert child_id != falcon.testing.simulate_get(app, "/v1/nowhere").headers["X-Request-Id"]


def test_unknown_path_is_404_even_without_a_key(app: falcon.App) -> None:
    for caller in (Api(app, None), Api(app, "comp_bad")):
        details = error(caller.get("/v1/nowhere"), 404, "not_found")
        assert details == {"path": "/v1/nowhere"}
    error(Api(app, None).get("/v2/vendors"), 404, "not_found")


def test_unknown_method_is_405_with_allow(app: falcon.App, api: Api) -> None:
    for caller in (api, Api(app, None)):
        result = caller.request("DELETE", "/v1/vendors/vnd_1")
        details = error(result, 405, "method_not_allowed")
        assert set(details["allowed"]) >= {"GET", "PATCH"}
        assert "PATCH" in result.headers["Allow"]
    error(api.request("PUT", "/v1/health"), 405, "method_not_allowed")


@pytest.mark.parametrize("key", [None, "", "comp_" + "0" * 64, "not-a-key"])
def test_missing_or_unknown_key_is_401(app: falcon.App, key: str | None) -> None:
    headers = {} if key is None else {"X-API-Key": key}
    result = Api(app, None).get("/v1/vendors", headers=headers)
    error(result, 401, "unauthorized")
    assert "X-RateLimit-Limit" not in result.headers


def test_authentication_comes_before_body_and_query_checks(app: falcon.App) -> None:
    anonymous = Api(app, None)
    error(anonymous.post("/v1/vendors", {"bogus": 1}), 401, "unauthorized")
    error(anonymous.get("/v1/vendors", query="perPage=999"), 401, "unauthorized")


def test_falcon_errors_are_answered_in_the_error_shape() -> None:
    class Raises:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            raise falcon.HTTPUnsupportedMediaType(description="no XML here")

    app = falcon.App()
    errors.install(app, Wire())
    app.add_route("/x", Raises())
    result = falcon.testing.simulate_get(app, "/x")
    assert result.status_code == 415
    body = result.json
    assert body["error"] == {"code": "unsupported_media_type", "message": "no XML here", "details": {}}
    # without the request-id middleware, the error handler gives the request an id of its own
    assert body["requestId"].startswith("req_")


def test_unexpected_exception_is_500_without_internals(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("password=hunter2 in /srv/secret.py")

    monkeypatch.setattr(VendorService, "list", explode)
    with caplog.at_level(logging.ERROR, logger="compliance_http"):
        result = api.get("/v1/vendors")
    details = error(result, 500, "internal_error")
    assert details == {}
    assert "hunter2" not in result.text and "secret.py" not in result.text
    request_id = result.headers["X-Request-Id"]
    assert any(request_id in record.getMessage() and record.exc_info for record in caplog.records)
    assert all(header in result.headers for header in RATE_HEADERS)


class TestRateLimit:
    @pytest.fixture
    def free(self, app: falcon.App, platform: Platform) -> Api:
        return Api(app, platform.bootstrap("Small", "free").owner_key.secret)

    def test_burst_then_429_with_retry_after(self, free: Api, clock: FrozenClock) -> None:
        remaining = []
        for _ in range(60):
            result = free.get("/v1/vendors")
            assert result.status_code == 200
            assert result.headers["X-RateLimit-Limit"] == "60"
            remaining.append(int(result.headers["X-RateLimit-Remaining"]))
        assert remaining == list(range(59, -1, -1))
        limited = free.get("/v1/vendors")
        details = error(limited, 429, "rate_limited")
        assert limited.headers["Retry-After"] == "2"  # 30 per minute: one token every 2 seconds
        assert details["retryAfter"] == 2 and details["limit"] == 60 and details["remaining"] == 0
        assert limited.headers["X-RateLimit-Remaining"] == "0"
        assert int(limited.headers["X-RateLimit-Reset"]) == int(clock.now().timestamp()) + 120
        clock.advance(seconds=2)
        assert free.get("/v1/vendors").status_code == 200
        error(free.get("/v1/vendors"), 429, "rate_limited")

    def test_every_authenticated_response_counts_and_carries_the_headers(self, free: Api) -> None:
        for result in (
            free.get("/v1/vendors/vnd_x"),
            free.post("/v1/vendors", {"name": 5}),
            free.get("/v1/vendors", query="bogus=1"),
            free.post("/v1/vendors", {"name": "ok"}),
        ):
            assert all(header in result.headers for header in RATE_HEADERS), result.status_code
        assert free.get("/v1/vendors").headers["X-RateLimit-Remaining"] == "55"

    def test_public_routes_do_not_draw(self, app: falcon.App, free: Api) -> None:
        for _ in range(70):
            assert Api(app, None).get("/v1/health").status_code == 200
        assert free.get("/v1/vendors").headers["X-RateLimit-Remaining"] == "59"

    def test_rejected_requests_are_not_counted_as_usage(self, free: Api, clock: FrozenClock) -> None:
        for _ in range(65):
            free.get("/v1/organization")
        clock.advance(minutes=10)
        keys = free.get("/v1/api-keys").json["data"]
        usage = free.get(f"/v1/api-keys/{keys[0]['id']}/usage").json
        assert usage["totalRequests"] == 62  # 60 admitted, then the two after the refill

    def test_buckets_are_per_key(self, app: falcon.App, platform: Platform, free: Api) -> None:
        for _ in range(61):
            free.get("/v1/vendors")
        organization = free.get("/v1/organization")
        assert organization.status_code == 429
        second = Api(app, issue_key(platform, self._org_id(platform, free), "admin"))
        assert second.get("/v1/vendors").status_code == 200

    @staticmethod
    def _org_id(platform: Platform, caller: Api) -> str:
        from compliance_core.areas.api_keys import hash_secret

        with platform.uow.read() as session:
            key = session[API_KEYS].find_by_hash(hash_secret(caller.key or ""))
        assert key is not None
        return key.organization_id


class TestIdempotency:
    def test_replay_returns_the_original_and_creates_nothing(self, api: Api, clock: FrozenClock) -> None:
        headers = {"Idempotency-Key": "create-hosting"}
        first = api.post("/v1/vendors", {"name": "Hosting"}, headers=headers)
        clock.advance(hours=23)
        again = api.post("/v1/vendors", {"name": "Hosting"}, headers=headers)
        assert first.status_code == again.status_code == 201
        assert first.json == again.json
        assert api.get("/v1/vendors").json["count"] == 1

    def test_same_key_different_payload_is_409(self, api: Api) -> None:
        headers = {"Idempotency-Key": "k1"}
        assert api.post("/v1/vendors", {"name": "Hosting"}, headers=headers).status_code == 201
        details = error(api.post("/v1/vendors", {"name": "Other"}, headers=headers), 409, "conflict", "Idempotency-Key")
        assert details["value"] == "k1"
        assert api.get("/v1/vendors").json["count"] == 1

    def test_after_24_hours_the_key_is_fresh(self, api: Api, clock: FrozenClock) -> None:
        headers = {"Idempotency-Key": "daily"}
        api.post("/v1/vendors", {"name": "Hosting"}, headers=headers)
        clock.advance(hours=25)
        assert api.post("/v1/vendors", {"name": "Hosting"}, headers=headers).status_code == 201
        assert api.get("/v1/vendors").json["count"] == 2

    def test_a_failed_attempt_leaves_nothing(self, api: Api) -> None:
        headers = {"Idempotency-Key": "retry-me"}
        holder = api.post("/v1/people", {"name": "Ann", "email": "ann@example.com"}).json
        body = {"name": "Bob", "email": "ann@example.com"}
        error(api.post("/v1/people", body, headers=headers), 409, "conflict", "email")
        api.patch(f"/v1/people/{holder['id']}", {"email": "ann@elsewhere.example"})
        retried = api.post("/v1/people", body, headers=headers)
        assert retried.status_code == 201 and retried.json["name"] == "Bob"

    @pytest.mark.parametrize(
        ("path", "body"),
        [
            ("/v1/people", {"name": "Ann", "email": "ann@example.com"}),
            ("/v1/people/bulk", {"members": [{"name": "Ann", "email": "ann@example.com"}]}),
            ("/v1/findings", {"title": "Gap", "severity": "low"}),
        ],
    )
    def test_every_create_replays(self, api: Api, path: str, body: dict[str, Any]) -> None:
        headers = {"Idempotency-Key": "once"}
        first = api.post(path, body, headers=headers)
        again = api.post(path, body, headers=headers)
        assert first.status_code == again.status_code == 201
        assert first.json == again.json
        listing = "/v1/people" if "people" in path else path
        assert api.get(listing).json["count"] == 1

    def test_keys_are_per_caller(self, api: Api, as_role: Any) -> None:
        admin = as_role("admin")
        headers = {"Idempotency-Key": "shared-name"}
        assert api.post("/v1/vendors", {"name": "A"}, headers=headers).status_code == 201
        assert admin.post("/v1/vendors", {"name": "B"}, headers=headers).status_code == 201
        assert api.get("/v1/vendors").json["count"] == 2

    def test_bad_idempotency_key_is_named(self, api: Api) -> None:
        error(
            api.post("/v1/vendors", {"name": "A"}, headers={"Idempotency-Key": "x" * 256}),
            400,
            "validation_error",
            "Idempotency-Key",
        )


@pytest.fixture(params=["memory", "sqlite"])
def concurrent_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    return str(request.getfixturevalue("migrated_sqlite")(tmp_path / "concurrent.db"))


def test_concurrent_requests_with_one_key_create_once(concurrent_store_url: str) -> None:
    with Platform.open(concurrent_store_url, clock=FrozenClock(), ids=SequentialIds()) as platform:
        boot = platform.bootstrap("Acme")
        app = create_app(platform)
        headers = {"X-API-Key": boot.owner_key.secret, "Idempotency-Key": "one-vendor"}
        start = threading.Barrier(4)
        results: list[falcon.testing.Result] = []

        def post() -> None:
            start.wait()
            results.append(falcon.testing.simulate_post(app, "/v1/vendors", json={"name": "Once"}, headers=headers))

        threads = [threading.Thread(target=post) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r.status_code for r in results] == [201] * 4
        assert all(r.json == results[0].json for r in results)
        listing = falcon.testing.simulate_get(app, "/v1/vendors", headers={"X-API-Key": boot.owner_key.secret})
        assert listing.json["count"] == 1
