"""Idempotency records, whose ``result`` is whatever the guarded operation returned.

Results are stored as tagged JSON: a model or enum carries its wire name, tuples and lists keep
their kind, so a replay returns a value equal to the original; see ``compliance_store.results``
(which also reads the import paths that records written before wire names carry).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import cattrs

from compliance_core.kernel.idempotency import IdempotencyRecord

from ..results import TaggedResults
from .codec import decode_timestamp, encode_timestamp

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["ResultCodec", "SqliteIdempotency"]

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


class ResultCodec(TaggedResults):
    """Tagged JSON text for idempotency results.

    :param converter: the store's cattrs converter (same text forms as the columns)
    """

    def dumps(self, value: Any) -> str:
        return json.dumps(self._tag(value), separators=(",", ":"))

    def loads(self, text: str) -> Any:
        return self._untag(json.loads(text))


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
