"""The webhook deliveries table's one query beyond a ``Records`` table's: the attempts due now,
across organizations, for the delivery engine's claim (shared by SQLite and PostgreSQL).

Two indexed halves (``webhook_deliveries_due`` on ``(state, due_at)`` and
``webhook_deliveries_lease`` on ``(state, lease_expires_at)``) joined with UNION ALL, so neither
the queue of pending attempts nor the log of finished ones is scanned.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from compliance_core.areas.webhooks import WebhookDelivery

from .records import ScopedRecords

__all__ = ["ScopedDeliveries"]


class ScopedDeliveries(ScopedRecords[WebhookDelivery]):
    def __init__(self, db: Any, pages: Any, **options: Any) -> None:
        super().__init__(db, pages, **options)
        mapper = self._mapper
        m = mapper.mark
        self._encode_time = mapper.codecs["due_at"][0] or (lambda value: value)
        self._due_sql = (
            f"SELECT * FROM ({mapper.select_sql} WHERE state = 'pending' AND due_at <= {m} "
            f"UNION ALL {mapper.select_sql} WHERE state = 'sending' AND lease_expires_at <= {m}) AS due "
            f"ORDER BY due_at, id LIMIT {m}"
        )

    def due(self, now: dt.datetime, limit: int) -> list[WebhookDelivery]:
        """Pending attempts due by ``now`` and sending ones whose lease ran out, earliest first."""
        stamp = self._encode_time(now)
        return self._mapper.from_rows(self._db.execute(self._due_sql, (stamp, stamp, limit)).fetchall())
