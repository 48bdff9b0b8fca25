"""0002_areas: the organization-scoped tables of the vendors, people, findings and finding
templates areas, each made by ``helpers.create_records_table`` (itself frozen) with its list and
filter indexes, count triggers and revision triggers. People's e-mails are unique within an
organization.

Vendors are counted per ``archived`` value (the register and the archive each have their own
total). ``sub_processors`` is a ``jsonb`` document (a list of objects). ``category`` and the
enum-valued columns are text: enums are stored by their wire value.

Frozen: literal names only.
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
        "vendors",
        {
            "id": _ID,
            "organization_id": _ID,
            "name": "text NOT NULL",
            "description": "text NOT NULL",
            "category": "text NOT NULL",
            "status": "text NOT NULL",
            "inherent_probability": "text NOT NULL",
            "inherent_impact": "text NOT NULL",
            "residual_probability": "text NOT NULL",
            "residual_impact": "text NOT NULL",
            "website": "text",
            "assignee_id": "text",
            "country": "text",
            "criticality": "text NOT NULL",
            "ict_service": "boolean NOT NULL",
            "processes_personal_data": "boolean NOT NULL",
            "is_sub_processor": "boolean NOT NULL",
            "dpa_status": "text",
            "dpa_signed_at": "date",
            "dpa_url": "text",
            "last_reviewed_at": "date",
            "next_review_due": "date",
            "sub_processors": "jsonb NOT NULL DEFAULT '[]'",
            "transfer_mechanism": "text",
            "archived": "boolean NOT NULL DEFAULT false",
            "archived_at": "timestamptz",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=(
            "criticality",
            "processes_personal_data",
            "ict_service",
            "category",
            "country",
            "dpa_status",
            "status",
            "assignee_id",
        ),
        partition="archived",
    )
    create_records_table(
        cur,
        "people",
        {
            "id": _ID,
            "organization_id": _ID,
            "name": "text NOT NULL",
            "email": "text NOT NULL",
            "role": "text NOT NULL",
            "department": "text NOT NULL",
            "job_title": "text",
            "is_active": "boolean NOT NULL",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("role", "department", "is_active"),
    )
    cur.execute('CREATE UNIQUE INDEX "people_email" ON "people" ("organization_id", "email")')
    create_records_table(
        cur,
        "findings",
        {
            "id": _ID,
            "organization_id": _ID,
            "title": "text NOT NULL",
            "severity": "text NOT NULL",
            "status": "text NOT NULL",
            "type": "text NOT NULL",
            "source": "text NOT NULL",
            "content": "text NOT NULL",
            "revision_note": "text",
            "template_id": "text",
            "created_by": "text",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
            "closed_at": "timestamptz",
        },
        filters=("status", "severity", "type", "source"),
    )
    create_records_table(
        cur,
        "finding_templates",
        {
            "id": _ID,
            "organization_id": _ID,
            "category": "text NOT NULL",
            "title": "text NOT NULL",
            "content": "text NOT NULL",
            "order": "integer NOT NULL",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=("category",),
    )
