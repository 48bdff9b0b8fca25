"""0007_compliance_program: the risk register, the links of complete findings, and the
organization's profile, branding, settings and Owner (issue 10).

Risks are counted per ``archived`` value (the register and the archive each have their own
total). Scores and levels are stored columns, so a list filters by level in SQL. The links to
controls and tasks are ``jsonb`` lists of identifiers; enum-valued columns are text. Findings
gain the task and the control they were raised against, each a list filter; every filter index of findings is rebuilt to cover
them (as ``create_records_table_v2`` makes them). An organization's ``slug`` is unique (a partial index:
many have none).

Frozen: literal names only.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import cover_filter_indexes, create_records_table_v2

__all__ = ["apply"]

_ID = 'text COLLATE "C" NOT NULL'


def apply(cur: psycopg.Cursor[Any]) -> None:
    create_records_table_v2(
        cur,
        "risks",
        {
            "id": _ID,
            "organization_id": _ID,
            "title": "text NOT NULL",
            "description": "text NOT NULL",
            "category": "text NOT NULL",
            "department": "text",
            "status": "text NOT NULL",
            "likelihood": "text NOT NULL",
            "impact": "text NOT NULL",
            "residual_likelihood": "text NOT NULL",
            "residual_impact": "text NOT NULL",
            "inherent_score": "integer NOT NULL",
            "inherent_level": "text NOT NULL",
            "residual_score": "integer NOT NULL",
            "residual_level": "text NOT NULL",
            "treatment_strategy": "text NOT NULL",
            "treatment_strategy_description": "text NOT NULL",
            "owner_id": "text",
            "control_ids": "jsonb NOT NULL DEFAULT '[]'",
            "task_ids": "jsonb NOT NULL DEFAULT '[]'",
            "accepted_by": "text",
            "accepted_at": "timestamptz",
            "accepted_residual_score": "integer",
            "acceptance_expires_on": "date",
            "acceptance_note": "text",
            "acceptance_lapsed_at": "timestamptz",
            "acceptance_lapse_reason": "text",
            "archived": "boolean NOT NULL DEFAULT false",
            "archived_at": "timestamptz",
            "created_at": "timestamptz NOT NULL",
            "updated_at": "timestamptz NOT NULL",
        },
        filters=(
            "status",
            "category",
            "department",
            "owner_id",
            "treatment_strategy",
            "inherent_level",
            "residual_level",
        ),
        partition="archived",
    )
    cur.execute('ALTER TABLE "findings" ADD COLUMN "task_id" text')
    cur.execute('ALTER TABLE "findings" ADD COLUMN "control_id" text')
    cur.execute('CREATE INDEX "findings_by_task_id" ON "findings" ("organization_id", "task_id", "created_at", "id")')
    cur.execute(
        'CREATE INDEX "findings_by_control_id" ON "findings" ("organization_id", "control_id", "created_at", "id")'
    )
    # Each filter index of findings covers the other filters (0006): all of them, the two new
    # ones included, are rebuilt to cover the new columns too.
    cover_filter_indexes(cur, "findings", filters=("status", "severity", "type", "source", "task_id", "control_id"))
    for column, definition in (
        ("slug", "text"),
        ("website", "text"),
        ("logo", "text"),
        ("primary_color", "text"),
        ("evidence_approval_enabled", "boolean NOT NULL DEFAULT false"),
        ("device_agent_step_enabled", "boolean NOT NULL DEFAULT true"),
        ("security_training_step_enabled", "boolean NOT NULL DEFAULT true"),
        ("advanced_mode_enabled", "boolean NOT NULL DEFAULT false"),
        ("owner_person_id", "text"),
    ):
        cur.execute(f'ALTER TABLE "organizations" ADD COLUMN "{column}" {definition}')
    cur.execute('CREATE UNIQUE INDEX "organizations_slug" ON "organizations" ("slug") WHERE "slug" IS NOT NULL')
