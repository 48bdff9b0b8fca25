"""Tagged JSON for idempotency results, shared by the SQL stores.

A core attrs model or enum carries its import path, tuples and lists keep their kind, so a
replay returns a value equal to the original. Only types defined in ``compliance_core`` are
loaded back by path. Each store subclasses ``TaggedResults`` for how the tagged document becomes
column text (``json.dumps`` options) and is read back (text or an already parsed document).
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib
from collections.abc import Mapping
from typing import Any

import attrs
import cattrs

from compliance_core.kernel.clock import utc

__all__ = ["TaggedResults", "TRUSTED_MODULES", "MOVED_MODULES"]

TRUSTED_MODULES = "compliance_core"
MOVED_MODULES: Mapping[str, str] = {
    **{
        f"compliance_core.{name}": f"compliance_core.kernel.{name}"
        for name in (
            "errors",
            "clock",
            "ids",
            "validation",
            "pagination",
            "events",
            "uow",
            "idempotency",
            "permissions",
            "ratelimit",
        )
    },
    **{
        f"compliance_core.{name}": f"compliance_core.areas.{name}"
        for name in ("organizations", "api_keys", "vendors", "people", "findings")
    },
}
"""Where the modules of stored result paths went when core was split into kernel and areas."""


class TaggedResults:
    """The store-agnostic half of a result codec: value <-> tagged document.

    :param converter: the store's cattrs converter (ISO text for timestamps and dates)
    :param moved: old module path -> new, for paths stored before a core module moved
    """

    def __init__(self, converter: cattrs.Converter, *, moved: Mapping[str, str] = MOVED_MODULES) -> None:
        self._converter = converter
        self._moved = moved
        self._types: dict[str, type] = {}

    def _tag(self, value: Any) -> Any:
        kind = type(value)
        if attrs.has(kind):
            return {"type": _path(kind), "value": self._converter.unstructure(value)}
        if isinstance(value, enum.Enum):
            return {"type": _path(kind), "value": value.value}
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
        if "type" in tagged:
            kind = self._type(tagged["type"])
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

    def _type(self, path: str) -> type:
        if path not in self._types:
            module_name, _, qualname = path.partition(":")
            if module_name.split(".")[0] != TRUSTED_MODULES:
                raise ValueError(f"refusing to load idempotency result type {path!r} from outside core")
            module_name = self._moved.get(module_name, module_name)
            found: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                found = getattr(found, part)
            if not isinstance(found, type) or not (attrs.has(found) or issubclass(found, enum.Enum)):
                raise ValueError(f"{path!r} is not a model or enum")
            self._types[path] = found
        return self._types[path]


def _path(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"
