"""List responses are byte-identical with and without the list machinery's shortcuts, on every
store: kept pages (from their second request), kept totals (no COUNT), seek anchors (no OFFSET
walk), cursor walks and pages rendered straight from rows, against a platform that counts, walks
OFFSET and renders models for every request, as lists ran before those existed. Both platforms share one store; random list URLs of every paged route
(random filters drawn from the data, pages, page sizes, cursors) are asked of both, repeated,
with writes in between, and every answer must match byte for byte."""

from __future__ import annotations

import random
import typing
from collections.abc import Iterator
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import attrs
import falcon
import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.kernel.page_cache import PageCache, TotalCache
from compliance_core.kernel.rendering import wire_name
from compliance_http.app import create_app
from compliance_http.routes import Endpoint, default_endpoints
from compliance_store.listing import PagedQuery
from http_support import Api

pytestmark = pytest.mark.every_store

LISTS = [e for e in default_endpoints() if e.operation.paged and e.method == "GET" and not e.path_params]
CRITICALITY = ("critical", "important", "standard")
COUNTRIES = ("DE", "FR", "US", "IE", None)
DPA = ("signed", "pending", "not_required", None)


class PlainApi(Api):
    """Asks with the SQL stores' seeks switched off: every page of the shared store walks its
    OFFSET from the list's first row (nothing a request of the fast app kept is used)."""

    def request(self, *args: Any, **options: Any) -> falcon.testing.Result:
        never = 10**12
        with mock.patch.multiple(PagedQuery, SEEK_FROM=never, SEEK_KEPT_FROM=never, ANCHOR_EVERY=never):
            return super().request(*args, **options)


@pytest.fixture
def pair(platform: Platform, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Api, Api]]:
    """The fast app (the platform as configured by default, with the stores' anchors every 7
    rows so small lists seek too) and the plain one, as one organization's owner."""
    monkeypatch.setattr(PagedQuery, "ANCHOR_EVERY", 7)
    boot = platform.bootstrap("Same", "enterprise", rpm=1_000_000, burst=1_000_000)
    fast = Platform(platform.store, clock=clock, ids=SequentialIds(start=500_000))
    plain = Platform(
        platform.store,
        clock=clock,
        ids=SequentialIds(start=900_000),
        page_cache=PageCache(budget=0, totals=TotalCache(entries=0)),
        render_rows=False,
    )
    secret = boot.owner_key.secret or ""
    yield Api(create_app(fast), secret), PlainApi(create_app(plain), secret)


def _seed(api: Api, rng: random.Random) -> None:
    for n in range(90):
        body: dict[str, Any] = {
            "name": f"Vendor {n:03d}",
            "criticality": rng.choice(CRITICALITY),
            "ictService": rng.random() < 0.3,
            "processesPersonalData": rng.random() < 0.5,
            "category": rng.choice(("cloud", "hr", "other")),
        }
        if (country := rng.choice(COUNTRIES)) is not None:
            body["country"] = country
            if country == "US":
                body["transferMechanism"] = "standard_contractual_clauses"
        if (dpa := rng.choice(DPA)) is not None:
            body["dpaStatus"] = dpa
        if rng.random() < 0.4:
            body["subProcessors"] = [{"name": f"Sub {n}", "country": "FR", "purposeCategory": "data_storage"}]
        answer = api.post("/v1/vendors", body)
        assert answer.status_code == 201, answer.json
    for n in range(25):
        body = {"name": f"Person {n}", "email": f"p{n}@example.com", "isActive": rng.random() < 0.8}
        assert api.post("/v1/people", body).status_code == 201
    for n in range(30):
        body = {"title": f"Finding {n}", "severity": rng.choice(("low", "medium", "high", "critical"))}
        assert api.post("/v1/findings", body).status_code == 201
    for endpoint in (e for e in default_endpoints() if e.status == 201 and e.operation.example):
        for _ in range(3):  # every area with a create gets records, even one added later
            api.post(endpoint.path, endpoint.operation.example)


def _values(api: Api, endpoint: Endpoint) -> dict[str, list[str]]:
    """Each filter's candidate values: what the records show for it (both for a yes/no one)."""
    filters = endpoint.operation.filters
    if filters is None:
        return {}
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        body = api.get(endpoint.path, query=urlencode({"page": page, "perPage": 200})).json
        rows += body["data"]
        if page >= body["meta"]["totalPages"]:
            break
        page += 1
    hints = typing.get_type_hints(filters)
    values = {}
    for field in attrs.fields(filters):
        name = wire_name(field.name)
        found = sorted({_text(row[name]) for row in rows if row.get(name) is not None})
        if bool in (hints[field.name], *typing.get_args(hints[field.name])):
            found = ["true", "false"]
        if found:
            values[name] = found
    return values


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _urls(endpoint: Endpoint, values: dict[str, list[str]], rng: random.Random, count: int) -> list[dict[str, Any]]:
    queries = []
    for _ in range(count):
        query: dict[str, Any] = {}
        for name in rng.sample(sorted(values), min(len(values), rng.choice((0, 1, 1, 2)))):
            query[name] = rng.choice(values[name])
        per_page = rng.choice((1, 3, 7, 10, 50, 200))
        query["perPage"] = per_page
        if rng.random() < 0.15:
            query["cursor"] = ""
        else:
            query["page"] = rng.choice((1, 1, 2, 3, 5, 9, 14, 30, 200))
        queries.append(query)
    return queries


def _same(fast: Api, plain: Api, path: str, query: dict[str, Any]) -> dict[str, Any]:
    encoded = urlencode(query)
    want, got = plain.get(path, query=encoded), fast.get(path, query=encoded)
    assert want.status_code == 200, (f"{path}?{encoded}", want.json)
    assert (got.status_code, got.content) == (want.status_code, want.content), f"{path}?{encoded}"
    return want.json


def test_random_list_urls_answer_the_same_bytes(pair: tuple[Api, Api]) -> None:
    fast, plain = pair
    rng = random.Random(8)
    _seed(plain, rng)
    checked = 0
    for round_ in range(2):
        for endpoint in LISTS:
            values = _values(plain, endpoint)
            queries = _urls(endpoint, values, rng, 30)
            for query in queries + rng.sample(queries, 10):  # some asked again: kept pages serve them
                body = _same(fast, plain, endpoint.path, query)
                checked += 1
                cursor = body["meta"].get("nextCursor")
                while cursor:  # a walk follows its cursors to the end on both
                    body = _same(fast, plain, endpoint.path, {**query, "cursor": cursor})
                    cursor = body["meta"]["nextCursor"]
        # Writes between rounds: what was kept, counted or anchored must not survive them.
        vendors = plain.get("/v1/vendors", query="perPage=200").json["data"]
        for vendor in rng.sample(vendors, 10):
            plain.patch(f"/v1/vendors/{vendor['id']}", {"criticality": rng.choice(CRITICALITY)})
        plain.post(f"/v1/vendors/{vendors[round_]['id']}/archive")
        plain.post("/v1/vendors", {"name": f"Late {round_}", "criticality": "critical"})
    assert checked >= 2 * len(LISTS) * 40
    assert isinstance(fast.app, falcon.App)
