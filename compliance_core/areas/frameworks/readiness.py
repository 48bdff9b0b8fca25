"""How ready an organization is for a framework: of the requirements it applies, the share whose
controls are implemented, counted from the framework's rows, and the same drawn as an SVG bar
for people who would rather look than read."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable

import attrs

from .control_models import ControlRequirement, ControlStatus

__all__ = ["Readiness", "readiness_of", "svg_of", "SVG"]

SVG = "image/svg+xml"


@attrs.frozen(kw_only=True)
class Readiness:
    framework_id: str
    name: str
    requirements: int
    applicable: int
    not_applicable: int
    implemented: int
    in_progress: int
    not_started: int
    stale: int
    share: float | None
    """Implemented over applicable (0 to 1), None when nothing is applicable."""


def readiness_of(framework_id: str, name: str, rows: Iterable[ControlRequirement]) -> Readiness:
    rows = list(rows)
    applied = [row for row in rows if row.applicable]
    counts = Counter(row.control_status for row in applied)
    implemented = counts[ControlStatus.IMPLEMENTED]
    return Readiness(
        framework_id=framework_id,
        name=name,
        requirements=len(rows),
        applicable=len(applied),
        not_applicable=len(rows) - len(applied),
        implemented=implemented,
        in_progress=counts[ControlStatus.IN_PROGRESS],
        not_started=counts[ControlStatus.NOT_STARTED],
        stale=counts[ControlStatus.STALE],
        share=round(implemented / len(applied), 4) if applied else None,
    )


_WIDTH, _HEIGHT, _BAR_TOP, _BAR_HEIGHT, _MARGIN = 640, 150, 56, 36, 20
_COLOURS = (
    ("implemented", "Implemented", "#2e7d32"),
    ("in_progress", "In progress", "#f9a825"),
    ("stale", "Stale", "#c62828"),
    ("not_started", "Not started", "#9e9e9e"),
)


def svg_of(readiness: Readiness) -> bytes:
    """One stacked bar of the applicable requirements by their controls' status, the share
    implemented as its headline and a legend with the counts (a standalone UTF-8 SVG)."""
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
    share = "no applicable requirement" if readiness.share is None else f"{readiness.share:.0%} ready"
    title = ET.SubElement(svg, "title")
    title.text = f"{readiness.name}: {share}"
    ET.SubElement(svg, "rect", {"width": "100%", "height": "100%", "fill": "#ffffff"})
    heading = ET.SubElement(
        svg, "text", {"x": str(_MARGIN), "y": "34", "font-family": "sans-serif", "font-size": "18", "fill": "#212121"}
    )
    heading.text = f"{readiness.name}: {share}"
    width = _WIDTH - 2 * _MARGIN
    left = float(_MARGIN)
    ET.SubElement(
        svg,
        "rect",
        {"x": str(_MARGIN), "y": str(_BAR_TOP), "width": str(width), "height": str(_BAR_HEIGHT), "fill": "#eeeeee"},
    )
    for index, (field, label, colour) in enumerate(_COLOURS):
        count = int(getattr(readiness, field))
        if readiness.applicable and count:
            part = width * count / readiness.applicable
            piece = ET.SubElement(
                svg,
                "rect",
                {
                    "x": f"{left:.2f}",
                    "y": str(_BAR_TOP),
                    "width": f"{part:.2f}",
                    "height": str(_BAR_HEIGHT),
                    "fill": colour,
                },
            )
            ET.SubElement(piece, "title").text = f"{label}: {count}"
            left += part
        x = _MARGIN + index * (width / len(_COLOURS))
        y = _BAR_TOP + _BAR_HEIGHT + 30
        ET.SubElement(svg, "rect", {"x": f"{x:.2f}", "y": str(y - 11), "width": "12", "height": "12", "fill": colour})
        legend = ET.SubElement(
            svg, "text", {"x": f"{x + 18:.2f}", "y": str(y), "font-family": "sans-serif", "font-size": "13"}
        )
        legend.text = f"{label}: {count}"
    footnote = ET.SubElement(
        svg,
        "text",
        {"x": str(_MARGIN), "y": str(_HEIGHT - 12), "font-family": "sans-serif", "font-size": "12", "fill": "#616161"},
    )
    footnote.text = (
        f"{readiness.applicable} applicable of {readiness.requirements} requirements "
        f"({readiness.not_applicable} not applicable)"
    )
    body: bytes = ET.tostring(svg, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + body
