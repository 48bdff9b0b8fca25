"""The framework catalogue, read-only: the frameworks this package ships in its own words (ISO
27001, SOC 2, GDPR, DORA, NIS2: ``bundled.py``) and those whose published OSCAL files the
platform was given (NIST's: ``catalogue.py``), their requirement groups and requirements with
baseline membership (``oscal.py``), and the mappings between them (``mappings.py``). What an
organization does with them (enabled frameworks, controls, the statement of applicability, task
templates) is in the modules beside this one, each its own area.

The catalogue is the same for every organization and is not stored: it is read from the
published files on first use and kept by the platform's ``FrameworkCatalogue``. Lists are
therefore paged here, in memory, with the same ``meta`` as stored lists (no search, sort or
date range: those belong to stored tables). Every role that reads the organization reads it.
Tagged with the spec's group for frameworks, "SOA" ("Frameworks and statement of applicability").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Protocol, TypeVar

import attrs

from ...kernel.errors import NotFound, ValidationError
from ...kernel.operations import operation
from ...kernel.pages import Page, PageRequest, Position
from ...kernel.permissions import EVERYONE, Action, Actor
from ...kernel.records import Filter
from ...kernel.registry import Area, Download, Route
from ...kernel.uow import Context, UnitOfWork
from ...kernel.validation import optional_text
from .catalogue import FrameworkCatalogue, Frameworks, FrameworkSource
from .imported import OrganizationCatalogue, within
from .mappings import RequirementMapping
from .oscal import Catalog, Requirement, RequirementGroup

__all__ = ["Framework", "Requirement", "RequirementFilter", "FrameworkService", "Frameworks", "FRAMEWORK_READ", "AREA"]

FRAMEWORK_READ = Action("framework:read", EVERYONE)
"""The catalogue is public knowledge: whoever reads the organization reads it."""


@attrs.frozen(kw_only=True)
class Framework:
    """A framework of the catalogue, with where its text comes from."""

    id: str
    name: str
    version: str
    """The version the publisher gave the files (SP 800-53: ``5.1.1+u4``)."""
    title: str
    """The catalog's own title."""
    publisher: str
    source_url: str
    source_commit: str
    """The publisher repository's commit the files were taken from."""
    last_modified: str
    baselines: tuple[str, ...]
    groups: tuple[RequirementGroup, ...]
    requirement_count: int
    control_count: int
    """How many of its requirements become a control, and a row of the statement, when enabled
    (ISO 27001: its 93 Annex A controls, not its clauses)."""
    bundled: bool
    """Shipped with the platform in its own words (identifiers with summaries), not the
    publisher's text; ``publisher`` says so."""
    imported: bool = False
    """Imported by the organization (``/v1/framework-imports``): only it sees it."""


@attrs.frozen(kw_only=True)
class FrameworkExport:
    framework: Framework
    requirements: tuple[Requirement, ...]
    mappings: tuple[RequirementMapping, ...]
    """The framework's pairs to every other installed framework, oriented from it."""


OSCAL_JSON = "application/oscal+json"


@attrs.frozen(kw_only=True)
class RequirementFilter(Filter):
    """``groupId`` and ``parentId`` match exactly; ``baseline`` keeps the requirements it selects."""

    group_id: str | None = attrs.field(default=None, converter=optional_text(100))
    parent_id: str | None = attrs.field(default=None, converter=optional_text(100))
    baseline: str | None = attrs.field(default=None, converter=optional_text(100))

    def matches(self, record: Requirement) -> bool:
        return (
            (self.group_id is None or record.group_id == self.group_id)
            and (self.parent_id is None or record.parent_id == self.parent_id)
            and (self.baseline is None or self.baseline in record.baselines)
        )


_ALL = "/v1/frameworks"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
"""The time a walk's cursor carries: the catalogue's items have no creation time of their own."""
_ONE = _ALL + "/{framework_id}"
_REQUIREMENTS = _ONE + "/requirements"


@attrs.define
class FrameworkService:
    uow: UnitOfWork
    catalogue: FrameworkCatalogue

    @operation(FRAMEWORK_READ, Route("GET", _ALL, "List the frameworks of the catalogue"), paged=True, result=Framework)
    def list(self, actor: Actor, page: PageRequest | None = None) -> Page[Framework]:
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            frameworks = [self._framework(view, source) for source in view.installed()]
        return page_in_memory(frameworks, page or PageRequest())

    @operation(FRAMEWORK_READ, Route("GET", _ONE, "Read one framework with its requirement groups"), result=Framework)
    def get(self, actor: Actor, framework_id: str) -> Framework:
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            return self._framework(view, self._source(view, framework_id))

    @operation(
        FRAMEWORK_READ,
        Route("GET", _REQUIREMENTS, "List a framework's requirements"),
        filters=RequirementFilter,
        paged=True,
        result=Requirement,
    )
    def requirements(
        self, actor: Actor, framework_id: str, filters: RequirementFilter | None = None, page: PageRequest | None = None
    ) -> Page[Requirement]:
        catalog = self._catalog(actor, framework_id)
        chosen = filters or RequirementFilter()
        return page_in_memory([item for item in catalog.requirements if chosen.matches(item)], page or PageRequest())

    @operation(
        FRAMEWORK_READ, Route("GET", _REQUIREMENTS + "/{requirement_id}", "Read one requirement"), result=Requirement
    )
    def requirement(self, actor: Actor, framework_id: str, requirement_id: str) -> Requirement:
        catalog = self._catalog(actor, framework_id)
        found = next((item for item in catalog.requirements if item.id == requirement_id), None)
        if found is None:
            raise NotFound.resource("requirement", requirement_id)
        return found

    @operation(
        FRAMEWORK_READ,
        Route("GET", _ONE + "/export.oscal.json", "The framework as its OSCAL catalog, as published"),
        result=Download,
        media_type=OSCAL_JSON,
    )
    def export_oscal(self, actor: Actor, framework_id: str) -> Download:
        """The catalog file itself, whose bytes match the checksums the catalogue records, so
        any OSCAL tool (compliance-trestle) reads the same framework this platform reads."""
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            self._source(view, framework_id)
            document = view.document(framework_id)
        if document is None:
            raise NotFound.resource("framework", framework_id)
        return Download(filename=f"{framework_id}.oscal.json", media_type=OSCAL_JSON, chunks=(document,))

    @operation(
        FRAMEWORK_READ,
        Route("GET", _ONE + "/export.json", "The framework and all its requirements as one JSON document"),
        result=FrameworkExport,
    )
    def export(self, actor: Actor, framework_id: str) -> FrameworkExport:
        """The framework with every requirement (the list pages; this is the whole of it, for a
        spreadsheet or a script), and the pairs mapping it to the other installed frameworks."""
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            framework = self._framework(view, self._source(view, framework_id))
            catalog = view.catalog(framework_id)
            assert catalog is not None
            mappings = tuple(
                mapping
                for other in view.installed()
                if other.id != framework_id
                for mapping in view.mappings_between(framework_id, other.id)
            )
        return FrameworkExport(framework=framework, requirements=catalog.requirements, mappings=mappings)

    def _catalog(self, actor: Actor, framework_id: str) -> Catalog:
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            catalog = view.catalog(self._source(view, framework_id).id)
        assert catalog is not None
        return catalog

    @staticmethod
    def _source(view: OrganizationCatalogue, framework_id: str) -> FrameworkSource:
        source = view.source(framework_id)
        if source is None or view.catalog(framework_id) is None:
            raise NotFound.resource("framework", framework_id)
        return source

    @staticmethod
    def _framework(view: OrganizationCatalogue, source: FrameworkSource) -> Framework:
        catalog = view.catalog(source.id)
        assert catalog is not None
        return Framework(
            id=source.id,
            name=source.name,
            version=source.version,
            title=catalog.title,
            publisher=source.publisher,
            source_url=source.repository,
            source_commit=source.commit,
            last_modified=catalog.last_modified,
            baselines=tuple(name for name, _ in source.baselines),
            groups=catalog.groups,
            requirement_count=len(catalog.requirements),
            control_count=len(view.actionable(source.id)),
            bundled=source.bundled,
            imported=source.id in view.imports,
        )


def catalogue_of(context: Context) -> FrameworkCatalogue:
    """The platform's one catalogue, which every service of this package reads."""
    return context.share(
        "frameworks.catalogue", lambda: FrameworkCatalogue(context.settings.get("frameworks") or Frameworks())
    )


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


_Item = TypeVar("_Item", bound=_Identified)


def page_in_memory(items: Sequence[_Item], request: PageRequest) -> Page[_Item]:
    """A page of a list the catalogue gives, in its order; a cursor walk continues after the
    id it last served (a cursor naming no item of the list is refused)."""
    if not request.walk:
        start = (request.page - 1) * request.per_page
        return Page(
            items=tuple(items[start : start + request.per_page]),
            total=len(items),
            page=request.page,
            per_page=request.per_page,
            request=request,
        )
    start = 0
    if request.after is not None:
        ids = [item.id for item in items]
        if request.after.id not in ids or request.after.created_at != _EPOCH:
            raise ValidationError.field(
                "cursor",
                request.after.id,
                "names no item of this list (forged, altered, or from another list: start the walk again "
                "with an empty cursor)",
            )
        start = ids.index(request.after.id) + 1
    chosen = tuple(items[start : start + request.per_page])
    following = None
    if chosen and len(chosen) == request.per_page:
        following = Position(_EPOCH, chosen[-1].id, start + len(chosen))
    return Page(
        items=chosen,
        total=len(items),
        page=request.page,
        per_page=request.per_page,
        walk=True,
        after=request.after,
        next_after=following,
        request=request,
    )


AREA = Area(
    name="frameworks",
    tag="SOA",
    service=lambda context: FrameworkService(context.uow, catalogue_of(context)),
    api=FrameworkService,
    actions=(FRAMEWORK_READ,),
)
