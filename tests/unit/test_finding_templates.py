"""Finding templates in-process: the area's own rules (the generic suites cover the rest)."""

from __future__ import annotations

import attrs
import pytest

from compliance_core import Forbidden, NotFound, PageRequest, Role, ValidationError
from compliance_core.areas.finding_templates import (
    FindingTemplateDeleted,
    FindingTemplateFilter,
    FindingTemplatePatch,
    FindingTemplateUpdated,
    NewFindingTemplate,
)
from compliance_core.areas.findings import NewFinding, Severity
from compliance_core.kernel.events import OUTBOX

STALE = NewFindingTemplate(
    category="evidence_issue", title="Evidence is out of date", content="The evidence predates the audit period."
)


def test_a_finding_made_from_a_template_copies_its_content(platform, owner) -> None:
    template = platform.finding_templates.create(owner, STALE)
    finding = platform.findings.create(
        owner, NewFinding(title="Access review", severity="medium", template_id=template.id)
    )
    assert finding.content == "The evidence predates the audit period."
    assert finding.template_id == template.id


def test_content_given_with_a_template_wins(platform, owner) -> None:
    template = platform.finding_templates.create(owner, STALE)
    finding = platform.findings.create(
        owner, NewFinding(title="T", severity="low", content="Own words", template_id=template.id)
    )
    assert finding.content == "Own words"


def test_a_template_of_another_organization_is_refused(platform, owner, other_org) -> None:
    template = platform.finding_templates.create(other_org, STALE)
    with pytest.raises(ValidationError) as raised:
        platform.findings.create(owner, NewFinding(title="T", severity="low", template_id=template.id))
    assert raised.value.details["field"] == "templateId"
    assert platform.findings.list(owner).total == 0


def test_findings_keep_their_text_when_the_template_is_deleted(platform, owner) -> None:
    template = platform.finding_templates.create(owner, STALE)
    finding = platform.findings.create(owner, NewFinding(title="T", severity="low", template_id=template.id))
    platform.finding_templates.delete(owner, template.id)
    with pytest.raises(NotFound):
        platform.finding_templates.get(owner, template.id)
    assert platform.findings.get(owner, finding.id).content == STALE.content
    with platform.uow.read() as session:
        types = [m.type for m in session[OUTBOX].pending(100)]
    assert types[-1] == FindingTemplateDeleted.type


def test_update_changes_only_what_was_sent_and_says_what_it_was(platform, owner) -> None:
    template = platform.finding_templates.create(owner, STALE)
    updated = platform.finding_templates.update(owner, template.id, FindingTemplatePatch(order=3, content=None))
    assert (updated.order, updated.content, updated.title) == (3, "", STALE.title)
    with platform.uow.read() as session:
        last = session[OUTBOX].pending(100)[-1]
    assert last.type == FindingTemplateUpdated.type
    assert last.payload["previous"] == {"order": 0, "content": STALE.content}


def test_list_filters_by_exact_category(platform, owner) -> None:
    platform.finding_templates.create(owner, STALE)
    platform.finding_templates.create(owner, NewFindingTemplate(category="further_evidence", title="More"))
    page = platform.finding_templates.list(owner, FindingTemplateFilter(category="further_evidence"), PageRequest())
    assert [t.title for t in page.items] == ["More"]


@pytest.mark.parametrize(("field", "value"), [("order", -1), ("order", True), ("title", ""), ("category", 5)])
def test_bad_fields_are_named(field: str, value: object) -> None:
    fields = {"category": "c", "title": "t", field: value}
    with pytest.raises(ValidationError) as raised:
        NewFindingTemplate(**fields)  # type: ignore[arg-type]
    assert raised.value.details["field"] == field


def test_staff_do_not_read_templates_and_auditors_do_not_write_them(platform, actor_as) -> None:
    with pytest.raises(Forbidden):
        platform.finding_templates.list(actor_as(Role.EMPLOYEE))
    with pytest.raises(Forbidden):
        platform.finding_templates.create(actor_as(Role.AUDITOR), STALE)
    assert platform.finding_templates.list(actor_as(Role.AUDITOR)).total == 0


def test_a_finding_from_a_template_takes_its_title_and_severity_when_the_body_omits_them(platform, owner) -> None:
    template = platform.finding_templates.create(owner, attrs.evolve(STALE, severity="high"))
    finding = platform.findings.create(owner, NewFinding(template_id=template.id))
    assert (finding.title, finding.severity, finding.content) == (STALE.title, Severity.HIGH, STALE.content)


def test_the_bodys_title_and_severity_win_over_the_templates(platform, owner) -> None:
    template = platform.finding_templates.create(owner, attrs.evolve(STALE, severity="high"))
    finding = platform.findings.create(owner, NewFinding(title="Own", severity="low", template_id=template.id))
    assert (finding.title, finding.severity) == ("Own", Severity.LOW)


def test_a_template_without_severity_leaves_it_to_the_body(platform, owner) -> None:
    template = platform.finding_templates.create(owner, STALE)
    assert template.severity is None
    with pytest.raises(ValidationError) as raised:
        platform.findings.create(owner, NewFinding(template_id=template.id))
    assert [e["field"] for e in raised.value.details["errors"]] == ["severity"]
    assert platform.findings.list(owner).total == 0
    made = platform.findings.create(owner, NewFinding(severity="info", template_id=template.id))
    assert (made.title, made.severity) == (STALE.title, Severity.INFO)


def test_without_a_template_title_and_severity_are_both_named_missing(platform, owner) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.findings.create(owner, NewFinding(content="text only"))
    assert [e["field"] for e in raised.value.details["errors"]] == ["title", "severity"]
    assert raised.value.details["field"] == "title"


def test_a_templates_severity_is_set_changed_and_cleared(platform, owner) -> None:
    template = platform.finding_templates.create(owner, attrs.evolve(STALE, severity="critical"))
    assert template.severity is Severity.CRITICAL
    changed = platform.finding_templates.update(owner, template.id, FindingTemplatePatch(severity="low"))
    assert changed.severity is Severity.LOW
    assert platform.finding_templates.update(owner, template.id, FindingTemplatePatch(severity=None)).severity is None
    with pytest.raises(ValidationError) as raised:
        NewFindingTemplate(category="c", title="t", severity="dire")
    assert raised.value.details["field"] == "severity"
