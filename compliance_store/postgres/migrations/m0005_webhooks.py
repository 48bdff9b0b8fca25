"""0005_webhooks: webhook endpoints and their delivery attempts.

``events`` is a ``jsonb`` list of event types. The attempt ``body`` is ``text``: the exact bytes
every attempt of an event sends (a ``jsonb`` column would reorder keys). Besides the list and
filter indexes every ``create_records_table_v2`` makes, the deliveries table has two indexes for the
delivery engine's claim: pending attempts by due time and sending ones by lease expiry.

Frozen: literal names only.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import create_records_table_v2

__all__ = ["apply"]

_ID = 'text COLLATE "C" NOT NULL'


def apply(cur: psycopg.Cursor[Any]) -> None:
    create_records_table_v2(
        cur,
        "webhooks",
        {
            "id": _ID,
            "organization_id": _ID,
            "url": "text NOT NULL",
            "events": "jsonb NOT NULL DEFAULT '[]'",
            "description": "text NOT NULL",
            "active": "boolean NOT NULL DEFAULT true",
            "secret": "text NOT NULL",
            "disabled_reason": "text",
            "disabled_at": "timestamptz",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("active",),
    )
    create_records_table_v2(
        cur,
        "webhook_deliveries",
        {
            "id": _ID,
            "organization_id": _ID,
            "webhook_id": 'text COLLATE "C" NOT NULL',
            "event_id": "text NOT NULL",
            "event_type": "text NOT NULL",
            "attempt": "integer NOT NULL",
            "state": "text NOT NULL",
            "due_at": "timestamptz NOT NULL",
            "status_code": "integer",
            "duration_ms": "integer",
            "response_excerpt": "text NOT NULL",
            "error": "text",
            "next_retry_at": "timestamptz",
            "lease_expires_at": "timestamptz",
            "redelivery_of": "text",
            "body": "text NOT NULL",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("webhook_id", "state"),
    )
    cur.execute('CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" ("state", "due_at")')
    cur.execute('CREATE INDEX "webhook_deliveries_lease" ON "webhook_deliveries" ("state", "lease_expires_at")')
