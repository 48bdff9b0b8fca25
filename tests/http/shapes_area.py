"""Notebooks: a test-only area that puts every shape the HTTP layer offers on the wire.

It is declared exactly as docs/adding-an-area.md says (models, actions, operations, ``Records``
tables, events, a service on the unit of work and the records helpers, ``AREA``) and registered
only by the tests that use it: ``Platform(MemoryStore(areas=[*AREAS, AREA]), areas=[*AREAS, AREA])``
and served by ``create_app(platform)``. No real area uses PUT, two
ids, files or 202 yet; this one does, so the generic machinery is proven before policies and
exports need it:

- replace (PUT, the ``New`` model as ``data``) and delete (204);
- a transition without a body (``unpublish``) and one with a body (``publish``, ``{"note"}``);
- pages nested under their notebook: ``/v1/notebooks/{notebook_id}/pages/{page_id}``;
- files: CSV, PDF, XLSX and ZIP exports, each produced chunk by chunk by a generator;
- an export job: ``POST .../exports`` answers ``Accepted[NotebookJob]`` (202 and a Location),
  ``GET /v1/notebook-jobs/{job_id}`` reports it.
"""

from __future__ import annotations

import csv
import datetime as dt
import enum
import io
import zipfile
from collections.abc import Iterator, Sequence
from xml.sax.saxutils import escape

import attrs

from compliance_core.kernel.errors import NotFound
from compliance_core.kernel.events import Event
from compliance_core.kernel.operations import Standard, operation, page_of
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.pages import Page, PageRequest
from compliance_core.kernel.permissions import MANAGERS, OWNERS, READERS, Action, Actor
from compliance_core.kernel.records import Filter, Records, changed, fetch
from compliance_core.kernel.registry import Accepted, Area, Download, Route, Session
from compliance_core.kernel.uow import UnitOfWork
from compliance_core.kernel.validation import Patch, Unset, blank_text, patch_field, text

CSV = "text/csv"
PDF = "application/pdf"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ZIP = "application/zip"


# -- models --------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Notebook:
    id: str
    organization_id: str
    title: str
    summary: str = ""
    published: bool = False
    publish_note: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewNotebook:
    """The create body, and the whole of a replacement (PUT)."""

    title: str = attrs.field(converter=text(200))
    summary: str = attrs.field(default="", converter=blank_text(2000))


_NEW = attrs.fields(NewNotebook)


@attrs.frozen(kw_only=True)
class NotebookPatch(Patch):
    title: str | Unset = patch_field(_NEW.title.converter)
    summary: str | None | Unset = patch_field(_NEW.summary.converter)


@attrs.frozen(kw_only=True)
class NotebookFilter(Filter):
    published: bool | None = None


@attrs.frozen(kw_only=True)
class PublishNotebook:
    """The body of the publish transition."""

    note: str = attrs.field(converter=text(500))


@attrs.frozen(kw_only=True)
class NotePage:
    id: str
    organization_id: str
    notebook_id: str
    title: str
    body: str = ""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewNotePage:
    title: str = attrs.field(converter=text(200))
    body: str = attrs.field(default="", converter=blank_text(10_000))


@attrs.frozen(kw_only=True)
class NotePageFilter(Filter):
    """The store's filter of the pages table; the service sets it from the path, so the list
    operation takes no filter parameters."""

    notebook_id: str | None = None


class JobStatus(enum.StrEnum):
    QUEUED = "queued"
    DONE = "done"


@attrs.frozen(kw_only=True)
class NotebookJob:
    """An export that finishes later; its status is read at ``/v1/notebook-jobs/{jobId}``."""

    id: str
    organization_id: str
    notebook_id: str
    status: JobStatus = JobStatus.QUEUED
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NotebookJobFilter(Filter):
    notebook_id: str | None = None


# -- tables, actions, events ---------------------------------------------------------------------

NOTEBOOKS: Records[Notebook, NotebookFilter] = Records(
    "notebooks", model=Notebook, filters=NotebookFilter, kind="notebook", prefix="nbk"
)
NOTEBOOK_PAGES: Records[NotePage, NotePageFilter] = Records(
    "notebook_pages", model=NotePage, filters=NotePageFilter, kind="notebook page", prefix="nbp"
)
NOTEBOOK_JOBS: Records[NotebookJob, NotebookJobFilter] = Records(
    "notebook_jobs", model=NotebookJob, filters=NotebookJobFilter, kind="notebook job", prefix="nbj"
)

NOTEBOOK_READ = Action("notebook:read", READERS)
NOTEBOOK_WRITE = Action("notebook:write", MANAGERS)
NOTEBOOK_PUBLISH = Action("notebook:publish", OWNERS)
"""Only owners publish: an admin, who may write, is refused before the body is read."""


class NotebookCreated(Event):
    type = "notebook.created"


class NotebookUpdated(Event):
    type = "notebook.updated"


class NotebookDeleted(Event):
    type = "notebook.deleted"


class NotebookPublished(Event):
    type = "notebook.published"


class NotebookUnpublished(Event):
    type = "notebook.unpublished"


class NotebookPageCreated(Event):
    type = "notebook_page.created"


class NotebookPageUpdated(Event):
    type = "notebook_page.updated"


class NotebookPageDeleted(Event):
    type = "notebook_page.deleted"


class NotebookExportRequested(Event):
    type = "notebook.export_requested"


# -- the files -----------------------------------------------------------------------------------


def csv_chunks(notebook: Notebook, pages: Sequence[NotePage]) -> Iterator[bytes]:
    """One chunk per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in [("id", "title", "body"), *((page.id, page.title, page.body) for page in pages)]:
        writer.writerow(row)
        yield buffer.getvalue().encode()
        buffer.seek(0)
        buffer.truncate()


def pdf_chunks(notebook: Notebook, pages: Sequence[NotePage]) -> Iterator[bytes]:
    """A one-page PDF 1.4 listing the page titles, one object per chunk, with a correct xref."""

    def literal(value: str) -> str:
        return "(" + value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"

    lines = [notebook.title, *(page.title for page in pages)]
    content = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"{literal(line)} '" for line in lines) + " ET"
    stream = content.encode("latin-1", "replace")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    head = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    yield head
    offset, offsets = len(head), []
    for number, body in enumerate(objects, 1):
        chunk = b"%d 0 obj\n%s\nendobj\n" % (number, body)
        offsets.append(offset)
        offset += len(chunk)
        yield chunk
    xref = b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    xref += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    yield xref + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, offset)


def _zip(files: Sequence[tuple[str, str]], when: dt.datetime) -> bytes:
    buffer = io.BytesIO()
    stamp = when.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files:
            archive.writestr(zipfile.ZipInfo(name, date_time=stamp), content)
    return buffer.getvalue()


def _pieces(data: bytes, size: int = 128) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


_XLSX_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_XLSX_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="xl/workbook.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>'
    "</Relationships>"
)
_XLSX_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Pages" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_XLSX_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="worksheets/sheet1.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"/>'
    "</Relationships>"
)


def xlsx_chunks(notebook: Notebook, pages: Sequence[NotePage]) -> Iterator[bytes]:
    """A minimal Office Open XML workbook (a ZIP of five parts), one row per page, inline strings."""
    rows = [("title", "body"), *((page.title, page.body) for page in pages)]
    cells = "".join(
        f'<row r="{number}">'
        + "".join(
            f'<c r="{column}{number}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
            for column, value in zip("AB", row, strict=True)
        )
        + "</row>"
        for number, row in enumerate(rows, 1)
    )
    sheet = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"<sheetData>{cells}</sheetData></worksheet>"
    )
    yield from _pieces(
        _zip(
            [
                ("[Content_Types].xml", _XLSX_TYPES),
                ("_rels/.rels", _XLSX_RELS),
                ("xl/workbook.xml", _XLSX_WORKBOOK),
                ("xl/_rels/workbook.xml.rels", _XLSX_WORKBOOK_RELS),
                ("xl/worksheets/sheet1.xml", sheet),
            ],
            notebook.updated_at,
        )
    )


def zip_chunks(notebook: Notebook, pages: Sequence[NotePage]) -> Iterator[bytes]:
    """The pages as Markdown files."""
    files = [
        (f"pages/{index:03d}-{page.id}.md", f"# {page.title}\n\n{page.body}\n") for index, page in enumerate(pages, 1)
    ]
    yield from _pieces(
        _zip([("README.md", f"# {notebook.title}\n\n{notebook.summary}\n"), *files], notebook.updated_at)
    )


# -- the service and its operations --------------------------------------------------------------

_TABLE = Standard(NOTEBOOKS, id="notebook_id")
_ALL = "/v1/notebooks"
_ONE = "/v1/notebooks/{notebook_id}"
_PAGES = _ONE + "/pages"
_PAGE = _PAGES + "/{page_id}"
_EXPORTS = _ONE + "/exports"


@attrs.define
class NotebookService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(NOTEBOOK_READ, Route("GET", _ALL, "List notebooks"))
    create = _TABLE.create(
        NOTEBOOK_WRITE,
        Route("POST", _ALL, "Add a notebook", 201),
        body=NewNotebook,
        event=NotebookCreated,
        example={"title": "Audit notes", "summary": "What we saw."},
    )
    get = _TABLE.get(NOTEBOOK_READ, Route("GET", _ONE, "Read one notebook"))

    @operation(
        NOTEBOOK_WRITE,
        Route("PATCH", _ONE, "Change some of a notebook's fields"),
        body=NotebookPatch,
        result=Notebook,
        example={"summary": "Revised."},
    )
    def update(self, actor: Actor, notebook_id: str, patch: NotebookPatch) -> Notebook:
        return self._change(actor, notebook_id, patch.changes())

    @operation(
        NOTEBOOK_WRITE,
        Route("PUT", _ONE, "Replace a notebook's fields"),
        body=NewNotebook,
        result=Notebook,
        example={"title": "Audit notes, v2"},
    )
    def replace(self, actor: Actor, notebook_id: str, data: NewNotebook) -> Notebook:
        """PUT: every field the body can hold is set, the ones left out to their defaults."""
        return self._change(actor, notebook_id, attrs.asdict(data, recurse=False))

    def _change(self, actor: Actor, notebook_id: str, changes: dict[str, object]) -> Notebook:
        with self.uow.write(actor) as tx:
            current = fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[NOTEBOOKS].update(updated)
            tx.record(NotebookUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    @operation(NOTEBOOK_WRITE, Route("DELETE", _ONE, "Delete a notebook and its pages"))
    def delete(self, actor: Actor, notebook_id: str) -> None:
        """The notebook and its pages."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            for page in self._pages_of(tx, actor.organization_id, notebook_id):
                tx[NOTEBOOK_PAGES].delete(actor.organization_id, page.id)
            tx[NOTEBOOKS].delete(actor.organization_id, notebook_id)
            tx.record(NotebookDeleted(organization_id=actor.organization_id, subject=current))

    @operation(
        NOTEBOOK_PUBLISH,
        Route("POST", _ONE + "/publish", "Publish a notebook with a note"),
        body=PublishNotebook,
        result=Notebook,
        example={"note": "Reviewed by the CISO."},
    )
    def publish(self, actor: Actor, notebook_id: str, data: PublishNotebook) -> Notebook:
        with self.uow.write(actor) as tx:
            current = fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            changes = {"published": True, "publish_note": data.note}
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[NOTEBOOKS].update(updated)
            tx.record(NotebookPublished(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    @operation(NOTEBOOK_PUBLISH, Route("POST", _ONE + "/unpublish", "Withdraw a notebook"), result=Notebook)
    def unpublish(self, actor: Actor, notebook_id: str) -> Notebook:
        with self.uow.write(actor) as tx:
            current = fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            if not current.published:
                return current
            updated = attrs.evolve(current, published=False, publish_note=None, updated_at=self.uow.clock.now())
            tx[NOTEBOOKS].update(updated)
            tx.record(
                NotebookUnpublished(
                    organization_id=actor.organization_id,
                    subject=updated,
                    previous={"published": True, "publish_note": current.publish_note},
                )
            )
        return updated

    # -- pages: two ids, the child belongs to the parent ------------------------------------------

    @operation(NOTEBOOK_READ, Route("GET", _PAGES, "List a notebook's pages"), paged=True, result=NotePage)
    def list_pages(self, actor: Actor, notebook_id: str, page: PageRequest | None = None) -> Page[NotePage]:
        pages_of = NotePageFilter(notebook_id=notebook_id)
        return page_of(self, NOTEBOOK_PAGES, actor, pages_of, page, under=(NOTEBOOKS, notebook_id))

    @operation(
        NOTEBOOK_WRITE,
        Route("POST", _PAGES, "Add a page to a notebook", 201),
        body=NewNotePage,
        result=NotePage,
        example={"title": "Interviews", "body": "Three people."},
    )
    def add_page(self, actor: Actor, notebook_id: str, data: NewNotePage) -> NotePage:
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            page = NotePage(
                id=self.uow.ids.new(NOTEBOOK_PAGES.prefix),
                organization_id=actor.organization_id,
                notebook_id=notebook_id,
                created_at=now,
                updated_at=now,
                **attrs.asdict(data, recurse=False),
            )
            tx[NOTEBOOK_PAGES].add(page)
            tx.record(NotebookPageCreated(organization_id=actor.organization_id, subject=page))
        return page

    @operation(NOTEBOOK_READ, Route("GET", _PAGE, "Read one page of a notebook"), result=NotePage)
    def get_page(self, actor: Actor, notebook_id: str, page_id: str) -> NotePage:
        with self.uow.read() as session:
            return _page_of(session, actor, notebook_id, page_id)

    @operation(
        NOTEBOOK_WRITE,
        Route("PUT", _PAGE, "Replace a page of a notebook"),
        body=NewNotePage,
        result=NotePage,
        example={"title": "Interviews", "body": "Four people."},
    )
    def replace_page(self, actor: Actor, notebook_id: str, page_id: str, data: NewNotePage) -> NotePage:
        changes = attrs.asdict(data, recurse=False)
        with self.uow.write(actor) as tx:
            current = _page_of(tx, actor, notebook_id, page_id)
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[NOTEBOOK_PAGES].update(updated)
            tx.record(NotebookPageUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    @operation(NOTEBOOK_WRITE, Route("DELETE", _PAGE, "Delete a page of a notebook"))
    def delete_page(self, actor: Actor, notebook_id: str, page_id: str) -> None:
        with self.uow.write(actor) as tx:
            current = _page_of(tx, actor, notebook_id, page_id)
            tx[NOTEBOOK_PAGES].delete(actor.organization_id, page_id)
            tx.record(NotebookPageDeleted(organization_id=actor.organization_id, subject=current))

    # -- files: read first, then produce the content lazily -----------------------------------------

    @operation(NOTEBOOK_READ, Route("GET", _EXPORTS + "/csv", "The pages as CSV"), result=Download, media_type=CSV)
    def export_csv(self, actor: Actor, notebook_id: str) -> Download:
        notebook, pages = self._contents(actor, notebook_id)
        return Download(filename=f"{notebook.id}.csv", media_type=CSV, chunks=csv_chunks(notebook, pages))

    @operation(NOTEBOOK_READ, Route("GET", _EXPORTS + "/pdf", "The notebook as PDF"), result=Download, media_type=PDF)
    def export_pdf(self, actor: Actor, notebook_id: str) -> Download:
        """Named after the title, which may need RFC 6266's ``filename*``."""
        notebook, pages = self._contents(actor, notebook_id)
        return Download(filename=f"{notebook.title}.pdf", media_type=PDF, chunks=pdf_chunks(notebook, pages))

    @operation(
        NOTEBOOK_READ, Route("GET", _EXPORTS + "/xlsx", "The pages as a spreadsheet"), result=Download, media_type=XLSX
    )
    def export_xlsx(self, actor: Actor, notebook_id: str) -> Download:
        notebook, pages = self._contents(actor, notebook_id)
        return Download(filename=f"{notebook.id}.xlsx", media_type=XLSX, chunks=xlsx_chunks(notebook, pages))

    @operation(
        NOTEBOOK_READ,
        Route("GET", _EXPORTS + "/zip", "The pages as Markdown files in a ZIP"),
        result=Download,
        media_type=ZIP,
    )
    def export_zip(self, actor: Actor, notebook_id: str) -> Download:
        notebook, pages = self._contents(actor, notebook_id)
        return Download(filename=f"{notebook.id}.zip", media_type=ZIP, chunks=zip_chunks(notebook, pages))

    def _contents(self, actor: Actor, notebook_id: str) -> tuple[Notebook, list[NotePage]]:
        with self.uow.read() as session:
            notebook = fetch(session, NOTEBOOKS, actor.organization_id, notebook_id)
            return notebook, self._pages_of(session, actor.organization_id, notebook_id)

    @staticmethod
    def _pages_of(session: Session, organization_id: str, notebook_id: str) -> list[NotePage]:
        repository = session[NOTEBOOK_PAGES]
        found: list[NotePage] = []
        number = 1
        while True:
            items, total = repository.list(
                organization_id, NotePageFilter(notebook_id=notebook_id), PageRequest(page=number, per_page=200)
            )
            found += items
            if len(found) >= total or not items:
                return found
            number += 1

    # -- work that finishes later --------------------------------------------------------------

    @operation(NOTEBOOK_READ, Route("POST", _EXPORTS, "Start an export (answers 202)"), result=Accepted[NotebookJob])
    def export(self, actor: Actor, notebook_id: str) -> Accepted[NotebookJob]:
        """Queue an export; the answer names the operation that reports on it."""
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            fetch(tx, NOTEBOOKS, actor.organization_id, notebook_id)
            job = NotebookJob(
                id=self.uow.ids.new(NOTEBOOK_JOBS.prefix),
                organization_id=actor.organization_id,
                notebook_id=notebook_id,
                created_at=now,
                updated_at=now,
            )
            tx[NOTEBOOK_JOBS].add(job)
            tx.record(NotebookExportRequested(organization_id=actor.organization_id, subject=job))
        return Accepted(job=job, status=NotebookService.job.name)

    @operation(
        NOTEBOOK_READ, Route("GET", "/v1/notebook-jobs/{job_id}", "Read an export job's status"), result=NotebookJob
    )
    def job(self, actor: Actor, job_id: str) -> NotebookJob:
        with self.uow.read() as session:
            return fetch(session, NOTEBOOK_JOBS, actor.organization_id, job_id)

    def finish(self, organization_id: str, job_id: str) -> NotebookJob:
        """What a worker does when the export is written (not an operation): no caller."""
        with self.uow.write(None) as tx:
            job = attrs.evolve(
                fetch(tx, NOTEBOOK_JOBS, organization_id, job_id),
                status=JobStatus.DONE,
                updated_at=self.uow.clock.now(),
            )
            tx[NOTEBOOK_JOBS].update(job)
        return job


def _page_of(session: Session, actor: Actor, notebook_id: str, page_id: str) -> NotePage:
    """The page, or 404 when the notebook is missing or the page belongs to another notebook."""
    fetch(session, NOTEBOOKS, actor.organization_id, notebook_id)
    page = fetch(session, NOTEBOOK_PAGES, actor.organization_id, page_id)
    if page.notebook_id != notebook_id:
        raise NotFound.resource(NOTEBOOK_PAGES.kind, page_id)
    return page


# -- the area --------------------------------------------------------------------------------------

AREA: Area[NotebookService] = Area(
    name="notebooks",
    tag="Notebooks",
    service=lambda context: NotebookService(context.uow, context.pages),
    api=NotebookService,
    actions=(NOTEBOOK_READ, NOTEBOOK_WRITE, NOTEBOOK_PUBLISH),
    records=(NOTEBOOKS, NOTEBOOK_PAGES, NOTEBOOK_JOBS),
    events=(
        NotebookCreated,
        NotebookUpdated,
        NotebookDeleted,
        NotebookPublished,
        NotebookUnpublished,
        NotebookPageCreated,
        NotebookPageUpdated,
        NotebookPageDeleted,
        NotebookExportRequested,
    ),
)
