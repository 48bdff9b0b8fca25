"""Idempotency results name their types by wire name, so a module move never breaks a replay."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from compliance_core.areas.vendors import Criticality, SubProcessor
from compliance_store.codec import make_converter
from compliance_store.postgres.idempotency import ResultCodec as PostgresResults
from compliance_store.results import result_types
from compliance_store.sqlite.idempotency import ResultCodec as SqliteResults

from . import samples


def test_a_stored_result_names_no_python_module() -> None:
    text = SqliteResults(make_converter()).dumps((samples.vendor(), Criticality.CRITICAL, [samples.person()]))
    assert "compliance_core" not in text
    assert [item.get("model") for item in json.loads(text)["tuple"][:2]] == ["Vendor", "Criticality"]


@pytest.mark.parametrize("codec", [SqliteResults, PostgresResults])
def test_every_result_round_trips_by_wire_name(codec: Any) -> None:
    results = codec(make_converter())
    value = {"vendor": samples.vendor(), "people": (samples.person(),), "level": Criticality.STANDARD, "none": None}
    document = results.dumps(value)
    loaded = results.loads(document) if codec is SqliteResults else results.load(json.loads(document))
    assert loaded == value and type(loaded["people"]) is tuple


@pytest.mark.parametrize(
    "path",
    [
        "compliance_core.areas.vendors:Vendor",  # as stored today, within the last 24 hours
        "compliance_core.vendors:Vendor",  # before core was split into kernel and areas
        "compliance_core.somewhere.it.moved.to:Vendor",  # any module: the class name decides
    ],
)
def test_a_record_stored_with_an_import_path_still_replays(path: str) -> None:
    converter = make_converter()
    vendor = samples.vendor()
    stored = {"type": path, "value": converter.unstructure(vendor)}
    assert SqliteResults(converter).loads(json.dumps(stored)) == vendor


def test_types_outside_the_declared_ones_are_refused_both_ways() -> None:
    @attrs.frozen
    class Stranger:
        name: str

    results = SqliteResults(make_converter())
    with pytest.raises(TypeError, match="not a model or enum the areas"):
        results.dumps(Stranger(name="x"))
    with pytest.raises(ValueError, match="no area declares it"):
        results.loads(json.dumps({"model": "Stranger", "value": {"name": "x"}}))
    with pytest.raises(ValueError, match="outside core"):
        results.loads(json.dumps({"type": "os:PathLike", "value": {}}))


def test_the_wire_names_cover_what_the_operations_answer_and_nest() -> None:
    types = result_types()
    assert types["Vendor"] is samples.Vendor and types["SubProcessor"] is SubProcessor
    assert types["Criticality"] is Criticality and types["IssuedKey"].__name__ == "IssuedKey"


def test_two_types_with_one_wire_name_are_refused() -> None:
    from compliance_core.kernel.registry import Area, Operation

    def area(model: type) -> Area[Any]:
        return Area(
            name="x", service=lambda context: None, operations=(Operation(name="x.get", action=None, result=model),)
        )

    first = attrs.make_class("Vendor", {"name": attrs.field()}, frozen=True)
    with pytest.raises(ValueError, match="share the wire name 'Vendor'"):
        result_types([area(samples.Vendor), area(first)])
