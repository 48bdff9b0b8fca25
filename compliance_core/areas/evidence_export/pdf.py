"""A task's summary as a PDF, through the PDF port policies use.

Core draws no PDF: the renderer is the ``compliance.pdf`` entry point (``compliance_pdf``, on
fpdf2, run on worker processes with a time limit). It lays out documents of Markdown under a
head; a task summary is such a document, whose head lines are its own (``head``) instead of a
policy's version and approval lines. The renderer is deterministic: the same document and date
give the same bytes, which an export's reproducibility relies on.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import re
from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from ...kernel.errors import InternalError

__all__ = ["SummaryDocument", "SummaryPdf", "load_renderer", "markdown_text", "cell"]

PDF_ENTRY_POINTS = "compliance.pdf"


@attrs.frozen(kw_only=True)
class SummaryDocument:
    """What the renderer reads of a document (the fields a policy document has), with ``head``."""

    name: str
    description: str = ""
    version: int = 1
    content: str
    """Markdown."""
    published_at: dt.datetime
    approved_at: dt.datetime | None = None
    approved_by: str | None = None
    approved_by_person_name: str | None = None
    approval_key_issued_by: str | None = None
    approval_key_issued_by_person_id: str | None = None
    organization: str = ""
    logo: bytes | None = None
    head: tuple[str, ...] = ()
    """The lines printed under the name (a policy prints its version and approval there)."""


class SummaryPdf(Protocol):
    def render(self, title: str, documents: Sequence[Any], generated_at: dt.datetime) -> bytes: ...


def load_renderer() -> SummaryPdf:
    """The installed renderer (the first ``compliance.pdf`` entry point)."""
    for entry in importlib.metadata.entry_points(group=PDF_ENTRY_POINTS):
        renderer: SummaryPdf = entry.load()()
        return renderer
    raise InternalError("no PDF renderer is installed (entry point group compliance.pdf)")


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


def markdown_text(value: object) -> str:
    """``value`` as literal Markdown text: its markup characters escaped, on one line."""
    return _MARKDOWN.sub(r"\\\1", " ".join(str(value).split()))


def cell(value: object) -> str:
    """A table cell's text (an empty cell reads as a dash)."""
    text = markdown_text(value) if value not in (None, "") else ""
    return text or "-"
