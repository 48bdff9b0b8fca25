"""0004_finding_templates: the finding templates area, and the template a finding was made from.

Frozen: literal names only; the table is made by ``create_records_table`` (itself frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import create_records_table

__all__ = ["apply"]


def apply(db: Database) -> None:
    create_records_table(
        db,
        "finding_templates",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "category": "TEXT NOT NULL",
            "title": "TEXT NOT NULL",
            "content": "TEXT NOT NULL",
            "order": "INTEGER NOT NULL",
            "created_at": "TEXT NOT NULL",
            "updated_at": "TEXT NOT NULL",
        },
        filters=("category",),
    )
    db.execute('ALTER TABLE "findings" ADD COLUMN "template_id" TEXT')
