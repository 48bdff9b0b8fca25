"""Policies as PDF: a cover listing the set when there are several, then each policy on its own
pages: its name, version, publication and approval dates, description and Markdown text.

The Markdown read is the part policies use: ``#`` headings, paragraphs, ``-``/``*``/``+`` and
numbered lists, ``**bold**`` and ``__italic__`` inline. Inline styles are read for the first
``MAX_STYLE_MARKERS`` style markers of a policy; a paragraph or item that would go past them is
printed as it is written, markers included. fpdf2 measures every styled fragment of a line again
for each character it adds: 100,000 characters of ``**a** __b__`` took 12 s (one server thread
held for it), in one paragraph or in 500, against 2 s for plain prose. The built-in PDF fonts cover Latin-1;
typographic punctuation is mapped to its plain form and anything else outside Latin-1 shows as
``?`` (no font file is shipped).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from typing import Any

from fpdf import FPDF

from compliance_core.areas.policies import PolicyDocument

__all__ = ["FpdfPolicies", "blocks", "MAX_STYLE_MARKERS"]

_PLAIN = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
        "\u2022": "-",
        "\u00a0": " ",
        "\u2192": "->",
    }
)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,9})[.)]\s+(.*)$")
_SIZES = {1: 16, 2: 14, 3: 12, 4: 11, 5: 11, 6: 11}
MAX_STYLE_MARKERS = 2000
_MARKERS = re.compile("|".join(re.escape(marker) for marker in FPDF.MARKDOWN_MARKERS))


def _latin(text: str) -> str:
    return text.translate(_PLAIN).encode("latin-1", "replace").decode("latin-1")


def blocks(markdown: str) -> Iterator[tuple[str, Any, str]]:
    """The Markdown as ``(kind, level or marker, text)``: ``heading`` (level 1-6), ``item``
    (its marker: ``-`` or ``3.``) and ``paragraph`` (lines joined)."""
    paragraph: list[str] = []

    def flush() -> Iterator[tuple[str, Any, str]]:
        if paragraph:
            yield "paragraph", None, " ".join(paragraph)
            paragraph.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        heading = _HEADING.match(line)
        bullet = _BULLET.match(raw)
        numbered = _NUMBERED.match(raw)
        if not line:
            yield from flush()
        elif heading:
            yield from flush()
            yield "heading", len(heading[1]), heading[2]
        elif bullet and not re.fullmatch(r"[-*_\s]{3,}", line):
            yield from flush()
            yield "item", "-", bullet[1]
        elif numbered:
            yield from flush()
            yield "item", f"{numbered[1]}.", numbered[2]
        elif re.fullmatch(r"[-*_\s]{3,}", line):
            yield from flush()
        else:
            paragraph.append(line)
    yield from flush()


class _Document(FPDF):
    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 8, f"Page {self.page_no()}", align="C")


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value is not None else ""


class FpdfPolicies:
    """The ``PolicyPdf`` port on fpdf2."""

    def render(self, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> bytes:
        pdf = _Document(format="A4")
        pdf.set_title(_latin(title))
        pdf.set_creator("compliance-platform")
        pdf.set_creation_date(generated_at)
        pdf.set_auto_page_break(auto=True, margin=18)
        if len(documents) != 1:
            self._cover(pdf, title, documents, generated_at)
        for document in documents:
            self._policy(pdf, document)
        return bytes(pdf.output())

    @staticmethod
    def _cover(pdf: FPDF, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> None:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 20)
        pdf.multi_cell(0, 10, _latin(title), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(0, 7, f"Generated {_day(generated_at)}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
        if not documents:
            pdf.multi_cell(0, 7, "No policy is published.", new_x="LMARGIN", new_y="NEXT")
        for document in documents:
            line = f"- {document.name} (version {document.version}, published {_day(document.published_at)})"
            pdf.multi_cell(0, 7, _latin(line), new_x="LMARGIN", new_y="NEXT")

    @staticmethod
    def _policy(pdf: FPDF, document: PolicyDocument) -> None:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 20)
        pdf.multi_cell(0, 10, _latin(document.name), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        approval = (
            f"Approved: {_day(document.approved_at)}"
            if document.approved_at is not None
            else "Approved: at publication (published directly by a manager)"
        )
        for line in (f"Version {document.version}", f"Published: {_day(document.published_at)}", approval):
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
        if document.description:
            pdf.ln(2)
            pdf.set_font("Helvetica", "I", 11)
            pdf.multi_cell(0, 6, _latin(document.description), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
        budget = MAX_STYLE_MARKERS

        def styled(text: str) -> bool:
            nonlocal budget
            markers = len(_MARKERS.findall(text))
            if markers > budget:
                return False
            budget -= markers
            return True

        for kind, mark, text in blocks(document.content):
            if kind == "heading":
                pdf.ln(2)
                pdf.set_font("Helvetica", "B", _SIZES[mark])
                pdf.multi_cell(0, 8, _latin(text), new_x="LMARGIN", new_y="NEXT")
            elif kind == "item":
                pdf.set_font("Helvetica", "", 11)
                pdf.set_x(pdf.l_margin + 4)
                pdf.cell(8, 6, mark)
                pdf.multi_cell(0, 6, _latin(text), markdown=styled(text), new_x="LMARGIN", new_y="NEXT")
            else:
                pdf.set_font("Helvetica", "", 11)
                pdf.multi_cell(0, 6, _latin(text), markdown=styled(text), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
