"""Idempotency records, whose ``result`` is whatever the guarded operation returned.

Results are stored as tagged JSON in a ``json`` column: a model or enum carries its wire name,
tuples and lists keep their kind, so a replay returns a value equal to the original (``json``
keeps the document as written, key order included); see ``compliance_store.results``.

The record is read and written inside the caller's write transaction, which holds the store's
writer lock (see ``store``): two processes using one key cannot both miss it and both create.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import cattrs
import psycopg

from compliance_core.kernel.idempotency import IdempotencyRecord

from ..results import TaggedResults
from .codec import dumps, stream

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["ResultCodec", "PostgresIdempotency"]

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


class ResultCodec(TaggedResults):
    """Tagged JSON for idempotency results, in a ``json`` column.

    :param converter: the store's cattrs converter (ISO text for timestamps and dates)
    """

    def dumps(self, value: Any) -> str:
        return dumps(self._tag(value))

    def load(self, document: Any) -> Any:
        """The result from the column's parsed document."""
        return self._untag(document)


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
