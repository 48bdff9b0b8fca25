"""Policies as PDF: a cover listing the set when there are several, then each policy on its own
pages: its name, version, publication and approval dates, description and Markdown text.

The Markdown is parsed by ``compliance_pdf.markdown`` (markdown-it-py: linear time on any input)
and printed as headings, paragraphs, bulleted and numbered items, code as written, and bold and
italic inline. Each run of one style is written with its own font (``FPDF.write``), so fpdf2's
own Markdown mode, with its link and marker rules, never reads a policy's text.

Inline styles are applied for the first ``MAX_STYLE_MARKERS`` style changes of a policy; a block
that would go past them is printed as it is written, markers included. Every styled run costs a
font switch and a line-break pass of its own, so dense markup costs far more than prose (with
fpdf2's Markdown mode, 100,000 characters of ``**a** __b__`` held a server thread for 12 s
against 2 s for plain prose); the budget keeps a policy's cost close to that of its plain text.
The built-in PDF fonts cover Latin-1; typographic punctuation is mapped to its plain form and
anything else outside Latin-1 shows as ``?`` (no font file is shipped).

This module lays the PDF out in the calling process; ``compliance_pdf.pool`` runs it on worker
processes with a time limit, which is what a server uses.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from fpdf import FPDF

from compliance_core.areas.policies import PolicyDocument

from .markdown import Span, blocks

__all__ = ["FpdfPolicies", "MAX_STYLE_MARKERS"]

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
_SIZES = {1: 16, 2: 14, 3: 12, 4: 11, 5: 11, 6: 11}
MAX_STYLE_MARKERS = 2000
_LINE = 6.0
_INDENT = 4.0
_NESTED = 6.0
_MARKER_WIDTH = 8.0
_MAX_DEPTH = 8
"""Lists nested deeper print at this depth's indent: the page has room for no more."""


def _latin(text: str) -> str:
    return text.translate(_PLAIN).encode("latin-1", "replace").decode("latin-1")


class _Document(FPDF):
    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 8, f"Page {self.page_no()}", align="C")


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value is not None else ""


def _approval(document: PolicyDocument) -> str:
    """The approval line, naming who signed and who issued the key that signed: an approval made
    with a key someone else bound to the approver reads differently from one made with their own."""
    if document.approved_at is None:
        return "Approved: at publication (published directly by a manager)"
    line = f"Approved: {_day(document.approved_at)}"
    if document.approved_by:
        line += f" by {document.approved_by}"
    if document.approval_key_issued_by:
        acting = document.approval_key_issued_by_person_id
        issuer = f"{document.approval_key_issued_by}, acting as {acting}" if acting else document.approval_key_issued_by
        line += f" (key issued by {issuer})"
    return line


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
        for line in (f"Version {document.version}", f"Published: {_day(document.published_at)}", _approval(document)):
            pdf.multi_cell(0, 6, _latin(line), new_x="LMARGIN", new_y="NEXT")
        if document.description:
            pdf.ln(2)
            pdf.set_font("Helvetica", "I", 11)
            pdf.multi_cell(0, 6, _latin(document.description), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
        budget = MAX_STYLE_MARKERS
        for block in blocks(document.content):
            spans = block.spans
            if block.markers > budget:
                spans = (Span(block.source),)
            else:
                budget -= block.markers
            if block.kind == "heading":
                assert isinstance(block.mark, int)
                pdf.ln(2)
                pdf.set_font("Helvetica", "B", _SIZES[block.mark])
                pdf.multi_cell(0, 8, _latin(block.text), new_x="LMARGIN", new_y="NEXT")
            elif block.kind == "item":
                left = pdf.l_margin
                pdf.set_font("Helvetica", "", 11)
                pdf.set_x(left + _INDENT + _NESTED * min(block.depth, _MAX_DEPTH))
                pdf.cell(_MARKER_WIDTH, _LINE, str(block.mark))
                pdf.set_left_margin(pdf.get_x())
                try:
                    _write(pdf, spans)
                finally:
                    pdf.set_left_margin(left)
                pdf.ln(_LINE)
            elif block.kind == "code":
                pdf.set_font("Courier", "", 10)
                pdf.multi_cell(0, 5, _latin(block.source), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            else:
                _write(pdf, spans)
                pdf.ln(_LINE)
                pdf.ln(2)


def _write(pdf: FPDF, spans: tuple[Span, ...]) -> None:
    """The spans from the current position, wrapping at the margins, each in its own style.

    ``write`` breaks a line at a space inside the text it is given; a span whose first word does
    not fit on the line has no such space, and would be cut mid-word: it starts a new line."""
    for span in spans:
        text = _latin(span.text)
        pdf.set_font("Helvetica", ("B" if span.bold else "") + ("I" if span.italic else ""), 11)
        head = text.split(" ", 1)[0].split("\n", 1)[0]
        room = pdf.w - pdf.r_margin - pdf.get_x() - 2 * pdf.c_margin
        if head and pdf.get_x() > pdf.l_margin and pdf.get_string_width(head) > room:
            pdf.ln(_LINE)
        pdf.write(_LINE, text)
