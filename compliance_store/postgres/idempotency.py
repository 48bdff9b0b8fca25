"""Idempotency records, whose ``result`` is whatever the guarded operation returned.

Results are stored as tagged JSON in a ``json`` column: a core attrs model or enum carries its
import path, tuples and lists keep their kind, so a replay returns a value equal to the original
(``json`` keeps the document as written, key order included). Only types defined in
``compliance_core`` are loaded back by path.

The record is read and written inside the caller's write transaction, which holds the store's
writer lock (see ``store``): two processes using one key cannot both miss it and both create.
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import psycopg

from compliance_core.kernel.idempotency import IdempotencyRecord

from .codec import dumps, stream

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["ResultCodec", "PostgresIdempotency"]

_TRUSTED_MODULES = "compliance_core"
_GET = (
    "SELECT operation, fingerprint, result, created_at FROM idempotency "
    "WHERE organization_id = %s AND principal = %s AND key = %s"
)
_PUT = (
    "INSERT INTO idempotency (organization_id, principal, key, operation, fingerprint, result, created_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (organization_id, principal, key) DO UPDATE SET "
    "operation = EXCLUDED.operation, fingerprint = EXCLUDED.fingerprint, result = EXCLUDED.result, "
    "created_at = EXCLUDED.created_at"
)
_PURGE = "DELETE FROM idempotency WHERE created_at < %s"
# principal and key are text in the database's collation: ordered by code point here, as the
# other stores order them.
_DUMP = (
    "SELECT organization_id, principal, key, operation, fingerprint, result, created_at FROM idempotency "
    'ORDER BY organization_id, principal COLLATE "C", key COLLATE "C"'
)


class ResultCodec:
    """Tagged JSON for idempotency results.

    :param converter: the store's cattrs converter (ISO text for timestamps and dates)
    """

    def __init__(self, converter: cattrs.Converter) -> None:
        self._converter = converter
        self._types: dict[str, type] = {}

    def dumps(self, value: Any) -> str:
        return dumps(self._tag(value))

    def load(self, document: Any) -> Any:
        """The result from the column's parsed document."""
        return self._untag(document)

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
            return {"datetime": self._converter.unstructure(value)}
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
            if module_name.split(".")[0] != _TRUSTED_MODULES:
                raise ValueError(f"refusing to load idempotency result type {path!r} from outside core")
            found: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                found = getattr(found, part)
            if not isinstance(found, type) or not (attrs.has(found) or issubclass(found, enum.Enum)):
                raise ValueError(f"{path!r} is not a model or enum")
            self._types[path] = found
        return self._types[path]


def _path(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


class PostgresIdempotency:
    @staticmethod
    def prepare(table: Table, converter: cattrs.Converter) -> ResultCodec:
        return ResultCodec(converter)

    def __init__(self, cur: psycopg.Cursor[Any], results: ResultCodec, *, write: bool) -> None:
        self._cur = cur
        self._results = results

    def get(self, organization_id: str, principal: str, key: str) -> IdempotencyRecord | None:
        row = self._cur.execute(_GET, (organization_id, principal, key)).fetchone()
        if row is None:
            return None
        operation, fingerprint, result, created_at = row
        return IdempotencyRecord(
            organization_id=organization_id,
            principal=principal,
            key=key,
            operation=operation,
            fingerprint=fingerprint,
            result=self._results.load(result),
            created_at=created_at,
        )

    def put(self, record: IdempotencyRecord) -> None:
        """Insert, or replace an expired record under the same key."""
        self._cur.execute(
            _PUT,
            (
                record.organization_id,
                record.principal,
                record.key,
                record.operation,
                record.fingerprint,
                self._results.dumps(record.result),
                record.created_at,
            ),
        )

    def purge(self, before: dt.datetime) -> int:
        return self._cur.execute(_PURGE, (before,)).rowcount

    def dump(self) -> Iterator[IdempotencyRecord]:
        """Every record, by (organization, principal, key), read in batches (``compliance_store.copy``)."""
        for organization_id, principal, key, operation, fingerprint, result, created_at in stream(self._cur, _DUMP):
            yield IdempotencyRecord(
                organization_id=organization_id,
                principal=principal,
                key=key,
                operation=operation,
                fingerprint=fingerprint,
                result=self._results.load(result),
                created_at=created_at,
            )

    def clear(self) -> int:
        return self._cur.execute("DELETE FROM idempotency").rowcount
