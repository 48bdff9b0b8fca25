"""Finding templates: canned finding texts an auditor starts from, so the same gap is described the
same way every time. A finding created with ``templateId`` copies the template's content."""

from __future__ import annotations

import datetime as dt

import attrs

from ..kernel.events import Event
from ..kernel.idempotency import run_idempotent
from ..kernel.pagination import Page, PageCache, PageRequest
from ..kernel.permissions import MANAGERS, READERS, Action, Actor, authorize
from ..kernel.records import Filter, Records, changed, fetch, list_page
from ..kernel.registry import Area, Operation
from ..kernel.uow import UnitOfWork
from ..kernel.validation import Patch, Unset, blank_text, integer, optional_text, patch_field, text

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
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewFindingTemplate:
    category: str = attrs.field(converter=text(100))
    title: str = attrs.field(converter=text(255))
    content: str = attrs.field(default="", converter=blank_text(5000))
    order: int = attrs.field(default=0, converter=integer(0, 10_000))


_NEW = attrs.fields(NewFindingTemplate)


@attrs.frozen(kw_only=True)
class FindingTemplatePatch(Patch):
    category: str | Unset = patch_field(_NEW.category.converter)
    title: str | Unset = patch_field(_NEW.title.converter)
    content: str | None | Unset = patch_field(_NEW.content.converter)
    order: int | Unset = patch_field(_NEW.order.converter)


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


@attrs.define
class FindingTemplateService:
    uow: UnitOfWork
    pages: PageCache

    def list(
        self, actor: Actor, filters: FindingTemplateFilter | None = None, page: PageRequest | None = None
    ) -> Page[FindingTemplate]:
        authorize(actor, FINDING_TEMPLATE_READ)
        with self.uow.read() as session:
            return list_page(
                session,
                FINDING_TEMPLATES,
                self.pages,
                actor.organization_id,
                filters or FindingTemplateFilter(),
                page or PageRequest(),
            )

    def get(self, actor: Actor, template_id: str) -> FindingTemplate:
        authorize(actor, FINDING_TEMPLATE_READ)
        with self.uow.read() as session:
            return fetch(session, FINDING_TEMPLATES, actor.organization_id, template_id)

    def create(self, actor: Actor, data: NewFindingTemplate, *, idempotency_key: str | None = None) -> FindingTemplate:
        authorize(actor, FINDING_TEMPLATE_WRITE)
        now = self.uow.clock.now()

        def create() -> FindingTemplate:
            template = FindingTemplate(
                id=self.uow.ids.new(FINDING_TEMPLATES.prefix),
                organization_id=actor.organization_id,
                created_at=now,
                updated_at=now,
                **attrs.asdict(data, recurse=False),
            )
            tx[FINDING_TEMPLATES].add(template)
            tx.record(FindingTemplateCreated(organization_id=actor.organization_id, subject=template))
            return template

        with self.uow.write(actor) as tx:
            return run_idempotent(tx, actor, idempotency_key, "finding_templates.create", data, now, create)

    def update(self, actor: Actor, template_id: str, patch: FindingTemplatePatch) -> FindingTemplate:
        authorize(actor, FINDING_TEMPLATE_WRITE)
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = fetch(tx, FINDING_TEMPLATES, actor.organization_id, template_id)
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[FINDING_TEMPLATES].update(updated)
            tx.record(FindingTemplateUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    def delete(self, actor: Actor, template_id: str) -> None:
        """Findings made from the template keep its content and their ``templateId``."""
        authorize(actor, FINDING_TEMPLATE_WRITE)
        with self.uow.write(actor) as tx:
            current = fetch(tx, FINDING_TEMPLATES, actor.organization_id, template_id)
            tx[FINDING_TEMPLATES].delete(actor.organization_id, template_id)
            tx.record(FindingTemplateDeleted(organization_id=actor.organization_id, subject=current))


_TEMPLATE = ("template_id",)

AREA = Area(
    name="finding_templates",
    service=lambda context: FindingTemplateService(context.uow, context.pages),
    actions=(FINDING_TEMPLATE_READ, FINDING_TEMPLATE_WRITE),
    records=(FINDING_TEMPLATES,),
    events=(FindingTemplateCreated, FindingTemplateUpdated, FindingTemplateDeleted),
    operations=(
        Operation(
            name="finding_templates.list",
            action=FINDING_TEMPLATE_READ,
            filters=FindingTemplateFilter,
            paged=True,
            result=FindingTemplate,
        ),
        Operation(
            name="finding_templates.create",
            action=FINDING_TEMPLATE_WRITE,
            body=NewFindingTemplate,
            idempotent=True,
            result=FindingTemplate,
            example={
                "category": "evidence_issue",
                "title": "Evidence is out of date",
                "content": "The evidence predates the audit period.",
            },
        ),
        Operation(name="finding_templates.get", action=FINDING_TEMPLATE_READ, ids=_TEMPLATE, result=FindingTemplate),
        Operation(
            name="finding_templates.update",
            action=FINDING_TEMPLATE_WRITE,
            ids=_TEMPLATE,
            body=FindingTemplatePatch,
            result=FindingTemplate,
            example={"order": 2},
        ),
        Operation(name="finding_templates.delete", action=FINDING_TEMPLATE_WRITE, ids=_TEMPLATE, result=None),
    ),
)
