"""Which store decoders the row renderer may skip: only those whose value writes the same JSON."""

from __future__ import annotations

import enum

from compliance_core.kernel.rendering import _same_on_the_wire


class Colour(enum.StrEnum):
    RED = "red"


class Size(enum.Enum):
    SMALL = "small"  # a plain enum: the JSON encoder would write its value, but it is not a str


def test_a_str_enum_lookup_is_skipped_and_any_other_decoder_runs() -> None:
    assert _same_on_the_wire(dict(Colour._value2member_map_).__getitem__)
    assert not _same_on_the_wire(dict(Size._value2member_map_).__getitem__)
    assert not _same_on_the_wire({"red": "crimson"}.__getitem__)  # a table that changes the text
    assert not _same_on_the_wire(bool)
