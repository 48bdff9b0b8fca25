"""The webhook deliveries table's one query beyond a ``Records`` table's: the attempts due now,
across organizations, for the delivery engine's claim (shared by SQLite and PostgreSQL).

Two indexed halves (``webhook_deliveries_due`` on ``(state, due_at)`` and
``webhook_deliveries_lease`` on ``(state, lease_expires_at)``) joined with UNION ALL, so neither
the queue of pending attempts nor the log of finished ones is scanned.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import Any, ClassVar

from compliance_core.areas.webhooks import DELIVERIES, WebhookDelivery
from compliance_core.kernel.records import Records

from .records import ScopedRecords

__all__ = ["ScopedDeliveries"]


class ScopedDeliveries(ScopedRecords[WebhookDelivery]):
    serves: ClassVar[Records[Any, Any]] = DELIVERIES

    def __init__(self, db: Any, pages: Any, **options: Any) -> None:
        super().__init__(db, pages, **options)
        mapper = self._mapper
        self._mark = m = mapper.mark
        self._select = mapper.select_sql
        self._encode_time = mapper.codecs["due_at"][0] or (lambda value: value)
        self._due_sql = self._due(0)
        self._in_flight_sql = (
            f"SELECT webhook_id, COUNT(*) FROM webhook_deliveries WHERE state = 'sending' AND lease_expires_at > {m} "
            "GROUP BY webhook_id"
        )

    def _due(self, skipped: int) -> str:
        m = self._mark
        skip = f" AND webhook_id NOT IN ({', '.join([m] * skipped)})" if skipped else ""
        return (
            f"SELECT * FROM ({self._select} WHERE state = 'pending' AND due_at <= {m}{skip} "
            f"UNION ALL {self._select} WHERE state = 'sending' AND lease_expires_at <= {m}{skip}) AS due "
            f"ORDER BY due_at, id LIMIT {m}"
        )

    def due(self, now: dt.datetime, limit: int, skip: Collection[str] = ()) -> list[WebhookDelivery]:
        """Pending attempts due by ``now`` and sending ones whose lease ran out, earliest first,
        of the endpoints not in ``skip`` (few: those at their in-flight limit)."""
        stamp = self._encode_time(now)
        skipped = list(skip)
        sql = self._due(len(skipped)) if skipped else self._due_sql
        rows = self._db.execute(sql, (stamp, *skipped, stamp, *skipped, limit)).fetchall()
        return self._mapper.from_rows(rows)

    def in_flight(self, now: dt.datetime) -> dict[str, int]:
        """A range of ``webhook_deliveries_lease``: as many rows as attempts in flight."""
        rows = self._db.execute(self._in_flight_sql, (self._encode_time(now),)).fetchall()
        return {str(webhook_id): int(count) for webhook_id, count in rows}
