"""0006_policies: the policies area (policies, their frozen versions, acknowledgements), and the
person an API key acts as.

``signer_ids`` and ``control_ids`` are JSON lists of ids (controls are checked once that
area exists). A version number per policy and one
acknowledgement per person and version are kept unique by the service (writers are serialised). Policies are counted per ``archived`` value (the
register and the archive each have their own total).

Frozen: literal names only; the tables are made by ``create_records_table_v2`` (itself frozen).
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
        "policies",
        {
            "id": _ID,
            "organization_id": _ID,
            "name": "text NOT NULL",
            "description": "text NOT NULL",
            "content": "text NOT NULL",
            "status": "text NOT NULL",
            "frequency": "text",
            "is_required_to_sign": "boolean NOT NULL",
            "signer_ids": "jsonb NOT NULL DEFAULT '[]'",
            "assignee_id": "text",
            "control_ids": "jsonb NOT NULL DEFAULT '[]'",
            "approver_id": "text",
            "pending_approval": "boolean NOT NULL DEFAULT false",
            "review_comment": "text",
            "current_version_id": "text",
            "version": "integer NOT NULL DEFAULT 0",
            "in_force": "boolean NOT NULL DEFAULT false",
            "last_published_at": "timestamptz",
            "last_approved_at": "timestamptz",
            "next_review_date": "date",
            "archived": "boolean NOT NULL DEFAULT false",
            "archived_at": "timestamptz",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("status", "in_force", "assignee_id"),
        partition="archived",
    )
    create_records_table_v2(
        cur,
        "policy_versions",
        {
            "id": _ID,
            "organization_id": _ID,
            "policy_id": "text NOT NULL",
            "version": "integer NOT NULL",
            "name": "text NOT NULL",
            "content": "text NOT NULL",
            "changelog": "text",
            "published_by": "text NOT NULL",
            "published_at": "timestamptz NOT NULL",
            "approved_by": "text",
            "approved_at": "timestamptz",
            "approval_comment": "text",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("policy_id",),
    )
    create_records_table_v2(
        cur,
        "policy_acknowledgements",
        {
            "id": _ID,
            "organization_id": _ID,
            "policy_id": "text NOT NULL",
            "version_id": "text NOT NULL",
            "version": "integer NOT NULL",
            "person_id": "text NOT NULL",
            "acknowledged_by": "text NOT NULL",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("policy_id", "version_id", "person_id"),
    )
    cur.execute('ALTER TABLE "api_keys" ADD COLUMN "person_id" text')
