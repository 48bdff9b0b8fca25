"""What a migration calls to add an area's organization-scoped table, with literal arguments.

Frozen like the migrations that call it: the SQL a helper writes becomes part of every migration
that called it, so editing a helper would change released migrations and make fresh and upgraded
databases drift apart. A change in behaviour is a new helper beside this one (``..._v2``), never
an edit of it. The store's start-up check (``compliance_store.sqlite.checks``) asks for exactly
what ``create_records_table_v2`` makes (and ``cover_filter_indexes`` brought older tables to).

Versions: ``create_records_table`` (migrations 0001-0005) indexes each filter column on the scope,
the column and ``(created_at, id)``; ``create_records_table_v2`` (every migration from 0006 on)
makes the same keys followed by the table's other filter columns, so a list filtered on two
columns is counted and paged inside one index (see ``m0006_list_indexes`` for the measurements).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sqlite_utils import Database

__all__ = ["create_records_table", "create_records_table_v2", "cover_filter_indexes", "filter_index_columns"]

_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_REQUIRED = ("id", "organization_id", "created_at")


def create_records_table(
    db: Database, table: str, columns: Mapping[str, str], *, filters: Sequence[str] = (), partition: str | None = None
) -> None:
    """Create an organization-scoped table as migrations 0001-0005 did (new migrations call
    ``create_records_table_v2``; this one stays for the migrations that called it).

    It makes the table, keyed by ``(organization_id, id)``; its list index ``<table>_list`` on
    the scope (``organization_id``, then ``partition`` if any) and ``(created_at, id)``; an index
    ``<table>_by_<column>`` per filter column, on the scope, the column and ``(created_at, id)``;
    the ``list_counts`` triggers ``<table>_count_insert|delete|update`` (totals per organization
    and partition value); and the ``list_revisions`` triggers
    ``<table>_revision_insert|delete|update|move``. Needs migrations 0002 and 0003 applied.

    :param table: the table, plural snake case, as the ``Records`` declaration names it
    :param columns: each column's SQL definition, in the model's field order; it must have
        ``id``, ``organization_id``, ``created_at`` and the partition column
    :param filters: the columns of the list filter model, except the partition (it is scope)
    :param partition: a 0/1 column counted separately (``archived``)
    """
    _create(db, table, columns, filters, partition, covering=False)


def create_records_table_v2(
    db: Database, table: str, columns: Mapping[str, str], *, filters: Sequence[str] = (), partition: str | None = None
) -> None:
    """``create_records_table`` with covering filter indexes: each ``<table>_by_<column>`` is on
    the scope, the column, ``(created_at, id)`` and then the other filter columns
    (``filter_index_columns``), so a count, page or anchor hop filtered on two columns reads one
    index range and no table rows but the page's own. Every migration from 0006 on uses this.

    :param filters: the columns of the list filter model except the partition, in the model's
        field order (the start-up check expects the trailing columns in that order)

    A future area's migration, e.g. ``m0009_risks.py``::

        def apply(db: Database) -> None:
            create_records_table_v2(db, "risks", {
                "id": "TEXT NOT NULL", "organization_id": "TEXT NOT NULL", "title": "TEXT NOT NULL",
                "status": "TEXT NOT NULL", "owner_id": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0",
                "created_at": "TEXT NOT NULL", "updated_at": "TEXT NOT NULL",
            }, filters=("status", "owner_id"), partition="archived")
    """
    _create(db, table, columns, filters, partition, covering=True)


def cover_filter_indexes(db: Database, table: str, *, filters: Sequence[str], partition: str | None = None) -> None:
    """Rebuild the filter indexes of a table made by ``create_records_table`` as
    ``create_records_table_v2`` makes them (same names, ``filter_index_columns``)."""
    scope = _scope(partition)
    for name in (table, *filters, *scope):
        _check_name(name)
    for column in filters:
        db.execute(f'DROP INDEX "{table}_by_{column}"')
        db.execute(_index(f"{table}_by_{column}", table, filter_index_columns(scope, column, filters)))


def filter_index_columns(scope: Sequence[str], column: str, filters: Sequence[str]) -> tuple[str, ...]:
    """The columns of a covering filter index: the scope, the column, ``(created_at, id)`` (the
    page order, so a filtered page is a range in order) and then the other filters (checked in
    the index, never read from the table)."""
    return (*scope, column, "created_at", "id", *(other for other in filters if other != column))


def _scope(partition: str | None) -> tuple[str, ...]:
    return ("organization_id", partition) if partition else ("organization_id",)


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a plain lower-case SQL name")


def _create(
    db: Database,
    table: str,
    columns: Mapping[str, str],
    filters: Sequence[str],
    partition: str | None,
    *,
    covering: bool,
) -> None:
    scope = _scope(partition)
    for name in (table, *columns, *filters, *scope):
        _check_name(name)
    absent = [name for name in (*_REQUIRED, *scope, *filters) if name not in columns]
    if absent:
        raise ValueError(f"table {table} lacks the columns {absent}")
    if partition in filters:
        raise ValueError(f"the partition {partition} is part of every index's scope, not a filter")
    definitions = [f'   "{name}" {definition}' for name, definition in columns.items()]
    definitions.append('   PRIMARY KEY ("organization_id", "id")')
    db.execute(f'CREATE TABLE "{table}" (\n' + ",\n".join(definitions) + "\n)")
    db.execute(_index(f"{table}_list", table, (*scope, "created_at", "id")))
    for column in filters:
        keys = filter_index_columns(scope, column, filters) if covering else (*scope, column, "created_at", "id")
        db.execute(_index(f"{table}_by_{column}", table, keys))
    for statement in (*_count_triggers(table, partition), *_revision_triggers(table)):
        db.execute(statement)


def _index(name: str, table: str, columns: Sequence[str]) -> str:
    quoted = ", ".join(f'"{column}"' for column in columns)
    return f'CREATE INDEX "{name}"\n    ON "{table}" ({quoted})'


def _count_triggers(table: str, partition: str | None) -> tuple[str, str, str]:
    def add(row: str) -> str:
        part = f'{row}."{partition}"' if partition else "0"
        return (
            f"INSERT INTO list_counts (table_name, organization_id, archived, total) "
            f"VALUES ('{table}', {row}.organization_id, {part}, 1) "
            f"ON CONFLICT (table_name, organization_id, archived) DO UPDATE SET total = total + 1;"
        )

    def remove(row: str) -> str:
        part = f'{row}."{partition}"' if partition else "0"
        return (
            f"UPDATE list_counts SET total = total - 1 WHERE table_name = '{table}' "
            f"AND organization_id = {row}.organization_id AND archived = {part};"
        )

    moved = "OLD.organization_id IS NOT NEW.organization_id"
    if partition:
        moved += f' OR OLD."{partition}" IS NOT NEW."{partition}"'
    return (
        f"CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN {add('NEW')} END",
        f"CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN {remove('OLD')} END",
        (
            f"CREATE TRIGGER {table}_count_update AFTER UPDATE ON {table} WHEN {moved} "
            f"BEGIN {remove('OLD')} {add('NEW')} END"
        ),
    )


def _revision_triggers(table: str) -> tuple[str, str, str, str]:
    def bump(row: str) -> str:
        return (
            f"INSERT INTO list_revisions (table_name, organization_id, revision) "
            f"VALUES ('{table}', {row}.organization_id, 1) "
            f"ON CONFLICT (table_name, organization_id) DO UPDATE SET revision = revision + 1;"
        )

    return (
        f"CREATE TRIGGER {table}_revision_insert AFTER INSERT ON {table} BEGIN {bump('NEW')} END",
        f"CREATE TRIGGER {table}_revision_delete AFTER DELETE ON {table} BEGIN {bump('OLD')} END",
        f"CREATE TRIGGER {table}_revision_update AFTER UPDATE ON {table} BEGIN {bump('NEW')} END",
        (
            f"CREATE TRIGGER {table}_revision_move AFTER UPDATE ON {table} "
            f"WHEN OLD.organization_id IS NOT NEW.organization_id BEGIN {bump('OLD')} END"
        ),
    )
