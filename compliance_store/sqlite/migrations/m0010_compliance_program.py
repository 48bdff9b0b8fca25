"""0010_compliance_program: the risk register, the links of complete findings, and the
organization's profile, branding, settings and Owner (issue 10).

Risks are counted per ``archived`` value (the register and the archive each have their own
total). Scores and levels are stored columns, so a list filters by level in SQL. The links to
controls and tasks are JSON lists of identifiers. Findings gain the task and the control they
were raised against, each a list filter with its index (as ``create_records_table`` names them).
An organization's ``slug`` is unique (a partial index: many have none).

Frozen: literal names only; the table is made by ``create_records_table_v2`` (itself frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import cover_filter_indexes, create_records_table_v2

__all__ = ["apply"]


def apply(db: Database) -> None:
    create_records_table_v2(
        db,
        "risks",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "title": "TEXT NOT NULL",
            "description": "TEXT NOT NULL",
            "category": "TEXT NOT NULL",
            "department": "TEXT",
            "status": "TEXT NOT NULL",
            "likelihood": "TEXT NOT NULL",
            "impact": "TEXT NOT NULL",
            "residual_likelihood": "TEXT NOT NULL",
            "residual_impact": "TEXT NOT NULL",
            "inherent_score": "INTEGER NOT NULL",
            "inherent_level": "TEXT NOT NULL",
            "residual_score": "INTEGER NOT NULL",
            "residual_level": "TEXT NOT NULL",
            "treatment_strategy": "TEXT NOT NULL",
            "treatment_strategy_description": "TEXT NOT NULL",
            "owner_id": "TEXT",
            "control_ids": "TEXT NOT NULL DEFAULT '[]'",
            "task_ids": "TEXT NOT NULL DEFAULT '[]'",
            "accepted_by": "TEXT",
            "accepted_at": "TEXT",
            "accepted_residual_score": "INTEGER",
            "acceptance_expires_on": "TEXT",
            "acceptance_note": "TEXT",
            "acceptance_lapsed_at": "TEXT",
            "acceptance_lapse_reason": "TEXT",
            "archived": "INTEGER NOT NULL DEFAULT 0",
            "archived_at": "TEXT",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
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
    db.execute('ALTER TABLE "findings" ADD COLUMN "task_id" TEXT')
    db.execute('ALTER TABLE "findings" ADD COLUMN "control_id" TEXT')
    db.execute(
        'CREATE INDEX "findings_by_task_id"\n    ON "findings" ("organization_id", "task_id", "created_at", "id")'
    )
    db.execute(
        'CREATE INDEX "findings_by_control_id"\n    ON "findings" ("organization_id", "control_id", "created_at", "id")'
    )
    # Each filter index of findings covers the other filters (0006): all of them, the two new
    # ones included, are rebuilt to cover the new columns too.
    cover_filter_indexes(db, "findings", filters=("status", "severity", "type", "source", "task_id", "control_id"))
    for column, definition in (
        ("slug", "TEXT"),
        ("website", "TEXT"),
        ("logo", "TEXT"),
        ("primary_color", "TEXT"),
        ("evidence_approval_enabled", "INTEGER NOT NULL DEFAULT 0"),
        ("device_agent_step_enabled", "INTEGER NOT NULL DEFAULT 1"),
        ("security_training_step_enabled", "INTEGER NOT NULL DEFAULT 1"),
        ("advanced_mode_enabled", "INTEGER NOT NULL DEFAULT 0"),
        ("owner_person_id", "TEXT"),
    ):
        db.execute(f'ALTER TABLE "organizations" ADD COLUMN "{column}" {definition}')
    db.execute('CREATE UNIQUE INDEX "organizations_slug" ON "organizations" ("slug") WHERE "slug" IS NOT NULL')
