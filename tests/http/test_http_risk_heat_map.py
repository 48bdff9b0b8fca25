"""/v1/risks/heat-map and /v1/risks/heat-map.svg over HTTP: the matrices as JSON
and as an SVG picture, the list's filters as query parameters, and their refusals."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import attrs

from compliance_core import Role
from compliance_core.areas.risks import RiskFilter
from compliance_core.kernel.rendering import wire_name
from http_support import Api, error

ROOT = "/v1/risks"


def create(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, {"title": "Laptop theft", **fields})
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def _cells(matrix: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    return {(c["likelihood"], c["impact"]): c["riskIds"] for c in matrix["cells"] if c["count"]}


def test_the_json_counts_each_cell_and_the_unassessed_apart(api: Api) -> None:
    high = create(api, likelihood="likely", impact="major", residualLikelihood=2, residualImpact=2)
    unrated = create(api, title="Unrated")
    answer = api.get(f"{ROOT}/heat-map")
    assert answer.status_code == 200, answer.text
    chart = answer.json
    assert set(chart) == {"total", "inherent", "residual"} and chart["total"] == 2
    inherent, residual = chart["inherent"], chart["residual"]
    assert set(inherent) == {"cells", "assessed", "unassessed", "unassessedRiskIds"}
    assert len(inherent["cells"]) == 25
    assert set(inherent["cells"][0]) == {"likelihood", "impact", "score", "level", "count", "riskIds"}
    assert _cells(inherent) == {("likely", "major"): [high["id"]]}
    assert _cells(residual) == {("unlikely", "minor"): [high["id"]]}
    assert (inherent["assessed"], inherent["unassessed"], inherent["unassessedRiskIds"]) == (1, 1, [unrated["id"]])
    assert sum(c["count"] for c in residual["cells"]) == residual["assessed"] == 1


def test_the_lists_filters_are_its_query_parameters(api: Api) -> None:
    fraud = create(api, title="Fraud", category="fraud", likelihood=5, impact=5)
    create(api, title="Outage", category="technology", likelihood=1, impact=2)
    archived = create(api, title="Old", likelihood=3, impact=3)
    api.post(f"{ROOT}/{archived['id']}/archive")
    chart = lambda query: api.get(f"{ROOT}/heat-map", query=query).json  # noqa: E731
    assert chart("category=fraud")["total"] == 1
    assert _cells(chart("category=fraud")["inherent"]) == {("very_likely", "severe"): [fraud["id"]]}
    assert chart("inherentLevel=very_high&status=open")["total"] == 1
    assert _cells(chart("archived=true")["inherent"]) == {("possible", "moderate"): [archived["id"]]}
    assert chart("rated=false")["total"] == 0 and chart("")["total"] == 2
    error(api.get(f"{ROOT}/heat-map", query="category=weather"), 400, "validation_error", "category")
    error(api.get(f"{ROOT}/heat-map", query="page=2"), 400, "validation_error", "page")  # not a paged list
    error(api.get(f"{ROOT}/heat-map.svg", query="rated=maybe"), 400, "validation_error", "rated")


def test_the_svg_is_shown_inline_and_filtered_like_the_json(api: Api) -> None:
    risk = create(api, category="fraud", likelihood=2, impact=4)
    create(api, category="technology", likelihood=5, impact=5)
    answer = api.get(f"{ROOT}/heat-map.svg", query="category=fraud")
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == "image/svg+xml"
    assert answer.headers["Content-Disposition"].startswith("inline")
    root = ET.fromstring(answer.content)
    counted = [
        (rect.get("data-likelihood"), rect.get("data-impact"))
        for group in root.iter("{http://www.w3.org/2000/svg}g")
        if group.get("data-matrix") == "inherent"
        for rect in group.iter("{http://www.w3.org/2000/svg}rect")
        if rect.get("data-count") == "1"
    ]
    assert counted == [("unlikely", "major")]
    assert risk["id"] in answer.text
    head = api.request("HEAD", f"{ROOT}/heat-map.svg")
    assert head.status_code == 200 and head.content == b"" and head.headers["Content-Type"] == "image/svg+xml"


def test_every_role_reads_it_and_sees_only_its_organization(api: Api, as_role: Any, other: Api) -> None:
    create(api, likelihood=1, impact=1)
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        assert as_role(role).get(f"{ROOT}/heat-map").json["total"] == 1
        assert as_role(role).get(f"{ROOT}/heat-map.svg").status_code == 200
    assert other.get(f"{ROOT}/heat-map").json["total"] == 0
    error(Api(api.app, None).get(f"{ROOT}/heat-map"), 401, "unauthorized")


def test_the_document_declares_both_with_the_lists_filters(api: Api) -> None:
    paths = api.get("/v1/openapi.json").json["paths"]
    listed = {p["name"] for p in paths[ROOT]["get"]["parameters"] if "name" in p}
    filters = {wire_name(field.name) for field in attrs.fields(RiskFilter)}
    assert filters <= listed
    for path in (f"{ROOT}/heat-map", f"{ROOT}/heat-map.svg"):  # the list's own, but its paging
        assert {p["name"] for p in paths[path]["get"]["parameters"] if "name" in p} == listed
    assert "image/svg+xml" in paths[f"{ROOT}/heat-map.svg"]["get"]["responses"]["200"]["content"]
    assert paths[f"{ROOT}/heat-map"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RiskHeatMap"
    }
