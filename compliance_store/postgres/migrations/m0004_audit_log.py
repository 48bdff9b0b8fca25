"""0004_audit_log: the audit trail, one entry per recorded event, listed per organization and
filtered by entity type, entity id, action and actor. ``changes`` is ``json`` (not ``jsonb``), so
the changed fields keep the order the API renders them in.

Frozen: literal names only; the table is made by ``create_records_table`` (itself frozen).
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import create_records_table

__all__ = ["apply"]

_ID = 'text COLLATE "C" NOT NULL'


def apply(cur: psycopg.Cursor[Any]) -> None:
    create_records_table(
        cur,
        "audit_log",
        {
            "id": _ID,
            "organization_id": _ID,
            "created_at": "timestamptz NOT NULL",
            "actor_type": "text NOT NULL",
            "actor_id": "text",
            "actor_role": "text",
            "action": "text NOT NULL",
            "entity_type": "text NOT NULL",
            "entity_id": "text NOT NULL",
            "event_id": "text NOT NULL",
            "changes": "json NOT NULL",
        },
        filters=("entity_type", "entity_id", "action", "actor_id"),
    )
