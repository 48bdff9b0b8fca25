"""Finding templates: canned finding texts an auditor starts from, so the same gap is described the
same way every time. A finding created with ``templateId`` copies the template's content, and
takes its title and severity when the finding's body leaves them out."""

from __future__ import annotations

import datetime as dt

import attrs

from ..kernel.events import Event
from ..kernel.operations import Standard
from ..kernel.page_cache import PageCache
from ..kernel.permissions import MANAGERS, READERS, Action
from ..kernel.records import Filter, Records
from ..kernel.registry import Area, Route
from ..kernel.severities import Severity
from ..kernel.uow import UnitOfWork
from ..kernel.validation import (
    Patch,
    Unset,
    blank_text,
    integer,
    optional_choice,
    optional_text,
    patch_field,
    text,
)

__all__ = [
    "FindingTemplate",
    "NewFindingTemplate",
    "FindingTemplatePatch",
    "FindingTemplateFilter",
    "FindingTemplateService",
    "FINDING_TEMPLATES",
    "FINDING_TEMPLATE_READ",
    "FINDING_TEMPLATE_WRITE",
    "FindingTemplateCreated",
    "FindingTemplateUpdated",
    "FindingTemplateDeleted",
    "AREA",
]

SUGGESTED_CATEGORIES = ("evidence_issue", "further_evidence", "task_specific", "na_incorrect")
"""Categories the reference platform ships; any text is accepted."""


@attrs.frozen(kw_only=True)
class FindingTemplate:
    id: str
    organization_id: str
    category: str
    title: str
    content: str = ""
    order: int = 0
    severity: Severity | None = None
    """The severity a finding made from the template takes when its body gives none."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewFindingTemplate:
    category: str = attrs.field(converter=text(100))
    title: str = attrs.field(converter=text(255))
    content: str = attrs.field(default="", converter=blank_text(5000))
    order: int = attrs.field(default=0, converter=integer(0, 10_000))
    severity: Severity | None = attrs.field(default=None, converter=optional_choice(Severity))


_NEW = attrs.fields(NewFindingTemplate)


@attrs.frozen(kw_only=True)
class FindingTemplatePatch(Patch):
    category: str | Unset = patch_field(_NEW.category.converter)
    title: str | Unset = patch_field(_NEW.title.converter)
    content: str | None | Unset = patch_field(_NEW.content.converter)
    order: int | Unset = patch_field(_NEW.order.converter)
    severity: Severity | None | Unset = patch_field(_NEW.severity.converter)


@attrs.frozen(kw_only=True)
class FindingTemplateFilter(Filter):
    category: str | None = attrs.field(default=None, converter=optional_text(100))


FINDING_TEMPLATES: Records[FindingTemplate, FindingTemplateFilter] = Records(
    "finding_templates",
    model=FindingTemplate,
    filters=FindingTemplateFilter,
    kind="finding template",
    prefix="ftp",
    facets=("category",),
    searchable=("title", "content", "category"),
    sortable=("title", "category", "order", "updated_at"),
    ranged="created_at",
)
FINDING_TEMPLATE_READ = Action("finding_template:read", READERS)
FINDING_TEMPLATE_WRITE = Action("finding_template:write", MANAGERS)


class FindingTemplateCreated(Event):
    """A finding template was added."""

    type = "finding_template.created"


class FindingTemplateUpdated(Event):
    """Some of a finding template's fields changed; ``previous`` holds their old values."""

    type = "finding_template.updated"


class FindingTemplateDeleted(Event):
    """A finding template was deleted; ``data`` is the template as it was."""

    type = "finding_template.deleted"


_TABLE = Standard(FINDING_TEMPLATES, id="template_id")
_ALL = "/v1/finding-templates"
_ONE = "/v1/finding-templates/{template_id}"
_EARLIER = "/v1/finding-template"
"""The reference platform's singular path, which this area answered first: still answered."""


def _route(method: str, path: str, summary: str, status: int | None = None) -> Route:
    """A route on the plural path, also answered on the earlier singular one."""
    return Route(method, path, summary, status, aliases=(path.replace(_ALL, _EARLIER, 1),))


@attrs.define
class FindingTemplateService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(FINDING_TEMPLATE_READ, _route("GET", _ALL, "List finding templates"))
    create = _TABLE.create(
        FINDING_TEMPLATE_WRITE,
        _route("POST", _ALL, "Add a finding template", 201),
        body=NewFindingTemplate,
        event=FindingTemplateCreated,
        example={
            "category": "evidence_issue",
            "title": "Evidence is out of date",
            "content": "The evidence predates the audit period.",
            "severity": "medium",
        },
    )
    get = _TABLE.get(FINDING_TEMPLATE_READ, _route("GET", _ONE, "Read one finding template"))
    update = _TABLE.update(
        FINDING_TEMPLATE_WRITE,
        _route("PATCH", _ONE, "Change some of a finding template's fields"),
        body=FindingTemplatePatch,
        event=FindingTemplateUpdated,
        example={"order": 2},
    )
    delete = _TABLE.delete(
        FINDING_TEMPLATE_WRITE,
        _route("DELETE", _ONE, "Delete a finding template (findings made from it keep their text)"),
        event=FindingTemplateDeleted,
    )


AREA = Area(
    name="finding_templates",
    tag="Finding Templates",
    service=lambda context: FindingTemplateService(context.uow, context.pages),
    api=FindingTemplateService,
    actions=(FINDING_TEMPLATE_READ, FINDING_TEMPLATE_WRITE),
    records=(FINDING_TEMPLATES,),
    events=(FindingTemplateCreated, FindingTemplateUpdated, FindingTemplateDeleted),
)
