"""0008_webhooks: webhook endpoints and their delivery attempts.

``events`` is a JSON list of event types. Besides the list and filter indexes every
``create_records_table_v2`` makes, the deliveries table has two indexes for the delivery engine's
claim: pending attempts by due time and sending ones by lease expiry.

Frozen: literal names only; the tables are made by ``create_records_table_v2`` (itself frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import create_records_table_v2

__all__ = ["apply"]


def apply(db: Database) -> None:
    create_records_table_v2(
        db,
        "webhooks",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "url": "TEXT NOT NULL",
            "events": "TEXT NOT NULL DEFAULT '[]'",
            "description": "TEXT NOT NULL",
            "active": "INTEGER NOT NULL DEFAULT 1",
            "secret": "TEXT NOT NULL",
            "disabled_reason": "TEXT",
            "disabled_at": "TEXT",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("active",),
    )
    create_records_table_v2(
        db,
        "webhook_deliveries",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "webhook_id": "TEXT NOT NULL",
            "event_id": "TEXT NOT NULL",
            "event_type": "TEXT NOT NULL",
            "attempt": "INTEGER NOT NULL",
            "state": "TEXT NOT NULL",
            "due_at": "TEXT NOT NULL",
            "status_code": "INTEGER",
            "duration_ms": "INTEGER",
            "response_excerpt": "TEXT NOT NULL",
            "error": "TEXT",
            "next_retry_at": "TEXT",
            "lease_expires_at": "TEXT",
            "redelivery_of": "TEXT",
            "body": "TEXT NOT NULL",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("webhook_id", "state"),
    )
    db.execute('CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" ("state", "due_at")')
    db.execute('CREATE INDEX "webhook_deliveries_lease" ON "webhook_deliveries" ("state", "lease_expires_at")')
