"""Controls: enabling frameworks (93 Annex A controls for ISO 27001, controls reused across
mapped frameworks), links from policies and risks, the derived status and its one
``control.status_changed`` per change, readiness."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from compliance_core import Platform
from compliance_core.areas.frameworks.control_models import (
    ControlLinkFilter,
    ControlOrigin,
    ControlRequirementFilter,
    ControlStatus,
    NewControl,
)
from compliance_core.areas.frameworks.controls import LinkRequest
from compliance_core.areas.policies import NewPolicy, PolicyPatch, PublishPolicy
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.tasks import TaskFilter, TaskPatch
from compliance_core.kernel.errors import Conflict, NotFound, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.permissions import Role

ISO = "iso-27001-2022"
SOC2 = "soc2-tsc-2017"
EVERYTHING = PageRequest(per_page=100)


def _types(platform: Platform, kind: str) -> list[dict]:
    with platform.uow.read() as session:
        return [message.payload for message in session[OUTBOX].pending(100_000) if message.type == kind]


def _control_of(platform: Platform, owner, framework: str, requirement: str) -> str:
    rows = platform.controls.requirement_controls(
        owner, framework, ControlRequirementFilter(requirement_id=requirement)
    )
    (row,) = rows.items
    return row.control_id


def test_enabling_iso_27001_makes_its_93_annex_a_controls(platform: Platform, owner) -> None:
    enabled = platform.controls.enable(owner, ISO)
    assert enabled.requirement_count == 93
    controls = platform.controls.list(owner)
    assert controls.total == 93
    assert {control.origin for control in controls.items} == {ControlOrigin.CATALOGUE}
    rows = platform.controls.requirement_controls(owner, ISO)
    assert rows.total == 93
    assert {row.control_status for row in rows.items} == {ControlStatus.NOT_STARTED}
    assert len(_types(platform, "control.created")) == 93
    assert len(_types(platform, "framework.enabled")) == 1
    assert [item.framework_id for item in platform.controls.enabled(owner).items] == [ISO]


def test_enabling_twice_changes_nothing_and_an_unknown_framework_is_a_404(platform: Platform, owner) -> None:
    first = platform.controls.enable(owner, ISO)
    assert platform.controls.enable(owner, ISO) == first
    assert platform.controls.list(owner).total == 93
    with pytest.raises(NotFound):
        platform.controls.enable(owner, "no-such-framework")


def test_enabling_a_mapped_framework_reuses_the_controls_a_mapping_makes_equal(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    platform.controls.enable(owner, SOC2)
    soc2_rows = platform.controls.requirement_controls(owner, SOC2, page=EVERYTHING).items
    iso_controls = {row.control_id for row in platform.controls.requirement_controls(owner, ISO, page=EVERYTHING).items}
    reused = [row for row in soc2_rows if row.control_id in iso_controls]
    assert reused, "no SOC 2 criterion reused an ISO 27001 control"
    total = platform.controls.list(owner).total
    assert total == 93 + len(soc2_rows) - len({row.control_id for row in reused})
    shared = platform.controls.get(owner, reused[0].control_id)
    assert shared.framework_ids == (ISO, SOC2)


def test_a_policy_moves_its_controls_status_once_per_change(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    control_id = _control_of(platform, owner, ISO, "a.5.1")
    policy = platform.policies.create(
        owner,
        NewPolicy(name="Information security policy", content="We protect information.", control_ids=[control_id]),
    )
    assert platform.controls.get(owner, control_id).status is ControlStatus.IN_PROGRESS
    platform.policies.publish(owner, policy.id, PublishPolicy())
    control = platform.controls.get(owner, control_id)
    assert control.status is ControlStatus.IMPLEMENTED
    row = platform.controls.requirement_controls(owner, ISO, ControlRequirementFilter(control_id=control_id)).items[0]
    assert row.control_status is ControlStatus.IMPLEMENTED
    changes = _types(platform, "control.status_changed")
    assert [(change["previous"]["status"], change["data"]["status"]) for change in changes] == [
        ("not_started", "in_progress"),
        ("in_progress", "implemented"),
    ]
    platform.policies.update(owner, policy.id, PolicyPatch(description="Reworded"))
    assert len(_types(platform, "control.status_changed")) == 2, "a change that moves no status records none"
    platform.policies.archive(owner, policy.id)
    assert platform.controls.get(owner, control_id).status is ControlStatus.NOT_STARTED
    assert len(_types(platform, "control.status_changed")) == 3


def test_linking_from_the_control_writes_the_record_and_risks_only_explain(platform: Platform, owner) -> None:
    control = platform.controls.create(owner, NewControl(name="Clean desk", code="ORG-1"))
    risk = platform.risks.create(owner, NewRisk(title="Papers left out"))
    linked = platform.controls.link(owner, control.id, LinkRequest(kind="risk", target_id=risk.id))
    assert linked.status is ControlStatus.NOT_STARTED
    assert platform.risks.get(owner, risk.id).control_ids == (control.id,)
    links = platform.controls.links(owner, control.id).items
    assert [(link.kind, link.target_id, link.state) for link in links] == [("risk", risk.id, "context")]
    policy = platform.policies.create(owner, NewPolicy(name="Clean desk policy"))
    assert platform.controls.link(owner, control.id, LinkRequest(kind="policy", target_id=policy.id)).status is (
        ControlStatus.IN_PROGRESS
    )
    assert platform.controls.unlink(owner, control.id, LinkRequest(kind="policy", target_id=policy.id)).status is (
        ControlStatus.NOT_STARTED
    )
    assert platform.policies.get(owner, policy.id).control_ids == ()
    with pytest.raises(ValidationError) as raised:
        platform.controls.link(owner, control.id, LinkRequest(kind="spaceship", target_id=risk.id))
    assert raised.value.details["field"] == "kind"


def test_a_record_naming_no_control_is_refused_and_writes_nothing(platform: Platform, owner) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.policies.create(owner, NewPolicy(name="P", control_ids=["ctl_missing"]))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("controlIds", "ctl_missing")
    assert platform.policies.list(owner).total == 0


def test_another_organizations_control_is_no_control_here(platform: Platform, owner, other_org) -> None:
    theirs = platform.controls.create(other_org, NewControl(name="Theirs"))
    with pytest.raises(ValidationError):
        platform.risks.create(owner, NewRisk(title="R", control_ids=[theirs.id]))
    with pytest.raises(NotFound):
        platform.controls.get(owner, theirs.id)


def test_readiness_counts_applicable_requirements_and_draws_them(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    control_id = _control_of(platform, owner, ISO, "a.5.1")
    policy = platform.policies.create(owner, NewPolicy(name="Policy", content="Text.", control_ids=[control_id]))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    readiness = platform.controls.readiness(owner, ISO)
    assert (readiness.requirements, readiness.applicable, readiness.implemented) == (93, 93, 1)
    assert readiness.not_started == 92 and readiness.share == round(1 / 93, 4)
    picture = platform.controls.readiness_svg(owner, ISO)
    root = ET.fromstring(picture.read())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "1% ready" in root.findtext("{http://www.w3.org/2000/svg}title", "")
    with pytest.raises(NotFound):
        platform.controls.readiness(owner, SOC2)


def test_disabling_removes_the_rows_and_the_controls_only_it_needed(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    kept = _control_of(platform, owner, ISO, "a.5.1")
    platform.policies.create(owner, NewPolicy(name="Keeps its control", control_ids=[kept]))
    platform.controls.disable(owner, ISO)
    assert platform.controls.requirement_controls is not None
    with pytest.raises(NotFound):
        platform.controls.requirement_controls(owner, ISO)
    remaining = platform.controls.list(owner).items
    assert [control.id for control in remaining] == [kept]
    assert remaining[0].framework_ids == ()
    with pytest.raises(NotFound):
        platform.controls.disable(owner, ISO)


def test_a_control_serving_a_requirement_cannot_be_deleted(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    control_id = _control_of(platform, owner, ISO, "a.5.1")
    with pytest.raises(Conflict):
        platform.controls.delete(owner, control_id)
    custom = platform.controls.create(owner, NewControl(name="Custom"))
    risk = platform.risks.create(owner, NewRisk(title="R", control_ids=[custom.id]))
    platform.controls.delete(owner, custom.id)
    assert platform.risks.get(owner, risk.id).control_ids == ()
    assert platform.controls.links(owner, control_id, ControlLinkFilter(kind="risk")).total == 0


def test_only_managers_enable_and_auditors_read(platform: Platform, actor_as) -> None:
    from compliance_core.kernel.errors import Forbidden

    with pytest.raises(Forbidden):
        platform.controls.enable(actor_as(Role.AUDITOR), ISO)
    platform.controls.enable(actor_as(Role.ADMIN), ISO)
    assert platform.controls.list(actor_as(Role.AUDITOR)).total == 93


def test_an_imported_mapping_is_checked_pair_by_pair_and_reuses_controls(platform: Platform, owner) -> None:
    from compliance_core.areas.frameworks.controls import MappingFilter, MappingImport

    with pytest.raises(ValidationError) as raised:
        platform.controls.import_mappings(
            owner,
            MappingImport(
                source_framework=SOC2,
                target_framework=ISO,
                mappings=[
                    {"source": "cc1.1", "target": "a.5.99", "relation": "equal"},
                    {"source": "cc1.99", "target": "a.5.1", "relation": "subset"},
                ],
            ),
        )
    fields = [error["field"] for error in raised.value.details["errors"]]
    assert fields == ["mappings[0].target", "mappings[1].source"]
    with pytest.raises(ValidationError) as raised:
        MappingImport(
            source_framework=SOC2,
            target_framework=ISO,
            mappings=[{"source": "a", "target": "b", "relation": "roughly"}],
        )
    assert (raised.value.details["field"], raised.value.details["value"]) == ("mappings[0].relation", "roughly")
    entry = {"source": "cc1.1", "target": "a.5.4", "relation": "equal"}
    report = platform.controls.import_mappings(
        owner, MappingImport(source_framework=SOC2, target_framework=ISO, publisher="Ours", mappings=[entry, entry])
    )
    assert (report.imported, report.already) == (1, 1)
    asked = MappingFilter(source_framework=ISO, target_framework=SOC2)
    turned = platform.controls.mappings(owner, asked, PageRequest(page=2, per_page=100)).items
    assert any(
        pair.imported and (pair.source_requirement, pair.target_requirement) == ("a.5.4", "cc1.1") for pair in turned
    )
    everything = platform.controls.mappings(owner, page=PageRequest(page=2, per_page=100))
    assert [pair.source_framework for pair in everything.items if pair.imported] == [SOC2]
    platform.controls.enable(owner, ISO)
    platform.controls.enable(owner, SOC2)
    assert _control_of(platform, owner, SOC2, "cc1.1") == _control_of(platform, owner, ISO, "a.5.4")


def test_the_to_dos_enabling_a_framework_makes_move_no_status_and_go_with_it(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    tasks = platform.tasks.list(owner, TaskFilter(framework_id=ISO), PageRequest(per_page=100)).items
    linked = [task for task in tasks if task.control_ids]
    assert linked and all(task.status == "todo" for task in tasks)
    rows = platform.controls.requirement_controls(owner, ISO, ControlRequirementFilter(), PageRequest(per_page=100))
    assert {row.control_status for row in rows.items} == {ControlStatus.NOT_STARTED}
    begun = linked[0]
    platform.tasks.update(owner, begun.id, TaskPatch(status="in_progress"))
    assert platform.controls.get(owner, begun.control_ids[0]).status is ControlStatus.IN_PROGRESS
    platform.controls.disable(owner, ISO)
    left = platform.tasks.list(owner, TaskFilter(framework_id=ISO)).items
    assert [task.id for task in left] == [begun.id]  # begun work stays, untouched to-dos go
    assert [control.id for control in platform.controls.list(owner).items] == list(begun.control_ids)
