"""Task templates: the recurring work a framework asks of an organization ("Review user access
rights", quarterly, IT, for ISO A.5.18 and A.8.2), kept per organization.

Each template belongs to one framework of the catalogue and names requirements of that
framework. Enabling a framework copies the framework's shipped seeds into this table
(``seed_task_templates``, called inside the enabling write; a seed already copied is never
copied again); users add their own. The Tasks area turns templates into tasks, so a template's
``frequency`` is either one of the reference's words (monthly, quarterly, yearly) or an RFC 5545
recurrence rule, stored as python-dateutil normalises it.

The reference keeps one global table under ``/v1/framework-editor/task-template``; here the
same paths answer the caller's organization's templates, so every organization edits its own.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import attrs

from ...kernel.directory import every
from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.ids import IdGenerator
from ...kernel.operations import Standard
from ...kernel.page_cache import PageCache
from ...kernel.permissions import MANAGERS, READERS, Action, Actor
from ...kernel.records import Filter, Records
from ...kernel.recurrence import FREQUENCY_PATTERN, KEYWORDS, expanded_rule, frequency, normalised_frequency
from ...kernel.registry import Area, Route
from ...kernel.uow import Tx, UnitOfWork
from ...kernel.validation import (
    UNSET,
    Checked,
    Patch,
    Unset,
    blank_text,
    choice,
    optional_choice,
    optional_text,
    patch_field,
    register_schema,
    text,
    wire_name,
)
from . import catalogue_of
from .catalogue import FrameworkCatalogue
from .imported import OrganizationCatalogue, within

__all__ = [
    "TaskTemplateDepartment",
    "TaskTemplateAutomationStatus",
    "TaskTemplateSource",
    "TaskTemplate",
    "NewTaskTemplate",
    "TaskTemplatePatch",
    "TaskTemplateFilter",
    "TaskTemplateSeedLike",
    "TaskTemplateService",
    "TASK_TEMPLATES",
    "TASK_TEMPLATE_READ",
    "TASK_TEMPLATE_WRITE",
    "TaskTemplateCreated",
    "TaskTemplateUpdated",
    "TaskTemplateDeleted",
    "FREQUENCY_PATTERN",
    "expanded_rule",
    "normalised_frequency",
    "seed_task_templates",
    "AREA",
]


class TaskTemplateDepartment(enum.StrEnum):
    """The reference's departments (its ``Departments`` enum)."""

    NONE = "none"
    ADMIN = "admin"
    GOV = "gov"
    HR = "hr"
    IT = "it"
    ITSM = "itsm"
    QMS = "qms"


class TaskTemplateAutomationStatus(enum.StrEnum):
    """Whether the evidence of the work is collected by hand or by an automation."""

    MANUAL = "manual"
    AUTOMATED = "automated"


class TaskTemplateSource(enum.StrEnum):
    CATALOGUE = "catalogue"
    """Copied from the framework's seeds when the organization enabled it."""
    CUSTOM = "custom"
    """Made by a user."""


_KEYWORDS = KEYWORDS

_REQUIREMENT_ID = r"^[A-Za-z_][A-Za-z0-9._-]*$"
"""OSCAL's token (the form of a catalog's ids), in ASCII."""
_REQUIREMENT_ID_FORM = re.compile(_REQUIREMENT_ID)


def _requirement_ids(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...] | Unset:
    if value is UNSET:  # a PATCH that leaves them
        return Unset.UNSET
    if value is None:
        return ()
    name = wire_name(field.name)
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field(name, value, "must be a list of requirement ids")
    if len(value) > 200:
        raise ValidationError.field(name, len(value), "at most 200 entries")
    for item in value:
        if not isinstance(item, str) or len(item) > 100 or not _REQUIREMENT_ID_FORM.fullmatch(item):
            raise ValidationError.field(name, item, "must be a requirement id of the framework's catalog, e.g. ac-2.1")
    return tuple(dict.fromkeys(value))


requirement_ids = register_schema(
    Checked(_requirement_ids, takes_field=True),
    {
        "type": "array",
        "maxItems": 200,
        "nullable": True,
        "items": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": _REQUIREMENT_ID},
        "description": "ids of requirements of the template's framework (GET /v1/frameworks/{frameworkId}/"
        "requirements); null means none; repeated ids are kept once",
    },
)


@attrs.frozen(kw_only=True)
class TaskTemplate:
    id: str
    organization_id: str
    framework_id: str
    """A framework of the catalogue."""
    name: str
    description: str = ""
    frequency: str
    """monthly, quarterly, yearly, or an RFC 5545 recurrence rule (``FREQ=WEEKLY;BYDAY=MO``)."""
    department: TaskTemplateDepartment = TaskTemplateDepartment.NONE
    requirement_ids: tuple[str, ...] = ()
    """Requirements of the framework the work serves."""
    automation_status: TaskTemplateAutomationStatus = TaskTemplateAutomationStatus.MANUAL
    source: TaskTemplateSource = TaskTemplateSource.CUSTOM
    seed_key: str | None = None
    """The seed a copied template came from: a seed is copied once per organization."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewTaskTemplate:
    framework_id: str = attrs.field(converter=text(100))
    name: str = attrs.field(converter=text(200))
    description: str = attrs.field(default="", converter=blank_text(5000))
    frequency: str = attrs.field(converter=frequency)
    department: TaskTemplateDepartment = attrs.field(
        default=TaskTemplateDepartment.NONE, converter=choice(TaskTemplateDepartment)
    )
    requirement_ids: tuple[str, ...] = attrs.field(default=(), converter=requirement_ids)
    automation_status: TaskTemplateAutomationStatus = attrs.field(
        default=TaskTemplateAutomationStatus.MANUAL, converter=choice(TaskTemplateAutomationStatus)
    )


_NEW = attrs.fields(NewTaskTemplate)


@attrs.frozen(kw_only=True)
class TaskTemplatePatch(Patch):
    """A template stays with its framework: ``frameworkId`` is not changed."""

    name: str | Unset = patch_field(_NEW.name.converter)
    description: str | Unset = patch_field(_NEW.description.converter)
    frequency: str | Unset = patch_field(_NEW.frequency.converter)
    department: TaskTemplateDepartment | Unset = patch_field(_NEW.department.converter)
    requirement_ids: tuple[str, ...] | Unset = patch_field(_NEW.requirement_ids.converter)
    automation_status: TaskTemplateAutomationStatus | Unset = patch_field(_NEW.automation_status.converter)


@attrs.frozen(kw_only=True)
class TaskTemplateFilter(Filter):
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    department: TaskTemplateDepartment | None = attrs.field(
        default=None, converter=optional_choice(TaskTemplateDepartment)
    )
    source: TaskTemplateSource | None = attrs.field(default=None, converter=optional_choice(TaskTemplateSource))


TASK_TEMPLATES: Records[TaskTemplate, TaskTemplateFilter] = Records(
    "task_templates",
    model=TaskTemplate,
    filters=TaskTemplateFilter,
    kind="task template",
    prefix="ftt",
    # framework_id is a catalogue key, not a parent record: its values are the handful of
    # frameworks the catalogue holds, and "this framework's templates" is how the list is read.
    facets=("framework_id", "department", "source"),
    searchable=("name", "description"),
    sortable=("name", "updated_at"),
    ranged="created_at",
    indexed=("name", "updated_at"),
)
TASK_TEMPLATE_READ = Action("task_template:read", READERS)
TASK_TEMPLATE_WRITE = Action("task_template:write", MANAGERS)


class TaskTemplateCreated(Event):
    """A task template was added: by a user, or copied from a seed when a framework was enabled."""

    type = "task_template.created"


class TaskTemplateUpdated(Event):
    """Some of a task template's fields changed; ``previous`` holds their old values."""

    type = "task_template.updated"


class TaskTemplateDeleted(Event):
    """A task template was deleted; ``data`` is the template as it was."""

    type = "task_template.deleted"


class TaskTemplateSeedLike(Protocol):
    """What ``seed_task_templates`` reads of a seed (the catalogue's ``TaskTemplateSeed``)."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def frequency(self) -> str: ...
    @property
    def department(self) -> str: ...
    @property
    def requirement_ids(self) -> Iterable[str]: ...


def seed_task_templates(
    tx: Tx,
    organization_id: str,
    framework_id: str,
    seeds: Iterable[TaskTemplateSeedLike],
    now: dt.datetime,
    ids: IdGenerator,
) -> list[TaskTemplate]:
    """Copy the framework's seeds the organization does not hold yet, inside the caller's write
    (enabling a framework), recording ``task_template.created`` for each; returns the copies.

    A seed is known by its key among the organization's templates of that framework, so
    enabling twice copies nothing the second time, and a copy the organization edited is left
    as it is. Seeds are the catalogue's shipped data: their frequency is normalised as a user's
    is, their requirement ids are taken as the catalogue gives them.
    """
    held = _seed_keys(tx, organization_id, framework_id)
    made: list[TaskTemplate] = []
    for seed in seeds:
        if seed.key in held:
            continue
        held.add(seed.key)
        template = TaskTemplate(
            id=ids.new(TASK_TEMPLATES.prefix),
            organization_id=organization_id,
            framework_id=framework_id,
            name=seed.name,
            description=seed.description,
            frequency=normalised_frequency(seed.frequency),
            department=TaskTemplateDepartment(seed.department),
            requirement_ids=tuple(dict.fromkeys(seed.requirement_ids)),
            source=TaskTemplateSource.CATALOGUE,
            seed_key=seed.key,
            created_at=now,
            updated_at=now,
        )
        tx[TASK_TEMPLATES].add(template)
        tx.record(TaskTemplateCreated(organization_id=organization_id, subject=template))
        made.append(template)
    return made


def _seed_keys(tx: Tx, organization_id: str, framework_id: str) -> set[str]:
    chosen = TaskTemplateFilter(framework_id=framework_id, source=TaskTemplateSource.CATALOGUE)
    return {item.seed_key for item in every(tx[TASK_TEMPLATES], organization_id, chosen) if item.seed_key is not None}


def _check_requirements(catalogue: OrganizationCatalogue, template: TaskTemplate) -> None:
    catalog = catalogue.catalog(template.framework_id)
    if catalog is None:
        raise ValidationError.field(
            "requirementIds",
            list(template.requirement_ids),
            f"framework {template.framework_id} is not in the catalogue",
        )
    known = {item.id: item for item in catalog.requirements}
    for requirement_id in template.requirement_ids:
        found = known.get(requirement_id)
        if found is None:
            raise ValidationError.field(
                "requirementIds", requirement_id, f"is no requirement of framework {template.framework_id}"
            )
        if found.withdrawn:
            raise ValidationError.field("requirementIds", requirement_id, "is withdrawn from the framework")


def _shaped(template: TaskTemplate) -> TaskTemplate:
    """The rule as dateutil writes it back (one it cannot expand is left for the check to refuse)."""
    if template.frequency in _KEYWORDS:
        return template
    try:
        return attrs.evolve(template, frequency=expanded_rule(template.frequency))
    except ValueError:
        return template


def _check_frequency(template: TaskTemplate) -> None:
    if template.frequency in _KEYWORDS:
        return
    try:
        expanded_rule(template.frequency)
    except ValueError as refused:
        raise ValidationError.field("frequency", template.frequency, str(refused)) from None


def _check_new(service: TaskTemplateService, tx: Tx, actor: Actor, template: TaskTemplate) -> None:
    catalogue = within(service.catalogue, tx, actor.organization_id)
    if catalogue.catalog(template.framework_id) is None:
        raise ValidationError.field("frameworkId", template.framework_id, "is no framework of the catalogue")
    _check_frequency(template)
    _check_requirements(catalogue, template)


def _check_change(
    service: TaskTemplateService, tx: Tx, actor: Actor, template: TaskTemplate, previous: Mapping[str, Any]
) -> None:
    if "frequency" in previous:
        _check_frequency(template)
    if "requirement_ids" in previous:
        _check_requirements(within(service.catalogue, tx, actor.organization_id), template)


_TABLE = Standard(TASK_TEMPLATES, id="template_id")
_ALL = "/v1/framework-editor/task-template"
_ONE = _ALL + "/{template_id}"


@attrs.define
class TaskTemplateService:
    uow: UnitOfWork
    pages: PageCache
    catalogue: FrameworkCatalogue

    list = _TABLE.list(TASK_TEMPLATE_READ, Route("GET", _ALL, "List the organization's task templates"))
    get = _TABLE.get(TASK_TEMPLATE_READ, Route("GET", _ONE, "Read one task template"))
    create = _TABLE.create(
        TASK_TEMPLATE_WRITE,
        Route("POST", _ALL, "Add a task template of a framework (a custom one)", 201),
        body=NewTaskTemplate,
        event=TaskTemplateCreated,
        shape=_shaped,
        check=_check_new,
        example={
            "frameworkId": "iso-27001-2022",
            "name": "Review user access rights",
            "description": "Check every account's access against its owner's role and remove what is not needed.",
            "frequency": "quarterly",
            "department": "it",
            "requirementIds": ["a.5.18", "a.8.2"],
        },
    )
    update = _TABLE.update(
        TASK_TEMPLATE_WRITE,
        Route("PATCH", _ONE, "Change some of a task template's fields (its framework stays)"),
        body=TaskTemplatePatch,
        event=TaskTemplateUpdated,
        shape=_shaped,
        check=_check_change,
        example={"frequency": "FREQ=MONTHLY;BYMONTHDAY=1"},
    )
    delete = _TABLE.delete(
        TASK_TEMPLATE_WRITE,
        Route("DELETE", _ONE, "Delete a task template (tasks made from it stay)"),
        event=TaskTemplateDeleted,
    )


AREA = Area(
    name="task_templates",
    tag="Framework Editor Task Templates",
    service=lambda context: TaskTemplateService(context.uow, context.pages, catalogue_of(context)),
    api=TaskTemplateService,
    actions=(TASK_TEMPLATE_READ, TASK_TEMPLATE_WRITE),
    records=(TASK_TEMPLATES,),
    events=(TaskTemplateCreated, TaskTemplateUpdated, TaskTemplateDeleted),
)
