"""The framework catalogue over HTTP: lists with the shared ``meta``, filters,
cursor walks, and 404s for what the catalogue does not hold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from oscal_examples import example_frameworks

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas.frameworks import Frameworks
from compliance_http.app import create_app
from compliance_http.cli.stores import serve_settings
from http_support import Api, issue_key


@pytest.fixture
def contractor(store_url: str) -> Iterator[Api]:
    """A contractor (the least role) of an organization on a platform holding the example framework."""
    settings = {"frameworks": example_frameworks()}
    with Platform.open(store_url, clock=FrozenClock(), ids=SequentialIds(), settings=settings) as platform:
        boot = platform.bootstrap("Acme")
        yield Api(create_app(platform), issue_key(platform, boot.organization.id, Role.CONTRACTOR))


def test_frameworks_and_requirements_read_over_http(contractor: Api) -> None:
    frameworks = contractor.get("/v1/frameworks")
    assert frameworks.status_code == 200, frameworks.text
    assert frameworks.json["meta"] == {"total": 1, "page": 1, "perPage": 50, "totalPages": 1}
    (framework,) = frameworks.json["data"]
    assert (framework["id"], framework["version"], framework["baselines"]) == ("example", "1.0", ["low"])
    assert framework["sourceCommit"] == "0" * 40 and framework["requirementCount"] == 5
    one = contractor.get("/v1/frameworks/example")
    assert one.status_code == 200 and one.json["groups"][0] == {"id": "ex", "title": "Example family", "parentId": None}

    low = contractor.get("/v1/frameworks/example/requirements?baseline=low&perPage=1")
    assert low.status_code == 200, low.text
    assert low.json["meta"] == {"total": 2, "page": 1, "perPage": 1, "totalPages": 2}
    assert [item["id"] for item in low.json["data"]] == ["ex-1"]
    grouped = contractor.get("/v1/frameworks/example/requirements?groupId=gv")
    assert [item["id"] for item in grouped.json["data"]] == ["GV.OC", "GV.OC-01"]

    enhancement = contractor.get("/v1/frameworks/example/requirements/ex-1.1")
    assert enhancement.status_code == 200
    assert enhancement.json["parentId"] == "ex-1" and enhancement.json["label"] == "EX-1(1)"


def test_a_cursor_walk_and_unknown_ids(contractor: Api) -> None:
    seen: list[str] = []
    path: str | None = "/v1/frameworks/example/requirements?perPage=2&cursor="
    while path is not None:
        page = contractor.get(path)
        assert page.status_code == 200, page.text
        seen += [item["id"] for item in page.json["data"]]
        cursor = page.json["meta"].get("nextCursor")
        path = None if cursor is None else f"/v1/frameworks/example/requirements?perPage=2&cursor={cursor}"
    assert seen == ["ex-1", "ex-1.1", "ex-2", "GV.OC", "GV.OC-01"]
    assert contractor.get("/v1/frameworks/nist-sp-800-53-rev5").status_code == 404
    assert contractor.get("/v1/frameworks/example/requirements/ex-9").json["error"]["code"] == "not_found"


def test_serve_reads_the_catalogue_directory_from_the_environment(tmp_path: Path) -> None:
    settings = serve_settings({"COMPLIANCE_FRAMEWORKS_DIR": str(tmp_path)})
    assert settings["frameworks"] == Frameworks(directory=tmp_path)
    assert "webhooks" in settings
    assert "frameworks" not in serve_settings({})
