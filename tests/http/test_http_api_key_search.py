"""GET /v1/api-keys?q=&sort=&from=&to= (issue 18): the key list searches, sorts and ranges as
every other list does, and its document says so."""

from __future__ import annotations

import pytest

from http_support import Api, error

pytestmark = pytest.mark.every_store

ROOT = "/v1/api-keys"


def test_q_and_sort_find_and_order_keys(api: Api) -> None:
    for name in ("Deploy bot", "backup job", "Backup nightly"):
        assert api.post(ROOT, {"name": name, "role": "auditor"}).status_code == 201
    found = api.get(ROOT, query="q=BACKUP&sort=-name")
    assert found.status_code == 200, found.text
    assert [key["name"] for key in found.json["data"]] == ["backup job", "Backup nightly"]
    assert found.json["meta"]["total"] == 2
    by_prefix = api.get(ROOT, query="q=" + found.json["data"][0]["prefix"])
    assert [key["name"] for key in by_prefix.json["data"]] == ["backup job"]
    used = api.get(ROOT, query="sort=-lastUsedAt")
    assert used.status_code == 200 and used.json["meta"]["total"] == 4  # with the owner's key


def test_from_and_to_range_over_creation(api: Api) -> None:
    assert api.post(ROOT, {"name": "CI", "role": "auditor"}).status_code == 201
    everything = api.get(ROOT).json["meta"]["total"]
    assert api.get(ROOT, query="from=2000-01-01T00:00:00Z").json["meta"]["total"] == everything
    assert api.get(ROOT, query="to=2000-01-01T00:00:00Z").json["meta"]["total"] == 0


def test_a_sort_the_list_does_not_offer_is_a_400(api: Api) -> None:
    error(api.get(ROOT, query="sort=secretHash"), 400, "validation_error", "sort")


def test_the_document_shows_the_parameters(api: Api) -> None:
    document = api.get("/v1/openapi.json").json
    parameters = {p["name"]: p for p in document["paths"][ROOT]["get"]["parameters"] if "name" in p}
    assert {"q", "sort", "from", "to"} <= set(parameters)
    assert {"name", "-lastUsedAt", "role"} <= set(parameters["sort"]["schema"]["enum"])
