"""The statement of applicability (SoA): for each enabled framework, numbered versions saying
which requirements apply and why (their drivers, or a justification), approved by a named owner
or admin, frozen on approval with the organization's context pinned, and exported as CSV, XLSX,
PDF and OSCAL for auditors.

States of a version: ``draft`` (its rows, the framework's working rows, are marked) ->
``needs_review`` (submitted; nothing changes) -> ``approved`` (the rows are copied and never
change again), or back to ``draft`` when declined. A framework has at most one open version;
enabling a framework opens its first (``open_statement``, called inside that write).
"""

from __future__ import annotations

from ....kernel.registry import Area
from .models import (
    EVENTS,
    OPEN,
    SOA_APPROVE,
    SOA_DOCUMENTS,
    SOA_READ,
    SOA_ROWS,
    SOA_WRITE,
    ApproveSoa,
    DeclineSoa,
    Justify,
    MarkApplicable,
    MarkNotApplicable,
    NewSoaDocument,
    SoaApproved,
    SoaCreated,
    SoaDeclined,
    SoaDocument,
    SoaDocumentFilter,
    SoaRow,
    SoaRowFilter,
    SoaRowQuery,
    SoaRowUpdated,
    SoaStatus,
    SoaSubmitted,
    SubmitSoa,
)
from .service import SoaService, open_statement

__all__ = [
    "SoaStatus",
    "SoaDocument",
    "SoaDocumentFilter",
    "SoaRow",
    "SoaRowFilter",
    "SoaRowQuery",
    "NewSoaDocument",
    "MarkApplicable",
    "MarkNotApplicable",
    "Justify",
    "SubmitSoa",
    "ApproveSoa",
    "DeclineSoa",
    "SoaService",
    "open_statement",
    "SOA_DOCUMENTS",
    "SOA_ROWS",
    "SOA_READ",
    "SOA_WRITE",
    "SOA_APPROVE",
    "OPEN",
    "SoaCreated",
    "SoaRowUpdated",
    "SoaSubmitted",
    "SoaApproved",
    "SoaDeclined",
    "AREA",
]

AREA = Area(
    name="soa",
    tag="SOA",
    service=lambda context: SoaService(context.uow, context.pages, context.ports),
    api=SoaService,
    actions=(SOA_READ, SOA_WRITE, SOA_APPROVE),
    records=(SOA_DOCUMENTS, SOA_ROWS),
    events=EVENTS,
)
