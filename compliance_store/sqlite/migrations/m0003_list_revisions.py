"""0003_list_revisions: a change counter per (table, organization) for the page cache.

Every insert, update and delete bumps the counter in its own transaction, so a cached page stays
valid exactly while the counter is unchanged. Reading it is one primary-key lookup (WITHOUT
ROWID: the key is the row). A missing row is revision 0; a counter never goes down, since its
row is never deleted. Moving a row to another organization bumps both organizations.

Frozen: table names and trigger text are literals here and stay as released.
"""

from __future__ import annotations

from sqlite_utils import Database

__all__ = ["apply"]


def _revision_triggers(table: str) -> str:
    def bump(row: str) -> str:
        return (
            f"INSERT INTO list_revisions (table_name, organization_id, revision) "
            f"VALUES ('{table}', {row}.organization_id, 1) "
            f"ON CONFLICT (table_name, organization_id) DO UPDATE SET revision = revision + 1;"
        )

    return f"""
        CREATE TRIGGER {table}_revision_insert AFTER INSERT ON {table} BEGIN {bump("NEW")} END;
        CREATE TRIGGER {table}_revision_delete AFTER DELETE ON {table} BEGIN {bump("OLD")} END;
        CREATE TRIGGER {table}_revision_update AFTER UPDATE ON {table} BEGIN {bump("NEW")} END;
        CREATE TRIGGER {table}_revision_move AFTER UPDATE ON {table}
        WHEN OLD.organization_id IS NOT NEW.organization_id BEGIN {bump("OLD")} END;
    """


def apply(db: Database) -> None:
    db.execute(
        "CREATE TABLE list_revisions (table_name TEXT NOT NULL, organization_id TEXT NOT NULL, "
        "revision INTEGER NOT NULL, PRIMARY KEY (table_name, organization_id)) WITHOUT ROWID"
    )
    db.executescript(_revision_triggers("vendors"))
    db.executescript(_revision_triggers("people"))
    db.executescript(_revision_triggers("findings"))
