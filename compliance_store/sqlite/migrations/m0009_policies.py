"""0009_policies: the policies area (policies, their frozen versions, acknowledgements), and the
person an API key acts as.

``signer_ids`` and ``control_ids`` are JSON lists of ids (controls are checked once that
area exists). A version number per policy and one
acknowledgement per person and version are kept unique by the service (writers are serialised). Policies are counted per ``archived`` value (the
register and the archive each have their own total).

Frozen: literal names only; the tables are made by ``create_records_table_v2`` (itself frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import create_records_table_v2

__all__ = ["apply"]


def apply(db: Database) -> None:
    create_records_table_v2(
        db,
        "policies",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "name": "TEXT NOT NULL",
            "description": "TEXT NOT NULL",
            "content": "TEXT NOT NULL",
            "status": "TEXT NOT NULL",
            "frequency": "TEXT",
            "is_required_to_sign": "INTEGER NOT NULL",
            "signer_ids": "TEXT NOT NULL DEFAULT '[]'",
            "assignee_id": "TEXT",
            "control_ids": "TEXT NOT NULL DEFAULT '[]'",
            "approver_id": "TEXT",
            "pending_approval": "INTEGER NOT NULL DEFAULT 0",
            "review_comment": "TEXT",
            "current_version_id": "TEXT",
            "version": "INTEGER NOT NULL DEFAULT 0",
            "in_force": "INTEGER NOT NULL DEFAULT 0",
            "last_published_at": "TEXT",
            "last_approved_at": "TEXT",
            "next_review_date": "TEXT",
            "archived": "INTEGER NOT NULL DEFAULT 0",
            "archived_at": "TEXT",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("status", "in_force", "assignee_id"),
        partition="archived",
    )
    create_records_table_v2(
        db,
        "policy_versions",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "policy_id": "TEXT NOT NULL",
            "version": "INTEGER NOT NULL",
            "name": "TEXT NOT NULL",
            "content": "TEXT NOT NULL",
            "changelog": "TEXT",
            "published_by": "TEXT NOT NULL",
            "published_at": "TEXT NOT NULL",
            "approved_by": "TEXT",
            "approved_at": "TEXT",
            "approval_comment": "TEXT",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("policy_id",),
    )
    create_records_table_v2(
        db,
        "policy_acknowledgements",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "policy_id": "TEXT NOT NULL",
            "version_id": "TEXT NOT NULL",
            "version": "INTEGER NOT NULL",
            "person_id": "TEXT NOT NULL",
            "acknowledged_by": "TEXT NOT NULL",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("policy_id", "version_id", "person_id"),
    )
    db.execute('ALTER TABLE "api_keys" ADD COLUMN "person_id" TEXT')
