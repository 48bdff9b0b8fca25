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
Text is set in embedded Noto Sans and Noto Sans Arabic (``compliance_pdf.fonts``: any Latin,
Greek, Cyrillic or Arabic text prints as written, Arabic shaped and ordered by HarfBuzz; a block
holding right-to-left text prints without its inline bold and italic, as one run, since runs
written one after another would be ordered left to right). Tables
are drawn as tables (fpdf2's ``table``: ruled cells, a shaded header row, the columns' alignment
as the Markdown gives it); a table of more than ``MAX_COLUMNS`` columns has no room on an A4 page
and prints as written, like code, as does one of more than ``MAX_CELLS`` cells or with a row too
tall for a page. Each page is headed by the organization's name and logo.

This module lays the PDF out in the calling process; ``compliance_pdf.pool`` runs it on worker
processes with a time limit, which is what a server uses.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
from collections.abc import Sequence
from typing import Any

from fpdf import FPDF
from fpdf.fonts import FontFace

from compliance_core.areas.policies import PolicyDocument

from .fonts import SANS, Typeface, family, needs_shaping
from .markdown import Block, Span, blocks

__all__ = ["FpdfPolicies", "MAX_STYLE_MARKERS", "MAX_COLUMNS", "MAX_CELLS"]

log = logging.getLogger("compliance_pdf")

_SIZES = {1: 16, 2: 14, 3: 12, 4: 11, 5: 11, 6: 11}
MAX_STYLE_MARKERS = 2000
MAX_COLUMNS = 12
MAX_CELLS = 2000
_TABLE_SIZE = 10
_CELL_PADDING = 1.2
_ROW_LINES = 30
"""The most lines a table row may be estimated to take; a page holds about 45 at 5.5 mm each."""
_HEADER_HEIGHT = 10.0
_SHADE = (235, 235, 235)
_LINE = 6.0
_INDENT = 4.0
_NESTED = 6.0
_MARKER_WIDTH = 8.0
_MAX_DEPTH = 8
"""Lists nested deeper print at this depth's indent: the page has room for no more."""


class _Document(FPDF):
    """A policy PDF: every page headed by the organization's name and logo, footed by its number."""

    def __init__(self, typeface: Typeface) -> None:
        super().__init__(format="A4")
        self.typeface = typeface
        self.organization = ""
        self.logo: bytes | None = None
        typeface.install(self)

    def header(self) -> None:
        if not self.organization and not self.logo:
            return
        top = self.t_margin
        if self.logo is not None:
            try:
                self.image(
                    io.BytesIO(self.logo),
                    x=self.w - self.r_margin - 30,
                    y=top - 4,
                    w=30,
                    h=_HEADER_HEIGHT,
                    keep_aspect_ratio=True,
                )
            except Exception as error:  # a logo that will not decode must not cost the policy its PDF
                log.warning("the organization's logo could not be drawn: %r", error)
                self.logo = None
        self.set_text_color(90)
        self.typeface.shaping(self, self.organization)
        self.typeface.style(self, family(self.organization), size=9)
        self.set_xy(self.l_margin, top - 4)
        room, name = self.epw - 34, self.organization
        while len(name) > 1 and self.get_string_width(name) > room:  # a name is at most 200 characters
            name = name[: max(1, int(len(name) * room / self.get_string_width(name)) - 1)].rstrip() + "…"
        self.cell(room, _HEADER_HEIGHT, name)
        self.set_text_color(0)
        self.set_y(top + _HEADER_HEIGHT)

    def footer(self) -> None:
        self.set_y(-12)
        self.typeface.shaping(self, "")
        self.typeface.style(self, SANS, size=8)
        self.cell(0, 8, f"Page {self.page_no()}", align="C")


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value is not None else ""


def _approval(document: PolicyDocument) -> str:
    """The approval line, naming who signed and who issued the key that signed: an approval made
    with a key someone else bound to the approver reads differently from one made with their own."""
    if document.approved_at is None:
        return "Approved: at publication (published directly by a manager)"
    line = f"Approved: {_day(document.approved_at)}"
    if document.approved_by_person_name:
        line += f" by {document.approved_by_person_name} ({document.approved_by})"
    elif document.approved_by:
        line += f" by {document.approved_by}"
    if document.approval_key_issued_by:
        acting = document.approval_key_issued_by_person_id
        issuer = f"{document.approval_key_issued_by}, acting as {acting}" if acting else document.approval_key_issued_by
        line += f" (key issued by {issuer})"
    return line


_WARM_UP: dict[str, Any] = {
    "name": "**",
    "description": "",
    "version": 1,
    "content": "**Ż** *Ω* سلام\n\n| a |\n|---|\n| b |",
    "published_at": dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
    "organization": "-",
}


class FpdfPolicies:
    """The ``PolicyPdf`` port on fpdf2. The fonts are parsed once, when this is made (a worker
    makes one for its life), not per render."""

    def __init__(self) -> None:
        self.typeface = Typeface()
        # One render at start: the first one imports fontTools' subsetter and HarfBuzz and reads
        # the faces' tables, which would otherwise count against the first request's time limit.
        self.render("", [PolicyDocument(**_WARM_UP)], dt.datetime(2000, 1, 1, tzinfo=dt.UTC))

    def render(self, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> bytes:
        pdf = _Document(self.typeface)
        pdf.set_title(title)
        pdf.set_creator("compliance-platform")
        pdf.set_creation_date(generated_at)
        pdf.set_auto_page_break(auto=True, margin=18)
        if documents:
            pdf.organization, pdf.logo = documents[0].organization, documents[0].logo
        if len(documents) != 1:
            self._cover(pdf, title, documents, generated_at)
        for document in documents:
            pdf.organization, pdf.logo = document.organization, document.logo
            self._policy(pdf, document)
        return bytes(pdf.output())

    @staticmethod
    def _cover(pdf: _Document, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> None:
        pdf.add_page()
        _line(pdf, title, size=20, height=10, bold=True)
        _line(pdf, f"Generated {_day(generated_at)}", size=11, height=7)
        pdf.ln(4)
        if not documents:
            _line(pdf, "No policy is published.", size=11, height=7)
        for document in documents:
            line = f"- {document.name} (version {document.version}, published {_day(document.published_at)})"
            _line(pdf, line, size=11, height=7)

    @staticmethod
    def _policy(pdf: _Document, document: PolicyDocument) -> None:
        pdf.add_page()
        _line(pdf, document.name, size=20, height=10, bold=True)
        head = getattr(document, "head", None)  # a document of another kind (a task summary) gives its own lines
        for line in head or (
            f"Version {document.version}",
            f"Published: {_day(document.published_at)}",
            _approval(document),
        ):
            _line(pdf, line, size=10, height=6)
        if document.description:
            pdf.ln(2)
            _line(pdf, document.description, size=11, height=6, italic=True)
        pdf.ln(4)
        budget = MAX_STYLE_MARKERS
        for block in blocks(document.content):
            spans = block.spans
            if block.markers > budget:
                spans = (Span(block.source),)
            else:
                budget -= block.markers
            if len(spans) > 1 and needs_shaping(block.text):
                # each ``write`` orders its own right-to-left run, and the runs would follow each
                # other left to right: a block with such text is written as one run, unstyled
                spans = (Span(block.text),)
            name = family(block.source)
            pdf.typeface.shaping(pdf, block.source)
            if block.kind == "heading":
                assert isinstance(block.mark, int)
                pdf.ln(2)
                pdf.typeface.style(pdf, name, bold=True, size=_SIZES[block.mark])
                pdf.multi_cell(0, 8, block.text, new_x="LMARGIN", new_y="NEXT")
            elif block.kind == "item":
                left = pdf.l_margin
                pdf.typeface.style(pdf, name)
                pdf.set_x(left + _INDENT + _NESTED * min(block.depth, _MAX_DEPTH))
                pdf.cell(_MARKER_WIDTH, _LINE, str(block.mark))
                pdf.set_left_margin(pdf.get_x())
                try:
                    _write(pdf, name, spans)
                finally:
                    pdf.set_left_margin(left)
                pdf.ln(_LINE)
            elif block.kind == "table" and _fits(pdf, name, block):
                _table(pdf, name, block)
            elif block.kind in ("code", "table"):
                pdf.typeface.style(pdf, name, size=9.5)
                pdf.set_fill_color(*_SHADE)
                pdf.multi_cell(0, 5, block.source, new_x="LMARGIN", new_y="NEXT", fill=True)
                pdf.ln(2)
            else:
                _write(pdf, name, spans)
                pdf.ln(_LINE)
                pdf.ln(2)


def _line(pdf: _Document, text: str, *, size: float, height: float, bold: bool = False, italic: bool = False) -> None:
    """A line of the document's head (its own font and shaping: a name may be in any script)."""
    pdf.typeface.shaping(pdf, text)
    pdf.typeface.style(pdf, family(text), bold=bold, italic=italic, size=size)
    pdf.multi_cell(0, height, text, new_x="LMARGIN", new_y="NEXT")


def _fits(pdf: _Document, name: str, block: Block) -> bool:
    """Whether the table can be drawn as cells: at most ``MAX_COLUMNS`` columns and ``MAX_CELLS``
    cells (each cell costs fpdf2 about a millisecond: a larger table prints as written, in time
    linear in its text like the rest of the policy), and no row taller
    than ``_ROW_LINES`` lines, a generous estimate from each cell's width in the font (fpdf2 cannot
    break a row across pages and refuses a row taller than a page)."""
    columns = len(block.rows[0])
    if columns > MAX_COLUMNS or columns * len(block.rows) > MAX_CELLS:
        return False
    pdf.typeface.style(pdf, name, size=_TABLE_SIZE)
    room = pdf.epw / columns - 2 * _CELL_PADDING
    for cells in block.rows:
        for cell in cells:
            width = pdf.get_string_width(cell)
            if width / room * 1.5 + len(cell) / 40 + 1 > _ROW_LINES:  # with room for wrapping at words
                return False
    return True


def _table(pdf: _Document, name: str, block: Block) -> None:
    """A Markdown table as ruled cells: the header row shaded, each column aligned as written."""
    pdf.typeface.style(pdf, name, size=_TABLE_SIZE)
    aligns = tuple(str(block.mark or "")) or ("L",) * len(block.rows[0])
    with pdf.table(
        text_align=aligns,
        headings_style=FontFace(fill_color=_SHADE),
        line_height=5.5,
        padding=_CELL_PADDING,
    ) as table:
        for cells in block.rows:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    pdf.ln(3)


def _write(pdf: _Document, name: str, spans: tuple[Span, ...]) -> None:
    """The spans from the current position, wrapping at the margins, each in its own style.

    ``write`` breaks a line at a space inside the text it is given; a span whose first word does
    not fit on the line has no such space, and would be cut mid-word: it starts a new line."""
    for span in spans:
        text = span.text
        pdf.typeface.style(pdf, name, bold=span.bold, italic=span.italic)
        head = text.split(" ", 1)[0].split("\n", 1)[0]
        room = pdf.w - pdf.r_margin - pdf.get_x() - 2 * pdf.c_margin
        if head and pdf.get_x() > pdf.l_margin and pdf.get_string_width(head) > room:
            pdf.ln(_LINE)
        pdf.write(_LINE, text)
