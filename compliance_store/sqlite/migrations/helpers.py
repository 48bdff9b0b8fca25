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

__all__ = [
    "create_records_table",
    "create_records_table_v2",
    "create_records_table_v3",
    "cover_filter_indexes",
    "count_facets",
    "facet_keys",
    "recount_facets",
    "filter_index_columns",
]

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


def create_records_table_v3(
    db: Database, table: str, columns: Mapping[str, str], *, filters: Sequence[str] = (), partition: str | None = None
) -> None:
    """``create_records_table_v2`` and then ``count_facets``: the table's lists filtered on one or
    two columns take their totals from ``list_facets``. Every migration from 0011 on uses this
    (it needs the ``list_facets`` table of migration 0011).

    A future area's migration, e.g. ``m0012_controls.py``::

        def apply(db: Database) -> None:
            create_records_table_v3(db, "controls", {
                "id": "TEXT NOT NULL", "organization_id": "TEXT NOT NULL", "name": "TEXT NOT NULL",
                "status": "TEXT NOT NULL", "owner_id": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0",
                "created_at": "TEXT NOT NULL", "updated_at": "TEXT NOT NULL",
            }, filters=("status", "owner_id"), partition="archived")
    """
    _create(db, table, columns, filters, partition, covering=True)
    count_facets(db, table, filters=filters, partition=partition)


def count_facets(db: Database, table: str, *, filters: Sequence[str], partition: str | None = None) -> None:
    """Count the table's rows per value of each filter column and per pair of values of each two
    filter columns (``facet_keys``), in ``list_facets``, kept by the triggers
    ``<table>_facet_insert|delete|update`` and filled here from the rows already there.

    A row with NULL in a column is in no count of that column: a filter on it never matches NULL.
    A value is kept as its text (``CAST(... AS TEXT)``; a reader compares with the same cast of
    its parameter), so one table holds every column's counts.

    :param filters: the columns of the list filter model except the partition, in the model's
        field order (a reader names a pair in that order)
    """
    scope = _scope(partition)
    for name in (table, *filters, *scope):
        _check_name(name)
    if partition in filters:
        raise ValueError(f"the partition {partition} is part of every count's scope, not a filter")
    if not filters:
        return
    part = f'"{partition}"' if partition else "0"
    for key in facet_keys(filters):
        values = [f'CAST("{column}" AS TEXT)' for column in key]
        second = values[1] if len(values) > 1 else "''"
        present = " AND ".join(f'"{column}" IS NOT NULL' for column in key)
        grouped = ", ".join(("organization_id", *([part] if partition else []), *values))
        db.execute(
            "INSERT INTO list_facets (table_name, organization_id, archived, columns, value1, value2, total) "
            f"SELECT '{table}', organization_id, {part}, '{','.join(key)}', {values[0]}, {second}, count(*) "
            f'FROM "{table}" WHERE {present} GROUP BY {grouped}'
        )
    for statement in _facet_triggers(table, filters, partition):
        db.execute(statement)


def recount_facets(db: Database, table: str, *, filters: Sequence[str], partition: str | None = None) -> None:
    """Make a table's ``list_facets`` counts and triggers again for ``filters`` (all of them, in
    the model's order): what a migration that adds or removes a filter column calls, since the
    triggers name every column and the start-up check refuses triggers that miss one."""
    _check_name(table)
    for event in ("insert", "delete", "update"):
        db.execute(f'DROP TRIGGER "{table}_facet_{event}"')
    db.execute("DELETE FROM list_facets WHERE table_name = ?", [table])
    count_facets(db, table, filters=filters, partition=partition)


def facet_keys(filters: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The column sets counted in ``list_facets``: each filter column, then each pair of them
    in ``filters`` order (named ``"a"`` and ``"a,b"``)."""
    singles = tuple((column,) for column in filters)
    pairs = tuple((first, second) for index, first in enumerate(filters) for second in filters[index + 1 :])
    return singles + pairs


def _facet_triggers(table: str, filters: Sequence[str], partition: str | None) -> tuple[str, str, str]:
    """One statement per counted facet, each a primary-key upsert or update (one statement over
    a UNION of the facets made SQLite scan them: 6x slower per deleted row). On an update, only
    the facets of a changed column (or of a row moved to another organization or partition)
    are touched: the guard names only OLD and NEW, so SQLite tests it before any lookup."""
    scope = _scope(partition)

    def part(row: str) -> str:
        return f'{row}."{partition}"' if partition else "0"

    def changed(key: tuple[str, ...]) -> str:
        return " OR ".join(f'OLD."{column}" IS NOT NEW."{column}"' for column in (*scope, *key))

    def value(row: str, key: tuple[str, ...], index: int) -> str:
        return f'CAST({row}."{key[index]}" AS TEXT)' if index < len(key) else "''"

    def add(row: str, guarded: bool) -> str:
        statements = []
        for key in facet_keys(filters):
            present = " AND ".join(f'{row}."{column}" IS NOT NULL' for column in key)
            if guarded:
                present += f" AND ({changed(key)})"
            statements.append(
                "INSERT INTO list_facets (table_name, organization_id, archived, columns, value1, value2, total) "
                f"SELECT '{table}', {row}.organization_id, {part(row)}, '{','.join(key)}', "
                f"{value(row, key, 0)}, {value(row, key, 1)}, 1 WHERE {present} "
                "ON CONFLICT (table_name, organization_id, archived, columns, value1, value2) "
                "DO UPDATE SET total = total + 1;"
            )
        return " ".join(statements)

    def remove(row: str, guarded: bool) -> str:
        statements = []
        for key in facet_keys(filters):
            guard = f" AND ({changed(key)})" if guarded else ""
            statements.append(
                f"UPDATE list_facets SET total = total - 1 WHERE table_name = '{table}' "
                f"AND organization_id = {row}.organization_id AND archived = {part(row)} "
                f"AND columns = '{','.join(key)}' AND value1 = {value(row, key, 0)} "
                f"AND value2 = {value(row, key, 1)}{guard};"
            )
        return " ".join(statements)

    moved = " OR ".join(f'OLD."{column}" IS NOT NEW."{column}"' for column in (*scope, *filters))
    return (
        f"CREATE TRIGGER {table}_facet_insert AFTER INSERT ON {table} BEGIN {add('NEW', False)} END",
        f"CREATE TRIGGER {table}_facet_delete AFTER DELETE ON {table} BEGIN {remove('OLD', False)} END",
        (
            f"CREATE TRIGGER {table}_facet_update AFTER UPDATE ON {table} WHEN {moved} "
            f"BEGIN {remove('OLD', True)} {add('NEW', True)} END"
        ),
    )
