"""A body is refused with everything wrong with it at once (issue 18): ``details.errors`` names
each bad field with its value and reason, and the first is repeated at the top as a one-field
error has it. The same list in-process (the body model built by a caller) and from a request
body (``Wire.command``), for every operation that takes a body."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core import ValidationError
from compliance_core.areas import AREAS
from compliance_core.areas.finding_templates import NewFindingTemplate
from compliance_core.kernel.errors import MAX_LISTED_ERRORS
from compliance_core.kernel.registry import Operation
from compliance_core.kernel.rendering import wire_name
from compliance_http.wire import Wire

BODIES = sorted(
    {op.body for area in AREAS for op in area.operations if op.body is not None and op.batch is None},
    key=lambda model: model.__name__,
)


def _placed(value: Any) -> Any:
    """An example with each placeholder id (``tsk_...``: a record another area makes) written as
    an id of that shape, which is all a body's own check looks at."""
    if isinstance(value, dict):
        return {key: _placed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_placed(item) for item in value]
    if isinstance(value, str) and value.endswith("_..."):
        return value[: -len("...")] + "1"
    return value


EXAMPLES: dict[type, dict[str, Any]] = {}
for _area in AREAS:
    for _op in _area.operations:
        if _op.body is not None and _op.batch is None and _op.example is not None:
            EXAMPLES.setdefault(_op.body, _placed(dict(_op.example)))
BAD = {"not": ["a value any field takes"]}
"""A JSON object: no field of any body takes one."""
WIRE = Wire()


def _fields(error: ValidationError) -> list[str]:
    return [entry["field"] for entry in error.details["errors"]]


def test_every_bad_field_is_listed_in_process_with_the_first_at_the_top() -> None:
    with pytest.raises(ValidationError) as raised:
        NewFindingTemplate(category=5, title="", order=-1)  # type: ignore[arg-type]
    details = raised.value.details
    assert _fields(raised.value) == ["category", "title", "order"]
    assert details["errors"][2] == {"field": "order", "value": -1, "reason": "must be an integer from 0 to 10000"}
    assert (details["field"], details["value"], details["reason"]) == ("category", 5, "must be a string")
    assert raised.value.message.startswith("3 fields are invalid")


def test_one_bad_field_is_a_list_of_one() -> None:
    with pytest.raises(ValidationError) as raised:
        NewFindingTemplate(category="c", title=7)  # type: ignore[arg-type]
    one = {"field": "title", "value": 7, "reason": "must be a string"}
    assert raised.value.details == {**one, "errors": [one]}
    assert raised.value.message == "title: must be a string"


def test_a_request_body_lists_unknown_then_missing_then_refused_fields() -> None:
    with pytest.raises(ValidationError) as raised:
        WIRE.command({"colour": "red", "title": "", "order": "9"}, NewFindingTemplate)
    assert _fields(raised.value) == ["colour", "category", "title", "order"]
    assert [e["reason"] for e in raised.value.details["errors"][:2]] == ["unknown field", "is required"]


def test_the_list_is_bounded() -> None:
    body = {f"extra{n}": n for n in range(MAX_LISTED_ERRORS * 3)}
    with pytest.raises(ValidationError) as raised:
        WIRE.command(body, NewFindingTemplate)
    assert len(raised.value.details["errors"]) == MAX_LISTED_ERRORS
    assert raised.value.details["truncated"] is True


def test_every_operation_with_a_body_reports_every_error() -> None:
    """Each body model is made to (by its operation's declaration), whoever builds it."""
    for model in BODIES:
        assert vars(model).get("_reports_every_error") is True, model.__name__


def test_an_optional_body_may_be_left_out_in_process() -> None:
    optional = [op for area in AREAS for op in area.operations if op.optional_body]
    assert optional, "no operation has an optional body"
    for op in optional:
        bound = op.bind(tuple(f"x_{n}" for n in range(len(op.ids))), {})
        assert isinstance(bound[str(op.body_argument)], op.body), op.name  # type: ignore[arg-type]


@st.composite
def _corrupted(draw: st.DrawFn) -> tuple[type, dict[str, Any], set[str], set[str], set[str]]:
    """A body model, its example with some fields given a value no field takes, some required
    fields left out and some unknown keys added, and those three sets of wire names."""
    model = draw(st.sampled_from(sorted(EXAMPLES, key=lambda m: m.__name__)))
    body = dict(EXAMPLES[model])
    names = [wire_name(f.name) for f in attrs.fields(model)]
    required = [
        wire_name(f.name) for f in attrs.fields(model) if f.default is attrs.NOTHING and wire_name(f.name) in body
    ]
    bad = draw(st.sets(st.sampled_from(names))) if names else set()
    missing = draw(st.sets(st.sampled_from(required))) - bad if required else set()
    unknown = draw(st.sets(st.sampled_from(["colour", "zzTop", "extra_field"]), max_size=2))
    for key in bad:
        body[key] = BAD
    for key in missing:
        del body[key]
    for key in unknown:
        body[key] = 1
    return model, body, bad, missing, unknown


@settings(max_examples=300, deadline=None)
@given(case=_corrupted())
def test_property_every_invalid_field_appears_and_no_valid_one(
    case: tuple[type, dict[str, Any], set[str], set[str], set[str]],
) -> None:
    model, body, bad, missing, unknown = case
    expected = bad | missing | unknown
    if not expected:
        WIRE.command(body, model)  # the example itself is valid
        return
    with pytest.raises(ValidationError) as over_the_wire:
        WIRE.command(body, model)
    listed = _fields(over_the_wire.value)
    assert sorted(listed) == sorted(expected), model.__name__
    assert over_the_wire.value.details["field"] == listed[0]
    if bad and not missing and not unknown:  # in-process: the same model built from the same values
        renamed = {f.name: body[wire_name(f.name)] for f in attrs.fields(model) if wire_name(f.name) in body}
        with pytest.raises(ValidationError) as in_process:
            model(**renamed)
        assert sorted(_fields(in_process.value)) == sorted(bad), model.__name__
        assert in_process.value.details == over_the_wire.value.details


def test_the_declarations_are_what_the_property_covers() -> None:
    assert set(EXAMPLES) <= set(BODIES)
    assert len(EXAMPLES) >= 10
    assert all(isinstance(op, Operation) for area in AREAS for op in area.operations)


def test_a_bulk_entry_with_several_bad_fields_lists_each_with_its_index(platform, owner) -> None:
    members = [{"name": "Ada", "email": "ada@example.com"}, {"name": "", "email": "not an address", "role": "boss"}]
    with pytest.raises(ValidationError) as raised:
        platform.people.bulk_create(owner, members)
    listed = [(e["index"], e["field"]) for e in raised.value.details["errors"]]
    assert listed == [(1, "name"), (1, "email"), (1, "role")]
    assert platform.people.list(owner).total == 0  # none was created
