"""``q``, ``sort``, ``from`` and ``to`` over HTTP: the same search, order and range as in
process, a cursor walk that keeps its sort, and a ``validation_error`` naming the parameter and
its value for a sort field or a date the list does not take."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from http_support import Api, error

pytestmark = pytest.mark.every_store


def _vendors(api: Api, names: list[str], due: list[str] | None = None) -> list[str]:
    made = []
    for n, name in enumerate(names):
        body: dict[str, Any] = {"name": name}
        if due is not None:
            body["nextReviewDue"] = due[n]
        made.append(api.post("/v1/vendors", body).json["id"])
    return made


def _names(api: Api, **query: str) -> list[str]:
    body = api.get("/v1/vendors", query=urlencode(query)).json
    return [vendor["name"] for vendor in body["data"]]


def test_q_finds_names_ignoring_case_and_counts_them(api: Api) -> None:
    _vendors(api, ["Łódź Logistics", "Acme", "ŁÓDŹ Cloud", "Beta"])
    body = api.get("/v1/vendors", query=urlencode({"q": "łódź"})).json
    assert [v["name"] for v in body["data"]] == ["Łódź Logistics", "ŁÓDŹ Cloud"]
    assert body["meta"]["total"] == 2
    assert _names(api, q="acm") == ["Acme"]
    assert _names(api, q="") == ["Łódź Logistics", "Acme", "ŁÓDŹ Cloud", "Beta"]


def test_sort_ascending_and_descending_by_a_declared_field(api: Api) -> None:
    _vendors(api, ["beta", "Acme", "alpha"])
    assert _names(api, sort="name") == ["Acme", "alpha", "beta"]
    assert _names(api, sort="-name") == ["beta", "alpha", "Acme"]
    assert _names(api, sort="-createdAt") == ["alpha", "Acme", "beta"]


def test_from_and_to_range_the_due_date_from_inclusive_to_exclusive(api: Api) -> None:
    _vendors(api, ["a", "b", "c"], due=["2027-01-01", "2027-02-01", "2027-03-01"])
    assert _names(api, **{"from": "2027-02-01"}) == ["b", "c"]
    assert _names(api, **{"from": "2027-01-01", "to": "2027-03-01"}) == ["a", "b"]


def test_a_sorted_walk_reads_every_vendor_once_and_its_cursor_keeps_the_sort(api: Api) -> None:
    _vendors(api, ["d", "b", "e", "a", "c"])
    seen: list[str] = []
    cursor: str | None = ""
    while cursor is not None:
        body = api.get("/v1/vendors", query=urlencode({"cursor": cursor, "perPage": "2", "sort": "-name"})).json
        seen += [vendor["name"] for vendor in body["data"]]
        cursor = body["meta"]["nextCursor"]
    assert seen == ["e", "d", "c", "b", "a"]
    first = api.get("/v1/vendors", query=urlencode({"cursor": "", "perPage": "2", "sort": "name"})).json
    again = api.get("/v1/vendors", query=urlencode({"cursor": first["meta"]["nextCursor"], "sort": "-name"}))
    error(again, 400, "validation_error", "cursor")
    plain = api.get("/v1/vendors", query=urlencode({"cursor": first["meta"]["nextCursor"]}))
    error(plain, 400, "validation_error", "cursor")


def test_bad_sort_and_dates_name_the_parameter_and_value(api: Api) -> None:
    response = api.get("/v1/vendors", query=urlencode({"sort": "-colour"}))
    error(response, 400, "validation_error", "sort")
    assert "-colour" in str(response.json)
    error(api.get("/v1/vendors", query="sort="), 400, "validation_error", "sort")  # the enum has no ""
    error(api.get("/v1/vendors", query=urlencode({"from": "2027-13-01"})), 400, "validation_error", "from")
    error(api.get("/v1/vendors", query=urlencode({"to": "2027-01-01T00:00:00Z"})), 400, "validation_error", "to")
    error(api.get("/v1/audit-log", query=urlencode({"from": "2027-01-01T00:00:00"})), 400, "validation_error", "from")
    assert api.get("/v1/audit-log", query=urlencode({"from": "2027-01-01T00:00:00+02:00"})).status_code == 200
    # the API keys sort by name (issue 18), never by their hash
    error(api.get("/v1/api-keys", query=urlencode({"sort": "secretHash"})), 400, "validation_error", "sort")
