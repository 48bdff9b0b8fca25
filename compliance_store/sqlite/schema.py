"""The SQLite schema as ordered sqlite-utils migrations.

Each migration is frozen once released: a new column or index is a new migration appended to
``migrations()``, never an edit of an old one. Every list filter the API offers has an index
leading with (organization_id, ...) and ending in (created_at, id), so a filtered page is one
index range scan in the order the page needs.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database, Migrations

__all__ = ["MIGRATION_SET", "COUNTED_TABLES", "REVISED_TABLES", "migrations", "missing_columns"]

MIGRATION_SET = "compliance_store.sqlite"

VENDOR_FILTERS = (
    "criticality",
    "processes_personal_data",
    "ict_service",
    "category",
    "country",
    "dpa_status",
    "status",
    "assignee_id",
)
PERSON_FILTERS = ("role", "department", "is_active")
FINDING_FILTERS = ("status", "severity", "type", "source")
_SCOPED = ("organization_id", "id")


def _table(db: Database, name: str, columns: dict[str, Any], *, pk: Any = "id",
           nullable: tuple[str, ...] = (), defaults: dict[str, Any] | None = None) -> None:
    db[name].create(  # type: ignore[union-attr]
        columns,
        pk=pk,
        not_null={column for column in columns if column not in nullable},
        defaults=defaults or {},
    )


def _list_indexes(db: Database, table: str, scope: tuple[str, ...], filters: tuple[str, ...]) -> None:
    db[table].create_index([*scope, "created_at", "id"], index_name=f"{table}_list")  # type: ignore[union-attr]
    for column in filters:
        db[table].create_index(  # type: ignore[union-attr]
            [*scope, column, "created_at", "id"], index_name=f"{table}_by_{column}"
        )


def _initial(db: Database) -> None:
    _table(db, "organizations", {
        "id": str, "name": str, "plan": str, "rate_limit_rpm": int, "rate_limit_burst": int,
        "created_at": str, "updated_at": str,
    }, nullable=("rate_limit_rpm", "rate_limit_burst"))

    _table(db, "api_keys", {
        "id": str, "organization_id": str, "name": str, "role": str, "prefix": str, "secret_hash": str,
        "created_at": str, "expires_at": str, "revoked_at": str, "last_used_at": str, "created_by": str,
    }, nullable=("expires_at", "revoked_at", "last_used_at", "created_by"))
    db["api_keys"].create_index(["secret_hash"], unique=True, index_name="api_keys_secret_hash")  # type: ignore[union-attr]
    _list_indexes(db, "api_keys", ("organization_id",), ())

    _table(db, "key_usage", {"key_id": str, "day": str, "requests": int}, pk=("key_id", "day"))

    _table(db, "vendors", {
        "id": str, "organization_id": str, "name": str, "description": str, "category": str, "status": str,
        "inherent_probability": str, "inherent_impact": str, "residual_probability": str,
        "residual_impact": str, "website": str, "assignee_id": str, "country": str, "criticality": str,
        "ict_service": int, "processes_personal_data": int, "is_sub_processor": int, "dpa_status": str,
        "dpa_signed_at": str, "dpa_url": str, "last_reviewed_at": str, "next_review_due": str,
        "sub_processors": str, "transfer_mechanism": str, "archived": int, "archived_at": str,
        "created_at": str, "updated_at": str,
    }, pk=_SCOPED, nullable=("website", "assignee_id", "country", "dpa_status", "dpa_signed_at", "dpa_url",
                             "last_reviewed_at", "next_review_due", "transfer_mechanism", "archived_at"),
       defaults={"sub_processors": "[]", "archived": 0})
    _list_indexes(db, "vendors", ("organization_id", "archived"), VENDOR_FILTERS)

    _table(db, "people", {
        "id": str, "organization_id": str, "name": str, "email": str, "role": str, "department": str,
        "job_title": str, "is_active": int, "created_at": str, "updated_at": str,
    }, pk=_SCOPED, nullable=("job_title",))
    db["people"].create_index(["organization_id", "email"], unique=True, index_name="people_email")  # type: ignore[union-attr]
    _list_indexes(db, "people", ("organization_id",), PERSON_FILTERS)

    _table(db, "findings", {
        "id": str, "organization_id": str, "title": str, "severity": str, "status": str, "type": str,
        "source": str, "content": str, "revision_note": str, "created_by": str, "created_at": str,
        "updated_at": str, "closed_at": str,
    }, pk=_SCOPED, nullable=("revision_note", "created_by", "closed_at"))
    _list_indexes(db, "findings", ("organization_id",), FINDING_FILTERS)

    _table(db, "idempotency", {
        "organization_id": str, "principal": str, "key": str, "operation": str, "fingerprint": str,
        "result": str, "created_at": str,
    }, pk=("organization_id", "principal", "key"))
    db["idempotency"].create_index(["created_at"], index_name="idempotency_created_at")  # type: ignore[union-attr]

    _table(db, "rate_limit_buckets", {"key_id": str, "tokens": float, "updated_at": str}, pk="key_id")

    _table(db, "outbox", {
        "id": str, "type": str, "organization_id": str, "subject_id": str, "payload": str,
        "occurred_at": str, "published_at": str,
    }, nullable=("published_at",))
    db["outbox"].create_index(["published_at", "occurred_at", "id"], index_name="outbox_pending")  # type: ignore[union-attr]


COUNTED_TABLES = ("vendors", "people", "findings")
"""Tables whose rows per (organization, archived) are kept in ``list_counts`` by triggers."""

REVISED_TABLES = ("vendors", "people", "findings")
"""Tables whose changes per organization are counted in ``list_revisions`` by triggers."""


def _count_triggers(table: str) -> str:
    def key(row: str) -> tuple[str, str]:
        return f"{row}.organization_id", (f"{row}.archived" if table == "vendors" else "0")

    def add(row: str) -> str:
        organization, archived = key(row)
        return (f"INSERT INTO list_counts (table_name, organization_id, archived, total) "
                f"VALUES ('{table}', {organization}, {archived}, 1) "
                f"ON CONFLICT (table_name, organization_id, archived) DO UPDATE SET total = total + 1;")

    def remove(row: str) -> str:
        organization, archived = key(row)
        return (f"UPDATE list_counts SET total = total - 1 WHERE table_name = '{table}' "
                f"AND organization_id = {organization} AND archived = {archived};")

    moved = "OLD.organization_id IS NOT NEW.organization_id"
    if table == "vendors":
        moved += " OR OLD.archived IS NOT NEW.archived"
    return f"""
        CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN {add("NEW")} END;
        CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN {remove("OLD")} END;
        CREATE TRIGGER {table}_count_update AFTER UPDATE ON {table} WHEN {moved}
        BEGIN {remove("OLD")} {add("NEW")} END;
    """


def _list_counts(db: Database) -> None:
    """Unfiltered list totals (the default page of every register) read one row instead of
    counting an index range: 10,000 vendors cost ~300 us to count, the counter ~2 us."""
    _table(db, "list_counts", {"table_name": str, "organization_id": str, "archived": int, "total": int},
           pk=("table_name", "organization_id", "archived"))
    for table in COUNTED_TABLES:
        archived, group = ("archived", "organization_id, archived") if table == "vendors" else ("0", "organization_id")
        db.execute(
            f"INSERT INTO list_counts (table_name, organization_id, archived, total) "
            f"SELECT '{table}', organization_id, {archived}, count(*) FROM {table} GROUP BY {group}"
        )
        db.executescript(_count_triggers(table))


def _revision_triggers(table: str) -> str:
    def bump(row: str) -> str:
        return (f"INSERT INTO list_revisions (table_name, organization_id, revision) "
                f"VALUES ('{table}', {row}.organization_id, 1) "
                f"ON CONFLICT (table_name, organization_id) DO UPDATE SET revision = revision + 1;")

    return f"""
        CREATE TRIGGER {table}_revision_insert AFTER INSERT ON {table} BEGIN {bump("NEW")} END;
        CREATE TRIGGER {table}_revision_delete AFTER DELETE ON {table} BEGIN {bump("OLD")} END;
        CREATE TRIGGER {table}_revision_update AFTER UPDATE ON {table} BEGIN {bump("NEW")} END;
        CREATE TRIGGER {table}_revision_move AFTER UPDATE ON {table}
        WHEN OLD.organization_id IS NOT NEW.organization_id BEGIN {bump("OLD")} END;
    """


def _list_revisions(db: Database) -> None:
    """A counter per (table, organization) that every insert, update and delete bumps in its own
    transaction, so a cached page stays valid exactly while the counter is unchanged. Reading it
    is one primary-key lookup (WITHOUT ROWID: the key is the row). A missing row is revision 0;
    a counter never goes down, since its row is never deleted."""
    db.execute(
        "CREATE TABLE list_revisions (table_name TEXT NOT NULL, organization_id TEXT NOT NULL, "
        "revision INTEGER NOT NULL, PRIMARY KEY (table_name, organization_id)) WITHOUT ROWID"
    )
    for table in REVISED_TABLES:
        db.executescript(_revision_triggers(table))


def migrations() -> Migrations:
    """The ordered migration set; built on demand so importing this module does nothing."""
    steps = Migrations(MIGRATION_SET)
    steps(name="0001_initial")(_initial)
    steps(name="0002_list_counts")(_list_counts)
    steps(name="0003_list_revisions")(_list_revisions)
    return steps


def missing_columns(db: Database, table: str, names: tuple[str, ...]) -> list[str]:
    """Model fields the table lacks: a model changed without a migration."""
    present = set(db[table].columns_dict)  # type: ignore[union-attr]
    return [name for name in names if name not in present]
