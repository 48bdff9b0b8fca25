"""0002_list_counts: a trigger-kept row count per (table, organization, partition).

Unfiltered list totals (the default page of every register) read one row instead of counting an
index range: 10,000 vendors cost ~300 us to count, the counter ~2 us. Vendors are counted per
``archived`` value (the register and the archive each have their own total); the other tables
store 0 in that column.

Frozen: table names, partitions and trigger text are literals here and stay as released.
"""

from __future__ import annotations

from sqlite_utils import Database

__all__ = ["apply"]

_LIST_COUNTS = """CREATE TABLE "list_counts" (
   "table_name" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "archived" INTEGER NOT NULL,
   "total" INTEGER NOT NULL,
   PRIMARY KEY ("table_name", "organization_id", "archived")
)"""


def _count_triggers(table: str, partition: str | None) -> str:
    def key(row: str) -> tuple[str, str]:
        return f"{row}.organization_id", (f"{row}.{partition}" if partition else "0")

    def add(row: str) -> str:
        organization, archived = key(row)
        return (
            f"INSERT INTO list_counts (table_name, organization_id, archived, total) "
            f"VALUES ('{table}', {organization}, {archived}, 1) "
            f"ON CONFLICT (table_name, organization_id, archived) DO UPDATE SET total = total + 1;"
        )

    def remove(row: str) -> str:
        organization, archived = key(row)
        return (
            f"UPDATE list_counts SET total = total - 1 WHERE table_name = '{table}' "
            f"AND organization_id = {organization} AND archived = {archived};"
        )

    moved = "OLD.organization_id IS NOT NEW.organization_id"
    if partition:
        moved += f" OR OLD.{partition} IS NOT NEW.{partition}"
    return f"""
        CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN {add("NEW")} END;
        CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN {remove("OLD")} END;
        CREATE TRIGGER {table}_count_update AFTER UPDATE ON {table} WHEN {moved}
        BEGIN {remove("OLD")} {add("NEW")} END;
    """


def apply(db: Database) -> None:
    db.execute(_LIST_COUNTS)
    db.execute(
        "INSERT INTO list_counts (table_name, organization_id, archived, total) "
        "SELECT 'vendors', organization_id, archived, count(*) FROM vendors GROUP BY organization_id, archived"
    )
    db.executescript(_count_triggers("vendors", "archived"))
    db.execute(
        "INSERT INTO list_counts (table_name, organization_id, archived, total) "
        "SELECT 'people', organization_id, 0, count(*) FROM people GROUP BY organization_id"
    )
    db.executescript(_count_triggers("people", None))
    db.execute(
        "INSERT INTO list_counts (table_name, organization_id, archived, total) "
        "SELECT 'findings', organization_id, 0, count(*) FROM findings GROUP BY organization_id"
    )
    db.executescript(_count_triggers("findings", None))
