"""0011_facet_counts: totals of lists filtered on one or two columns, kept by triggers.

A list filtered on ``country`` (or on ``country`` and ``status``) used to count its matches in
the covering filter index at the first request of each filter set in each server process, and
again after every write of the organization's records in that table (the kept totals are valid
at one revision only). At a million vendors that count takes 30-110 ms: measured under random
pages and filters, the first request of each filter set in each process made the p99.

``list_facets`` holds, per table, organization and partition value, the number of rows with each
value of each filter column and with each pair of values of each two filter columns (vendors:
8 columns, 8 + 28 counts per row), kept in the writing transaction by the triggers
``<table>_facet_insert|delete|update`` (``helpers.count_facets``), so such a total is one
primary-key read at any size, after any write, in any process. Lists filtered on three columns
or more still count (and keep the total per revision).

Frozen: literal names only; the counts and triggers are made by ``helpers.count_facets`` (itself
frozen), which fills them from the rows already there.
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import count_facets

__all__ = ["apply"]

_LIST_FACETS = """CREATE TABLE "list_facets" (
   "table_name" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "archived" INTEGER NOT NULL,
   "columns" TEXT NOT NULL,
   "value1" TEXT NOT NULL,
   "value2" TEXT NOT NULL,
   "total" INTEGER NOT NULL,
   PRIMARY KEY ("table_name", "organization_id", "archived", "columns", "value1", "value2")
) WITHOUT ROWID"""


def apply(db: Database) -> None:
    db.execute(_LIST_FACETS)
    count_facets(
        db,
        "vendors",
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
    count_facets(db, "people", filters=("role", "department", "is_active"))
    count_facets(db, "findings", filters=("status", "severity", "type", "source", "task_id", "control_id"))
    count_facets(db, "finding_templates", filters=("category",))
    count_facets(db, "audit_log", filters=("entity_type", "entity_id", "action", "actor_id"))
    count_facets(db, "webhooks", filters=("active",))
    count_facets(db, "webhook_deliveries", filters=("webhook_id", "state"))
    count_facets(db, "policies", filters=("status", "in_force", "assignee_id"), partition="archived")
    count_facets(db, "policy_versions", filters=("policy_id",))
    count_facets(db, "policy_acknowledgements", filters=("policy_id", "version_id", "person_id"))
    count_facets(
        db,
        "risks",
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
