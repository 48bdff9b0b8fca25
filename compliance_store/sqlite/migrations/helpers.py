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
from collections.abc import Callable, Mapping, Sequence

from sqlite_utils import Database

__all__ = [
    "create_records_table",
    "create_records_table_v2",
    "create_records_table_v4",
    "count_blocks",
    "recount_blocks",
    "create_records_table_v5",
    "count_blocks_v2",
    "recount_blocks_v2",
    "keep_facets",
    "facet_block_keys",
    "block_keys",
    "BLOCK_ROWS",
    "cover_filter_indexes",
    "count_facets",
    "facet_keys",
    "filter_index_columns",
    "search_index",
    "drop_search_index",
    "SEARCH_TOKENIZER",
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


def facet_keys(filters: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The column sets counted in ``list_facets``: each filter column, then each pair of them
    in ``filters`` order (named ``"a"`` and ``"a,b"``)."""
    singles = tuple((column,) for column in filters)
    pairs = tuple((first, second) for index, first in enumerate(filters) for second in filters[index + 1 :])
    return singles + pairs


def _partition_of(row: str, partition: str | None) -> str:
    return f'{row}."{partition}"' if partition else "0"


def _changed(columns: Sequence[str]) -> str:
    return " OR ".join(f'OLD."{column}" IS NOT NEW."{column}"' for column in columns)


def _key_value(row: str, key: tuple[str, ...], index: int) -> str:
    return f'CAST({row}."{key[index]}" AS TEXT)' if index < len(key) else "''"


def _in_organization(table: str, row: str) -> str:
    return f"table_name = '{table}' AND organization_id = {row}.organization_id"


def _block_of(table: str, row: str) -> str:
    """The block ``row`` falls in: one seek of the ``list_blocks_by_start`` index."""
    return (
        f"(SELECT block FROM list_blocks WHERE {_in_organization(table, row)} AND (start_created_at, start_id) "
        f"<= ({row}.created_at, {row}.id) ORDER BY start_created_at DESC, start_id DESC LIMIT 1)"
    )


_LOCATED = ("organization_id", "created_at", "id")
"""What places a row in a block: a change of any moves it."""


def _block_removals(table: str, keys: Sequence[tuple[str, ...]], partition: str | None, row: str, guarded: bool) -> str:
    """The statements that take ``row`` out of its block's row count and its keys' counts."""
    scope, where, block = _scope(partition), _in_organization(table, row), _block_of(table, row)
    guard = f" AND ({_changed(_LOCATED)})" if guarded else ""
    statements = [f"UPDATE list_blocks SET rows = rows - 1 WHERE {where} AND block = {block}{guard};"]
    for key in keys:
        guard = f" AND ({_changed((*_LOCATED, *scope, *key))})" if guarded else ""
        statements.append(
            f"UPDATE list_facet_blocks SET total = total - 1 WHERE {where} "
            f"AND archived = {_partition_of(row, partition)} AND columns = '{','.join(key)}' "
            f"AND value1 = {_key_value(row, key, 0)} AND value2 = {_key_value(row, key, 1)} AND block = {block}{guard};"
        )
    return " ".join(statements)


def _triggers(
    table: str, kind: str, moved: str, add: Callable[[str, bool], str], remove: Callable[[str, bool], str]
) -> tuple[str, str, str]:
    """The insert, delete and update triggers ``<table>_<kind>_*``: an update that changes
    nothing ``moved`` tests runs neither statement list."""
    return (
        f"CREATE TRIGGER {table}_{kind}_insert AFTER INSERT ON {table} BEGIN {add('NEW', False)} END",
        f"CREATE TRIGGER {table}_{kind}_delete AFTER DELETE ON {table} BEGIN {remove('OLD', False)} END",
        (
            f"CREATE TRIGGER {table}_{kind}_update AFTER UPDATE ON {table} WHEN {moved} "
            f"BEGIN {remove('OLD', True)} {add('NEW', True)} END"
        ),
    )


def _facet_triggers(table: str, filters: Sequence[str], partition: str | None) -> tuple[str, str, str]:
    """One statement per counted facet, each a primary-key upsert or update (one statement over
    a UNION of the facets made SQLite scan them: 6x slower per deleted row). On an update, only
    the facets of a changed column (or of a row moved to another organization or partition)
    are touched: the guard names only OLD and NEW, so SQLite tests it before any lookup."""
    scope = _scope(partition)

    def add(row: str, guarded: bool) -> str:
        statements = []
        for key in facet_keys(filters):
            present = " AND ".join(f'{row}."{column}" IS NOT NULL' for column in key)
            if guarded:
                present += f" AND ({_changed((*scope, *key))})"
            statements.append(
                "INSERT INTO list_facets (table_name, organization_id, archived, columns, value1, value2, total) "
                f"SELECT '{table}', {row}.organization_id, {_partition_of(row, partition)}, '{','.join(key)}', "
                f"{_key_value(row, key, 0)}, {_key_value(row, key, 1)}, 1 WHERE {present} "
                "ON CONFLICT (table_name, organization_id, archived, columns, value1, value2) "
                "DO UPDATE SET total = total + 1;"
            )
        return " ".join(statements)

    def remove(row: str, guarded: bool) -> str:
        statements = []
        for key in facet_keys(filters):
            guard = f" AND ({_changed((*scope, *key))})" if guarded else ""
            statements.append(
                f"UPDATE list_facets SET total = total - 1 WHERE table_name = '{table}' "
                f"AND organization_id = {row}.organization_id AND archived = {_partition_of(row, partition)} "
                f"AND columns = '{','.join(key)}' AND value1 = {_key_value(row, key, 0)} "
                f"AND value2 = {_key_value(row, key, 1)}{guard};"
            )
        return " ".join(statements)

    return _triggers(table, "facet", _changed((*scope, *filters)), add, remove)


BLOCK_ROWS = 1024
"""Rows per block of ``count_blocks`` (before out-of-order inserts): where a deep page is found
by summing at most ``rows / BLOCK_ROWS`` block counts and walking fewer than ``BLOCK_ROWS``
index entries (the two costs balance near the square root of a million)."""


def create_records_table_v4(
    db: Database,
    table: str,
    columns: Mapping[str, str],
    *,
    filters: Sequence[str] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """``create_records_table_v2`` and then ``count_blocks``: the table's lists, unfiltered or
    filtered on one or two columns, take their totals from ``list_facet_blocks`` and find a
    deep page there instead of walking to it. Every migration from 0012 on uses this (it needs
    the tables of migration 0012).

    A future area's migration, e.g. ``m0013_controls.py``::

        def apply(db: Database) -> None:
            create_records_table_v4(db, "controls", {
                "id": "TEXT NOT NULL", "organization_id": "TEXT NOT NULL", "name": "TEXT NOT NULL",
                "status": "TEXT NOT NULL", "owner_id": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0",
                "created_at": "TEXT NOT NULL", "updated_at": "TEXT NOT NULL",
            }, filters=("status", "owner_id"), partition="archived")
    """
    _create(db, table, columns, filters, partition, covering=True)
    count_blocks(db, table, filters=filters, partition=partition, rows=rows)


def block_keys(filters: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The column sets counted per block: none (the unfiltered list, named ``""``), each filter
    column, then each pair of them in ``filters`` order (``"a"``, ``"a,b"``)."""
    return ((), *facet_keys(filters))


def count_blocks(
    db: Database, table: str, *, filters: Sequence[str], partition: str | None = None, rows: int = BLOCK_ROWS
) -> None:
    """Cut the table's rows of each organization into blocks in (created_at, id) order and count,
    per block, partition value and each value of ``block_keys`` (``list_facet_blocks``), so a
    list of one of those filter sets finds the block holding any offset by a running sum, and
    seeks to it: kept by the triggers ``<table>_block_insert|delete|update`` and filled here
    from the rows already there (``rows`` to a block).

    A block is a key range: block ``b`` holds the rows from its start key (``list_blocks``) up
    to the next block's start; block 0 starts before every key. A row is counted in the block
    whose range holds its key, found again by the key on every change, so the rows of a filter
    set from a block's start on are exactly the set's rows in that block and every later one.
    An insert newer than every row the last block ever held (``high``), when that block has
    ``rows`` rows, opens the next block at the new key; nothing else moves a boundary. So
    appends (the usual write) keep blocks at ``rows``; rows inserted out of order grow the
    block their key falls in, and deletes shrink theirs.

    A row with NULL in a column is in no count of that column (a filter never matches NULL); a
    value is kept as its text, as in ``count_facets``.

    :param filters: the columns of the list filter model except the partition, in the model's
        field order (a reader names a pair in that order)
    """
    scope = _scope(partition)
    for name in (table, *filters, *scope):
        _check_name(name)
    if partition in filters:
        raise ValueError(f"the partition {partition} is part of every count's scope, not a filter")
    if rows < 1:
        raise ValueError("a block holds at least one row")
    _fill_blocks(db, table, block_keys(filters), filters, partition, rows)
    for statement in _block_triggers(table, filters, partition, rows):
        db.execute(statement)


def recount_blocks(
    db: Database, table: str, *, filters: Sequence[str], partition: str | None = None, rows: int = BLOCK_ROWS
) -> None:
    """Make a table's blocks, counts and triggers again for ``filters`` (all of them, in the
    model's order): what a migration that adds or removes a filter column calls, since the
    triggers name every column and the start-up check refuses triggers that miss one."""
    _check_name(table)
    for event in ("insert", "delete", "update"):
        db.execute(f'DROP TRIGGER "{table}_block_{event}"')
    db.execute("DELETE FROM list_facet_blocks WHERE table_name = ?", [table])
    db.execute("DELETE FROM list_blocks WHERE table_name = ?", [table])
    count_blocks(db, table, filters=filters, partition=partition, rows=rows)


def _block_triggers(table: str, filters: Sequence[str], partition: str | None, rows: int) -> tuple[str, str, str]:
    """One statement per counted key, each a primary-key upsert or update on the block its row's
    key falls in (``block``: one seek of the ``list_blocks_by_start`` index). On an update,
    only the counts of a changed column, key, organization or partition are touched: each
    guard names only OLD and NEW, so SQLite tests it before any lookup."""
    scope = _scope(partition)

    def add(row: str, guarded: bool) -> str:
        newer = f"(high_created_at, high_id) < ({row}.created_at, {row}.id)"
        statements = [
            "INSERT OR IGNORE INTO list_blocks (table_name, organization_id, block, start_created_at, start_id, "
            f"high_created_at, high_id, rows) VALUES ('{table}', {row}.organization_id, 0, '', '', '', '', 0);",
        ]
        if not guarded:  # an insert may open the next block
            statements.append(
                "INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id, "
                f"high_created_at, high_id, rows) SELECT '{table}', {row}.organization_id, block + 1, "
                f"{row}.created_at, {row}.id, {row}.created_at, {row}.id, 0 FROM list_blocks "
                f"WHERE {_in_organization(table, row)} AND rows >= {rows} AND {newer} "
                f"AND block = (SELECT max(block) FROM list_blocks WHERE {_in_organization(table, row)});"
            )
        guard = f" AND ({_changed(_LOCATED)})" if guarded else ""
        statements.append(
            f"UPDATE list_blocks SET rows = rows + 1, "
            f"high_created_at = CASE WHEN {newer} THEN {row}.created_at ELSE high_created_at END, "
            f"high_id = CASE WHEN {newer} THEN {row}.id ELSE high_id END "
            f"WHERE {_in_organization(table, row)} AND block = {_block_of(table, row)}{guard};"
        )
        for key in block_keys(filters):
            present = " AND ".join(["1", *(f'{row}."{column}" IS NOT NULL' for column in key)])
            if guarded:
                present += f" AND ({_changed((*_LOCATED, *scope, *key))})"
            statements.append(
                "INSERT INTO list_facet_blocks (table_name, organization_id, archived, columns, value1, value2, "
                f"block, total) SELECT '{table}', {row}.organization_id, {_partition_of(row, partition)}, '{','.join(key)}', "
                f"{_key_value(row, key, 0)}, {_key_value(row, key, 1)}, {_block_of(table, row)}, 1 WHERE {present} "
                "ON CONFLICT (table_name, organization_id, archived, columns, value1, value2, block) "
                "DO UPDATE SET total = total + 1;"
            )
        return " ".join(statements)

    def remove(row: str, guarded: bool) -> str:
        return _block_removals(table, block_keys(filters), partition, row, guarded)

    return _triggers(table, "block", _changed((*_LOCATED, *scope, *filters)), add, remove)


def _fill_blocks(
    db: Database, table: str, keys: Sequence[tuple[str, ...]], columns: Sequence[str], partition: str | None, rows: int
) -> None:
    """Cut the rows already there into blocks (``list_blocks``) and count ``keys`` per block
    (``list_facet_blocks``): the filling part of ``count_blocks`` and ``count_blocks_v2``.

    :param columns: the columns ``keys`` name, in the filter model's order
    """
    scope = _scope(partition)
    # every row's position, beside what its counts are grouped by: one sort, then scans
    kept = "".join(f', "{column}"' for column in (*scope[1:], *columns))
    db.execute(
        f"CREATE TEMP TABLE block_rows AS SELECT organization_id, id, created_at{kept}, "
        "row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) - 1 AS position "
        f'FROM "{table}"'
    )
    db.execute("CREATE UNIQUE INDEX block_rows_by_position ON block_rows (organization_id, position)")
    db.execute(
        "INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id, "
        "high_created_at, high_id, rows) "
        f"SELECT '{table}', g.organization_id, g.block, "
        "CASE WHEN g.block = 0 THEN '' ELSE first.created_at END, "
        "CASE WHEN g.block = 0 THEN '' ELSE first.id END, last.created_at, last.id, g.rows "
        f"FROM (SELECT organization_id, position / {rows} AS block, min(position) AS first, "
        "max(position) AS last, count(*) AS rows FROM block_rows GROUP BY 1, 2) AS g "
        "JOIN block_rows AS first ON first.organization_id = g.organization_id AND first.position = g.first "
        "JOIN block_rows AS last ON last.organization_id = g.organization_id AND last.position = g.last"
    )
    part = f'"{partition}"' if partition else "0"
    for key in keys:
        values = [f'CAST("{column}" AS TEXT)' for column in key]
        first = values[0] if values else "''"
        second = values[1] if len(values) > 1 else "''"
        present = " AND ".join(["1", *(f'"{column}" IS NOT NULL' for column in key)])
        grouped = ", ".join(("organization_id", *([part] if partition else []), *values, "block"))
        db.execute(
            "INSERT INTO list_facet_blocks (table_name, organization_id, archived, columns, value1, value2, "
            f"block, total) SELECT '{table}', organization_id, {part}, '{','.join(key)}', {first}, {second}, "
            f"position / {rows} AS block, count(*) FROM block_rows WHERE {present} GROUP BY {grouped}"
        )
    db.execute("DROP TABLE block_rows")


def facet_block_keys(facets: Sequence[str], pairs: Sequence[tuple[str, str]] = ()) -> tuple[tuple[str, ...], ...]:
    """The column sets ``count_blocks_v2`` counts per block: none (the unfiltered list, ``""``),
    each facet, then each declared pair (``"a"``, ``"a,b"``, a pair in the filter model's order)."""
    return ((), *((facet,) for facet in facets), *pairs)


def _facet_columns(table: str, facets: Sequence[str], pairs: Sequence[tuple[str, str]], partition: str | None) -> None:
    for name in (table, *facets, *_scope(partition)):
        _check_name(name)
    if partition in facets:
        raise ValueError(f"the partition {partition} is part of every count's scope, not a facet")
    strangers = [pair for pair in pairs if len(pair) != 2 or pair[0] not in facets or pair[1] not in facets]
    if strangers:
        raise ValueError(f"facet pairs {strangers} must name two of the facets {list(facets)}")


def create_records_table_v5(
    db: Database,
    table: str,
    columns: Mapping[str, str],
    *,
    filters: Sequence[str] = (),
    facets: Sequence[str] = (),
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """``create_records_table_v2`` and then ``count_blocks_v2``: an index for every filter, counts
    for the declared facets only. Every migration from 0014 on uses this.

    A future area's migration, e.g. ``m0015_controls.py``::

        def apply(db: Database) -> None:
            create_records_table_v5(db, "controls", {
                "id": "TEXT NOT NULL", "organization_id": "TEXT NOT NULL", "name": "TEXT NOT NULL",
                "status": "TEXT NOT NULL", "owner_id": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0",
                "created_at": "TEXT NOT NULL", "updated_at": "TEXT NOT NULL",
            }, filters=("status", "owner_id"), facets=("status",), partition="archived")
    """
    _create(db, table, columns, filters, partition, covering=True)
    count_blocks_v2(db, table, facets=facets, pairs=pairs, partition=partition, rows=rows)


def count_blocks_v2(
    db: Database,
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """``count_blocks`` for the declared facets and pairs only (``facet_block_keys``), not every
    filter and every pair of filters: a write runs one counter statement per facet, pair and the
    unfiltered count, and its block's row count is one upsert (``count_blocks`` ran three
    statements for it). A list filtered on anything else is counted (once per filter set and
    revision, by the platform's total cache).

    :param facets: the ``Records`` declaration's ``facets``, in the filter model's order
    :param pairs: its ``facet_pairs``, each in the filter model's order
    """
    _facet_columns(table, facets, pairs, partition)
    if rows < 1:
        raise ValueError("a block holds at least one row")
    _fill_blocks(db, table, facet_block_keys(facets, pairs), facets, partition, rows)
    for statement in _block_triggers_v2(table, facet_block_keys(facets, pairs), facets, partition, rows):
        db.execute(statement)


def recount_blocks_v2(
    db: Database,
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Make a table's blocks, counts and triggers again for ``facets`` and ``pairs`` (all of
    them): what a migration that declares a new facet calls, since its values were never counted."""
    _check_name(table)
    for event in ("insert", "delete", "update"):
        db.execute(f'DROP TRIGGER "{table}_block_{event}"')
    db.execute("DELETE FROM list_facet_blocks WHERE table_name = ?", [table])
    db.execute("DELETE FROM list_blocks WHERE table_name = ?", [table])
    count_blocks_v2(db, table, facets=facets, pairs=pairs, partition=partition, rows=rows)


def keep_facets(
    db: Database,
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Narrow a table counted by ``count_blocks`` (every filter and pair) to ``facets`` and
    ``pairs``, which it already counts: the triggers are replaced by ``count_blocks_v2``'s and
    the counts of every other column set are deleted. The blocks and the kept counts stay as
    the old triggers kept them, so nothing is counted again (no scan of the table)."""
    _facet_columns(table, facets, pairs, partition)
    for event in ("insert", "delete", "update"):
        db.execute(f'DROP TRIGGER "{table}_block_{event}"')
    kept = [",".join(key) for key in facet_block_keys(facets, pairs)]
    marks = ", ".join("?" for _ in kept)
    db.execute(f"DELETE FROM list_facet_blocks WHERE table_name = ? AND columns NOT IN ({marks})", [table, *kept])
    for statement in _block_triggers_v2(table, facet_block_keys(facets, pairs), facets, partition, rows):
        db.execute(statement)


def _block_triggers_v2(
    table: str, keys: Sequence[tuple[str, ...]], columns: Sequence[str], partition: str | None, rows: int
) -> tuple[str, str, str]:
    """``_block_triggers`` for ``keys`` only, with the block's row count in one statement: an
    upsert on the block the row falls in, which is block 0 of an organization without blocks
    and the next block of one whose last block is full when the row is newer than all it held
    (what ``_block_triggers`` did in three statements: create block 0, open the next, count)."""
    scope = _scope(partition)

    def add(row: str, guarded: bool) -> str:
        opens = f"last.rows >= {rows} AND (last.high_created_at, last.high_id) < ({row}.created_at, {row}.id)"
        target = f"WHEN {opens} THEN last.block + 1 " if not guarded else ""
        start = f"CASE WHEN last.block IS NULL THEN '' ELSE {row}.{{column}} END"
        newer = "(high_created_at, high_id) < (excluded.high_created_at, excluded.high_id)"
        guard = f"({_changed(_LOCATED)})" if guarded else "1"
        statements = [
            "INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id, "
            f"high_created_at, high_id, rows) SELECT '{table}', {row}.organization_id, "
            f"CASE WHEN last.block IS NULL THEN 0 {target}ELSE {_block_of(table, row)} END, "
            f"{start.format(column='created_at')}, {start.format(column='id')}, {row}.created_at, {row}.id, 1 "
            "FROM (SELECT 1) LEFT JOIN (SELECT block, rows, high_created_at, high_id FROM list_blocks "
            f"WHERE {_in_organization(table, row)} ORDER BY block DESC LIMIT 1) AS last ON 1 WHERE {guard} "
            "ON CONFLICT (table_name, organization_id, block) DO UPDATE SET rows = rows + 1, "
            f"high_created_at = CASE WHEN {newer} THEN excluded.high_created_at ELSE high_created_at END, "
            f"high_id = CASE WHEN {newer} THEN excluded.high_id ELSE high_id END;"
        ]
        for key in keys:
            present = " AND ".join(["1", *(f'{row}."{column}" IS NOT NULL' for column in key)])
            if guarded:
                present += f" AND ({_changed((*_LOCATED, *scope, *key))})"
            statements.append(
                "INSERT INTO list_facet_blocks (table_name, organization_id, archived, columns, value1, value2, "
                f"block, total) SELECT '{table}', {row}.organization_id, {_partition_of(row, partition)}, '{','.join(key)}', "
                f"{_key_value(row, key, 0)}, {_key_value(row, key, 1)}, {_block_of(table, row)}, 1 WHERE {present} "
                "ON CONFLICT (table_name, organization_id, archived, columns, value1, value2, block) "
                "DO UPDATE SET total = total + 1;"
            )
        return " ".join(statements)

    def remove(row: str, guarded: bool) -> str:
        return _block_removals(table, keys, partition, row, guarded)

    return _triggers(table, "block", _changed((*_LOCATED, *scope, *columns)), add, remove)


SEARCH_TOKENIZER = "trigram case_sensitive 0"
"""The tokenizer of every ``<table>_search`` table (SQLite 3.34 and later): each run of three
characters, folded by SQLite's own case folding."""


def _search_text(prefix: str, column: str) -> str:
    """What the search index holds of a column: its text with ``İ`` as ``i``, the one character
    Python's ``fold`` takes to an ASCII letter that SQLite's folding keeps apart (so that a
    ``q`` holding an ``i`` can still use the index)."""
    return f"replace({prefix}\"{column}\", 'İ', 'i')"


def _search_triggers(table: str, columns: Sequence[str]) -> tuple[str, str, str]:
    search = f"{table}_search"
    listed = ", ".join(f'"{column}"' for column in columns)

    def insert(row: str) -> str:
        texts = ", ".join(_search_text(f"{row}.", column) for column in columns)
        return f'INSERT INTO "{search}" (rowid, {listed}) VALUES ({row}.rowid, {texts});'

    def delete(row: str) -> str:
        texts = ", ".join(_search_text(f"{row}.", column) for column in columns)
        return f'INSERT INTO "{search}" ("{search}", rowid, {listed}) VALUES (\'delete\', {row}.rowid, {texts});'

    changed = " OR ".join(
        ["OLD.rowid IS NOT NEW.rowid", *(f'OLD."{column}" IS NOT NEW."{column}"' for column in columns)]
    )
    return (
        f'CREATE TRIGGER "{search}_insert" AFTER INSERT ON "{table}" BEGIN {insert("NEW")} END',
        f'CREATE TRIGGER "{search}_delete" AFTER DELETE ON "{table}" BEGIN {delete("OLD")} END',
        (
            f'CREATE TRIGGER "{search}_update" AFTER UPDATE ON "{table}" WHEN {changed} '
            f"BEGIN {delete('OLD')} {insert('NEW')} END"
        ),
    )


def search_index(db: Database, table: str, columns: Sequence[str]) -> None:
    """Give ``table`` (a ``Records`` table) the index ``q`` narrows its candidates with, over
    ``columns`` (its declared ``searchable`` fields), replacing the one it had.

    ``<table>_search`` is a contentless FTS5 table (``SEARCH_TOKENIZER``, ``detail=none``: the
    trigrams each row holds, no positions and no copy of the text) keyed by the table's rowid and
    filled from the rows already there; the triggers ``<table>_search_insert|delete|update`` keep
    it in step inside every write (an update only when a searched column changed: one statement
    per insert and delete, two per such update). The index is a candidate filter: a row holding
    every trigram of a ``q`` may still not contain it, so the exact test of ``q`` stays
    (``compliance_store.sqlite.search``).

    The rowid links a row to its entry: VACUUM keeps the rowids of a table with indexes, and the
    store copies through its repositories; a file rebuilt otherwise (``.dump`` without
    ``--preserve-rowids``) calls this again to index its rows anew.
    """
    for name in (table, *columns):
        _check_name(name)
    if not columns:
        raise ValueError(f"a search index of {table} needs at least one column")
    drop_search_index(db, table)
    search = f"{table}_search"
    listed = ", ".join(f'"{column}"' for column in columns)
    db.execute(
        f"CREATE VIRTUAL TABLE \"{search}\" USING fts5({listed}, tokenize = '{SEARCH_TOKENIZER}', "
        "content = '', columnsize = 0, detail = none)"
    )
    texts = ", ".join(_search_text("", column) for column in columns)
    db.execute(f'INSERT INTO "{search}" (rowid, {listed}) SELECT rowid, {texts} FROM "{table}"')
    for statement in _search_triggers(table, columns):
        db.execute(statement)


def drop_search_index(db: Database, table: str) -> None:
    """Drop ``table``'s search index and its triggers, if it has them (a table whose declaration
    no longer names searchable fields)."""
    _check_name(table)
    for event in ("insert", "delete", "update"):
        db.execute(f'DROP TRIGGER IF EXISTS "{table}_search_{event}"')
    db.execute(f'DROP TABLE IF EXISTS "{table}_search"')
