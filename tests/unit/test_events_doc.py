"""docs/events.md is generated from the areas' event classes and must not drift from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance_core.areas import AREAS
from compliance_core.events_doc import SPEC_OCCASIONS, Observation, render, run_examples, steady_examples

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "events.md"

UNREACHED = {
    "evidence_export.failed": "only a build that breaks (a blob store refusing the ZIP, no PDF renderer) fails",
}
"""The event types no declared example reaches, and why (the catalogue says "No example")."""


@pytest.fixture(scope="module")
def observation() -> Observation:
    return run_examples()


def test_the_committed_catalogue_is_current() -> None:
    assert COMMITTED.read_text() == render(), "docs/events.md is stale: run `make events`"


def test_every_declared_event_is_documented_with_when_it_is_emitted() -> None:
    text = COMMITTED.read_text()
    for area in AREAS:
        for event in area.events:
            assert f"#### `{event.type}`" in text
            assert event.__doc__, f"{event.__name__} needs a docstring saying when it is emitted"


def test_the_spec_occasions_are_listed_emitted_or_arriving_never_faked() -> None:
    declared = {event.type for area in AREAS for event in area.events}
    text = COMMITTED.read_text()
    for event_type, area in SPEC_OCCASIONS:
        expected = "emitted by" if event_type in declared else f"arrives with the {area} area"
        assert f"| `{event_type}` | {expected}" in text


def test_examples_are_real_bodies_of_their_type() -> None:
    seen = steady_examples()
    assert seen["vendor.updated"].body["previous"] and seen["vendor.updated"].body["type"] == "vendor.updated"
    for event_type, example in seen.items():
        assert set(example.body) <= {"id", "type", "createdAt", "organizationId", "data", "previous"}
        assert example.body["type"] == event_type


def test_every_operation_runs_with_its_declared_example_and_given_steps(observation: Observation) -> None:
    """An operation refusing its example (or the state its ``given`` steps leave) hides the
    events it records: the area's declaration needs fixing."""
    assert [(name, str(error)) for name, error in observation.failures] == []


def test_every_event_type_has_an_example_but_those_known_unreached(observation: Observation) -> None:
    declared = [event.type for area in AREAS for event in area.events]
    missing = {event_type for event_type in declared if event_type not in observation.seen}
    assert missing == set(UNREACHED), f"reached or not: {sorted(missing ^ set(UNREACHED))}"


def test_scheduled_work_and_person_bound_decisions_are_reached(observation: Observation) -> None:
    """Chores on a clock moved to the dates the examples name, the webhook engine against
    receivers that never answer, and approvals by an owner acting as a person."""
    seen = observation.seen
    assert seen["evidence.expiring"].body["createdAt"] < seen["evidence.expired"].body["createdAt"]
    assert seen["risk.acceptance_lapsed"].body["data"]["acceptanceLapseReason"] == "expired"
    assert seen["webhook.disabled"].body["data"]["active"] is False
    assert seen["automation.run_completed"].body["data"]["status"] == "error"  # nothing answers the probe
    assert seen["policy.acknowledged"].body["data"]["personName"] == "Owner person"
    assert {"policy.approved", "task.approved", "soa.approved", "context.confirmed"} <= set(seen)
