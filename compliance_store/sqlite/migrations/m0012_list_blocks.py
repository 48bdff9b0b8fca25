"""0012_list_blocks: deep pages found by counts per block instead of walked to.

With the totals of migration 0011 the register size no longer showed in counts, but a page deep
in a list still walked its offset: the first deep page of each filter set in each server process
collected its seek anchors by hopping over as many index entries as the page's offset (up to a
few hundred thousand at a million vendors), and again after any write. Under random pages and
filters those first walks made the p99 at 1M four times the p99 at 10k.

Each table's rows of an organization are now cut into blocks of about a thousand in (created_at,
id) order (``list_blocks``: each block's start key), and ``list_facet_blocks`` counts, per block,
partition and each value of each filter column and pair of columns (and of none, the unfiltered
list), the rows there: the counts of ``list_facets`` split by block, which they replace (a total
is their sum). A page at offset ``o`` of such a filter set takes the running sum of its block
counts to the block holding ``o``, seeks to that block's start in the filter index and skips
fewer than a block's rows: bounded work at any depth, in any process, after any write. The
triggers ``<table>_block_insert|delete|update`` (``helpers.count_blocks``) keep both tables in
the writing transaction and replace ``<table>_facet_*``.

Frozen: literal names only; blocks, counts and triggers are made by ``helpers.count_blocks``
(itself frozen), which fills them from the rows already there.
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import count_blocks

__all__ = ["apply"]

_LIST_BLOCKS = """CREATE TABLE "list_blocks" (
   "table_name" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "block" INTEGER NOT NULL,
   "start_created_at" TEXT NOT NULL,
   "start_id" TEXT NOT NULL,
   "high_created_at" TEXT NOT NULL,
   "high_id" TEXT NOT NULL,
   "rows" INTEGER NOT NULL,
   PRIMARY KEY ("table_name", "organization_id", "block")
) WITHOUT ROWID"""

_BY_START = """CREATE UNIQUE INDEX "list_blocks_by_start"
    ON "list_blocks" ("table_name", "organization_id", "start_created_at", "start_id")"""

_LIST_FACET_BLOCKS = """CREATE TABLE "list_facet_blocks" (
   "table_name" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "archived" INTEGER NOT NULL,
   "columns" TEXT NOT NULL,
   "value1" TEXT NOT NULL,
   "value2" TEXT NOT NULL,
   "block" INTEGER NOT NULL,
   "total" INTEGER NOT NULL,
   PRIMARY KEY ("table_name", "organization_id", "archived", "columns", "value1", "value2", "block")
) WITHOUT ROWID"""

_FACETED = (
    "vendors",
    "people",
    "findings",
    "finding_templates",
    "audit_log",
    "webhooks",
    "webhook_deliveries",
    "policies",
    "policy_versions",
    "policy_acknowledgements",
    "risks",
)


def apply(db: Database) -> None:
    db.execute(_LIST_BLOCKS)
    db.execute(_BY_START)
    db.execute(_LIST_FACET_BLOCKS)
    for table in _FACETED:
        for event in ("insert", "delete", "update"):
            db.execute(f'DROP TRIGGER "{table}_facet_{event}"')
    db.execute('DROP TABLE "list_facets"')
    count_blocks(
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
    count_blocks(db, "people", filters=("role", "department", "is_active"))
    count_blocks(db, "findings", filters=("status", "severity", "type", "source", "task_id", "control_id"))
    count_blocks(db, "finding_templates", filters=("category",))
    count_blocks(db, "audit_log", filters=("entity_type", "entity_id", "action", "actor_id"))
    count_blocks(db, "webhooks", filters=("active",))
    count_blocks(db, "webhook_deliveries", filters=("webhook_id", "state"))
    count_blocks(db, "policies", filters=("status", "in_force", "assignee_id"), partition="archived")
    count_blocks(db, "policy_versions", filters=("policy_id",))
    count_blocks(db, "policy_acknowledgements", filters=("policy_id", "version_id", "person_id"))
    count_blocks(
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
