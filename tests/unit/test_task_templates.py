"""Task templates in-process: the area's own rules (the generic suites cover the rest), on a
platform whose catalogue holds the tests' example framework (requirements ex-1, ex-1.1, ex-2
withdrawn, GV.OC and GV.OC-01)."""

from __future__ import annotations

import re
from typing import Any

import attrs
import pytest
from oscal_examples import example_frameworks

from compliance_core import (
    Forbidden,
    FrozenClock,
    NotFound,
    PageRequest,
    Platform,
    Role,
    SequentialIds,
    ValidationError,
)
from compliance_core.areas.frameworks.task_templates import (
    FREQUENCY_PATTERN,
    TASK_TEMPLATES,
    NewTaskTemplate,
    TaskTemplateAutomationStatus,
    TaskTemplateDepartment,
    TaskTemplateFilter,
    TaskTemplatePatch,
    TaskTemplateSource,
    normalised_frequency,
    seed_task_templates,
)
from compliance_core.kernel.audit import AUDIT_LOG, AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_store.memory import MemoryStore

ACCESS_REVIEW = NewTaskTemplate(
    framework_id="example",
    name="Review user access rights",
    frequency="quarterly",
    department="it",
    requirement_ids=["ex-1", "GV.OC-01"],
)


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return Platform(MemoryStore(), clock=clock, ids=SequentialIds(), settings={"frameworks": example_frameworks()})


@attrs.frozen
class Seed:
    """A seed as the catalogue ships one (the shape ``seed_task_templates`` reads)."""

    key: str
    name: str
    frequency: str = "yearly"
    department: str = "gov"
    description: str = ""
    requirement_ids: tuple[str, ...] = ()


SEEDS = (
    Seed("access-review", "Review access", "quarterly", "it", "Check who has access.", ("ex-1",)),
    Seed(
        "weekly-scan", "Scan for vulnerabilities", "RRULE:FREQ=WEEKLY;BYDAY=TU;BYDAY=MO", "it", "", ("ex-1.1", "ex-1.1")
    ),
)


def _outbox(platform: Platform) -> list[Any]:
    with platform.uow.read() as session:
        return list(session[OUTBOX].pending(1000))


def _seed(platform: Platform, organization_id: str, seeds: Any = SEEDS, framework_id: str = "example") -> list[Any]:
    with platform.uow.write(None) as tx:
        return seed_task_templates(tx, organization_id, framework_id, seeds, platform.clock.now(), platform.uow.ids)


def test_a_custom_template_is_made_with_its_defaults_and_audited(platform, owner) -> None:
    made = platform.task_templates.create(owner, ACCESS_REVIEW)
    assert made.id.startswith("ftt")
    assert (made.source, made.seed_key, made.automation_status) == (
        TaskTemplateSource.CUSTOM,
        None,
        TaskTemplateAutomationStatus.MANUAL,
    )
    assert (made.department, made.requirement_ids, made.frequency) == (
        TaskTemplateDepartment.IT,
        ("ex-1", "GV.OC-01"),
        "quarterly",
    )
    assert platform.task_templates.get(owner, made.id) == made
    assert [m.type for m in _outbox(platform)] == ["task_template.created"]
    with platform.uow.read() as session:
        audited, _ = session[AUDIT_LOG].list(owner.organization_id, AuditFilter(entity_id=made.id), PageRequest())
    assert [entry.action for entry in audited] == ["task_template.created"]


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("monthly", "monthly"),
        ("yearly", "yearly"),
        ("FREQ=WEEKLY;BYDAY=MO", "FREQ=WEEKLY;BYDAY=MO"),
        ("RRULE:FREQ=WEEKLY;BYDAY=MO", "FREQ=WEEKLY;BYDAY=MO"),
        ("FREQ=WEEKLY;BYDAY=TU;BYDAY=MO", "FREQ=WEEKLY;BYDAY=MO"),
        ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=1;INTERVAL=2", "FREQ=MONTHLY;INTERVAL=2;BYSETPOS=1;BYDAY=MO"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"),
        ("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR"),
    ],
)
def test_a_frequency_is_a_keyword_or_a_recurrence_rule_stored_normalised(platform, owner, sent, stored) -> None:
    assert platform.task_templates.create(owner, attrs.evolve(ACCESS_REVIEW, frequency=sent)).frequency == stored
    assert normalised_frequency(sent) == normalised_frequency(stored) == stored
    assert re.fullmatch(FREQUENCY_PATTERN, stored)


@pytest.mark.parametrize(
    "frequency",
    [
        "weekly",
        "",
        "Monthly",
        " yearly",
        "freq=weekly;byday=mo",
        "BYDAY=MO;FREQ=WEEKLY",
        "FREQ=MONTHLY;BYMONTHDAY=32",
        "FREQ=YEARLY;BYWEEKNO=0",
        "FREQ=FORTNIGHTLY",
        "FREQ=HOURLY",
        "FREQ=WEEKLY;BYDAY=XX",
        "FREQ=WEEKLY;;BYDAY=MO",
        "BYDAY=MO",
        "FREQ=MONTHLY;COUNT=3",
        "FREQ=MONTHLY;UNTIL=20300101",
        "FREQ=DAILY;BYHOUR=9",
        "FREQ=YEARLY;BYEASTER=0",
        "FREQ=WEEKLY;INTERVAL=0",
        "DTSTART:20260101T000000\nRRULE:FREQ=DAILY",
        "EXDATE:20260101",
        "x" * 501,
        5,
        None,
    ],
)
def test_a_bad_frequency_is_refused_naming_the_field_and_the_value(frequency: object) -> None:
    with pytest.raises(ValidationError) as raised:
        NewTaskTemplate(framework_id="example", name="n", frequency=frequency)
    assert raised.value.details["field"] == "frequency"
    assert raised.value.details["value"] == frequency or raised.value.details.get("truncated")


@pytest.mark.parametrize(
    ("frequency", "reason"),
    [
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "never occurs"),
        ("FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31", "never occurs"),
        ("FREQ=MONTHLY;INTERVAL=7;BYWEEKNO=1;BYDAY=2SU,MO,-8SA,48MO", "cannot expand"),
    ],
)
def test_a_rule_of_the_grammar_the_calendar_refuses_is_refused_by_the_service(
    platform, owner, frequency: str, reason: str
) -> None:
    """The document's pattern admits these; the service expands the rule and finds no day."""
    with_rule = attrs.evolve(ACCESS_REVIEW, frequency=frequency)
    assert with_rule.frequency == frequency
    with pytest.raises(ValidationError) as raised:
        platform.task_templates.create(owner, with_rule)
    assert (raised.value.details["field"], raised.value.details["value"]) == ("frequency", frequency)
    assert reason in raised.value.details["reason"]
    made = platform.task_templates.create(owner, ACCESS_REVIEW)
    with pytest.raises(ValidationError) as raised:
        platform.task_templates.update(owner, made.id, TaskTemplatePatch(frequency=frequency))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("frequency", frequency)
    assert platform.task_templates.get(owner, made.id) == made


def test_a_rule_that_never_occurs_is_refused_quickly() -> None:
    """The walk that proves it never occurs covers decades, not dateutil's 8,000 years."""
    import time

    started = time.monotonic()
    with pytest.raises(ValueError, match="never occurs"):
        normalised_frequency("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30")
    assert time.monotonic() - started < 0.5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("department", "sales"),
        ("department", None),
        ("automation_status", "AUTOMATIC"),
        ("name", ""),
        ("name", "n" * 201),
        ("description", "d" * 5001),
        ("requirement_ids", "ex-1"),
        ("requirement_ids", ["ex 1"]),
        ("framework_id", ""),
    ],
)
def test_bad_fields_are_named_with_their_value(field: str, value: object) -> None:
    fields: dict[str, Any] = {"framework_id": "example", "name": "n", "frequency": "yearly", field: value}
    with pytest.raises(ValidationError) as raised:
        NewTaskTemplate(**fields)
    camel = {
        "automation_status": "automationStatus",
        "requirement_ids": "requirementIds",
        "framework_id": "frameworkId",
    }
    assert raised.value.details["field"] == camel.get(field, field)
    if not raised.value.details.get("truncated"):
        assert raised.value.details["value"] in (value, "ex 1", "")


def test_a_framework_the_catalogue_does_not_hold_is_refused(platform, owner) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.task_templates.create(owner, attrs.evolve(ACCESS_REVIEW, framework_id="iso-9999"))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("frameworkId", "iso-9999")
    assert platform.task_templates.list(owner).total == 0
    assert _outbox(platform) == []


@pytest.mark.parametrize(("requirement_id", "reason"), [("ex-9", "no requirement"), ("ex-2", "withdrawn")])
def test_requirements_must_be_live_requirements_of_the_framework(platform, owner, requirement_id, reason) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.task_templates.create(owner, attrs.evolve(ACCESS_REVIEW, requirement_ids=["ex-1", requirement_id]))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("requirementIds", requirement_id)
    assert reason in raised.value.details["reason"]
    assert platform.task_templates.list(owner).total == 0


def test_update_checks_requirements_normalises_the_frequency_and_says_what_was(platform, owner) -> None:
    made = platform.task_templates.create(owner, ACCESS_REVIEW)
    changed = platform.task_templates.update(
        owner,
        made.id,
        TaskTemplatePatch(frequency="FREQ=MONTHLY;BYMONTHDAY=15;BYMONTHDAY=1", requirement_ids=("GV.OC",)),
    )
    assert (changed.frequency, changed.requirement_ids, changed.framework_id) == (
        "FREQ=MONTHLY;BYMONTHDAY=1",
        ("GV.OC",),
        "example",
    )
    last = _outbox(platform)[-1]
    assert last.type == "task_template.updated"
    assert last.payload["previous"] == {"frequency": "quarterly", "requirementIds": ["ex-1", "GV.OC-01"]}
    with pytest.raises(ValidationError) as raised:
        platform.task_templates.update(owner, made.id, TaskTemplatePatch(requirement_ids=("nope",)))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("requirementIds", "nope")
    assert platform.task_templates.get(owner, made.id) == changed
    assert platform.task_templates.update(owner, made.id, TaskTemplatePatch(name=made.name)) == changed
    assert len(_outbox(platform)) == 2
    assert "framework_id" not in attrs.fields_dict(TaskTemplatePatch)


def test_delete_removes_it_and_records_it(platform, owner) -> None:
    made = platform.task_templates.create(owner, ACCESS_REVIEW)
    assert platform.task_templates.delete(owner, made.id) is None
    with pytest.raises(NotFound):
        platform.task_templates.get(owner, made.id)
    assert _outbox(platform)[-1].type == "task_template.deleted"


def test_seeding_copies_each_seed_once_per_organization_and_framework(platform, owner, other_org) -> None:
    first = _seed(platform, owner.organization_id)
    assert [(t.seed_key, t.source, t.frequency) for t in first] == [
        ("access-review", TaskTemplateSource.CATALOGUE, "quarterly"),
        ("weekly-scan", TaskTemplateSource.CATALOGUE, "FREQ=WEEKLY;BYDAY=MO"),
    ]
    assert first[1].requirement_ids == ("ex-1.1",)
    assert [m.type for m in _outbox(platform)] == ["task_template.created"] * 2
    platform.task_templates.update(owner, first[0].id, TaskTemplatePatch(name="Our own access review"))

    again = _seed(platform, owner.organization_id, (*SEEDS, Seed("restore-test", "Test a restore")))
    assert [t.seed_key for t in again] == ["restore-test"]
    assert platform.task_templates.get(owner, first[0].id).name == "Our own access review"
    assert platform.task_templates.list(owner).total == 3
    assert _seed(platform, owner.organization_id) == []

    assert len(_seed(platform, other_org.organization_id)) == 2
    assert platform.task_templates.list(other_org).total == 2


def test_seed_keys_are_counted_per_framework(platform, owner) -> None:
    _seed(platform, owner.organization_id)
    other = _seed(platform, owner.organization_id, framework_id="another")
    assert [t.seed_key for t in other] == ["access-review", "weekly-scan"]
    by_framework = platform.task_templates.list(owner, TaskTemplateFilter(framework_id="another"), PageRequest())
    assert by_framework.total == 2


def test_a_custom_template_never_hides_a_seed(platform, owner) -> None:
    platform.task_templates.create(owner, attrs.evolve(ACCESS_REVIEW, name="Review access"))
    assert len(_seed(platform, owner.organization_id)) == 2


def test_seeding_inside_a_write_that_fails_leaves_nothing(platform, owner) -> None:
    with pytest.raises(RuntimeError), platform.uow.write(None) as tx:
        seed_task_templates(tx, owner.organization_id, "example", SEEDS, platform.clock.now(), platform.uow.ids)
        raise RuntimeError("the enabling failed")
    assert platform.task_templates.list(owner).total == 0
    assert _outbox(platform) == []


def test_lists_filter_by_framework_department_and_source_and_search(platform, owner) -> None:
    _seed(platform, owner.organization_id)
    platform.task_templates.create(owner, attrs.evolve(ACCESS_REVIEW, department="hr", name="Train staff"))

    def names(filters: TaskTemplateFilter, page: PageRequest | None = None) -> list[str]:
        return [t.name for t in platform.task_templates.list(owner, filters, page or PageRequest()).items]

    assert names(TaskTemplateFilter(source="custom")) == ["Train staff"]
    assert names(TaskTemplateFilter(source="catalogue", department="it")) == [
        "Review access",
        "Scan for vulnerabilities",
    ]
    assert names(TaskTemplateFilter(department="hr", framework_id="example")) == ["Train staff"]
    assert names(TaskTemplateFilter(framework_id="another")) == []
    assert names(TaskTemplateFilter(), PageRequest(q="VULNERAB")) == ["Scan for vulnerabilities"]
    assert names(TaskTemplateFilter(), PageRequest(sort="-name")) == [
        "Train staff",
        "Scan for vulnerabilities",
        "Review access",
    ]
    with pytest.raises(ValidationError) as raised:
        TaskTemplateFilter(department="sales")
    assert raised.value.details["field"] == "department"


def test_staff_do_not_read_templates_and_auditors_do_not_write_them(platform, actor_as) -> None:
    for role in (Role.EMPLOYEE, Role.CONTRACTOR):
        with pytest.raises(Forbidden):
            platform.task_templates.list(actor_as(role))
    with pytest.raises(Forbidden):
        platform.task_templates.create(actor_as(Role.AUDITOR), ACCESS_REVIEW)
    assert platform.task_templates.list(actor_as(Role.AUDITOR)).total == 0
    assert platform.task_templates.create(actor_as(Role.ADMIN), ACCESS_REVIEW).source is TaskTemplateSource.CUSTOM


def test_another_organizations_template_is_not_found(platform, owner, other_org) -> None:
    theirs = platform.task_templates.create(other_org, ACCESS_REVIEW)
    with pytest.raises(NotFound):
        platform.task_templates.get(owner, theirs.id)
    with pytest.raises(NotFound):
        platform.task_templates.update(owner, theirs.id, TaskTemplatePatch(name="Mine now"))
    with pytest.raises(NotFound):
        platform.task_templates.delete(owner, theirs.id)
    with platform.uow.read() as session:
        assert session[TASK_TEMPLATES].get(other_org.organization_id, theirs.id) == theirs


def test_a_create_is_idempotent_under_a_key(platform, owner) -> None:
    first = platform.task_templates.create(owner, ACCESS_REVIEW, idempotency_key="k-1")
    assert platform.task_templates.create(owner, ACCESS_REVIEW, idempotency_key="k-1") == first
    assert platform.task_templates.list(owner).total == 1


def test_every_shipped_seed_copies_as_a_valid_template(clock: FrozenClock) -> None:
    """The bundled frameworks' seeds, as enabling copies them: each frequency normalises, each
    department is one of the reference's, each requirement is live in its framework."""
    platform = Platform(MemoryStore(), clock=clock, ids=SequentialIds())  # the bundled catalogue
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    catalogue = platform.task_templates.catalogue
    copied = 0
    for source in catalogue.installed():
        seeds = catalogue.task_templates(source.id)
        made = _seed(platform, owner.organization_id, seeds, source.id)
        assert [t.seed_key for t in made] == [seed.key for seed in seeds]
        for template in made:
            assert (template.framework_id, template.source) == (source.id, TaskTemplateSource.CATALOGUE)
            custom = platform.task_templates.create(  # a user's template checks what a seed names
                owner,
                NewTaskTemplate(
                    framework_id=source.id,
                    name=template.name,
                    frequency=template.frequency,
                    requirement_ids=template.requirement_ids,
                ),
            )
            assert custom.frequency == template.frequency
        copied += len(made)
    assert copied >= 100
    assert (
        platform.task_templates.list(owner, TaskTemplateFilter(framework_id="iso-27001-2022"), PageRequest()).total > 0
    )
