"""The statement of applicability service: versions, marks on the working rows, the approval
that freezes them, and the files auditors read.

Who may do what: readers (auditors too) read every version and its files; managers start
versions, mark rows and submit; an owner or admin approves or declines, and when the caller acts
as a person it must be the approver the submission named.

A version's rows come from one of two tables: an open version (draft or awaiting approval) shows
the framework's working rows (``CONTROL_REQUIREMENTS``, whose control status moves with the
controls), an approved one the copies it froze (``SOA_ROWS``). The rows operation reads the
version and the page in one read transaction and pages whichever table the version's state
names; both tables offer the same search and sort, and a working row is shown as a ``SoaRow``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ....kernel.context_history import ContextHistory, port_of
from ....kernel.directory import Directory, acting_name, every
from ....kernel.errors import Conflict, Forbidden, NotFound, ValidationError
from ....kernel.ids import IdGenerator
from ....kernel.operations import Once, Standard, operation
from ....kernel.page_cache import PageCache
from ....kernel.pages import Page, PageRequest
from ....kernel.permissions import MANAGERS, Actor, Role
from ....kernel.records import changed, fetch, list_page
from ....kernel.registry import Download, Route, Session
from ....kernel.sheets import CSV, XLSX, write_sheet
from ....kernel.uow import Tx, UnitOfWork
from ..control_models import (
    CONTROL_LINKS,
    CONTROL_REQUIREMENTS,
    ENABLED_FRAMEWORKS,
    ControlLinkFilter,
    ControlRequirement,
    ControlRequirementFilter,
    ControlStatus,
    Driver,
    EnabledFrameworkFilter,
)
from .exports import (
    OSCAL_JSON,
    PDF,
    SoaPdf,
    Statement,
    load_renderer,
    oscal_of,
    pdf_document,
    pieces,
    sheet_rows,
    slug,
)
from .models import (
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
    SoaSuperseded,
    SubmitSoa,
)

__all__ = ["SoaService", "open_statement"]

_EXPLAINING = frozenset({Driver.RISK, Driver.LEGAL, Driver.CONTRACT})
"""Drivers that explain on their own why a requirement applies; best practice alone does not."""

_TABLE = Standard(SOA_DOCUMENTS, id="document_id")
_ALL = "/v1/soa"
_ONE = _ALL + "/{document_id}"
_ROWS = _ONE + "/rows"
_ROW = _ROWS + "/{requirement_id}"


@attrs.define
class SoaService:
    uow: UnitOfWork
    pages: PageCache
    ports: tuple[Any, ...] = ()
    """The platform's ports: the context area's ``ContextHistory`` pins an approval's context."""
    renderer: Callable[[], SoaPdf] = load_renderer
    """Finds the PDF renderer, on the first PDF export."""
    _pdf: SoaPdf | None = attrs.field(default=None, init=False)

    # -- versions ------------------------------------------------------------------------------

    list = _TABLE.list(SOA_READ, Route("GET", _ALL, "List statements of applicability, newest version first"))
    get = _TABLE.get(SOA_READ, Route("GET", _ONE, "Read one version of a statement of applicability"))

    @operation(
        SOA_WRITE,
        Route("POST", _ALL, "Start a new version of an enabled framework's statement (a draft)", 201),
        body=NewSoaDocument,
        idempotent=True,
        result=SoaDocument,
        example={"frameworkId": "iso-27001-2022"},
    )
    def create(self, actor: Actor, data: NewSoaDocument, once: Once) -> SoaDocument:
        """The next version, a draft whose rows are the framework's working rows. An approved
        version before it stays as it is; one still open (a draft, or awaiting approval) is
        superseded: kept for the record and never decided, as the reference platform's older
        version loses ``isLatest``."""
        now = self.uow.clock.now()

        def create() -> SoaDocument:
            organization_id = actor.organization_id
            name = _framework_name(tx, organization_id, data.framework_id)
            if name is None:
                raise ValidationError.field("frameworkId", data.framework_id, "is not enabled for this organization")
            latest = _latest(tx, organization_id, data.framework_id)
            if latest is not None and latest.status in OPEN:
                left = attrs.evolve(latest, status=SoaStatus.SUPERSEDED, updated_at=now)
                tx[SOA_DOCUMENTS].update(left)
                tx.record(
                    SoaSuperseded(organization_id=organization_id, subject=left, previous={"status": latest.status})
                )
            return _start(tx, organization_id, data.framework_id, name, latest, now, self.uow.ids)

        with self.uow.write(actor) as tx:
            return once(tx, data, now, create)

    # -- rows ----------------------------------------------------------------------------------

    @operation(
        SOA_READ,
        Route("GET", _ROWS, "List a version's rows (an open version's working rows, an approved one's frozen rows)"),
        filters=SoaRowQuery,
        paged=True,
        result=SoaRow,
        lists=SOA_ROWS,
    )
    def rows(
        self, actor: Actor, document_id: str, filters: SoaRowQuery | None = None, page: PageRequest | None = None
    ) -> Page[SoaRow]:
        """Filtered by ``applicable`` and ``controlStatus``; searched and sorted as any list."""
        chosen = filters or SoaRowQuery()
        request = page or PageRequest()
        organization_id = actor.organization_id
        with self.uow.read() as session:
            document = fetch(session, SOA_DOCUMENTS, organization_id, document_id)
            if document.status is SoaStatus.APPROVED:
                frozen = SoaRowFilter(
                    document_id=document.id, control_status=chosen.control_status, applicable=chosen.applicable
                )
                return list_page(session, SOA_ROWS, self.pages, organization_id, frozen, request)
            working = ControlRequirementFilter(
                framework_id=document.framework_id, control_status=chosen.control_status, applicable=chosen.applicable
            )
            found = list_page(session, CONTROL_REQUIREMENTS, self.pages, organization_id, working, request)
            shown = _shown(session, document, found.items)
        return Page(
            items=tuple(shown),
            total=found.total,
            page=found.page,
            per_page=found.per_page,
            walk=found.walk,
            after=found.after,
            next_after=found.next_after,
            request=found.request,
        )

    @operation(SOA_READ, Route("GET", _ROW, "Read one row of a version"), result=SoaRow)
    def row(self, actor: Actor, document_id: str, requirement_id: str) -> SoaRow:
        """``requirementId`` is the requirement's id in the catalogue or the row's own id."""
        with self.uow.read() as session:
            document = fetch(session, SOA_DOCUMENTS, actor.organization_id, document_id)
            if document.status is SoaStatus.APPROVED:
                return _frozen_row(session, document, requirement_id)
            return _shown(session, document, [_working_row(session, document, requirement_id)])[0]

    @operation(
        SOA_WRITE,
        Route("POST", _ROW + "/applicable", "Mark a requirement applicable, with its drivers"),
        body=MarkApplicable,
        result=SoaRow,
        example={"drivers": ["legal", "risk"], "justification": "Required by our customer contracts."},
    )
    def mark_applicable(self, actor: Actor, document_id: str, requirement_id: str, data: MarkApplicable) -> SoaRow:
        """A justification is required unless a risk, legal or contractual driver applies (a risk
        linked to the row's control counts as the risk driver): best practice alone must say why."""
        with self.uow.write(actor) as tx:
            document, current = self._editable(tx, actor, document_id, requirement_id)
            if not _EXPLAINING & set(data.drivers) and not data.justification and not _risks(tx, current):
                raise ValidationError.field(
                    "justification",
                    data.justification,
                    "is required when no risk, legal or contractual driver applies",
                )
            changes = {"applicable": True, "drivers": data.drivers, "justification": data.justification}
            return self._mark(tx, actor, document, current, changes)

    @operation(
        SOA_WRITE,
        Route("POST", _ROW + "/not-applicable", "Exclude a requirement, saying why"),
        body=MarkNotApplicable,
        result=SoaRow,
        example={"justification": "We run no software development; no code is written in house."},
    )
    def mark_not_applicable(
        self, actor: Actor, document_id: str, requirement_id: str, data: MarkNotApplicable
    ) -> SoaRow:
        """An exclusion always carries its justification; the row's drivers are cleared."""
        with self.uow.write(actor) as tx:
            document, current = self._editable(tx, actor, document_id, requirement_id)
            changes = {"applicable": False, "drivers": (), "justification": data.justification}
            return self._mark(tx, actor, document, current, changes)

    @operation(
        SOA_WRITE,
        Route("POST", _ROW + "/justify", "Change a row's justification"),
        body=Justify,
        result=SoaRow,
        example={"justification": "Reviewed with the board in the annual risk review."},
    )
    def justify(self, actor: Actor, document_id: str, requirement_id: str, data: Justify) -> SoaRow:
        with self.uow.write(actor) as tx:
            document, current = self._editable(tx, actor, document_id, requirement_id)
            return self._mark(tx, actor, document, current, {"justification": data.justification})

    # -- approval ------------------------------------------------------------------------------

    @operation(
        SOA_WRITE,
        Route("POST", _ONE + "/submit", "Submit a draft to an approver"),
        body=SubmitSoa,
        result=SoaDocument,
        example={},
    )
    def submit(self, actor: Actor, document_id: str, data: SubmitSoa) -> SoaDocument:
        """The named approver (an active owner or admin) decides; when none is named, any owner
        or admin does. Nothing may be marked meanwhile."""
        with self.uow.write(actor) as tx:
            current = _in_state(tx, actor, document_id, SoaStatus.DRAFT, "submitted")
            Directory(tx).check_approver(actor.organization_id, "approverId", data.approver_id)
            now = self.uow.clock.now()
            changes: dict[str, Any] = {
                "status": SoaStatus.NEEDS_REVIEW,
                "approver_id": data.approver_id,
                "submitted_at": now,
                "submitted_by": actor.person_id or actor.principal,
                "decline_reason": None,
            }
            return _store(tx, actor, current, changes, now, SoaSubmitted)

    @operation(
        SOA_APPROVE,
        Route("POST", _ONE + "/approve", "Approve a submitted version: its rows are frozen and its context pinned"),
        body=ApproveSoa,
        result=SoaDocument,
        example={"comment": "Approved at the management review."},
        given=(submit,),
    )
    def approve(self, actor: Actor, document_id: str, data: ApproveSoa) -> SoaDocument:
        """Copies every working row, with the risks and evidence linked to its control, into the
        version's frozen rows; pins the organization's newest context snapshot (none when it has
        no context yet); counts the rows, the applicable ones and those implemented."""
        with self.uow.write(actor) as tx:
            current = _in_state(tx, actor, document_id, SoaStatus.NEEDS_REVIEW, "approved")
            _check_approver(tx, actor, current)
            now = self.uow.clock.now()
            frozen = self._freeze(tx, current, now)
            history = port_of(self.ports, ContextHistory)
            pinned = history.latest(tx, actor.organization_id) if history is not None else None
            changes: dict[str, Any] = {
                "status": SoaStatus.APPROVED,
                "decided_at": now,
                "decided_by": actor.person_id or actor.principal,
                "decided_by_name": acting_name(tx, actor),
                "comment": data.comment,
                "context_snapshot_id": pinned.snapshot_id if pinned is not None else None,
                "context_taken_at": pinned.taken_at if pinned is not None else None,
                "row_count": len(frozen),
                "applicable_count": sum(1 for row in frozen if row.applicable),
                "implemented_count": sum(
                    1 for row in frozen if row.applicable and row.control_status is ControlStatus.IMPLEMENTED
                ),
            }
            return _store(tx, actor, current, changes, now, SoaApproved)

    @operation(
        SOA_APPROVE,
        Route("POST", _ONE + "/decline", "Send a submitted version back to draft, saying why"),
        body=DeclineSoa,
        result=SoaDocument,
        example={"reason": "Justify the exclusion of secure development."},
        given=(submit,),
    )
    def decline(self, actor: Actor, document_id: str, data: DeclineSoa) -> SoaDocument:
        """Back to draft with the reason kept; the approver is cleared (the next submission names one)."""
        with self.uow.write(actor) as tx:
            current = _in_state(tx, actor, document_id, SoaStatus.NEEDS_REVIEW, "declined")
            _check_approver(tx, actor, current)
            now = self.uow.clock.now()
            changes: dict[str, Any] = {
                "status": SoaStatus.DRAFT,
                "approver_id": None,
                "decline_reason": data.reason,
                "decided_at": now,
                "decided_by": actor.person_id or actor.principal,
                "decided_by_name": acting_name(tx, actor),
            }
            return _store(tx, actor, current, changes, now, SoaDeclined)

    # -- files ---------------------------------------------------------------------------------

    @operation(
        SOA_READ,
        Route("GET", _ONE + "/export.csv", "Every row of a version as CSV, under a head naming the version"),
        result=Download,
        media_type=CSV,
    )
    def export_csv(self, actor: Actor, document_id: str) -> Download:
        return self._sheet(actor, document_id, "csv", CSV)

    @operation(
        SOA_READ,
        Route("GET", _ONE + "/export.xlsx", "Every row of a version as XLSX, under a head naming the version"),
        result=Download,
        media_type=XLSX,
    )
    def export_xlsx(self, actor: Actor, document_id: str) -> Download:
        return self._sheet(actor, document_id, "xlsx", XLSX)

    def _sheet(self, actor: Actor, document_id: str, file_format: str, media_type: str) -> Download:
        """Every row of the version under a head naming it, as ``file_format``."""
        statement = self._statement(actor, document_id)
        return Download(
            filename=f"{_filename(statement)}.{file_format}",
            media_type=media_type,
            chunks=write_sheet(file_format, "Statement of applicability", sheet_rows(statement)),
        )

    @operation(
        SOA_READ,
        Route("GET", _ONE + "/export.pdf", "An approved version as a PDF"),
        result=Download,
        media_type=PDF,
        bounded=True,
        given=(submit, approve),
    )
    def export_pdf(self, actor: Actor, document_id: str) -> Download:
        """Only an approved version (an open one is a 404, as a policy with no version in force
        is): the PDF's head states the approval, which an open version does not have (its CSV,
        XLSX and OSCAL files show it as it stands)."""
        statement = self._statement(actor, document_id)
        if statement.document.status is not SoaStatus.APPROVED:  # nothing to print yet: a read answers 404
            raise NotFound(
                f"statement {document_id} is {statement.document.status}; only an approved version prints as a PDF",
                {
                    "resource": "approved statement of applicability",
                    "documentId": document_id,
                    "status": statement.document.status.value,
                    "reason": "only an approved version prints as a PDF",
                },
            )
        if self._pdf is None:
            self._pdf = self.renderer()
        title = f"Statement of applicability: {statement.framework_name}, version {statement.document.version}"
        data = self._pdf.render(title, [pdf_document(statement)], self.uow.clock.now())
        return Download(filename=f"{_filename(statement)}.pdf", media_type=PDF, chunks=pieces(data))

    @operation(
        SOA_READ,
        Route("GET", _ONE + "/export.oscal.json", "A version as an OSCAL system security plan (JSON)"),
        result=Download,
        media_type=OSCAL_JSON,
    )
    def export_oscal(self, actor: Actor, document_id: str) -> Download:
        """One implemented requirement per row: its implementation status from the control's,
        or ``not-applicable`` with the exclusion's justification as remarks."""
        statement = self._statement(actor, document_id)
        data = oscal_of(statement, self.uow.clock.now())
        return Download(filename=f"{_filename(statement)}.oscal.json", media_type=OSCAL_JSON, chunks=(data,))

    # -- helpers -------------------------------------------------------------------------------

    def _editable(
        self, tx: Tx, actor: Actor, document_id: str, requirement_id: str
    ) -> tuple[SoaDocument, ControlRequirement]:
        document = _in_state(tx, actor, document_id, SoaStatus.DRAFT, "marked")
        return document, _working_row(tx, document, requirement_id)

    def _mark(
        self, tx: Tx, actor: Actor, document: SoaDocument, current: ControlRequirement, changes: dict[str, Any]
    ) -> SoaRow:
        previous = changed(current, changes)
        if not previous:
            return _shown(tx, document, [current])[0]
        updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
        tx[CONTROL_REQUIREMENTS].update(updated)
        row = _shown(tx, document, [updated])[0]
        tx.record(SoaRowUpdated(organization_id=actor.organization_id, subject=row, previous=previous))
        return row

    def _freeze(self, tx: Tx, document: SoaDocument, now: dt.datetime) -> tuple[SoaRow, ...]:
        working = every(
            tx[CONTROL_REQUIREMENTS],
            document.organization_id,
            ControlRequirementFilter(framework_id=document.framework_id),
        )
        frozen = tuple(
            attrs.evolve(row, id=self.uow.ids.new(SOA_ROWS.prefix), created_at=now)
            for row in _shown(tx, document, working)
        )
        for row in frozen:
            tx[SOA_ROWS].add(row)
        return frozen

    def _statement(self, actor: Actor, document_id: str) -> Statement:
        """The version, every row of it and the names its files print, read in one transaction."""
        organization_id = actor.organization_id
        with self.uow.read() as session:
            document = fetch(session, SOA_DOCUMENTS, organization_id, document_id)
            if document.status is SoaStatus.APPROVED:
                rows = every(session[SOA_ROWS], organization_id, SoaRowFilter(document_id=document.id))
            else:
                working = every(
                    session[CONTROL_REQUIREMENTS],
                    organization_id,
                    ControlRequirementFilter(framework_id=document.framework_id),
                )
                rows = _shown(session, document, working)
            directory = Directory(session)
            organization = directory.organization(organization_id)
            names = directory.names(organization_id, [document.approver_id])
        return Statement(
            document=document,
            rows=tuple(rows),
            organization=organization.name if organization is not None else "",
            approver_name=names.get(document.approver_id or ""),
        )


def open_statement(tx: Tx, organization_id: str, framework_id: str, now: dt.datetime, ids: IdGenerator) -> SoaDocument:
    """The framework's open statement, started as version 1 (a draft, ``soa.created``) when the
    framework has none yet; called by enabling a framework, inside its write. A framework enabled
    again after an approved version gets its next version as a draft."""
    latest = _latest(tx, organization_id, framework_id)
    if latest is not None and latest.status in OPEN:
        return latest
    name = _framework_name(tx, organization_id, framework_id) or framework_id
    return _start(tx, organization_id, framework_id, name, latest, now, ids)


def _start(
    tx: Tx,
    organization_id: str,
    framework_id: str,
    name: str,
    latest: SoaDocument | None,
    now: dt.datetime,
    ids: IdGenerator,
) -> SoaDocument:
    document = SoaDocument(
        id=ids.new(SOA_DOCUMENTS.prefix),
        organization_id=organization_id,
        framework_id=framework_id,
        framework_name=name,
        version=1 if latest is None else latest.version + 1,
        created_at=now,
        updated_at=now,
    )
    tx[SOA_DOCUMENTS].add(document)
    tx.record(SoaCreated(organization_id=organization_id, subject=document))
    return document


def _latest(session: Session, organization_id: str, framework_id: str) -> SoaDocument | None:
    """The framework's newest version (the table lists newest first)."""
    newest, _ = session[SOA_DOCUMENTS].list(
        organization_id, SoaDocumentFilter(framework_id=framework_id), PageRequest(per_page=1)
    )
    return newest[0] if newest else None


def _framework_name(session: Session, organization_id: str, framework_id: str) -> str | None:
    """The enabled framework's name (None: the organization has not enabled it)."""
    enabled, _ = session[ENABLED_FRAMEWORKS].list(
        organization_id, EnabledFrameworkFilter(framework_id=framework_id), PageRequest(per_page=1)
    )
    return enabled[0].name if enabled else None


def _in_state(session: Session, actor: Actor, document_id: str, wanted: SoaStatus, doing: str) -> SoaDocument:
    """The version, or a ``conflict`` naming its status when it is not ``wanted`` (an approved
    version never changes)."""
    document = fetch(session, SOA_DOCUMENTS, actor.organization_id, document_id)
    if document.status is not wanted:
        raise Conflict(
            f"statement {document.id} is {document.status}; only a {wanted} version can be {doing}",
            {"field": "status", "value": document.status.value, "reason": f"must be {wanted.value}"},
        )
    return document


def _check_approver(session: Session, actor: Actor, document: SoaDocument) -> None:
    """A caller acting as a person must be the named approver, still an active owner or admin."""
    if actor.person_id is None:
        return
    if document.approver_id is not None and actor.person_id != document.approver_id:
        raise Forbidden(
            f"only the named approver {document.approver_id} decides on statement {document.id}",
            {"field": "approverId", "value": document.approver_id, "reason": "the caller is not the named approver"},
        )
    person = Directory(session).person(actor.organization_id, actor.person_id)
    if person is None or not person.is_active or Role(person.role) not in MANAGERS:
        raise Forbidden(
            f"person {actor.person_id} may not decide on statement {document.id}",
            {"field": "approverId", "value": actor.person_id, "reason": "is not an active owner or admin"},
        )


def _store(
    tx: Tx,
    actor: Actor,
    current: SoaDocument,
    changes: dict[str, Any],
    now: dt.datetime,
    event: type[SoaSubmitted] | type[SoaApproved] | type[SoaDeclined],
) -> SoaDocument:
    previous = changed(current, changes)
    updated = attrs.evolve(current, **changes, updated_at=now)
    tx[SOA_DOCUMENTS].update(updated)
    tx.record(event(organization_id=actor.organization_id, subject=updated, previous=previous))
    return updated


def _working_row(session: Session, document: SoaDocument, requirement_id: str) -> ControlRequirement:
    """The framework's working row of the requirement (by its catalogue id, or the row's id)."""
    rows = session[CONTROL_REQUIREMENTS]
    found, _ = rows.list(
        document.organization_id,
        ControlRequirementFilter(framework_id=document.framework_id, requirement_id=requirement_id),
        PageRequest(per_page=1),
    )
    if found:
        return found[0]
    row = rows.get(document.organization_id, requirement_id)
    if row is None or row.framework_id != document.framework_id:
        raise NotFound.resource("requirement of the statement", requirement_id)
    return row


def _frozen_row(session: Session, document: SoaDocument, requirement_id: str) -> SoaRow:
    found = session[SOA_ROWS].get(document.organization_id, requirement_id)
    if found is not None and found.document_id == document.id:
        return found
    rows: list[SoaRow] = every(session[SOA_ROWS], document.organization_id, SoaRowFilter(document_id=document.id))
    for row in rows:
        if row.requirement_id == requirement_id:
            return row
    raise NotFound.resource("requirement of the statement", requirement_id)


def _links(session: Session, organization_id: str, control_ids: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """What is linked to each control, by kind: ``{control_id: {"risk": [...], ...}}``."""
    found: dict[str, dict[str, list[str]]] = {}
    for control_id in dict.fromkeys(control_ids):
        kinds: dict[str, list[str]] = {}
        for link in every(session[CONTROL_LINKS], organization_id, ControlLinkFilter(control_id=control_id)):
            kinds.setdefault(link.kind, []).append(link.target_id)
        found[control_id] = kinds
    return found


def _risks(session: Session, row: ControlRequirement) -> bool:
    """Whether a risk is linked to the row's control (the risk driver, without being named)."""
    linked, _ = session[CONTROL_LINKS].list(
        row.organization_id, ControlLinkFilter(control_id=row.control_id, kind="risk"), PageRequest(per_page=1)
    )
    return bool(linked)


def _shown(session: Session, document: SoaDocument, rows: Sequence[ControlRequirement]) -> list[SoaRow]:
    """Working rows as rows of ``document``, with the risks and evidence linked to their controls."""
    links = _links(session, document.organization_id, [row.control_id for row in rows])
    return [
        SoaRow(
            id=row.id,
            organization_id=row.organization_id,
            document_id=document.id,
            framework_id=row.framework_id,
            requirement_id=row.requirement_id,
            label=row.label,
            title=row.title,
            control_id=row.control_id,
            control_status=row.control_status,
            applicable=row.applicable,
            justification=row.justification,
            drivers=row.drivers,
            risk_ids=tuple(links[row.control_id].get("risk", ())),
            evidence_ids=tuple(links[row.control_id].get("evidence", ())),
            created_at=row.created_at,
        )
        for row in rows
    ]


def _filename(statement: Statement) -> str:
    document = statement.document
    return f"statement-of-applicability-{slug(document.framework_id)}-v{document.version}"
