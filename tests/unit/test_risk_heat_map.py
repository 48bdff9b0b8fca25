"""The risk heat map in-process: risks counted per likelihood x impact cell, inherent and residual,
the unassessed apart, the list's filters applied; and its SVG picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import Role, ValidationError
from compliance_core.areas.risks import NewRisk, RiskFilter, RiskPatch
from compliance_core.areas.risks.heat_map import SVG, heat_map_of
from compliance_core.kernel.scales import Impact, Likelihood

_SVG = "{http://www.w3.org/2000/svg}"


def _cell(matrix, likelihood: str, impact: str):
    return next(c for c in matrix.cells if (c.likelihood, c.impact) == (likelihood, impact))


def test_each_risk_sits_in_the_cell_of_its_ratings_and_the_unassessed_apart(platform, owner) -> None:
    create = lambda **f: platform.risks.create(owner, NewRisk(title=f.pop("title", "Risk"), **f))  # noqa: E731
    high = create(likelihood="likely", impact="major", residual_likelihood="unlikely", residual_impact="minor")
    twin = create(likelihood=4, impact=4)  # the same cell by numbers; residual not rated
    unrated = create()
    half = create(likelihood="possible")  # one rating is not an assessment

    chart = platform.risks.heat_map(owner)
    assert chart.total == 4
    assert len(chart.inherent.cells) == len(chart.residual.cells) == 25
    likely_major = _cell(chart.inherent, "likely", "major")
    assert (likely_major.count, likely_major.risk_ids, likely_major.score, likely_major.level) == (
        2,
        (high.id, twin.id),
        16,
        "high",
    )
    assert (chart.inherent.assessed, chart.inherent.unassessed) == (2, 2)
    assert chart.inherent.unassessed_risk_ids == (unrated.id, half.id)
    assert _cell(chart.inherent, "very_unlikely", "insignificant").count == 0  # unassessed is not lowest
    assert _cell(chart.residual, "unlikely", "minor").risk_ids == (high.id,)
    assert (chart.residual.assessed, chart.residual.unassessed) == (1, 3)
    assert [(c.likelihood, c.impact) for c in chart.inherent.cells][:6] == [
        *((Likelihood.VERY_UNLIKELY, impact) for impact in Impact),
        (Likelihood.UNLIKELY, Impact.INSIGNIFICANT),
    ]

    platform.risks.update(owner, twin.id, RiskPatch(likelihood=None))
    assert platform.risks.heat_map(owner).inherent.unassessed_risk_ids == (twin.id, unrated.id, half.id)


def test_the_lists_filters_choose_the_risks(platform, owner) -> None:
    fraud = platform.risks.create(owner, NewRisk(title="Fraud", category="fraud", likelihood=5, impact=5))
    platform.risks.create(owner, NewRisk(title="Outage", category="technology", likelihood=2, impact=3))
    archived = platform.risks.create(owner, NewRisk(title="Old", likelihood=1, impact=1))
    platform.risks.archive(owner, archived.id)

    assert platform.risks.heat_map(owner).total == 2  # the live register by default
    only_fraud = platform.risks.heat_map(owner, RiskFilter(category="fraud"))
    assert only_fraud.total == 1 and _cell(only_fraud.inherent, "very_likely", "severe").risk_ids == (fraud.id,)
    assert platform.risks.heat_map(owner, RiskFilter(inherent_level="very_high")).total == 1
    assert platform.risks.heat_map(owner, RiskFilter(archived=True)).inherent.cells[0].risk_ids == (archived.id,)
    assert platform.risks.heat_map(owner, RiskFilter(rated=False)).total == 0
    with pytest.raises(ValidationError) as caught:
        RiskFilter(category="weather")
    assert caught.value.details["field"] == "category"


def test_every_role_reads_it_and_only_its_organizations_risks(platform, owner, actor_as, other_org) -> None:
    platform.risks.create(owner, NewRisk(title="Ours", likelihood=3, impact=3))
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        assert platform.risks.heat_map(actor_as(role)).total == 1
    assert platform.risks.heat_map(other_org).total == 0
    assert platform.risks.heat_map_svg(actor_as(Role.AUDITOR)).media_type == SVG


def test_the_svg_draws_both_matrices_with_counts_levels_and_the_unassessed(platform, owner) -> None:
    risk = platform.risks.create(owner, NewRisk(title="<Laptop & co>", likelihood=5, impact=1))
    platform.risks.create(owner, NewRisk(title="Unrated"))
    picture = platform.risks.heat_map_svg(owner)
    assert (picture.media_type, picture.filename, picture.inline) == (SVG, "risk-heat-map.svg", True)
    root = ET.fromstring(picture.read())  # well-formed XML
    assert root.tag == f"{_SVG}svg"
    inherent, residual = root.findall(f"{_SVG}g")
    assert (inherent.get("data-matrix"), residual.get("data-matrix")) == ("inherent", "residual")
    cells = inherent.findall(f"{_SVG}rect")
    assert len(cells) == 25
    filled = [c for c in cells if c.get("data-count") != "0"]
    assert [(c.get("data-likelihood"), c.get("data-impact"), c.get("data-count")) for c in filled] == [
        ("very_likely", "insignificant", "1")
    ]
    assert risk.id in filled[0].findtext(f"{_SVG}title")
    assert filled[0].get("fill") == "#fee08b"  # score 5: medium
    texts = ["".join(t.itertext()) for t in inherent.iter(f"{_SVG}text")]
    assert "assessed: 1 \u00b7 unassessed (not in a cell): 1" in texts
    assert ["".join(t.itertext()) for t in residual.iter(f"{_SVG}text") if t.get("class") == "unassessed"] == [
        "assessed: 0 \u00b7 unassessed (not in a cell): 2"
    ]


ratings = st.one_of(st.none(), st.integers(1, 5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(ratings, ratings, ratings, ratings), max_size=30))
def test_the_cells_counts_sum_to_the_assessed_risks(platform, rows) -> None:
    """Whatever the ratings: in each matrix the cells' counts add up to the risks rated in full,
    each risk id is in exactly one cell or among the unassessed, and the unassessed are those
    with a rating of the pair missing."""
    actor = platform.actor(platform.bootstrap("Heat map").organization.id)
    made = [
        platform.risks.create(
            actor,
            NewRisk(title=f"Risk {n}", likelihood=a, impact=b, residual_likelihood=c, residual_impact=d),
        )
        for n, (a, b, c, d) in enumerate(rows)
    ]
    chart = platform.risks.heat_map(actor)
    assert chart.total == len(made)
    for matrix, pair in ((chart.inherent, (0, 1)), (chart.residual, (2, 3))):
        rated = [r.id for r, row in zip(made, rows, strict=True) if None not in (row[pair[0]], row[pair[1]])]
        assert sum(cell.count for cell in matrix.cells) == matrix.assessed == len(rated)
        assert matrix.assessed + matrix.unassessed == len(made)
        placed = [risk_id for cell in matrix.cells for risk_id in cell.risk_ids]
        assert sorted(placed) == sorted(rated)
        assert sorted(placed + list(matrix.unassessed_risk_ids)) == sorted(r.id for r in made)
        assert all(cell.count == len(cell.risk_ids) for cell in matrix.cells)
    assert heat_map_of(made) == chart
