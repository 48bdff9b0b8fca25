"""Tagged JSON for idempotency results, shared by the SQL stores.

A result is replayed up to a day after it was stored, possibly by a newer release whose modules
moved, so a stored model or enum names its type by its wire name (the class name the OpenAPI
document gives its schema, unique over the areas), never by its Python import path; tuples and
lists keep their kind, so a replay returns a value equal to the original. Only the types the
areas' operations and records declare (and the models and enums nested in them) are loaded back.

Records written before the wire names (``{"type": "<module>:<qualname>"}``) are read by the
class name at the end of their path, whatever module it named; they expire 24 hours after they
were written, so this reading can go a day after every deployment writes wire names.

Each store subclasses ``TaggedResults`` for how the tagged document becomes column text
(``json.dumps`` options) and is read back (text or an already parsed document).
"""

from __future__ import annotations

import datetime as dt
import enum
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import cattrs

from compliance_core.areas import AREAS
from compliance_core.kernel.clock import utc
from compliance_core.kernel.registry import Area

__all__ = ["TaggedResults", "result_types"]


def result_types(areas: Sequence[Area[Any]] = AREAS) -> Mapping[str, type]:
    """Wire name -> class of every model and enum an idempotency result of ``areas`` may hold:
    the operations' results and bodies, the records' models, and what their fields nest.

    >>> result_types()["Vendor"].__module__
    'compliance_core.areas.vendors.models'
    """
    found: dict[str, type] = {}
    walked: set[type] = set()

    def visit(hint: Any) -> None:
        for inner in typing.get_args(hint):
            visit(inner)
        kind = typing.get_origin(hint) or hint
        if not isinstance(kind, type) or not (attrs.has(kind) or issubclass(kind, enum.Enum)):
            return
        named = found.setdefault(kind.__name__, kind)
        if named is not kind:
            raise ValueError(
                f"two result types share the wire name {kind.__name__!r}: "
                f"{named.__module__}.{named.__qualname__} and {kind.__module__}.{kind.__qualname__}"
            )
        if attrs.has(kind) and kind not in walked:
            walked.add(kind)
            for field_type in _field_types(kind):
                visit(field_type)

    for area in areas:
        for operation in area.operations:
            visit(operation.result)
            visit(operation.body)
        for records in area.records:
            visit(records.model)
    return found


def _field_types(kind: type) -> Iterable[Any]:
    try:
        return typing.get_type_hints(kind).values()
    except (NameError, TypeError):  # a hint only a type checker resolves: the declared types
        return [field.type for field in attrs.fields(kind) if not isinstance(field.type, str)]


class TaggedResults:
    """The store-agnostic half of a result codec: value <-> tagged document.

    :param converter: the store's cattrs converter (ISO text for timestamps and dates)
    :param types: wire name -> class of what results may hold (``result_types``)
    """

    def __init__(self, converter: cattrs.Converter, *, types: Mapping[str, type] | None = None) -> None:
        self._converter = converter
        self._types = result_types() if types is None else types

    def _tag(self, value: Any) -> Any:
        kind = type(value)
        if attrs.has(kind):
            return {"model": self._name(kind), "value": self._converter.unstructure(value)}
        if isinstance(value, enum.Enum):
            return {"model": self._name(kind), "value": value.value}
        if value is None or kind in (str, int, float, bool):
            return {"json": value}
        if kind is tuple or kind is list:
            return {kind.__name__: [self._tag(item) for item in value]}
        if kind is dict and all(isinstance(k, str) for k in value):
            return {"dict": {k: self._tag(v) for k, v in value.items()}}
        if kind is dt.datetime:
            return {"datetime": utc(value).isoformat(timespec="microseconds")}
        if kind is dt.date:
            return {"date": value.isoformat()}
        raise TypeError(f"cannot store an idempotency result of type {kind.__module__}.{kind.__qualname__}")

    def _untag(self, tagged: dict[str, Any]) -> Any:
        if "model" in tagged or "type" in tagged:
            kind = self._type(tagged["model"] if "model" in tagged else _legacy_name(tagged["type"]))
            if issubclass(kind, enum.Enum):
                return kind(tagged["value"])
            return self._converter.structure(tagged["value"], kind)
        ((tag, value),) = tagged.items()
        if tag == "json":
            return value
        if tag == "tuple":
            return tuple(self._untag(item) for item in value)
        if tag == "list":
            return [self._untag(item) for item in value]
        if tag == "dict":
            return {k: self._untag(v) for k, v in value.items()}
        if tag == "datetime":
            return dt.datetime.fromisoformat(value)
        if tag == "date":
            return dt.date.fromisoformat(value)
        raise ValueError(f"unknown idempotency result tag {tag!r}")

    def _name(self, kind: type) -> str:
        if self._types.get(kind.__name__) is not kind:
            raise TypeError(
                f"cannot store an idempotency result of type {kind.__module__}.{kind.__qualname__}: "
                "not a model or enum the areas' operations or records declare"
            )
        return kind.__name__

    def _type(self, name: str) -> type:
        kind = self._types.get(name)
        if kind is None:
            raise ValueError(f"refusing to load idempotency result type {name!r}: no area declares it")
        return kind


def _legacy_name(path: str) -> str:
    """The wire name in a path stored before wire names (``compliance_core.vendors:Vendor``)."""
    module, _, qualname = path.partition(":")
    if module.split(".")[0] != "compliance_core":
        raise ValueError(f"refusing to load idempotency result type {path!r} from outside core")
    return qualname
