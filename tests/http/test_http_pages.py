"""What a browser opens: ``/`` and ``/v1`` (a short page, or JSON to a client asking for it),
``/docs`` (Swagger UI with every asset served here), and CORS for the configured origins only.

The pages show nothing of any organization, so one memory store serves them; CORS wraps
every route (the API's responses, its errors and preflights), decided before any store is reached."""

from __future__ import annotations

import re
from collections.abc import Iterator

import falcon
import falcon.testing
import orjson
import pytest

from compliance_core import Platform, ValidationError
from compliance_core.platform import Bootstrap, version
from compliance_http.app import create_app
from compliance_http.cli import main
from compliance_http.cors import EXPOSED_HEADERS, cors_origins

APP_ORIGIN = "http://localhost:5173"


@pytest.fixture(scope="module")
def pages() -> Iterator[falcon.testing.TestClient]:
    with Platform.open("memory://") as platform:
        yield falcon.testing.TestClient(create_app(platform))


@pytest.mark.parametrize("path", ["/", "/v1"])
def test_the_root_and_v1_are_a_page_linking_the_reference_and_the_document(
    pages: falcon.testing.TestClient, path: str
) -> None:
    response = pages.simulate_get(path, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert response.status_code == 200  # no key: public, like health
    assert response.headers["content-type"].startswith("text/html")
    assert "Accept" in response.headers["vary"]
    links = re.findall(r'href="([^"]+)"', response.text)
    assert {"/docs", "/v1/openapi.json", "/v1/health"} <= set(links)
    assert version() in response.text
    for link in links:
        assert pages.simulate_get(link).status_code == 200, link


def test_a_client_asking_for_json_gets_the_links_as_json(pages: falcon.testing.TestClient) -> None:
    for path in ("/", "/v1"):
        response = pages.simulate_get(path, headers={"Accept": "application/json"})
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json == {
            "name": "Compliance API",
            "version": version(),
            "links": {"docs": "/docs", "openapi": "/v1/openapi.json", "health": "/v1/health"},
        }
    # Without an Accept header (curl's */*) a person gets the page.
    assert pages.simulate_get("/").headers["content-type"].startswith("text/html")


def test_the_reference_loads_only_assets_of_this_server(pages: falcon.testing.TestClient) -> None:
    response = pages.simulate_get("/docs")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assets = re.findall(r'(?:src|href)="([^"]+)"', response.text)
    assert {"/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/docs/docs.js"} <= set(assets)
    kinds = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    for asset in assets:
        assert asset.startswith("/docs/"), f"{asset} is not served by this server"
        served = pages.simulate_get(asset)
        assert served.status_code == 200, asset
        assert served.headers["content-type"].startswith(kinds[asset[asset.rindex(".") :]]), asset
        assert len(served.content) > 100, asset
        assert "max-age" in served.headers["cache-control"]
    assert "SwaggerUIBundle" in pages.simulate_get("/docs/swagger-ui-bundle.js").text
    script = pages.simulate_get("/docs/docs.js").text
    assert '"/v1/openapi.json"' in script and "window.location.origin" in script


def test_only_the_reference_s_own_files_are_served(pages: falcon.testing.TestClient) -> None:
    for path in ("/docs/index.html", "/docs/swagger-initializer.js", "/docs/..%2Fpyproject.toml", "/docs/nothing"):
        response = pages.simulate_get(path)
        assert response.status_code == 404, path
        assert response.json["error"]["code"] == "not_found"


def test_the_pages_answer_head(pages: falcon.testing.TestClient) -> None:
    for path in ("/", "/v1", "/docs", "/docs/swagger-ui.css"):
        response = pages.simulate_head(path)
        assert response.status_code == 200, path
        assert response.content == b""


def test_the_pages_are_not_part_of_the_api_document(pages: falcon.testing.TestClient) -> None:
    document = pages.simulate_get("/v1/openapi.json").json
    assert all(path.startswith("/v1/") for path in document["paths"])


@pytest.fixture
def cors_app(platform: Platform) -> falcon.App:
    return create_app(platform, cors_origins=[APP_ORIGIN, "https://app.example.com"])


def test_a_listed_origin_may_read_answers_and_errors(cors_app: falcon.App, boot: Bootstrap) -> None:
    client = falcon.testing.TestClient(cors_app)
    listed = client.simulate_get("/v1/vendors", headers={"Origin": APP_ORIGIN, "X-API-Key": boot.owner_key.secret})
    refused = client.simulate_get("/v1/vendors", headers={"Origin": APP_ORIGIN})
    for response, status in ((listed, 200), (refused, 401)):
        assert response.status_code == status
        assert response.headers["access-control-allow-origin"] == APP_ORIGIN
        assert "Origin" in response.headers["vary"]
        exposed = {h.strip() for h in response.headers["access-control-expose-headers"].split(",")}
        assert exposed == set(EXPOSED_HEADERS) and "X-RateLimit-Remaining" in exposed
    assert "access-control-allow-credentials" not in listed.headers


def test_an_unlisted_origin_gets_no_cors_header(cors_app: falcon.App, boot: Bootstrap) -> None:
    client = falcon.testing.TestClient(cors_app)
    for origin in ("https://evil.example", "http://localhost:5174", "null"):
        response = client.simulate_get("/v1/vendors", headers={"Origin": origin, "X-API-Key": boot.owner_key.secret})
        assert response.status_code == 200
        assert not [name for name in response.headers if name.lower().startswith("access-control-")], origin
        preflight = client.simulate_options(
            "/v1/vendors", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
        )
        assert not [name for name in preflight.headers if name.lower().startswith("access-control-")], origin


def test_a_preflight_from_a_listed_origin_is_answered_without_a_key(cors_app: falcon.App) -> None:
    client = falcon.testing.TestClient(cors_app)
    response = client.simulate_options(
        "/v1/vendors/vnd_1",
        headers={
            "Origin": "https://app.example.com",
            "Access-Control-Request-Method": "PATCH",
            "Access-Control-Request-Headers": "x-api-key, content-type, idempotency-key",
        },
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "https://app.example.com"
    methods = {m.strip() for m in response.headers["access-control-allow-methods"].split(",")}
    assert {"GET", "PATCH"} <= methods and "POST" not in methods
    assert response.headers["access-control-allow-headers"] == "x-api-key, content-type, idempotency-key"
    assert response.headers["access-control-max-age"] == "86400"


def test_without_configured_origins_nothing_is_shared(app: falcon.App, boot: Bootstrap) -> None:
    client = falcon.testing.TestClient(app)
    response = client.simulate_get("/v1/vendors", headers={"Origin": APP_ORIGIN, "X-API-Key": boot.owner_key.secret})
    assert response.status_code == 200
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]


def test_origins_are_read_as_a_browser_sends_them() -> None:
    assert cors_origins(["https://app.example.com/", "http://localhost:5173,http://127.0.0.1:5173  "]) == (
        "https://app.example.com",
        "http://localhost:5173",
        "http://127.0.0.1:5173",
    )
    assert cors_origins([""]) == ()
    for bad in ("*", "app.example.com", "https://app.example.com/path", "ftp://x.example", "https://u@x.example"):
        with pytest.raises(ValidationError) as raised:
            cors_origins([bad])
        assert raised.value.details["field"] == "cors_origin"
        assert raised.value.details["value"] == bad.rstrip("/")


def test_serve_refuses_a_bad_origin_naming_the_option(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("COMPLIANCE_CORS_ORIGINS", raising=False)
    assert main(["serve", "--db", "memory://", "--port", "0", "--cors-origin", "*"]) == 2
    error = orjson.loads(capsys.readouterr().err)["error"]
    assert error["code"] == "validation_error"
    assert error["details"]["field"] == "--cors-origin" and error["details"]["value"] == "*"
    monkeypatch.setenv("COMPLIANCE_CORS_ORIGINS", "https://ok.example, https://bad.example/x")
    assert main(["serve", "--db", "memory://", "--port", "0"]) == 2
    error = orjson.loads(capsys.readouterr().err)["error"]
    assert error["details"]["field"] == "COMPLIANCE_CORS_ORIGINS"
    assert error["details"]["value"] == "https://bad.example/x"
