"""Building an app does no work a request may never need: the OpenAPI document (the costliest
part of building it, walking every operation's models) is made by the first request for it,
once, and every request gets the same bytes."""

from __future__ import annotations

from typing import Any

import falcon.testing
import pytest

import compliance_http.app
from compliance_core import Platform
from compliance_http.app import create_app


def test_the_document_is_built_by_its_first_request_and_only_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = compliance_http.app.openapi_document

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compliance_http.app, "openapi_document", counting)
    with Platform.open("memory://") as platform:
        client = falcon.testing.TestClient(create_app(platform))
        assert built == []
        assert client.simulate_get("/v1/health").status_code == 200
        assert built == []
        first = client.simulate_get("/v1/openapi.json")
        head = client.simulate_head("/v1/openapi.json")
        second = client.simulate_get("/v1/openapi.json")
    assert built == [1]
    assert first.status_code == head.status_code == second.status_code == 200
    assert first.content == second.content and first.json["openapi"].startswith("3.0")
    assert head.headers["content-length"] == str(len(first.content))
