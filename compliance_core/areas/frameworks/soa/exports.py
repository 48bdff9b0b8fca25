"""The files of a statement of applicability: a sheet (CSV or XLSX, through the kernel's sheets
port), a PDF (through the ``compliance.pdf`` renderer the policies use) and an OSCAL system
security plan in JSON, which compliance tooling reads.

The PDF renderer lays out policy documents: a head (name, version, publication and approval
lines, description) and Markdown content, tables included. A statement is handed over as such a
document, built here with the same fields (core may not import the policies area), its rows as
Markdown tables. The renderer's head states an approval, so only an approved version prints.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import re
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import attrs

from ....kernel.errors import InternalError, NotFound
from ....kernel.sheets import Cell, guard
from ..control_models import ControlStatus
from .models import SoaDocument, SoaRow, SoaStatus

__all__ = [
    "PDF",
    "OSCAL_JSON",
    "OSCAL_VERSION",
    "Statement",
    "SoaPdfDocument",
    "SoaPdf",
    "load_renderer",
    "sheet_rows",
    "pdf_document",
    "oscal_of",
    "pieces",
    "slug",
]

PDF = "application/pdf"
OSCAL_JSON = "application/oscal+json"
"""NIST's media type for OSCAL in JSON."""
OSCAL_VERSION = "1.1.2"
PDF_ENTRY_POINTS = "compliance.pdf"
_NS = "urn:compliance-platform:soa"
"""The namespace of the properties this platform adds to OSCAL (OSCAL names none of them)."""
_ROWS_PER_TABLE = 100
"""Rows of one PDF table: the renderer draws a table of at most 2,000 cells as cells."""
_IMPLEMENTATION = {
    ControlStatus.IMPLEMENTED: "implemented",
    ControlStatus.IN_PROGRESS: "partial",
    ControlStatus.STALE: "partial",
    ControlStatus.NOT_STARTED: "planned",
}
"""A control's status as OSCAL's implementation state (stale: implemented, its evidence expired)."""


@attrs.frozen(kw_only=True)
class Statement:
    """One version with every row, as its files print it."""

    document: SoaDocument
    rows: tuple[SoaRow, ...]
    organization: str
    approver_name: str | None = None
    """The named approver's name (None: none named, or no longer a person of the organization)."""

    @property
    def framework_name(self) -> str:
        return self.document.framework_name or self.document.framework_id

    @property
    def approved_by(self) -> str:
        """Who approved it, by name where a person did (empty: not approved)."""
        document = self.document
        if document.status is not SoaStatus.APPROVED:
            return ""
        return document.decided_by_name or document.decided_by or ""


# -- sheets ------------------------------------------------------------------------------------

_COLUMNS = (
    "framework",
    "frameworkId",
    "version",
    "status",
    "approvedAt",
    "approvedBy",
    "requirementId",
    "label",
    "title",
    "applicable",
    "drivers",
    "justification",
    "controlId",
    "controlStatus",
    "riskIds",
    "evidenceIds",
)


def _text(value: str) -> str:
    return guard(value)


def sheet_rows(statement: Statement) -> Iterator[list[Cell]]:
    """A header, then one line per row, each naming the version it belongs to (framework,
    version, status, approval date and approver), so a line read alone still says what it is."""
    document = statement.document
    approved_at = (
        document.decided_at.isoformat() if document.status is SoaStatus.APPROVED and document.decided_at else ""
    )
    head: list[Cell] = [
        _text(statement.framework_name),
        _text(document.framework_id),
        document.version,
        document.status.value,
        approved_at,
        _text(statement.approved_by),
    ]
    yield list(_COLUMNS)
    for row in statement.rows:
        yield [
            *head,
            _text(row.requirement_id),
            _text(row.label),
            _text(row.title),
            row.applicable,
            ", ".join(driver.value for driver in row.drivers),
            _text(row.justification),
            row.control_id,
            row.control_status.value,
            " ".join(row.risk_ids),
            " ".join(row.evidence_ids),
        ]


# -- PDF ---------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class SoaPdfDocument:
    """A statement as the PDF renderer takes a document: the fields of the policies'
    ``PolicyDocument`` (the renderer reads them by name), the rows as Markdown."""

    name: str
    description: str
    version: int
    content: str
    published_at: dt.datetime
    approved_at: dt.datetime | None = None
    approved_by: str | None = None
    approved_by_person_name: str | None = None
    approval_key_issued_by: str | None = None
    approval_key_issued_by_person_id: str | None = None
    organization: str = ""
    logo: bytes | None = None


class SoaPdf(Protocol):
    def render(self, title: str, documents: Sequence[Any], generated_at: dt.datetime) -> bytes:
        """One PDF of the documents (``SoaPdfDocument`` here)."""
        ...


def load_renderer() -> SoaPdf:
    """The installed PDF renderer (the first ``compliance.pdf`` entry point, as policies find it)."""
    for entry in importlib.metadata.entry_points(group=PDF_ENTRY_POINTS):
        renderer: SoaPdf = entry.load()()
        return renderer
    raise InternalError("no PDF renderer is installed (entry point group compliance.pdf)")


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
_BLANKS = re.compile(r"\s+")


def _plain(text: str) -> str:
    """Text read as written in Markdown: on one line, every punctuation mark escaped."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", _BLANKS.sub(" ", text).strip())


def pdf_document(statement: Statement) -> SoaPdfDocument:
    """An approved version's head (who approved, when, on which context, the counts), its rows
    in tables of at most ``_ROWS_PER_TABLE``, then every justification."""
    document = statement.document
    assert document.decided_at is not None
    lines = [
        f"Framework: {_plain(statement.framework_name)} ({_plain(document.framework_id)})",
        f"Version {document.version}, approved {document.decided_at.date().isoformat()}"
        f" by {_plain(statement.approved_by)}",
        f"Requirements: {document.row_count}; applicable: {document.applicable_count}; "
        f"implemented: {document.implemented_count}",
    ]
    if document.comment:
        lines.append(f"Approval comment: {_plain(document.comment)}")
    if document.context_snapshot_id and document.context_taken_at:
        lines.append(
            f"Decided on the organization's context as of {document.context_taken_at.date().isoformat()}"
            f" (snapshot {_plain(document.context_snapshot_id)})"
        )
    else:
        lines.append("Decided with no recorded organization context")
    parts = ["\n\n".join(lines)]
    rows = statement.rows
    for start in range(0, len(rows), _ROWS_PER_TABLE):
        table = ["| Requirement | Title | Applicable | Drivers | Control status |", "|---|---|---|---|---|"]
        for row in rows[start : start + _ROWS_PER_TABLE]:
            drivers = ", ".join(driver.value.replace("_", " ") for driver in row.drivers)
            table.append(
                f"| {_plain(row.label)} | {_plain(row.title)} | {'Yes' if row.applicable else 'No'} "
                f"| {_plain(drivers)} | {_plain(row.control_status.value.replace('_', ' '))} |"
            )
        parts.append("\n".join(table))
    justified = [row for row in rows if row.justification]
    if justified:
        parts.append("## Justifications")
        for row in justified:
            verdict = "applies" if row.applicable else "excluded"
            parts.append(f"**{_plain(row.label)}** ({verdict}): {_plain(row.justification)}")
    return SoaPdfDocument(
        name=f"Statement of applicability: {statement.framework_name}",
        description=f"{statement.organization}: version {document.version}",
        version=document.version,
        content="\n\n".join(parts),
        published_at=document.decided_at,
        approved_at=document.decided_at,
        approved_by=document.decided_by,
        approved_by_person_name=document.decided_by_name,
        organization=statement.organization,
    )


def pieces(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


# -- OSCAL -------------------------------------------------------------------------------------


def _uuid(*parts: str) -> str:
    """A stable UUID (version 5) for what ``parts`` name: the same version exports the same ids."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "urn:compliance-platform:" + ":".join(parts)))


def _string(text: str) -> str:
    """OSCAL's string: no leading or trailing whitespace, on one line."""
    return _BLANKS.sub(" ", text).strip()


def _prop(name: str, value: str) -> dict[str, str]:
    return {"name": name, "ns": _NS, "value": _string(value)}


def _when(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def oscal_of(statement: Statement, now: dt.datetime) -> bytes:
    """The version as an OSCAL system security plan: the organization's management system is
    the system, and each row an implemented requirement (see ``_requirement``)."""
    document = statement.document
    if not statement.rows:
        raise NotFound(  # a read answers 404, not 409: there is nothing to describe
            f"statement {document.id} has no rows (its framework is no longer enabled)",
            {
                "resource": "row of the statement",
                "documentId": document.id,
                "reason": "an OSCAL plan needs a requirement",
            },
        )
    approved = document.status is SoaStatus.APPROVED
    organization = statement.organization or document.organization_id
    system = _uuid("component", document.organization_id)
    party = _uuid("party", document.organization_id)
    metadata: dict[str, Any] = {
        "title": f"Statement of applicability: {_string(statement.framework_name)}, version {document.version}",
        "last-modified": _when(document.decided_at if approved and document.decided_at else now),
        "version": str(document.version),
        "oscal-version": OSCAL_VERSION,
        "props": [_prop("status", document.status.value), _prop("framework-id", document.framework_id)],
        "roles": [{"id": "approver", "title": "Approver of the statement of applicability"}],
        "parties": [{"uuid": party, "type": "organization", "name": _string(organization)}],
    }
    if approved and document.decided_at is not None:
        metadata["published"] = _when(document.decided_at)
        approver = document.decided_by_name or document.decided_by
        if approver:
            person = _uuid("party", document.organization_id, document.decided_by or approver)
            metadata["parties"].append({"uuid": person, "type": "person", "name": _string(approver)})
            metadata["responsible-parties"] = [{"role-id": "approver", "party-uuids": [person]}]
    if document.context_snapshot_id:
        metadata["props"].append(_prop("context-snapshot-id", document.context_snapshot_id))
    rows = statement.rows
    applicable = sum(1 for row in rows if row.applicable)
    plan = {
        "uuid": _uuid("soa", document.id),
        "metadata": metadata,
        "import-profile": {"href": f"urn:compliance-platform:framework:{document.framework_id}"},
        "system-characteristics": {
            "system-ids": [{"identifier-type": "https://ietf.org/rfc/rfc4122", "id": party}],
            "system-name": _string(organization),
            "description": f"The information security management system of {_string(organization)}.",
            "system-information": {
                "information-types": [
                    {
                        "title": "Information in scope",
                        "description": "The information the management system protects.",
                    }
                ]
            },
            "status": {"state": "operational"},
            "authorization-boundary": {
                "description": f"The scope of the management system to which the {_string(statement.framework_name)}"
                " requirements below are applied."
            },
        },
        "system-implementation": {
            "users": [
                {
                    "uuid": _uuid("user", document.organization_id),
                    "title": "Owners and admins",
                    "role-ids": ["approver"],
                }
            ],
            "components": [
                {
                    "uuid": system,
                    "type": "this-system",
                    "title": _string(organization),
                    "description": "The organization's management system as a whole.",
                    "status": {"state": "operational"},
                }
            ],
        },
        "control-implementation": {
            "description": f"Version {document.version} ({document.status.value}) of the statement of applicability: "
            f"{applicable} of {len(rows)} requirements apply.",
            "implemented-requirements": [_requirement(row, system) for row in rows],
        },
    }
    return json.dumps({"system-security-plan": plan}, ensure_ascii=False, indent=2).encode()


def _requirement(row: SoaRow, system: str) -> dict[str, Any]:
    """One row: an applicable one with its control's implementation state, drivers and linked
    risks; an excluded one ``not-applicable``; the justification, if any, as remarks."""
    props = [
        _prop("label", row.label),
        _prop("applicable", "true" if row.applicable else "false"),
        _prop("control-id", row.control_id),
        _prop("control-status", row.control_status.value),
        *(_prop("driver", driver.value) for driver in row.drivers),
        *(_prop("risk-id", risk_id) for risk_id in row.risk_ids),
        *(_prop("evidence-id", evidence_id) for evidence_id in row.evidence_ids),
    ]
    if row.title.strip():
        props.insert(1, _prop("title", row.title))
    state = _IMPLEMENTATION[row.control_status] if row.applicable else "not-applicable"
    status: dict[str, Any] = {"state": state}
    if row.justification and not row.applicable:
        status["remarks"] = row.justification
    description = (
        f"Served by control {row.control_id}, whose status is {row.control_status.value.replace('_', ' ')}."
        if row.applicable
        else "Excluded from the statement of applicability."
    )
    requirement: dict[str, Any] = {
        "uuid": _uuid("row", row.id),
        "control-id": row.requirement_id,
        "props": props,
        "by-components": [
            {
                "component-uuid": system,
                "uuid": _uuid("row", row.id, "this-system"),
                "description": description,
                "implementation-status": status,
            }
        ],
    }
    if row.justification:
        requirement["remarks"] = row.justification
    return requirement


def slug(text: str) -> str:
    """``text`` as a file name's part: lower-case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "framework"
