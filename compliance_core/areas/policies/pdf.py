"""The PDF port: what a policy document holds, and the renderer that lays it out.

Core does not draw PDFs: a renderer is an adapter (``compliance_pdf``, on fpdf2) found through
the ``compliance.pdf`` entry point, the way stores are found by URL scheme, so core imports no
PDF library and a deployment can swap the layout.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
from collections.abc import Sequence
from typing import Protocol

import attrs

from ...kernel.errors import InternalError

__all__ = ["PolicyDocument", "PolicyPdf", "PDF_ENTRY_POINTS", "load_renderer"]

PDF_ENTRY_POINTS = "compliance.pdf"


@attrs.frozen(kw_only=True)
class PolicyDocument:
    """One published policy as a reader sees it: the frozen version's text and its dates."""

    name: str
    description: str
    version: int
    content: str
    """Markdown."""
    published_at: dt.datetime
    approved_at: dt.datetime | None = None
    approved_by: str | None = None
    approved_by_person_name: str | None = None
    """The approver's name, printed before their id, when a person approved."""
    approval_key_issued_by: str | None = None
    """The key that issued the approving key: a reader can tell an approval made with the
    approver's own key from one made with a key someone else bound to them."""
    approval_key_issued_by_person_id: str | None = None
    organization: str = ""
    """The organization's name, printed at the head of each page."""
    logo: bytes | None = None
    """The organization's logo (PNG or JPEG), printed beside its name on each page."""


class PolicyPdf(Protocol):
    def render(self, title: str, documents: Sequence[PolicyDocument], generated_at: dt.datetime) -> bytes:
        """One PDF holding every document in order, each starting on a new page (``title``
        names the whole, e.g. the organization's policy set)."""
        ...


def load_renderer() -> PolicyPdf:
    """The installed renderer (the first ``compliance.pdf`` entry point)."""
    for entry in importlib.metadata.entry_points(group=PDF_ENTRY_POINTS):
        renderer: PolicyPdf = entry.load()()
        return renderer
    raise InternalError("no PDF renderer is installed (entry point group compliance.pdf)")
