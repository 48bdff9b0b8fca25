"""Frameworks an organization imports: its own, or a licensed text the platform cannot ship (an
OSCAL catalog, an OSCAL profile tailoring a catalog it knows, or a spreadsheet), usable
everywhere a catalogue framework is (enable it, map it, state its applicability, export it).

Each import is kept as an OSCAL catalog (``oscal_import``), in a table of its own beside the
import's small record, so listing imports never reads the documents; a document is parsed once
and kept by the platform's catalogue under its SHA-256. ``OrganizationCatalogue`` is the
catalogue as one organization sees it: the platform's frameworks, then its own imports.

A framework imported from a profile keeps the catalog it tailors as its ``base``: its
requirements are the base's (same ids), so it maps to the base requirement for requirement
(``equal``) and inherits the base's mappings, and enabling it after the base reuses the base's
controls instead of making a second set.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Any

import attrs

from ...kernel.directory import every
from ...kernel.errors import Conflict, NotFound, ValidationError
from ...kernel.events import Event
from ...kernel.operations import Once, Standard, operation
from ...kernel.page_cache import PageCache
from ...kernel.permissions import MANAGERS, READERS, Action, Actor
from ...kernel.records import Filter, Records, fetch
from ...kernel.registers import FILE_CONTENT, RegisterFile
from ...kernel.registry import Area, Download, Route, Session
from ...kernel.uow import Context, UnitOfWork
from ...kernel.validation import Checked, choice, optional_text, register_schema
from .catalogue import FrameworkCatalogue
from .control_models import (
    ENABLED_FRAMEWORKS,
    IMPORTED_MAPPINGS,
    EnabledFrameworkFilter,
    ImportedMappingFilter,
)
from .mappings import MappingRelation, RequirementMapping
from .oscal import Catalog, FrameworkSource, PublishedFile, Requirement, read_catalog
from .oscal_import import (
    ImportFormat,
    OscalModels,
    installed_models,
    parse_document,
    profile_href,
    resolve_profile,
    sheet_catalog,
)

__all__ = [
    "ImportedFramework",
    "FrameworkImport",
    "OrganizationCatalogue",
    "FrameworkImportService",
    "IMPORTED_FRAMEWORKS",
    "FRAMEWORK_DOCUMENTS",
    "AREA",
]

FRAMEWORK_IMPORT_READ = Action("framework_import:read", READERS)
FRAMEWORK_IMPORT_WRITE = Action("framework_import:write", MANAGERS)
"""Importing or deleting a framework changes what every control and statement can rest on."""

OSCAL_JSON = "application/oscal+json"
_SLUG = re.compile(r"^[a-z][a-z0-9-]{1,62}$")
_IMPORTED_BY = "imported by the organization"


def _slug(value: Any, field: attrs.Attribute[Any]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SLUG.match(value):
        raise ValidationError.field(
            "frameworkId", value, "must be 2-63 lowercase letters, digits or '-', starting with a letter"
        )
    return value


_FRAMEWORK_SLUG = register_schema(
    Checked(_slug, takes_field=True),
    {"type": "string", "pattern": _SLUG.pattern, "nullable": True, "description": "the id the framework is used by"},
)


def _kinds(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or len(value) > 20:
        raise ValidationError.field("controlKinds", value, "must be a list of at most 20 requirement kinds")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not 0 < len(item) <= 100:
            raise ValidationError.field(f"controlKinds[{index}]", item, "must be a requirement kind (OSCAL class)")
    return tuple(dict.fromkeys(value))


_CONTROL_KINDS = register_schema(
    Checked(_kinds, takes_field=True),
    {
        "type": "array",
        "maxItems": 20,
        "nullable": True,
        "items": {"type": "string", "minLength": 1, "maxLength": 100},
        "description": "requirement kinds (OSCAL class) that become controls; empty: every requirement",
    },
)


@attrs.frozen(kw_only=True)
class FrameworkImport:
    """A framework to import: the file's ``format`` and its bytes in base64 (``content``).

    ``frameworkId`` is the id it is enabled, mapped and exported by (default: the import's own
    id). ``baseFramework`` names the catalog a profile tailors (default: the installed or
    imported framework whose catalog file the profile's import names). ``controlKinds``: the
    requirement kinds (OSCAL ``class``) that each become a control when it is enabled (default:
    every requirement not withdrawn)."""

    format: ImportFormat = attrs.field(converter=choice(ImportFormat))
    content: str = attrs.field(converter=FILE_CONTENT)
    framework_id: str | None = attrs.field(default=None, converter=_FRAMEWORK_SLUG)
    name: str | None = attrs.field(default=None, converter=optional_text(255))
    version: str | None = attrs.field(default=None, converter=optional_text(100))
    publisher: str | None = attrs.field(default=None, converter=optional_text(255))
    base_framework: str | None = attrs.field(default=None, converter=optional_text(100))
    control_kinds: tuple[str, ...] = attrs.field(default=(), converter=_CONTROL_KINDS)


@attrs.frozen(kw_only=True)
class ImportedFramework:
    """One framework an organization imported, with what enabling it would make."""

    id: str
    organization_id: str
    framework_id: str
    name: str
    version: str
    publisher: str
    format: ImportFormat
    base_framework: str = ""
    """The framework a profile tailors (empty for a catalog or a spreadsheet)."""
    control_kinds: tuple[str, ...] = ()
    requirement_count: int
    control_count: int
    catalog_sha256: str
    """The SHA-256 of the catalog it is kept as (what its OSCAL export holds)."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class ImportedFrameworkFilter(Filter):
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))


@attrs.frozen(kw_only=True)
class FrameworkDocument:
    """An import's documents, apart from its record: the catalog it is kept as, and the profile
    as it was imported (empty for other formats)."""

    id: str
    organization_id: str
    import_id: str
    catalog: str
    profile: str = ""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class FrameworkDocumentFilter(Filter):
    import_id: str | None = attrs.field(default=None, converter=optional_text(100))


IMPORTED_FRAMEWORKS: Records[ImportedFramework, ImportedFrameworkFilter] = Records(
    "imported_frameworks",
    model=ImportedFramework,
    filters=ImportedFrameworkFilter,
    kind="import",
    prefix="ifw",
    searchable=("name",),
    sortable=("name", "framework_id"),
)
FRAMEWORK_DOCUMENTS: Records[FrameworkDocument, FrameworkDocumentFilter] = Records(
    "framework_documents",
    model=FrameworkDocument,
    filters=FrameworkDocumentFilter,
    kind="framework document",
    prefix="fdc",
)


class FrameworkImportCreated(Event):
    """The organization imported a framework; it can now be enabled like a catalogue framework."""

    type = "framework_import.created"


class FrameworkImportDeleted(Event):
    """The organization deleted an imported framework it had not enabled, and the mappings it
    had imported for it."""

    type = "framework_import.deleted"


# -- the catalogue as one organization sees it ----------------------------------------------------


class OrganizationCatalogue:
    """The platform's catalogue and one organization's imports, behind the catalogue's own
    methods; valid inside the read or write that made it (it reads documents through it)."""

    def __init__(self, catalogue: FrameworkCatalogue, session: Session, organization_id: str) -> None:
        self.catalogue = catalogue
        self.mapping_sources = catalogue.mapping_sources
        self._session = session
        self._organization_id = organization_id
        rows = every(session[IMPORTED_FRAMEWORKS], organization_id, ImportedFrameworkFilter())
        self.imports: dict[str, ImportedFramework] = {row.framework_id: row for row in rows}

    def installed(self) -> tuple[FrameworkSource, ...]:
        return (*self.catalogue.installed(), *(imported_source(row) for row in self.imports.values()))

    def source(self, framework_id: str) -> FrameworkSource | None:
        row = self.imports.get(framework_id)
        return self.catalogue.source(framework_id) if row is None else imported_source(row)

    def catalog(self, framework_id: str) -> Catalog | None:
        row = self.imports.get(framework_id)
        if row is None:
            return self.catalogue.catalog(framework_id)
        return self.catalogue.parsed(row.catalog_sha256, lambda: read_catalog(json.loads(self._document(row).catalog)))

    def actionable(self, framework_id: str) -> tuple[Requirement, ...]:
        source, catalog = self.source(framework_id), self.catalog(framework_id)
        if source is None or catalog is None:
            return ()
        return tuple(item for item in catalog.requirements if source.acts_on(item))

    def document(self, framework_id: str) -> bytes | None:
        row = self.imports.get(framework_id)
        return self.catalogue.document(framework_id) if row is None else self._document(row).catalog.encode()

    def task_templates(self, framework_id: str) -> tuple[Any, ...]:
        return () if framework_id in self.imports else self.catalogue.task_templates(framework_id)

    def mappings_between(self, source_id: str, target_id: str) -> tuple[RequirementMapping, ...]:
        """The catalogue's pairs; a profile's framework answers for its base (requirement for
        requirement ``equal`` to it, and with the base's pairs to every other framework)."""
        if source_id == target_id:
            return ()
        if source_id not in self.imports and target_id not in self.imports:
            return self.catalogue.mappings_between(source_id, target_id)
        if target_id in self.imports and source_id not in self.imports:
            return tuple(pair.inverse() for pair in self.mappings_between(target_id, source_id))
        row = self.imports[source_id]
        if not row.base_framework:
            return ()
        catalog = self.catalog(source_id)
        kept = set() if catalog is None else {item.id for item in catalog.requirements}
        if row.base_framework == target_id:
            return tuple(_equal(source_id, target_id, requirement, row.publisher) for requirement in sorted(kept))
        inherited = self.mappings_between(row.base_framework, target_id)
        return tuple(
            attrs.evolve(pair, source_framework=source_id) for pair in inherited if pair.source_requirement in kept
        )

    def _document(self, row: ImportedFramework) -> FrameworkDocument:
        found = every(
            self._session[FRAMEWORK_DOCUMENTS], self._organization_id, FrameworkDocumentFilter(import_id=row.id)
        )
        if not found:
            raise NotFound.resource("framework document", row.id)
        document: FrameworkDocument = found[0]
        return document


def _equal(source: str, target: str, requirement: str, publisher: str) -> RequirementMapping:
    return RequirementMapping(
        source_framework=source,
        source_requirement=requirement,
        target_framework=target,
        target_requirement=requirement,
        relation=MappingRelation.EQUAL,
        publisher=publisher,
    )


def imported_source(row: ImportedFramework) -> FrameworkSource:
    """An import as the catalogue describes its frameworks (its file named by its checksum)."""
    return FrameworkSource(
        id=row.framework_id,
        name=row.name,
        version=row.version,
        publisher=row.publisher,
        repository="",
        commit="",
        catalog=PublishedFile(path=f"{row.framework_id}.json", git_blob="", sha256=row.catalog_sha256),
        control_kinds=row.control_kinds,
    )


def within(catalogue: FrameworkCatalogue, session: Session, organization_id: str) -> OrganizationCatalogue:
    return OrganizationCatalogue(catalogue, session, organization_id)


# -- the service ----------------------------------------------------------------------------------

_ALL = "/v1/framework-imports"
_ONE = _ALL + "/{import_id}"
_TABLE = Standard(IMPORTED_FRAMEWORKS, id="import_id")
_EXAMPLE_SHEET = "aWQsdGl0bGUsZ3JvdXAsc3RhdGVtZW50ClJFRy0xLEtlZXAgYSByZWdpc3RlciBvZiBzdXBwbGllcnMsc3VwcGxpZXJzLExpc3QgZXZlcnkgc3VwcGxpZXIgd2l0aCBpdHMgb3duZXIuCg=="
"""``id,title,group,statement`` and one row: ``REG-1,Keep a register of suppliers,suppliers,...``."""


@attrs.define
class FrameworkImportService:
    uow: UnitOfWork
    pages: PageCache
    catalogue: FrameworkCatalogue
    models: OscalModels | None

    list = _TABLE.list(FRAMEWORK_IMPORT_READ, Route("GET", _ALL, "List the frameworks the organization imported"))

    @operation(
        FRAMEWORK_IMPORT_WRITE,
        Route("POST", _ALL, "Import a framework from an OSCAL catalog or profile, or a CSV or XLSX sheet", 201),
        body=FrameworkImport,
        idempotent=True,
        result=ImportedFramework,
        example={"format": "csv", "content": _EXAMPLE_SHEET, "name": "Supplier rules", "version": "2026"},
    )
    def create(self, actor: Actor, data: FrameworkImport, once: Once) -> ImportedFramework:
        """The file is checked whole before anything is kept; every error is answered at once,
        named inside ``content`` (``content.rows[4].parent``, ``content.catalog.metadata``)."""
        now = self.uow.clock.now()
        organization_id = actor.organization_id

        def create() -> ImportedFramework:
            view = within(self.catalogue, tx, organization_id)
            record_id = self.uow.ids.new(IMPORTED_FRAMEWORKS.prefix)
            framework_id = data.framework_id or record_id
            if view.source(framework_id) is not None:
                raise ValidationError.field("frameworkId", framework_id, "is the id of a framework already installed")
            catalog_document, profile, base = self._catalog(view, data, now)
            base_source = view.source(base) if base else None
            kinds = data.control_kinds or (base_source.control_kinds if base_source is not None else ())
            catalog_text = json.dumps(catalog_document, ensure_ascii=False, indent=2)
            catalog = read_catalog(catalog_document)
            record = ImportedFramework(
                id=record_id,
                organization_id=organization_id,
                framework_id=framework_id,
                name=data.name or catalog.title[:255],
                version=data.version or catalog.version[:100],
                publisher=data.publisher or _IMPORTED_BY,
                format=data.format,
                base_framework=base,
                control_kinds=kinds,
                requirement_count=len(catalog.requirements),
                control_count=0,
                catalog_sha256=hashlib.sha256(catalog_text.encode()).hexdigest(),
                created_at=now,
                updated_at=now,
            )
            acting = imported_source(record)
            record = attrs.evolve(record, control_count=sum(1 for item in catalog.requirements if acting.acts_on(item)))
            if record.control_count == 0:
                raise ValidationError.field(
                    "controlKinds", list(data.control_kinds), "selects no requirement of the file"
                )
            tx[IMPORTED_FRAMEWORKS].add(record)
            tx[FRAMEWORK_DOCUMENTS].add(
                FrameworkDocument(
                    id=self.uow.ids.new(FRAMEWORK_DOCUMENTS.prefix),
                    organization_id=organization_id,
                    import_id=record.id,
                    catalog=catalog_text,
                    profile=profile,
                    created_at=now,
                    updated_at=now,
                )
            )
            tx.record(FrameworkImportCreated(organization_id=organization_id, subject=record))
            return record

        with self.uow.write(actor) as tx:
            result: ImportedFramework = once(tx, data, now, create)
            return result

    get = _TABLE.get(FRAMEWORK_IMPORT_READ, Route("GET", _ONE, "Read one imported framework"))

    @operation(
        FRAMEWORK_IMPORT_WRITE,
        Route("DELETE", _ONE, "Delete an imported framework the organization has not enabled"),
        result=None,
    )
    def delete(self, actor: Actor, import_id: str) -> None:
        """Refused while the framework is enabled (disable it first: its controls and statement
        rest on it); the mappings imported for it go with it."""
        organization_id = actor.organization_id
        with self.uow.write(actor) as tx:
            record = fetch(tx, IMPORTED_FRAMEWORKS, organization_id, import_id)
            enabled = every(
                tx[ENABLED_FRAMEWORKS], organization_id, EnabledFrameworkFilter(framework_id=record.framework_id)
            )
            if enabled:
                raise Conflict(
                    f"framework {record.framework_id} is enabled: disable it before deleting it",
                    {"frameworkId": record.framework_id},
                )
            dependants = [
                row.framework_id
                for row in every(tx[IMPORTED_FRAMEWORKS], organization_id, ImportedFrameworkFilter())
                if row.base_framework == record.framework_id
            ]
            if dependants:
                raise Conflict(
                    f"framework {record.framework_id} is the base of {', '.join(dependants)}",
                    {"frameworkId": record.framework_id, "bases": dependants},
                )
            for documents in every(
                tx[FRAMEWORK_DOCUMENTS], organization_id, FrameworkDocumentFilter(import_id=import_id)
            ):
                tx[FRAMEWORK_DOCUMENTS].delete(organization_id, documents.id)
            for side in ("source_framework", "target_framework"):
                filters = ImportedMappingFilter(**{side: record.framework_id})
                for pair in every(tx[IMPORTED_MAPPINGS], organization_id, filters):
                    tx[IMPORTED_MAPPINGS].delete(organization_id, pair.id)
            tx[IMPORTED_FRAMEWORKS].delete(organization_id, import_id)
            tx.record(FrameworkImportDeleted(organization_id=organization_id, subject=record))

    @operation(
        FRAMEWORK_IMPORT_READ,
        Route("GET", _ONE + "/export.oscal.json", "The import as OSCAL: the profile as imported, else its catalog"),
        result=Download,
        media_type=OSCAL_JSON,
    )
    def export_oscal(self, actor: Actor, import_id: str) -> Download:
        """A profile comes back byte for byte as it was imported (so it round-trips, and names
        the catalog it tailors as it did); a catalog or a sheet as the catalog it is kept as."""
        organization_id = actor.organization_id
        with self.uow.read() as session:
            record = fetch(session, IMPORTED_FRAMEWORKS, organization_id, import_id)
            found = every(session[FRAMEWORK_DOCUMENTS], organization_id, FrameworkDocumentFilter(import_id=import_id))
        if not found:
            raise NotFound.resource("framework document", import_id)
        body = (found[0].profile or found[0].catalog).encode()
        return Download(filename=f"{record.framework_id}.oscal.json", media_type=OSCAL_JSON, chunks=(body,))

    def _catalog(
        self, view: OrganizationCatalogue, data: FrameworkImport, now: dt.datetime
    ) -> tuple[dict[str, Any], str, str]:
        """(the catalog the file is kept as, the profile as imported or "", the base framework)."""
        raw = base64_content(data)
        title, version = data.name or "", data.version or "1"
        if data.format in (ImportFormat.CSV, ImportFormat.XLSX):
            if not title:
                raise ValidationError.field("name", None, "is required for a sheet (it has no title of its own)")
            return sheet_catalog(data.format, raw, title=title, version=version, now=now), "", ""
        if data.format is ImportFormat.OSCAL_CATALOG:
            return parse_document(raw, "catalog", self.models), "", ""
        profile = parse_document(raw, "profile", self.models)
        base = data.base_framework or self._base_of(view, profile_href(profile))
        document = view.document(base)
        if document is None:
            raise ValidationError.field("baseFramework", base, "names no framework installed or imported")
        metadata = profile["profile"]["metadata"]
        resolved = resolve_profile(
            profile,
            json.loads(document),
            title=data.name or str(metadata.get("title", title))[:255],
            version=data.version or str(metadata.get("version", version))[:100],
        )
        return resolved, raw.decode("utf-8"), base

    @staticmethod
    def _base_of(view: OrganizationCatalogue, file_name: str) -> str:
        """The framework whose catalog file the profile imports, by the file's name."""
        for source in view.installed():
            if source.catalog.path.rpartition("/")[2] == file_name:
                return source.id
        raise ValidationError.field(
            "baseFramework", file_name, "the profile imports a catalog file no framework has: name baseFramework"
        )


def base64_content(data: FrameworkImport) -> bytes:
    return RegisterFile(format="csv", content=data.content).data


def _service(context: Context) -> FrameworkImportService:
    from . import catalogue_of

    models = context.share("frameworks.oscal_models", installed_models)
    return FrameworkImportService(context.uow, context.pages, catalogue_of(context), models)


AREA = Area(
    name="framework_imports",
    tag="SOA",
    service=_service,
    api=FrameworkImportService,
    actions=(FRAMEWORK_IMPORT_READ, FRAMEWORK_IMPORT_WRITE),
    records=(IMPORTED_FRAMEWORKS, FRAMEWORK_DOCUMENTS),
    events=(FrameworkImportCreated, FrameworkImportDeleted),
)
