"""/v1/health and /v1/openapi.json: public, no key, no rate limit."""

from __future__ import annotations

import falcon

from compliance_core import Platform
from http_support import Api, error


def test_health_needs_no_key(app: falcon.App) -> None:
    result = Api(app, None).get("/v1/health")
    assert result.status_code == 200
    body = result.json
    assert body["status"] == "ok"
    assert body["timestamp"] == "2026-01-01T00:00:00Z"
    # without a key: no store details (a SQLite store's are the database's absolute path)
    assert set(body) == {"status", "version", "timestamp"}
    assert "X-RateLimit-Limit" not in result.headers
    assert result.headers["X-Request-Id"]


def test_health_with_a_members_key_shows_the_details(api: Api) -> None:
    result = api.get("/v1/health")
    assert result.status_code == 200
    body = result.json
    assert set(body) == {"status", "version", "timestamp", "uptimeSeconds", "store"}
    assert body["store"]["status"] == "ok" and body["store"]["backend"]
    assert result.headers["X-RateLimit-Limit"]


def test_health_ignores_a_bad_key(app: falcon.App) -> None:
    result = Api(app, "comp_wrong").get("/v1/health")
    assert result.status_code == 200
    assert set(result.json) == {"status", "version", "timestamp"}


def test_degraded_store_is_503(app: falcon.App, platform: Platform) -> None:
    platform.store.close()
    result = Api(app, None).get("/v1/health")
    assert result.status_code == 503
    assert result.json["status"] == "degraded"
    assert set(result.json) == {"status", "version", "timestamp"}


def test_health_takes_no_query(app: falcon.App) -> None:
    error(Api(app, None).get("/v1/health", query="verbose=1"), 400, "validation_error", "verbose")


def test_openapi_document_needs_no_key(app: falcon.App) -> None:
    result = Api(app, None).get("/v1/openapi.json")
    assert result.status_code == 200
    assert result.headers["Content-Type"] == "application/json"
    assert result.json["openapi"] == "3.0.3"
    assert result.json["servers"] == [{"url": "http://localhost:3333", "description": "local development server"}]
