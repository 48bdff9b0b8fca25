"""The register's heat map: how many risks sit in each likelihood x impact cell, before treatment
(inherent) and after (residual), as data and as an SVG picture of the two matrices.

A risk whose pair is not rated in full is unassessed for that matrix: it is counted apart, never
in a cell (placing it in the lowest cell would show an unknown risk as the smallest one). So in
each matrix the cells' counts add up to the assessed risks, and assessed + unassessed is every
risk the filters matched.

The risks are those ``GET /v1/risks`` lists with the same parameters: the list's filters, its
``q`` and its ``from``/``to`` (the operations declare ``lists=RISKS``, so the HTTP layer parses
and documents them as it does for the list), and ``total`` is that list's ``meta.total``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence

import attrs

from ...kernel.pages import MAX_PER_PAGE, Page, PageRequest
from ...kernel.registry import Session
from ...kernel.scales import Impact, Likelihood, RiskLevel, level, score
from .models import RISKS, Risk, RiskFilter

__all__ = ["HeatMapCell", "HeatMap", "RiskHeatMap", "heat_map_of", "matching_risks", "svg_of", "SVG"]

SVG = "image/svg+xml"


@attrs.frozen(kw_only=True)
class HeatMapCell:
    """One cell of a matrix: a likelihood, an impact, the score and level they make, and the risks
    rated so (their ids in the list's order, oldest first, or in the order ``sort`` asks)."""

    likelihood: Likelihood
    impact: Impact
    score: int
    level: RiskLevel
    count: int
    risk_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class HeatMap:
    """One matrix: its 25 cells, likelihood by likelihood from ``very_unlikely`` and, within one,
    impact from ``insignificant``; the risks rated in full (``assessed``, the sum of the cells'
    counts) and those that are not (``unassessed``, with their ids)."""

    cells: tuple[HeatMapCell, ...]
    assessed: int
    unassessed: int
    unassessed_risk_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class RiskHeatMap:
    """The inherent and residual matrices of the risks the filters matched (``total``)."""

    total: int
    inherent: HeatMap
    residual: HeatMap


def matching_risks(
    session: Session, organization_id: str, filters: RiskFilter, search: PageRequest | None = None
) -> Iterator[Risk]:
    """Every risk of the organization the filters and ``search`` match (the list's ``q``, range
    and sort; its page and size are not used), in the list's order or the sort's: the very risks
    ``GET /v1/risks`` pages through with the same parameters. Read as a cursor walk within the
    caller's one transaction, so the matrices add up to one state of the register."""
    first = PageRequest.walking(MAX_PER_PAGE, **({} if search is None else search.search))
    RISKS.listing.check(first)
    request: PageRequest | None = first
    total: int | None = None  # counted with the first page; the same snapshot's for the others
    while request is not None:
        items, total = session[RISKS].list(organization_id, filters, request, total)
        yield from items
        request = Page.of(items, total, request).next_request


def _matrix(pairs: Sequence[tuple[str, Likelihood | None, Impact | None]]) -> HeatMap:
    placed: dict[tuple[Likelihood, Impact], list[str]] = {(li, im): [] for li in Likelihood for im in Impact}
    unassessed: list[str] = []
    for risk_id, likelihood, impact in pairs:
        if likelihood is None or impact is None:
            unassessed.append(risk_id)
        else:
            placed[likelihood, impact].append(risk_id)
    cells = tuple(
        HeatMapCell(
            likelihood=likelihood,
            impact=impact,
            score=score(likelihood, impact),
            level=level(score(likelihood, impact)),
            count=len(ids),
            risk_ids=tuple(ids),
        )
        for (likelihood, impact), ids in placed.items()
    )
    return HeatMap(
        cells=cells,
        assessed=len(pairs) - len(unassessed),
        unassessed=len(unassessed),
        unassessed_risk_ids=tuple(unassessed),
    )


def heat_map_of(risks: Iterable[Risk]) -> RiskHeatMap:
    """The two matrices of ``risks``."""
    kept = list(risks)
    return RiskHeatMap(
        total=len(kept),
        inherent=_matrix([(r.id, r.likelihood, r.impact) for r in kept]),
        residual=_matrix([(r.id, r.residual_likelihood, r.residual_impact) for r in kept]),
    )


# -- the picture -----------------------------------------------------------------------------------

_FILL = {
    RiskLevel.VERY_LOW: "#1a9850",
    RiskLevel.LOW: "#91cf60",
    RiskLevel.MEDIUM: "#fee08b",
    RiskLevel.HIGH: "#fc8d59",
    RiskLevel.VERY_HIGH: "#d73027",
}
"""The reference platform's bands, green to red."""
_CELL_WIDTH, _CELL_HEIGHT = 96, 64
_LEFT, _TOP, _GAP = 120, 56, 48
_GRID_WIDTH = _LEFT + 5 * _CELL_WIDTH
_WIDTH = 2 * _GRID_WIDTH + _GAP + 16
_HEIGHT = _TOP + 5 * _CELL_HEIGHT + 96
_FONT = "font-family:sans-serif;font-size:13px"


def _label(value: str) -> str:
    return value.replace("_", " ")


def _text(parent: ET.Element, x: float, y: float, content: str, **style: str) -> ET.Element:
    element = ET.SubElement(parent, "text", {"x": f"{x:g}", "y": f"{y:g}", **style})
    element.text = content
    return element


def _draw(svg: ET.Element, title: str, matrix: HeatMap, left: int) -> None:
    group = ET.SubElement(svg, "g", {"class": "heat-map", "data-matrix": title.lower()})
    _text(group, left + _LEFT, 24, title, style="font-family:sans-serif;font-size:16px;font-weight:bold")
    by_place = {(cell.likelihood, cell.impact): cell for cell in matrix.cells}
    for row, likelihood in enumerate(reversed(Likelihood)):  # the most likely on top
        y = _TOP + row * _CELL_HEIGHT
        _text(
            group,
            left + _LEFT - 8,
            y + _CELL_HEIGHT / 2 + 4,
            _label(likelihood.value),
            style=_FONT,
            **{"text-anchor": "end"},
        )
        for column, impact in enumerate(Impact):
            cell = by_place[likelihood, impact]
            x = left + _LEFT + column * _CELL_WIDTH
            box = ET.SubElement(
                group,
                "rect",
                {
                    "x": str(x),
                    "y": str(y),
                    "width": str(_CELL_WIDTH),
                    "height": str(_CELL_HEIGHT),
                    "fill": _FILL[cell.level],
                    "stroke": "#ffffff",
                    "stroke-width": "2",
                    "data-likelihood": likelihood.value,
                    "data-impact": impact.value,
                    "data-count": str(cell.count),
                },
            )
            tip = ET.SubElement(box, "title")
            tip.text = (
                f"{_label(likelihood.value)} x {_label(impact.value)} (score {cell.score}, {_label(cell.level.value)}): "
                + (", ".join(cell.risk_ids) if cell.risk_ids else "no risk")
            )
            if cell.count:
                _text(
                    group,
                    x + _CELL_WIDTH / 2,
                    y + _CELL_HEIGHT / 2 + 6,
                    str(cell.count),
                    style="font-family:sans-serif;font-size:18px;font-weight:bold",
                    **{"text-anchor": "middle"},
                )
    bottom = _TOP + 5 * _CELL_HEIGHT
    for column, impact in enumerate(Impact):
        middle = left + _LEFT + column * _CELL_WIDTH + _CELL_WIDTH / 2
        _text(group, middle, bottom + 18, _label(impact.value), style=_FONT, **{"text-anchor": "middle"})
    _text(group, left + _LEFT + 5 * _CELL_WIDTH / 2, bottom + 40, "impact", style=_FONT, **{"text-anchor": "middle"})
    _text(group, left + 8, _TOP - 10, "likelihood", style=_FONT)
    summary = f"assessed: {matrix.assessed} \u00b7 unassessed (not in a cell): {matrix.unassessed}"
    _text(group, left + _LEFT, bottom + 70, summary, style=_FONT, **{"class": "unassessed"})


def svg_of(chart: RiskHeatMap) -> bytes:
    """The two matrices side by side as a standalone SVG document (UTF-8): each cell coloured by
    its level, showing its count, with the risk ids as its tooltip; the unassessed counted below."""
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": str(_WIDTH),
            "height": str(_HEIGHT),
            "viewBox": f"0 0 {_WIDTH} {_HEIGHT}",
            "role": "img",
        },
    )
    label = ET.SubElement(svg, "title")
    label.text = f"Risk heat map: {chart.total} risk(s), inherent and residual"
    ET.SubElement(svg, "rect", {"width": "100%", "height": "100%", "fill": "#ffffff"})
    _draw(svg, "Inherent", chart.inherent, 0)
    _draw(svg, "Residual", chart.residual, _GRID_WIDTH + _GAP)
    body: bytes = ET.tostring(svg, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + body
