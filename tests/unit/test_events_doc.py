"""docs/events.md is generated from the areas' event classes and must not drift from them."""

from __future__ import annotations

from pathlib import Path

from compliance_core.areas import AREAS
from compliance_core.events_doc import SPEC_OCCASIONS, render, steady_examples

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "events.md"


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
