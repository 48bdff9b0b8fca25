"""The risk heat map takes the list's ``q`` and ``from``/``to`` beside its filters (issue 18), on
every store: for the same query its ``total`` is ``GET /v1/risks``'s ``meta.total`` and its cells
hold exactly the risks that list pages through, and the document shows the parameters."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from compliance_core import FrozenClock, PageRequest, Platform, Role, SequentialIds
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.risks import NewRisk, RiskFilter
from compliance_core.client import Client, LocalTransport
from compliance_core.kernel.permissions import Actor
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport
from compliance_store.memory import MemoryStore
from http_support import Api, error

pytestmark = pytest.mark.every_store

ROOT = "/v1/risks"
QUERIES = [
    "",
    "q=fraud",
    "q=FRAUD&category=fraud",
    "q=ou",
    "q=zz",
    "q=o&sort=-title",
    "from=2026-01-03T00:00:00Z",
    "to=2026-01-03T00:00:00Z",
    "from=2026-01-02T00:00:00Z&to=2026-01-04T00:00:00Z&q=t",
    "archived=true&q=old",
    "q=%C5%81%C3%B3d%C5%BA",  # Łódź, folded as the list folds it
]


@pytest.fixture
def register(api: Api, clock: FrozenClock) -> None:
    """Risks on five days, rated or not, one archived."""
    risks = [
        {"title": "Fraud in payments", "category": "fraud", "likelihood": 5, "impact": 5},
        {"title": "Outage of the ŁÓDŹ office", "category": "technology", "likelihood": 1, "impact": 2},
        {"title": "Laptop theft", "description": "fraudulent resale", "likelihood": 3, "impact": 3},
        {"title": "Unrated thought"},
        {"title": "Old routing", "likelihood": 2, "impact": 2},
    ]
    for fields in risks:
        clock.advance(days=1)
        made = api.post(ROOT, fields)
        assert made.status_code == 201, made.text
    api.post(f"{ROOT}/{made.json['id']}/archive")


def _listed(api: Api, query: str) -> tuple[int, set[str]]:
    answer = api.get(ROOT, query="&".join(part for part in (query, "perPage=200") if part))
    assert answer.status_code == 200, answer.text
    return answer.json["meta"]["total"], {risk["id"] for risk in answer.json["data"]}


def _mapped(chart: dict[str, Any]) -> set[str]:
    matrix = chart["inherent"]
    return {risk_id for cell in matrix["cells"] for risk_id in cell["riskIds"]} | set(matrix["unassessedRiskIds"])


@pytest.mark.parametrize("query", QUERIES)
def test_the_heat_map_counts_the_risks_the_list_has(api: Api, register: None, query: str) -> None:
    total, ids = _listed(api, query)
    answer = api.get(f"{ROOT}/heat-map", query=query)
    assert answer.status_code == 200, answer.text
    chart = answer.json
    assert chart["total"] == total
    assert _mapped(chart) == ids
    assert chart["residual"]["assessed"] + chart["residual"]["unassessed"] == total


def test_the_searches_narrow_the_map(api: Api, register: None) -> None:
    assert api.get(f"{ROOT}/heat-map").json["total"] == 4
    assert api.get(f"{ROOT}/heat-map", query="q=fraud").json["total"] == 2  # a title and a description
    assert api.get(f"{ROOT}/heat-map", query="from=2026-01-03T00:00:00Z").json["total"] == 3


def test_the_svg_draws_the_searched_risks(api: Api, register: None) -> None:
    answer = api.get(f"{ROOT}/heat-map.svg", query="q=laptop")
    assert answer.status_code == 200, answer.text
    assert "Risk heat map: 1 risk(s)" in answer.text


def test_bad_search_parameters_are_refused_as_on_the_list(api: Api) -> None:
    error(api.get(f"{ROOT}/heat-map", query="from=yesterday"), 400, "validation_error", "from")
    error(api.get(f"{ROOT}/heat-map.svg", query="sort=secret"), 400, "validation_error", "sort")
    error(api.get(f"{ROOT}/heat-map", query="q=" + "x" * 201), 400, "validation_error", "q")


def test_the_document_shows_the_search_parameters(api: Api) -> None:
    paths = api.get("/v1/openapi.json").json["paths"]
    for path in (f"{ROOT}/heat-map", f"{ROOT}/heat-map.svg"):
        names = {p["name"] for p in paths[path]["get"]["parameters"] if "name" in p}
        assert {"q", "from", "to", "category"} <= names
        assert not {"page", "perPage"} & names


def test_both_transports_send_the_search_and_agree() -> None:
    """In-process and over HTTP, the client's ``search=`` reaches the heat map, and the API key
    list's ``q`` and ``sort`` reach the list, with the same answers."""
    answers = []
    for remote in (False, True):
        platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
        boot = platform.bootstrap("Acme")
        if remote:
            transport = httpx.WSGITransport(app=create_app(platform))
            client = Client(HTTPTransport("http://testserver", boot.owner_key.secret or "", transport=transport))
        else:
            actor = Actor(organization_id=boot.organization.id, role=Role.OWNER, key_id=boot.owner_key.key.id)
            client = Client(LocalTransport(platform, actor))
        for title in ("Fraud in payments", "Outage", "Card fraud"):
            client.risks.create(NewRisk(title=title, likelihood=2, impact=2))
        client.api_keys.create(NewApiKey(name="backup job", role="auditor"))
        chart = client.risks.heat_map(RiskFilter(), search=PageRequest(q="FRAUD"))
        keys = client.api_keys.list(page=PageRequest(q="backup", sort="-name"))
        answers.append((chart.total, [c.count for c in chart.inherent.cells], [k.name for k in keys.items]))
    assert answers[0] == answers[1]
    assert answers[0][0] == 2 and answers[0][2] == ["backup job"]
