"""0007_audit_log: the audit trail, one entry per recorded event, listed per organization and
filtered by entity type, entity id, action and actor. ``changes`` is a JSON object.

Frozen: literal names only; the table is made by ``create_records_table`` (itself frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import create_records_table

__all__ = ["apply"]


def apply(db: Database) -> None:
    create_records_table(
        db,
        "audit_log",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "created_at": "TEXT NOT NULL",
            "actor_type": "TEXT NOT NULL",
            "actor_id": "TEXT",
            "actor_role": "TEXT",
            "action": "TEXT NOT NULL",
            "entity_type": "TEXT NOT NULL",
            "entity_id": "TEXT NOT NULL",
            "event_id": "TEXT NOT NULL",
            "changes": "TEXT NOT NULL",
        },
        filters=("entity_type", "entity_id", "action", "actor_id"),
    )
