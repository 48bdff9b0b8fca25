"""Controls: enabling a framework, the controls it makes (reusing those a mapping says already
serve a requirement), what serves each control, and each control's status, derived.

A control's status is never set by hand. The policies, risks, tasks and evidence that name it
keep the link (``kernel.links``); this area reacts to each of their writes inside that write,
keeps an index of the links, and moves the status when what serves the control changes,
recording ``control.status_changed`` exactly once per change whatever caused it.
"""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import Iterable
from typing import Any

import attrs

from ...kernel.directory import Directory, every
from ...kernel.errors import Conflict, NotFound, ValidationError
from ...kernel.events import Event
from ...kernel.links import Linkable, LinkState
from ...kernel.operations import Once, Standard, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import Filter, fetch
from ...kernel.registry import Area, Download, Route, Session
from ...kernel.subjects import Commentable
from ...kernel.uow import Context, Tx, UnitOfWork
from ...kernel.validation import blank_text, choice, object_list, optional_text, text, wire_name
from . import catalogue_of, page_in_memory
from .catalogue import FrameworkCatalogue
from .control_models import (
    CONTROL_LINKS,
    CONTROL_READ,
    CONTROL_REQUIREMENTS,
    CONTROL_WRITE,
    CONTROLS,
    ENABLED_FRAMEWORKS,
    FRAMEWORK_ENABLE,
    IMPORTED_MAPPINGS,
    Control,
    ControlCreated,
    ControlDeleted,
    ControlLink,
    ControlLinkFilter,
    ControlOrigin,
    ControlPatch,
    ControlRequirement,
    ControlRequirementFilter,
    ControlStatusChanged,
    ControlUpdated,
    EnabledFramework,
    EnabledFrameworkFilter,
    FrameworkDisabled,
    FrameworkEnabled,
    ImportedMapping,
    ImportedMappingFilter,
    MappingImported,
    NewControl,
    derive_status,
)
from .imported import OrganizationCatalogue, within
from .mappings import MappingRelation
from .readiness import SVG, Readiness, readiness_of, svg_of
from .soa import open_statement
from .task_templates import seed_task_templates

__all__ = [
    "ControlService",
    "LinkRequest",
    "MappingEntry",
    "MappingImport",
    "MappingPair",
    "MappingFilter",
    "MappingImportReport",
    "AREA",
]

MAX_MAPPINGS = 5000
"""Pairs one import holds: NIST's SP 800-53 to ISO 27001 crosswalk has about a thousand."""

_REUSING = frozenset({"equal", "subset"})
"""Relations under which a requirement is served by a control of the requirement it maps to: the
same requirement, or one that contains it."""


@attrs.frozen(kw_only=True)
class LinkRequest:
    """A record to link to (or unlink from) a control, by what it is and its id."""

    kind: str = attrs.field(converter=text(50))
    """``policy``, ``risk`` (and ``task``, ``evidence`` once those areas exist)."""
    target_id: str = attrs.field(converter=text(100))


@attrs.frozen(kw_only=True)
class MappingEntry:
    """One pair of a mapping: ``source`` is ``relation`` to ``target`` (a subset of it, say)."""

    source: str = attrs.field(converter=text(100))
    target: str = attrs.field(converter=text(100))
    relation: MappingRelation = attrs.field(converter=choice(MappingRelation))


@attrs.frozen(kw_only=True)
class MappingImport:
    """A crosswalk between two frameworks of the catalogue, as the catalogue's own mapping files
    are written: a licensed one, or the organization's own."""

    source_framework: str = attrs.field(converter=text(100))
    target_framework: str = attrs.field(converter=text(100))
    publisher: str = attrs.field(default="", converter=blank_text(200))
    mappings: tuple[MappingEntry, ...] = attrs.field(converter=object_list(MappingEntry, "mappings", MAX_MAPPINGS))


@attrs.frozen(kw_only=True)
class MappingPair:
    """A mapping between two requirements, from the catalogue or imported by the organization."""

    id: str
    source_framework: str
    source_requirement: str
    target_framework: str
    target_requirement: str
    relation: str
    publisher: str
    imported: bool


@attrs.frozen(kw_only=True)
class MappingImportReport:
    source_framework: str
    target_framework: str
    imported: int
    """Pairs kept by this import."""
    already: int
    """Pairs the organization had imported before, not kept twice."""


@attrs.frozen(kw_only=True)
class MappingFilter(Filter):
    """Either side may be left out: a mapping list is then every pair with the given side."""

    source_framework: str | None = attrs.field(default=None, converter=optional_text(100))
    target_framework: str | None = attrs.field(default=None, converter=optional_text(100))


_TABLE = Standard(CONTROLS, id="control_id")
_CONTROLS = "/v1/controls"
_CONTROL = _CONTROLS + "/{control_id}"
_FRAMEWORK = "/v1/frameworks/{framework_id}"


@attrs.define
class ControlService:
    uow: UnitOfWork
    pages: PageCache
    catalogue: FrameworkCatalogue
    linkables: tuple[Linkable, ...] = ()
    _by_model: dict[type, Linkable] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        self._by_model = {link.records.model: link for link in self.linkables}

    # -- frameworks the organization takes on ----------------------------------------------

    @operation(
        FRAMEWORK_ENABLE,
        Route(
            "POST", _FRAMEWORK + "/enable", "Enable a framework: its controls, statement rows and task templates", 201
        ),
        result=EnabledFramework,
    )
    def enable(self, actor: Actor, framework_id: str) -> EnabledFramework:
        """One control per requirement the framework implements with controls, except where a
        mapping says a control of an enabled framework serves the requirement already (equal, or
        a requirement containing it): that control is reused, so work done once counts twice.
        Enabling a framework already enabled changes nothing and answers it as it is."""
        organization_id = actor.organization_id
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            view = within(self.catalogue, tx, organization_id)
            source, requirements = self._framework(view, framework_id)
            enabled: builtins.list[EnabledFramework] = every(
                tx[ENABLED_FRAMEWORKS], organization_id, EnabledFrameworkFilter()
            )
            already = next((item for item in enabled if item.framework_id == framework_id), None)
            if already is not None:
                return already
            reuse = self._reusable(tx, view, organization_id, framework_id, [item.framework_id for item in enabled])
            reused: dict[str, Control] = {}
            for requirement in requirements:
                control_id = reuse.get(requirement.id)
                control = (
                    None
                    if control_id is None
                    else reused.get(control_id) or tx[CONTROLS].get(organization_id, control_id)
                )
                if control is None:
                    control = Control(
                        id=self.uow.ids.new(CONTROLS.prefix),
                        organization_id=organization_id,
                        name=requirement.title[:255],
                        code=requirement.label[:50],
                        description=requirement.statement[:5000],
                        origin=ControlOrigin.CATALOGUE,
                        framework_ids=(framework_id,),
                        created_at=now,
                        updated_at=now,
                    )
                    tx[CONTROLS].add(control)
                    tx.record(ControlCreated(organization_id=organization_id, subject=control))
                elif framework_id not in control.framework_ids:
                    previous = control
                    control = attrs.evolve(
                        control, framework_ids=(*control.framework_ids, framework_id), updated_at=now
                    )
                    tx[CONTROLS].update(control)
                    tx.record(
                        ControlUpdated(
                            organization_id=organization_id,
                            subject=control,
                            previous={"framework_ids": previous.framework_ids},
                        )
                    )
                    reused[control.id] = control
                tx[CONTROL_REQUIREMENTS].add(
                    ControlRequirement(
                        id=self.uow.ids.new(CONTROL_REQUIREMENTS.prefix),
                        organization_id=organization_id,
                        framework_id=framework_id,
                        requirement_id=requirement.id,
                        label=requirement.label[:100],
                        title=requirement.title[:255],
                        control_id=control.id,
                        control_status=control.status,
                        created_at=now,
                        updated_at=now,
                    )
                )
            framework = EnabledFramework(
                id=self.uow.ids.new(ENABLED_FRAMEWORKS.prefix),
                organization_id=organization_id,
                framework_id=framework_id,
                name=source.name,
                requirement_count=len(requirements),
                created_at=now,
            )
            tx[ENABLED_FRAMEWORKS].add(framework)
            tx.record(FrameworkEnabled(organization_id=organization_id, subject=framework))
            seed_task_templates(tx, organization_id, framework_id, view.task_templates(framework_id), now, self.uow.ids)
            open_statement(tx, organization_id, framework_id, now, self.uow.ids)
        return framework

    @operation(
        FRAMEWORK_ENABLE,
        Route("POST", _FRAMEWORK + "/disable", "Disable a framework (its controls stay while they serve another)"),
        result=None,
    )
    def disable(self, actor: Actor, framework_id: str) -> None:
        """The framework's rows go; each of its controls loses the framework, and a control made
        for it that serves no other framework and that nothing but planned to-dos links to goes
        too (the tasks area takes away the to-dos the framework made). Statements of
        applicability already written stay, as the record of what was decided."""
        organization_id = actor.organization_id
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:
            enabled = every(tx[ENABLED_FRAMEWORKS], organization_id, _enabled_filter(framework_id))
            if not enabled:
                raise NotFound.resource("enabled framework", framework_id)
            rows = every(tx[CONTROL_REQUIREMENTS], organization_id, ControlRequirementFilter(framework_id=framework_id))
            for row in rows:
                tx[CONTROL_REQUIREMENTS].delete(organization_id, row.id)
            for control_id in dict.fromkeys(row.control_id for row in rows):
                control = tx[CONTROLS].get(organization_id, control_id)
                if control is None:
                    continue
                remaining = tuple(item for item in control.framework_ids if item != framework_id)
                links = every(tx[CONTROL_LINKS], organization_id, ControlLinkFilter(control_id=control_id))
                linked = [link for link in links if link.state is not LinkState.PLANNED]
                served = every(
                    tx[CONTROL_REQUIREMENTS], organization_id, ControlRequirementFilter(control_id=control_id)
                )
                if not remaining and not served and not linked and control.origin is ControlOrigin.CATALOGUE:
                    for link in links:  # only planned to-dos name it: they forget it, as on a delete
                        self._unlink(tx, organization_id, control_id, link.kind, link.target_id)
                        tx[CONTROL_LINKS].delete(organization_id, link.id)
                    tx[CONTROLS].delete(organization_id, control_id)
                    tx.record(ControlDeleted(organization_id=organization_id, subject=control))
                elif remaining != control.framework_ids:
                    changed = attrs.evolve(control, framework_ids=remaining, updated_at=now)
                    tx[CONTROLS].update(changed)
                    tx.record(
                        ControlUpdated(
                            organization_id=organization_id,
                            subject=changed,
                            previous={"framework_ids": control.framework_ids},
                        )
                    )
            for item in enabled:
                tx[ENABLED_FRAMEWORKS].delete(organization_id, item.id)
                tx.record(FrameworkDisabled(organization_id=organization_id, subject=item))

    @operation(
        CONTROL_READ,
        Route("GET", "/v1/frameworks/enabled", "List the frameworks the organization enabled"),
        filters=EnabledFrameworkFilter,
        paged=True,
        lists=ENABLED_FRAMEWORKS,
        result=EnabledFramework,
    )
    def enabled(
        self, actor: Actor, filters: EnabledFrameworkFilter | None = None, page: PageRequest | None = None
    ) -> Page[EnabledFramework]:
        return page_of(self, ENABLED_FRAMEWORKS, actor, filters or EnabledFrameworkFilter(), page)

    @operation(
        CONTROL_READ,
        Route("GET", _FRAMEWORK + "/controls", "An enabled framework's requirements with the control serving each"),
        filters=ControlRequirementFilter,
        paged=True,
        lists=CONTROL_REQUIREMENTS,
        result=ControlRequirement,
    )
    def requirement_controls(
        self,
        actor: Actor,
        framework_id: str,
        filters: ControlRequirementFilter | None = None,
        page: PageRequest | None = None,
    ) -> Page[ControlRequirement]:
        """The rows of one framework: its requirement, the control serving it and that control's
        status, its applicability; filtered by ``controlStatus``, ``applicable``, ``controlId``."""
        self._enabled(actor, framework_id)
        chosen = attrs.evolve(filters or ControlRequirementFilter(), framework_id=framework_id)
        return page_of(self, CONTROL_REQUIREMENTS, actor, chosen, page)

    @operation(
        CONTROL_READ,
        Route("GET", _FRAMEWORK + "/readiness", "How ready the organization is for an enabled framework"),
        result=Readiness,
    )
    def readiness(self, actor: Actor, framework_id: str) -> Readiness:
        """Of the requirements it applies, how many controls are implemented, in progress, not
        started or stale, and the share implemented."""
        framework = self._enabled(actor, framework_id)
        with self.uow.read() as session:
            rows = every(
                session[CONTROL_REQUIREMENTS],
                actor.organization_id,
                ControlRequirementFilter(framework_id=framework_id),
            )
        return readiness_of(framework_id, framework.name, rows)

    @operation(
        CONTROL_READ,
        Route("GET", _FRAMEWORK + "/readiness.svg", "The framework's readiness drawn as an SVG bar"),
        result=Download,
        media_type=SVG,
    )
    def readiness_svg(self, actor: Actor, framework_id: str) -> Download:
        picture = svg_of(self.readiness(actor, framework_id))
        return Download(filename=f"readiness-{framework_id}.svg", media_type=SVG, chunks=(picture,), inline=True)

    # -- controls -----------------------------------------------------------------------------

    list = _TABLE.list(CONTROL_READ, Route("GET", _CONTROLS, "List the organization's controls"))
    get = _TABLE.get(CONTROL_READ, Route("GET", _CONTROL, "Read one control"))

    @operation(
        CONTROL_WRITE,
        Route("POST", _CONTROLS, "Add a control of the organization's own", 201),
        body=NewControl,
        idempotent=True,
        result=Control,
        example={"name": "Quarterly access review", "code": "ORG-7", "description": "Owners review who has access."},
    )
    def create(self, actor: Actor, data: NewControl, once: Once) -> Control:
        now = self.uow.clock.now()

        def create() -> Control:
            Directory(tx).check_member(actor.organization_id, "ownerId", data.owner_id)
            control = Control(
                id=self.uow.ids.new(CONTROLS.prefix),
                organization_id=actor.organization_id,
                created_at=now,
                updated_at=now,
                **attrs.asdict(data, recurse=False),
            )
            tx[CONTROLS].add(control)
            tx.record(ControlCreated(organization_id=actor.organization_id, subject=control))
            return control

        with self.uow.write(actor) as tx:
            result: Control = once(tx, data, now, create)
            return result

    update = _TABLE.update(
        CONTROL_WRITE,
        Route("PATCH", _CONTROL, "Change a control's name, code, description or owner"),
        body=ControlPatch,
        event=ControlUpdated,
        example={"description": "Owners review who has access, each quarter."},
        check=lambda service, tx, actor, updated, previous: Directory(tx).check_member(
            actor.organization_id, "ownerId", updated.owner_id if "owner_id" in previous else None
        ),
    )

    @operation(CONTROL_WRITE, Route("DELETE", _CONTROL, "Delete a control that serves no requirement"), result=None)
    def delete(self, actor: Actor, control_id: str) -> None:
        """Only a control no enabled framework's requirement relies on (disable the framework or
        the requirement's row first); records that named it keep their ids until they change."""
        with self.uow.write(actor) as tx:
            control = fetch(tx, CONTROLS, actor.organization_id, control_id)
            if every(tx[CONTROL_REQUIREMENTS], actor.organization_id, ControlRequirementFilter(control_id=control_id)):
                raise Conflict(
                    f"control {control_id} serves requirements of an enabled framework", {"controlId": control_id}
                )
            for link in every(tx[CONTROL_LINKS], actor.organization_id, ControlLinkFilter(control_id=control_id)):
                self._unlink(tx, actor.organization_id, control_id, link.kind, link.target_id)
            for link in every(tx[CONTROL_LINKS], actor.organization_id, ControlLinkFilter(control_id=control_id)):
                tx[CONTROL_LINKS].delete(actor.organization_id, link.id)
            tx[CONTROLS].delete(actor.organization_id, control_id)
            tx.record(ControlDeleted(organization_id=actor.organization_id, subject=control))

    @operation(
        CONTROL_READ,
        Route("GET", _CONTROL + "/links", "What names the control: policies, risks, tasks, evidence"),
        filters=ControlLinkFilter,
        paged=True,
        lists=CONTROL_LINKS,
        result=ControlLink,
    )
    def links(
        self, actor: Actor, control_id: str, filters: ControlLinkFilter | None = None, page: PageRequest | None = None
    ) -> Page[ControlLink]:
        chosen = attrs.evolve(filters or ControlLinkFilter(), control_id=control_id)
        return page_of(self, CONTROL_LINKS, actor, chosen, page, under=(CONTROLS, control_id))

    @operation(
        CONTROL_WRITE,
        Route("POST", _CONTROL + "/link", "Link a policy, risk, task or evidence to the control"),
        body=LinkRequest,
        result=Control,
        example={"kind": "policy", "targetId": "pol_..."},
    )
    def link(self, actor: Actor, control_id: str, data: LinkRequest) -> Control:
        """The record itself gains the control's id (it keeps its links), as if its own area had
        been asked: its ``.updated`` event is recorded, and the control's status follows."""
        linkable = self._linkable(data.kind)
        with self.uow.write(actor) as tx:
            fetch(tx, CONTROLS, actor.organization_id, control_id)
            record = self._target(tx, linkable, actor.organization_id, data.target_id)
            ids = linkable.control_ids(record)
            if control_id not in ids:
                self._relink(tx, linkable, record, (*ids, control_id))
        return self._control(actor, control_id)

    @operation(
        CONTROL_WRITE,
        Route("POST", _CONTROL + "/unlink", "Unlink a policy, risk, task or evidence from the control"),
        body=LinkRequest,
        result=Control,
        example={"kind": "policy", "targetId": "pol_..."},
    )
    def unlink(self, actor: Actor, control_id: str, data: LinkRequest) -> Control:
        with self.uow.write(actor) as tx:
            fetch(tx, CONTROLS, actor.organization_id, control_id)
            self._unlink(tx, actor.organization_id, control_id, self._linkable(data.kind).kind, data.target_id)
        return self._control(actor, control_id)

    def _control(self, actor: Actor, control_id: str) -> Control:
        """The control as the write left it (its status moved by the reaction at the write's end)."""
        with self.uow.read() as session:
            return fetch(session, CONTROLS, actor.organization_id, control_id)

    # -- mappings ---------------------------------------------------------------------------

    @operation(
        CONTROL_READ,
        Route("GET", "/v1/mappings", "The mappings from one framework's requirements to another's"),
        filters=MappingFilter,
        paged=True,
        result=MappingPair,
    )
    def mappings(
        self, actor: Actor, filters: MappingFilter | None = None, page: PageRequest | None = None
    ) -> Page[MappingPair]:
        """The catalogue's pairs, then those the organization imported. With ``sourceFramework``
        (and ``targetFramework``) they are oriented from it (a pair stored the other way round
        is turned, subset becoming superset); without, each is listed as it is stored."""
        chosen = filters or MappingFilter()
        organization_id = actor.organization_id
        pairs: builtins.list[MappingPair] = []
        with self.uow.read() as session:
            view = within(self.catalogue, session, organization_id)
            if chosen.source_framework is None and chosen.target_framework is None:
                for mapping in view.mapping_sources:
                    pairs += self._catalogued(view, mapping.source, mapping.target)
                pairs += [
                    _pair(row, turned=False)
                    for row in every(session[IMPORTED_MAPPINGS], organization_id, ImportedMappingFilter())
                ]
            else:
                for source, target in self._framework_pairs(session, view, organization_id, chosen):
                    pairs += self._catalogued(view, source, target)
                    pairs += self._imported(session, organization_id, source, target)
        return page_in_memory(pairs, page or PageRequest())

    @staticmethod
    def _catalogued(view: OrganizationCatalogue, source: str, target: str) -> builtins.list[MappingPair]:
        return [
            MappingPair(
                id=f"{source}:{item.source_requirement}>{target}:{item.target_requirement}",
                source_framework=source,
                source_requirement=item.source_requirement,
                target_framework=target,
                target_requirement=item.target_requirement,
                relation=str(item.relation),
                publisher=item.publisher,
                imported=False,
            )
            for item in view.mappings_between(source, target)
        ]

    @staticmethod
    def _framework_pairs(
        session: Session, view: OrganizationCatalogue, organization_id: str, chosen: MappingFilter
    ) -> builtins.list[tuple[str, str]]:
        """The (source, target) framework pairs a list with a side given reads, each once."""
        source, target = chosen.source_framework, chosen.target_framework
        if source is not None and target is not None:
            return [(source, target)]
        stored = [(mapping.source, mapping.target) for mapping in view.mapping_sources]
        stored += [
            (row.source_framework, row.target_framework)
            for row in every(session[IMPORTED_MAPPINGS], organization_id, ImportedMappingFilter())
        ]
        given = str(source if source is not None else target)
        others = dict.fromkeys(b if a == given else a for a, b in stored if given in (a, b) and a != b)
        return [(given, other) if source is not None else (other, given) for other in others]

    @operation(
        CONTROL_WRITE,
        Route("POST", "/v1/mappings/import", "Import a mapping between two frameworks' requirements", 201),
        body=MappingImport,
        result=MappingImportReport,
        example={
            "sourceFramework": "iso-27001-2022",
            "targetFramework": "soc2-tsc-2017",
            "publisher": "Our auditor's crosswalk",
            "mappings": [{"source": "a.5.15", "target": "cc6.1", "relation": "subset"}],
        },
    )
    def import_mappings(self, actor: Actor, data: MappingImport) -> MappingImportReport:
        """Every pair is checked against the catalogue (both requirements exist, the relation is
        one of equal, subset, superset, intersects) before any is kept; a pair already imported
        is not kept twice. Frameworks enabled later reuse controls through these pairs."""
        errors = []
        with self.uow.read() as session:
            view = within(self.catalogue, session, actor.organization_id)
            for field, framework in (
                ("sourceFramework", data.source_framework),
                ("targetFramework", data.target_framework),
            ):
                if view.catalog(framework) is None:
                    errors.append(ValidationError.field(field, framework, "is no framework of the catalogue"))
            if errors:
                raise ValidationError.every(errors)
            known = {
                framework: {item.id for item in self._requirements(view, framework)}
                for framework in (data.source_framework, data.target_framework)
            }
        for index, entry in enumerate(data.mappings):
            if entry.source not in known[data.source_framework]:
                errors.append(
                    ValidationError.field(
                        f"mappings[{index}].source", entry.source, "is no requirement of sourceFramework"
                    )
                )
            if entry.target not in known[data.target_framework]:
                errors.append(
                    ValidationError.field(
                        f"mappings[{index}].target", entry.target, "is no requirement of targetFramework"
                    )
                )
        if errors:
            raise ValidationError.every(errors)
        now = self.uow.clock.now()
        organization_id = actor.organization_id
        with self.uow.write(actor) as tx:
            kept = {
                (row.source_requirement, row.target_requirement, row.relation)
                for row in every(
                    tx[IMPORTED_MAPPINGS],
                    organization_id,
                    ImportedMappingFilter(
                        source_framework=data.source_framework, target_framework=data.target_framework
                    ),
                )
            }
            imported = 0
            for entry in data.mappings:
                if (entry.source, entry.target, entry.relation) in kept:
                    continue
                imported += 1
                kept.add((entry.source, entry.target, entry.relation))
                row = ImportedMapping(
                    id=self.uow.ids.new(IMPORTED_MAPPINGS.prefix),
                    organization_id=organization_id,
                    source_framework=data.source_framework,
                    source_requirement=entry.source,
                    target_framework=data.target_framework,
                    target_requirement=entry.target,
                    relation=str(entry.relation),
                    publisher=data.publisher,
                    created_at=now,
                )
                tx[IMPORTED_MAPPINGS].add(row)
                tx.record(MappingImported(organization_id=organization_id, subject=row))
        return MappingImportReport(
            source_framework=data.source_framework,
            target_framework=data.target_framework,
            imported=imported,
            already=len(data.mappings) - imported,
        )

    def _imported(self, session: Session, organization_id: str, source: str, target: str) -> builtins.list[MappingPair]:
        """The organization's pairs from ``source`` to ``target``, those stored the other way turned."""
        straight = every(
            session[IMPORTED_MAPPINGS],
            organization_id,
            ImportedMappingFilter(source_framework=source, target_framework=target),
        )
        backward = every(
            session[IMPORTED_MAPPINGS],
            organization_id,
            ImportedMappingFilter(source_framework=target, target_framework=source),
        )
        return [_pair(row, turned=False) for row in straight] + [_pair(row, turned=True) for row in backward]

    # -- keeping statuses exact ------------------------------------------------------------

    def react(self, tx: Tx, event: Event) -> None:
        """Inside every write: a record that can serve controls changed, so its links and the
        statuses of the controls it serves (before and after) are brought up to date. The record
        is read as the write holds it now, not as the event saw it: one write may change it
        several times (unlinking it from one control, then another), and a deleted one links to
        nothing."""
        linkable = self._by_model.get(type(event.subject))
        if linkable is not None:
            current = tx[linkable.records].get(event.subject.organization_id, event.subject.id)
            self._sync(tx, linkable, event.subject if current is None else current, present=current is not None)

    def _sync(self, tx: Tx, linkable: Linkable, record: Any, *, present: bool = True) -> None:
        organization_id = record.organization_id
        now = self.uow.clock.now()
        state = linkable.state(record, now)
        wanted = dict.fromkeys(linkable.control_ids(record)) if state is not None and present else {}
        for control_id in wanted:
            if tx[CONTROLS].get(organization_id, control_id) is None:
                raise ValidationError.field(
                    wire_name(linkable.field), control_id, "names no control of the organization"
                )
        existing = every(tx[CONTROL_LINKS], organization_id, ControlLinkFilter(kind=linkable.kind, target_id=record.id))
        touched: list[str] = []
        for link in existing:
            if link.control_id not in wanted:
                tx[CONTROL_LINKS].delete(organization_id, link.id)
                touched.append(link.control_id)
            elif link.state != state:
                assert state is not None
                tx[CONTROL_LINKS].update(attrs.evolve(link, state=state, updated_at=now))
                touched.append(link.control_id)
        kept = {link.control_id for link in existing}
        for control_id in wanted:
            if control_id not in kept:
                assert state is not None
                tx[CONTROL_LINKS].add(
                    ControlLink(
                        id=self.uow.ids.new(CONTROL_LINKS.prefix),
                        organization_id=organization_id,
                        control_id=control_id,
                        kind=linkable.kind,
                        target_id=record.id,
                        state=state,
                        created_at=now,
                        updated_at=now,
                    )
                )
                touched.append(control_id)
        for control_id in dict.fromkeys(touched):
            self._restate(tx, organization_id, control_id, now)

    def _restate(self, tx: Tx, organization_id: str, control_id: str, now: dt.datetime) -> None:
        control = tx[CONTROLS].get(organization_id, control_id)
        if control is None:
            return
        links = every(tx[CONTROL_LINKS], organization_id, ControlLinkFilter(control_id=control_id))
        status = derive_status([link.state for link in links])
        if status is control.status:
            return
        changed = attrs.evolve(control, status=status, status_changed_at=now, updated_at=now)
        tx[CONTROLS].update(changed)
        for row in every(tx[CONTROL_REQUIREMENTS], organization_id, ControlRequirementFilter(control_id=control_id)):
            tx[CONTROL_REQUIREMENTS].update(attrs.evolve(row, control_status=status, updated_at=now))
        tx.record(
            ControlStatusChanged(organization_id=organization_id, subject=changed, previous={"status": control.status})
        )

    def _relink(self, tx: Tx, linkable: Linkable, record: Any, ids: tuple[str, ...]) -> None:
        changes: dict[str, Any] = {linkable.field: linkable.holding(record, ids)}
        if "updated_at" in attrs.fields_dict(type(record)):
            changes["updated_at"] = self.uow.clock.now()
        updated = attrs.evolve(record, **changes)
        tx[linkable.records].update(updated)
        tx.record(
            linkable.updated(
                organization_id=record.organization_id,
                subject=updated,
                previous={linkable.field: getattr(record, linkable.field)},
            )
        )

    def _unlink(self, tx: Tx, organization_id: str, control_id: str, kind: str, target_id: str) -> None:
        linkable = self._linkable(kind)
        record = self._target(tx, linkable, organization_id, target_id)
        ids = linkable.control_ids(record)
        if control_id in ids:
            self._relink(tx, linkable, record, tuple(item for item in ids if item != control_id))

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _target(tx: Tx, linkable: Linkable, organization_id: str, target_id: str) -> Any:
        """The record a link names: a body field, so a missing one is a 400 naming it."""
        record = tx[linkable.records].get(organization_id, target_id)
        if record is None:
            raise ValidationError.field("targetId", target_id, f"names no {linkable.kind} of the organization")
        return record

    def _linkable(self, kind: str) -> Linkable:
        for linkable in self.linkables:
            if linkable.kind == kind:
                return linkable
        known = ", ".join(linkable.kind for linkable in self.linkables)
        raise ValidationError.field("kind", kind, f"must be one of: {known}")

    @staticmethod
    def _framework(view: OrganizationCatalogue, framework_id: str) -> tuple[Any, tuple[Any, ...]]:
        source = view.source(framework_id)
        if source is None or view.catalog(framework_id) is None:
            raise NotFound.resource("framework", framework_id)
        return source, view.actionable(framework_id)

    def _enabled(self, actor: Actor, framework_id: str) -> EnabledFramework:
        with self.uow.read() as session:
            found = every(session[ENABLED_FRAMEWORKS], actor.organization_id, _enabled_filter(framework_id))
        if not found:
            raise NotFound.resource("enabled framework", framework_id)
        enabled: EnabledFramework = found[0]
        return enabled

    def _reusable(
        self,
        session: Session,
        view: OrganizationCatalogue,
        organization_id: str,
        framework_id: str,
        others: Iterable[str],
    ) -> dict[str, str]:
        """For each requirement of ``framework_id``, the control already serving a requirement
        of an enabled framework that it maps to under a reusing relation (first found wins:
        frameworks in the order they were enabled, the catalogue's mappings before imported ones)."""
        reuse: dict[str, str] = {}
        for other in others:
            served = {
                row.requirement_id: row.control_id
                for row in every(
                    session[CONTROL_REQUIREMENTS], organization_id, ControlRequirementFilter(framework_id=other)
                )
            }
            for source_requirement, target_requirement, relation in self._mappings(
                session, view, organization_id, framework_id, other
            ):
                if relation in _REUSING and target_requirement in served:
                    reuse.setdefault(source_requirement, served[target_requirement])
        return reuse

    def _mappings(
        self, session: Session, view: OrganizationCatalogue, organization_id: str, source: str, target: str
    ) -> tuple[tuple[str, str, str], ...]:
        """(source requirement, target requirement, relation) from ``source`` to ``target``:
        the catalogue's, then the organization's imported ones (either direction)."""
        catalogued = [
            (item.source_requirement, item.target_requirement, str(item.relation))
            for item in view.mappings_between(source, target)
        ]
        imported = [
            (pair.source_requirement, pair.target_requirement, pair.relation)
            for pair in self._imported(session, organization_id, source, target)
        ]
        return (*catalogued, *imported)

    @staticmethod
    def _requirements(view: OrganizationCatalogue, framework_id: str) -> tuple[Any, ...]:
        catalog = view.catalog(framework_id)
        return () if catalog is None else catalog.requirements


_INVERSE = {"subset": "superset", "superset": "subset"}


def _pair(row: ImportedMapping, *, turned: bool) -> MappingPair:
    """An imported row as a listed pair, read from its target's side when ``turned``."""
    if not turned:
        return MappingPair(
            id=row.id,
            source_framework=row.source_framework,
            source_requirement=row.source_requirement,
            target_framework=row.target_framework,
            target_requirement=row.target_requirement,
            relation=row.relation,
            publisher=row.publisher,
            imported=True,
        )
    return MappingPair(
        id=row.id,
        source_framework=row.target_framework,
        source_requirement=row.target_requirement,
        target_framework=row.source_framework,
        target_requirement=row.source_requirement,
        relation=_INVERSE.get(row.relation, row.relation),
        publisher=row.publisher,
        imported=True,
    )


def _service(context: Context) -> ControlService:
    service = ControlService(context.uow, context.pages, catalogue_of(context), context.links)
    context.uow.react(service.react)
    return service


AREA = Area(
    name="controls",
    tag="SOA",
    service=_service,
    api=ControlService,
    actions=(CONTROL_READ, CONTROL_WRITE, FRAMEWORK_ENABLE),
    ports=(Commentable(kind="control", records=CONTROLS, read=CONTROL_READ),),
    records=(ENABLED_FRAMEWORKS, CONTROLS, CONTROL_REQUIREMENTS, CONTROL_LINKS, IMPORTED_MAPPINGS),
    events=(
        FrameworkEnabled,
        FrameworkDisabled,
        ControlCreated,
        ControlUpdated,
        ControlDeleted,
        ControlStatusChanged,
        MappingImported,
    ),
)


def _enabled_filter(framework_id: str) -> EnabledFrameworkFilter:
    """The filter of one enabled framework; an id no framework can have (control characters, too
    long) is a 404 like any unknown id, not a 400: a path's id names, it is not a field."""
    try:
        return EnabledFrameworkFilter(framework_id=framework_id)
    except ValidationError:
        raise NotFound.resource("enabled framework", framework_id) from None
