"""Idempotency records, whose ``result`` is whatever the guarded operation returned.

Results are stored as tagged JSON: a core attrs model or enum carries its import path, tuples
and lists keep their kind, so a replay returns a value equal to the original. Only types
defined in ``compliance_core`` are loaded back by path; a path written before a core module moved
(records live up to a day) is read at the module's new place.
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib
import json
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs
import cattrs

from compliance_core.kernel.idempotency import IdempotencyRecord

from .codec import decode_date, decode_timestamp, encode_date, encode_timestamp

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["ResultCodec", "SqliteIdempotency"]

_TRUSTED_MODULES = "compliance_core"
_MOVED_MODULES = {
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
_GET = (
    "SELECT operation, fingerprint, result, created_at FROM idempotency "
    "WHERE organization_id = ? AND principal = ? AND key = ?"
)
_PUT = (
    "INSERT OR REPLACE INTO idempotency (organization_id, principal, key, operation, fingerprint, result, "
    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_PURGE = "DELETE FROM idempotency WHERE created_at < ?"
_DUMP = (
    "SELECT organization_id, principal, key, operation, fingerprint, result, created_at FROM idempotency "
    "ORDER BY organization_id, principal, key"
)


class ResultCodec:
    """Tagged JSON for idempotency results.

    :param converter: the store's cattrs converter (same text forms as the columns)
    """

    def __init__(self, converter: cattrs.Converter) -> None:
        self._converter = converter
        self._types: dict[str, type] = {}

    def dumps(self, value: Any) -> str:
        return json.dumps(self._tag(value), separators=(",", ":"))

    def loads(self, text: str) -> Any:
        return self._untag(json.loads(text))

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
            return {"datetime": encode_timestamp(value)}
        if kind is dt.date:
            return {"date": encode_date(value)}
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
            return decode_timestamp(value)
        if tag == "date":
            return decode_date(value)
        raise ValueError(f"unknown idempotency result tag {tag!r}")

    def _type(self, path: str) -> type:
        if path not in self._types:
            module_name, _, qualname = path.partition(":")
            if module_name.split(".")[0] != _TRUSTED_MODULES:
                raise ValueError(f"refusing to load idempotency result type {path!r} from outside core")
            module_name = _MOVED_MODULES.get(module_name, module_name)
            found: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                found = getattr(found, part)
            if not isinstance(found, type) or not (attrs.has(found) or issubclass(found, enum.Enum)):
                raise ValueError(f"{path!r} is not a model or enum")
            self._types[path] = found
        return self._types[path]


def _path(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


class SqliteIdempotency:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> ResultCodec:
        return ResultCodec(converter)

    def __init__(self, conn: sqlite3.Connection, results: ResultCodec) -> None:
        self._conn = conn
        self._results = results

    def get(self, organization_id: str, principal: str, key: str) -> IdempotencyRecord | None:
        row = self._conn.execute(_GET, (organization_id, principal, key)).fetchone()
        if row is None:
            return None
        operation, fingerprint, result, created_at = row
        return IdempotencyRecord(
            organization_id=organization_id,
            principal=principal,
            key=key,
            operation=operation,
            fingerprint=fingerprint,
            result=self._results.loads(result),
            created_at=decode_timestamp(created_at),
        )

    def put(self, record: IdempotencyRecord) -> None:
        """Insert, or replace an expired record under the same key."""
        self._conn.execute(
            _PUT,
            (
                record.organization_id,
                record.principal,
                record.key,
                record.operation,
                record.fingerprint,
                self._results.dumps(record.result),
                encode_timestamp(record.created_at),
            ),
        )

    def purge(self, before: dt.datetime) -> int:
        return self._conn.execute(_PURGE, (encode_timestamp(before),)).rowcount

    def dump(self) -> Iterator[IdempotencyRecord]:
        """Every record, by (organization, principal, key), read lazily (``compliance_store.copy``)."""
        for organization_id, principal, key, operation, fingerprint, result, created_at in self._conn.execute(_DUMP):
            yield IdempotencyRecord(
                organization_id=organization_id,
                principal=principal,
                key=key,
                operation=operation,
                fingerprint=fingerprint,
                result=self._results.loads(result),
                created_at=decode_timestamp(created_at),
            )

    def clear(self) -> int:
        return self._conn.execute("DELETE FROM idempotency").rowcount
