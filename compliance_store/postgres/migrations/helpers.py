"""What a migration calls to add an area's organization-scoped table, with literal arguments.

Frozen like the migrations that call it: the SQL a helper writes becomes part of every migration
that called it, so editing a helper would change released migrations and make fresh and upgraded
schemas drift apart. A change in behaviour is a new helper beside this one (``..._v2``), never an
edit of it. The store's start-up check (``compliance_store.postgres.checks``) asks for exactly
what ``create_records_table_v2`` makes (and ``cover_filter_indexes`` brought older tables to).

Versions: ``create_records_table`` (migrations 0001-0002) indexes each filter column on the scope,
the column and ``(created_at, id)``; ``create_records_table_v2`` (every migration from 0003 on)
makes the same keys followed by the table's other filter columns, so a list filtered on two
columns is counted (index-only) and paged inside one index (see ``m0003_list_indexes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql

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
]

_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_REQUIRED = ("id", "organization_id", "created_at")


def create_records_table(
    cur: psycopg.Cursor[Any],
    table: str,
    columns: Mapping[str, str],
    *,
    filters: Sequence[str] = (),
    partition: str | None = None,
) -> None:
    """Create an organization-scoped table as migration 0002 did (new migrations call
    ``create_records_table_v2``; this one stays for the migrations that called it).

    It makes the table, keyed by ``(organization_id, id)``; its list index ``<table>_list`` on
    the scope (``organization_id``, then ``partition`` if any) and ``(created_at, id)``; an index
    ``<table>_by_<column>`` per filter column, on the scope, the column and ``(created_at, id)``;
    the ``list_counts`` triggers ``<table>_count_insert|delete|update`` (totals per organization
    and partition value) over the PL/pgSQL function ``<table>_list_counts()``; and the
    ``list_revisions`` triggers ``<table>_revision_insert|delete|update`` over
    ``<table>_list_revisions()``. Both functions run with the ``search_path`` of the migration
    (``SET search_path FROM CURRENT``), so a write from a session with another search path still
    reaches this schema's counters. Needs the ``list_counts`` and ``list_revisions`` tables of
    migration 0001.

    :param table: the table, plural snake case, as the ``Records`` declaration names it
    :param columns: each column's SQL definition, in the model's field order; it must have
        ``id``, ``organization_id``, ``created_at`` and the partition column (declare ``id`` and
        ``organization_id`` ``text COLLATE "C"``: pages are ordered by ``id`` after
        ``created_at``, in code-point order as the other stores order them)
    :param filters: the columns of the list filter model, except the partition (it is scope)
    :param partition: a boolean column counted separately (``archived``)
    """
    _create(cur, table, columns, filters, partition, covering=False)


def create_records_table_v2(
    cur: psycopg.Cursor[Any],
    table: str,
    columns: Mapping[str, str],
    *,
    filters: Sequence[str] = (),
    partition: str | None = None,
) -> None:
    """``create_records_table`` with covering filter indexes: each ``<table>_by_<column>`` is on
    the scope, the column, ``(created_at, id)`` and then the other filter columns
    (``filter_index_columns``) as key columns, not ``INCLUDE``: a key column is tested inside the
    index by an Index Scan too, where an ``INCLUDE`` column is only a filter on the heap row
    (measured: pages filtered on two columns 2.5 ms with ``INCLUDE``, 0.9 ms with keys). Counts
    are index-only scans, which need the visibility map (autovacuum; bulk copies vacuum).
    Every migration from 0003 on uses this.

    :param filters: the columns of the list filter model except the partition, in the model's
        field order (the start-up check expects the trailing columns in that order)

    A future area's migration, e.g. ``m0006_risks.py``::

        def apply(cur: psycopg.Cursor[Any]) -> None:
            create_records_table_v2(cur, "risks", {
                "id": 'text COLLATE "C" NOT NULL', "organization_id": 'text COLLATE "C" NOT NULL',
                "title": "text NOT NULL", "status": "text NOT NULL", "owner_id": "text",
                "archived": "boolean NOT NULL DEFAULT false",
                "created_at": "timestamptz NOT NULL", "updated_at": "timestamptz NOT NULL",
            }, filters=("status", "owner_id"), partition="archived")
    """
    _create(cur, table, columns, filters, partition, covering=True)


def cover_filter_indexes(
    cur: psycopg.Cursor[Any], table: str, *, filters: Sequence[str], partition: str | None = None
) -> None:
    """Rebuild the filter indexes of a table made by ``create_records_table`` as
    ``create_records_table_v2`` makes them (same names, ``filter_index_columns``)."""
    scope = _scope(partition)
    for name in (table, *filters, *scope):
        _check_name(name)
    for column in filters:
        cur.execute(f'DROP INDEX "{table}_by_{column}"')
        cur.execute(_index(f"{table}_by_{column}", table, filter_index_columns(scope, column, filters)))


def filter_index_columns(scope: Sequence[str], column: str, filters: Sequence[str]) -> tuple[str, ...]:
    """The columns of a covering filter index: the scope, the column, ``(created_at, id)`` (the
    page order, so a filtered page is a range in order) and then the other filters (tested in
    the index, never read from the heap)."""
    return (*scope, column, "created_at", "id", *(other for other in filters if other != column))


def _scope(partition: str | None) -> tuple[str, ...]:
    return ("organization_id", partition) if partition else ("organization_id",)


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a plain lower-case SQL name")


def _create(
    cur: psycopg.Cursor[Any],
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
    definitions = [f'    "{name}" {definition}' for name, definition in columns.items()]
    definitions.append('    PRIMARY KEY ("organization_id", "id")')
    cur.execute(f'CREATE TABLE "{table}" (\n' + ",\n".join(definitions) + "\n)")
    cur.execute(_index(f"{table}_list", table, (*scope, "created_at", "id")))
    for column in filters:
        keys = filter_index_columns(scope, column, filters) if covering else (*scope, column, "created_at", "id")
        cur.execute(_index(f"{table}_by_{column}", table, keys))
    for statement in (*_count_triggers(table, partition), *_revision_triggers(table)):
        cur.execute(statement)


def _index(name: str, table: str, columns: Sequence[str]) -> str:
    quoted = ", ".join(f'"{column}"' for column in columns)
    return f'CREATE INDEX "{name}" ON "{table}" ({quoted})'


def _function(name: str, body: str, variables: Sequence[str] = ()) -> str:
    declared = "DECLARE\n" + "".join(f"    {variable};\n" for variable in variables) if variables else ""
    return (
        f'CREATE FUNCTION "{name}"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $function$\n'
        f"{declared}BEGIN\n{body}    RETURN NULL;\nEND\n$function$"
    )


def _trigger(name: str, event: str, table: str, function: str, when: str | None = None) -> str:
    condition = f" WHEN ({when})" if when else ""
    return f'CREATE TRIGGER "{name}" AFTER {event} ON "{table}" FOR EACH ROW{condition} EXECUTE FUNCTION "{function}"()'


def _count_triggers(table: str, partition: str | None) -> tuple[str, ...]:
    def part(row: str) -> str:
        return f'{row}."{partition}"' if partition else "false"

    add = (
        "        INSERT INTO list_counts AS counts (table_name, organization_id, partition_value, total)\n"
        f"        VALUES ('{table}', NEW.organization_id, {part('NEW')}, 1)\n"
        "        ON CONFLICT (table_name, organization_id, partition_value) DO UPDATE SET total = counts.total + 1;\n"
    )
    remove = (
        f"        UPDATE list_counts SET total = total - 1 WHERE table_name = '{table}'\n"
        f"            AND organization_id = OLD.organization_id AND partition_value = {part('OLD')};\n"
    )
    body = (
        f"    IF TG_OP = 'DELETE' OR TG_OP = 'UPDATE' THEN\n{remove}    END IF;\n"
        f"    IF TG_OP = 'INSERT' OR TG_OP = 'UPDATE' THEN\n{add}    END IF;\n"
    )
    moved = "OLD.organization_id IS DISTINCT FROM NEW.organization_id"
    if partition:
        moved += f' OR OLD."{partition}" IS DISTINCT FROM NEW."{partition}"'
    function = f"{table}_list_counts"
    return (
        _function(function, body),
        _trigger(f"{table}_count_insert", "INSERT", table, function),
        _trigger(f"{table}_count_delete", "DELETE", table, function),
        _trigger(f"{table}_count_update", "UPDATE", table, function, moved),
    )


def _revision_triggers(table: str) -> tuple[str, ...]:
    def bump(organization: str, indent: str) -> str:
        return (
            f"{indent}INSERT INTO list_revisions AS revisions (table_name, organization_id, revision)\n"
            f"{indent}VALUES ('{table}', {organization}, 1)\n"
            f"{indent}ON CONFLICT (table_name, organization_id) DO UPDATE SET revision = revisions.revision + 1;\n"
        )

    body = (
        "    IF TG_OP = 'DELETE' THEN\n"
        f"{bump('OLD.organization_id', '        ')}"
        "    ELSE\n"
        f"{bump('NEW.organization_id', '        ')}"
        "        IF TG_OP = 'UPDATE' THEN\n"
        "            IF OLD.organization_id IS DISTINCT FROM NEW.organization_id THEN\n"
        f"{bump('OLD.organization_id', '                ')}"
        "            END IF;\n"
        "        END IF;\n"
        "    END IF;\n"
    )
    function = f"{table}_list_revisions"
    return (
        _function(function, body),
        _trigger(f"{table}_revision_insert", "INSERT", table, function),
        _trigger(f"{table}_revision_delete", "DELETE", table, function),
        _trigger(f"{table}_revision_update", "UPDATE", table, function),
    )


def count_facets(cur: psycopg.Cursor[Any], table: str, *, filters: Sequence[str], partition: str | None = None) -> None:
    """Count the table's rows per value of each filter column and per pair of values of each two
    filter columns (``facet_keys``), in ``list_facets``, kept by the triggers
    ``<table>_facet_insert|delete|update`` over the PL/pgSQL function ``<table>_list_facets()``
    and filled here from the rows already there.

    A row with NULL in a column is in no count of that column: a filter on it never matches NULL.
    A value is kept as its text (``::text``; a reader compares with ``CAST`` of its parameter to
    text), so one table holds every column's counts.

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
    part = f'"{partition}"' if partition else "false"
    for key in facet_keys(filters):
        values = [f'"{column}"::text' for column in key]
        second = values[1] if len(values) > 1 else "''"
        present = " AND ".join(f'"{column}" IS NOT NULL' for column in key)
        grouped = ", ".join(("organization_id", *([part] if partition else []), *values))
        cur.execute(
            "INSERT INTO list_facets (table_name, organization_id, partition_value, columns, value1, value2, total) "
            f"SELECT '{table}', organization_id, {part}, '{','.join(key)}', {values[0]}, {second}, count(*) "
            f'FROM "{table}" WHERE {present} GROUP BY {grouped}'
        )
    for statement in _facet_triggers(table, filters, partition):
        cur.execute(statement)


def facet_keys(filters: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The column sets counted in ``list_facets``: each filter column, then each pair of them
    in ``filters`` order (named ``"a"`` and ``"a,b"``)."""
    singles = tuple((column,) for column in filters)
    pairs = tuple((first, second) for index, first in enumerate(filters) for second in filters[index + 1 :])
    return singles + pairs


def _facet_triggers(table: str, filters: Sequence[str], partition: str | None) -> tuple[str, ...]:
    """One statement each way over the row's facets as a VALUES list, joined to the primary key.
    On an update, only the facets of a changed column (or of a row moved to another organization
    or partition) are touched: each VALUES row carries whether it changed."""
    scope = _scope(partition)

    def part(row: str) -> str:
        return f'{row}."{partition}"' if partition else "false"

    def facets(row: str, guarded: bool) -> str:
        rows = []
        for key in facet_keys(filters):
            second = f'{row}."{key[1]}"::text' if len(key) > 1 else "''"
            changed = (
                " OR ".join(f'OLD."{c}" IS DISTINCT FROM NEW."{c}"' for c in (*scope, *key)) if guarded else "true"
            )
            rows.append(f"('{','.join(key)}', {row}.\"{key[0]}\"::text, {second}, {changed})")
        return "(VALUES " + ", ".join(rows) + ") AS f (columns, value1, value2, changed)"

    def remove(guarded: bool) -> str:
        return (
            "        UPDATE list_facets AS facets SET total = facets.total - 1\n"
            f"        FROM {facets('OLD', guarded)}\n"
            f"        WHERE f.changed AND facets.table_name = '{table}' AND facets.organization_id = OLD.organization_id\n"
            f"            AND facets.partition_value = {part('OLD')} AND facets.columns = f.columns\n"
            "            AND facets.value1 = f.value1 AND facets.value2 = f.value2;\n"
        )

    def add(guarded: bool) -> str:
        return (
            "        INSERT INTO list_facets AS facets\n"
            "            (table_name, organization_id, partition_value, columns, value1, value2, total)\n"
            f"        SELECT '{table}', NEW.organization_id, {part('NEW')}, f.columns, f.value1, f.value2, 1\n"
            f"        FROM {facets('NEW', guarded)}\n"
            "        WHERE f.changed AND f.value1 IS NOT NULL AND f.value2 IS NOT NULL\n"
            "        ON CONFLICT (table_name, organization_id, partition_value, columns, value1, value2)\n"
            "        DO UPDATE SET total = facets.total + 1;\n"
        )

    body = (
        f"    IF TG_OP = 'UPDATE' THEN\n{remove(True)}{add(True)}"
        f"    ELSIF TG_OP = 'DELETE' THEN\n{remove(False)}"
        f"    ELSE\n{add(False)}    END IF;\n"
    )
    moved = " OR ".join(f'OLD."{column}" IS DISTINCT FROM NEW."{column}"' for column in (*scope, *filters))
    function = f"{table}_list_facets"
    return (
        _function(function, body),
        _trigger(f"{table}_facet_insert", "INSERT", table, function),
        _trigger(f"{table}_facet_delete", "DELETE", table, function),
        _trigger(f"{table}_facet_update", "UPDATE", table, function, moved),
    )


BLOCK_ROWS = 1024
"""Rows per block of ``count_blocks`` (before out-of-order inserts): where a deep page is found
by summing at most ``rows / BLOCK_ROWS`` block counts and walking fewer than ``BLOCK_ROWS``
index entries (the two costs balance near the square root of a million)."""


def create_records_table_v4(
    cur: psycopg.Cursor[Any],
    table: str,
    columns: Mapping[str, str],
    *,
    filters: Sequence[str] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """``create_records_table_v2`` and then ``count_blocks``: the table's lists, unfiltered or
    filtered on one or two columns, take their totals from ``list_facet_blocks`` and find a
    deep page there instead of walking to it. Every migration from 0009 on uses this (it needs
    the tables of migration 0009)."""
    _create(cur, table, columns, filters, partition, covering=True)
    count_blocks(cur, table, filters=filters, partition=partition, rows=rows)


def block_keys(filters: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The column sets counted per block: none (the unfiltered list, named ``""``), each filter
    column, then each pair of them in ``filters`` order (``"a"``, ``"a,b"``)."""
    return ((), *facet_keys(filters))


def count_blocks(
    cur: psycopg.Cursor[Any],
    table: str,
    *,
    filters: Sequence[str],
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Cut the table's rows of each organization into blocks in (created_at, id) order and count,
    per block, partition value and each value of ``block_keys`` (``list_facet_blocks``), kept by
    the triggers ``<table>_block_insert|delete|update`` over the PL/pgSQL function
    ``<table>_list_blocks()`` and filled here from the rows already there (``rows`` to a
    block). What a block is, and why a list can seek to one, is in the SQLite store's
    ``count_blocks``; here block 0 starts at ``('-infinity', '')``.

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
    _fill_blocks(cur, table, block_keys(filters), filters, partition, rows)
    for statement in _block_triggers(table, filters, partition, rows):
        cur.execute(statement)


def recount_blocks(
    cur: psycopg.Cursor[Any],
    table: str,
    *,
    filters: Sequence[str],
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Make a table's blocks, counts and triggers again for ``filters`` (all of them, in the
    model's order): what a migration that adds or removes a filter column calls, since the
    triggers name every column and the start-up check refuses triggers that miss one."""
    _check_name(table)
    for event in ("insert", "delete", "update"):
        cur.execute(f'DROP TRIGGER "{table}_block_{event}" ON "{table}"')
    cur.execute(f'DROP FUNCTION "{table}_list_blocks"()')
    cur.execute("DELETE FROM list_facet_blocks WHERE table_name = %s", [table])
    cur.execute("DELETE FROM list_blocks WHERE table_name = %s", [table])
    count_blocks(cur, table, filters=filters, partition=partition, rows=rows)


def _block_triggers(table: str, filters: Sequence[str], partition: str | None, rows: int) -> tuple[str, ...]:
    """``_block_triggers_for`` every filter column and pair of them (``block_keys``)."""
    return _block_triggers_for(table, block_keys(filters), filters, partition, rows)


def _block_triggers_for(
    table: str, keys: Sequence[tuple[str, ...]], columns: Sequence[str], partition: str | None, rows: int
) -> tuple[str, ...]:
    """The function counting ``keys`` (which name ``columns``) and its triggers. The row's block is looked up once each way (one seek of ``list_blocks_by_start``); its
    counts are one statement each way over a VALUES list joined to the primary key. On an
    update, only the counts of a changed column, key, organization or partition are touched:
    each VALUES row carries whether it changed."""
    scope = _scope(partition)
    located = ("organization_id", "created_at", "id")

    def part(row: str) -> str:
        return f'{row}."{partition}"' if partition else "false"

    def changed(columns: Sequence[str]) -> str:
        return " OR ".join(f'OLD."{c}" IS DISTINCT FROM NEW."{c}"' for c in columns)

    def where(row: str) -> str:
        return f"table_name = '{table}' AND organization_id = {row}.organization_id"

    def locate(row: str, into: str) -> str:
        return (
            f"        SELECT block INTO {into} FROM list_blocks WHERE {where(row)}\n"
            f"            AND (start_created_at, start_id) <= ({row}.created_at, {row}.id)\n"
            "            ORDER BY start_created_at DESC, start_id DESC LIMIT 1;\n"
        )

    def counts(row: str, guarded: bool) -> str:
        values = []
        for key in keys:
            first = f'{row}."{key[0]}"::text' if key else "''"
            second = f'{row}."{key[1]}"::text' if len(key) > 1 else "''"
            moved = f"({changed((*located, *scope, *key))})" if guarded else "true"
            values.append(f"('{','.join(key)}', {first}, {second}, {moved})")
        return "(VALUES " + ", ".join(values) + ") AS f (columns, value1, value2, changed)"

    def remove(guarded: bool) -> str:
        rows_moved = f" AND ({changed(located)})" if guarded else ""
        return (
            locate("OLD", "old_block")
            + f"        UPDATE list_blocks SET rows = rows - 1 WHERE {where('OLD')} AND block = old_block{rows_moved};\n"
            "        UPDATE list_facet_blocks AS counts SET total = counts.total - 1\n"
            f"        FROM {counts('OLD', guarded)}\n"
            f"        WHERE f.changed AND counts.table_name = '{table}' AND counts.organization_id = OLD.organization_id\n"
            f"            AND counts.partition_value = {part('OLD')} AND counts.columns = f.columns\n"
            "            AND counts.value1 = f.value1 AND counts.value2 = f.value2 AND counts.block = old_block;\n"
        )

    def add(guarded: bool) -> str:
        newer = "(high_created_at, high_id) < (NEW.created_at, NEW.id)"
        rows_moved = f" AND ({changed(located)})" if guarded else ""
        opened = (
            ""
            if guarded
            else (
                "        INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id,\n"
                "            high_created_at, high_id, rows)\n"
                f"        SELECT '{table}', NEW.organization_id, block + 1, NEW.created_at, NEW.id, NEW.created_at,"
                " NEW.id, 0\n"
                f"        FROM list_blocks WHERE {where('NEW')} AND rows >= {rows} AND {newer}\n"
                f"            AND block = (SELECT max(block) FROM list_blocks WHERE {where('NEW')});\n"
            )
        )
        return (
            "        INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id,\n"
            "            high_created_at, high_id, rows)\n"
            f"        VALUES ('{table}', NEW.organization_id, 0, '-infinity', '', '-infinity', '', 0)\n"
            "        ON CONFLICT (table_name, organization_id, block) DO NOTHING;\n"
            f"{opened}" + locate("NEW", "new_block") + "        UPDATE list_blocks SET rows = rows + 1,\n"
            f"            high_created_at = CASE WHEN {newer} THEN NEW.created_at ELSE high_created_at END,\n"
            f"            high_id = CASE WHEN {newer} THEN NEW.id ELSE high_id END\n"
            f"        WHERE {where('NEW')} AND block = new_block{rows_moved};\n"
            "        INSERT INTO list_facet_blocks AS counts\n"
            "            (table_name, organization_id, partition_value, columns, value1, value2, block, total)\n"
            f"        SELECT '{table}', NEW.organization_id, {part('NEW')}, f.columns, f.value1, f.value2, new_block, 1\n"
            f"        FROM {counts('NEW', guarded)}\n"
            "        WHERE f.changed AND f.value1 IS NOT NULL AND f.value2 IS NOT NULL\n"
            "        ON CONFLICT (table_name, organization_id, partition_value, columns, value1, value2, block)\n"
            "        DO UPDATE SET total = counts.total + 1;\n"
        )

    body = (
        f"    IF TG_OP = 'UPDATE' THEN\n{remove(True)}{add(True)}"
        f"    ELSIF TG_OP = 'DELETE' THEN\n{remove(False)}"
        f"    ELSE\n{add(False)}    END IF;\n"
    )
    moved = changed((*located, *scope, *columns))
    function = f"{table}_list_blocks"
    return (
        _function(function, body, ("old_block integer", "new_block integer")),
        _trigger(f"{table}_block_insert", "INSERT", table, function),
        _trigger(f"{table}_block_delete", "DELETE", table, function),
        _trigger(f"{table}_block_update", "UPDATE", table, function, moved),
    )


def _fill_blocks(
    cur: psycopg.Cursor[Any],
    table: str,
    keys: Sequence[tuple[str, ...]],
    columns: Sequence[str],
    partition: str | None,
    rows: int,
) -> None:
    """Cut the rows already there into blocks (``list_blocks``) and count ``keys`` per block
    (``list_facet_blocks``): the filling part of ``count_blocks`` and ``count_blocks_v2``.

    :param columns: the columns ``keys`` name, in the filter model's order
    """
    scope = _scope(partition)
    # every row's position, beside what its counts are grouped by: one sort, then scans
    kept = "".join(f', "{column}"' for column in (*scope[1:], *columns))
    cur.execute(
        f"CREATE TEMP TABLE block_rows AS SELECT organization_id, id, created_at{kept}, "
        "row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) - 1 AS position "
        f'FROM "{table}"'
    )
    cur.execute(
        "INSERT INTO list_blocks (table_name, organization_id, block, start_created_at, start_id, "
        "high_created_at, high_id, rows) "
        f"SELECT '{table}', g.organization_id, g.block, "
        "CASE WHEN g.block = 0 THEN '-infinity' ELSE first.created_at END, "
        "CASE WHEN g.block = 0 THEN '' ELSE first.id END, last.created_at, last.id, g.rows "
        f"FROM (SELECT organization_id, position / {rows} AS block, min(position) AS first, "
        "max(position) AS last, count(*) AS rows FROM block_rows GROUP BY 1, 2) AS g "
        "JOIN block_rows AS first ON first.organization_id = g.organization_id AND first.position = g.first "
        "JOIN block_rows AS last ON last.organization_id = g.organization_id AND last.position = g.last"
    )
    part = f'"{partition}"' if partition else "false"
    for key in keys:
        values = [f'"{column}"::text' for column in key]
        first = values[0] if values else "''"
        second = values[1] if len(values) > 1 else "''"
        present = " AND ".join(["true", *(f'"{column}" IS NOT NULL' for column in key)])
        grouped = ", ".join(("organization_id", *([part] if partition else []), *values, f"position / {rows}"))
        cur.execute(
            "INSERT INTO list_facet_blocks (table_name, organization_id, partition_value, columns, value1, "
            f"value2, block, total) SELECT '{table}', organization_id, {part}, '{','.join(key)}', {first}, "
            f"{second}, position / {rows}, count(*) FROM block_rows WHERE {present} GROUP BY {grouped}"
        )
    cur.execute("DROP TABLE block_rows")


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
    cur: psycopg.Cursor[Any],
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
    for the declared facets only. Every migration from 0012 on uses this."""
    _create(cur, table, columns, filters, partition, covering=True)
    count_blocks_v2(cur, table, facets=facets, pairs=pairs, partition=partition, rows=rows)


def count_blocks_v2(
    cur: psycopg.Cursor[Any],
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """``count_blocks`` for the declared facets and pairs only (``facet_block_keys``), not every
    filter and every pair of filters: the function's VALUES list, and so the counter rows each
    write upserts, holds one row per facet, pair and the unfiltered count, and an update of a
    column that is no facet runs nothing. A list filtered on anything else is counted (once
    per filter set and revision, by the platform's total cache).

    :param facets: the ``Records`` declaration's ``facets``, in the filter model's order
    :param pairs: its ``facet_pairs``, each in the filter model's order
    """
    _facet_columns(table, facets, pairs, partition)
    if rows < 1:
        raise ValueError("a block holds at least one row")
    _fill_blocks(cur, table, facet_block_keys(facets, pairs), facets, partition, rows)
    for statement in _block_triggers_for(table, facet_block_keys(facets, pairs), facets, partition, rows):
        cur.execute(statement)


def _drop_block_triggers(cur: psycopg.Cursor[Any], table: str) -> None:
    _check_name(table)
    for event in ("insert", "delete", "update"):
        cur.execute(f'DROP TRIGGER "{table}_block_{event}" ON "{table}"')
    cur.execute(f'DROP FUNCTION "{table}_list_blocks"()')


def recount_blocks_v2(
    cur: psycopg.Cursor[Any],
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Make a table's blocks, counts and triggers again for ``facets`` and ``pairs`` (all of
    them): what a migration that declares a new facet calls, since its values were never counted."""
    _drop_block_triggers(cur, table)
    cur.execute("DELETE FROM list_facet_blocks WHERE table_name = %s", [table])
    cur.execute("DELETE FROM list_blocks WHERE table_name = %s", [table])
    count_blocks_v2(cur, table, facets=facets, pairs=pairs, partition=partition, rows=rows)


def keep_facets(
    cur: psycopg.Cursor[Any],
    table: str,
    *,
    facets: Sequence[str],
    pairs: Sequence[tuple[str, str]] = (),
    partition: str | None = None,
    rows: int = BLOCK_ROWS,
) -> None:
    """Narrow a table counted by ``count_blocks`` (every filter and pair) to ``facets`` and
    ``pairs``, which it already counts: the function and triggers are replaced by
    ``count_blocks_v2``'s and the counts of every other column set are deleted. The blocks and
    the kept counts stay as the old function kept them, so nothing is counted again."""
    _facet_columns(table, facets, pairs, partition)
    _drop_block_triggers(cur, table)
    kept = [",".join(key) for key in facet_block_keys(facets, pairs)]
    cur.execute("DELETE FROM list_facet_blocks WHERE table_name = %s AND NOT (columns = ANY(%s))", [table, kept])
    for statement in _block_triggers_for(table, facet_block_keys(facets, pairs), facets, partition, rows):
        cur.execute(statement)


_TRIGRAMS_SCHEMA = """SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'pg_trgm'"""
_EXTENSION_HOME = """SELECT coalesce(
    (SELECT nspname FROM pg_namespace WHERE nspname = 'public' AND has_schema_privilege(oid, 'CREATE')),
    current_schema())"""
_EXTENSION_LOCK = (0x636F6D6D, 0x74726772)
"""Held while ``pg_trgm`` is created: the migrations of two schemas of one database may make their
first search index at once, and ``CREATE EXTENSION IF NOT EXISTS`` does not wait for another
transaction's (the second fails on the catalogue's unique name instead)."""


def _trigrams_schema(cur: psycopg.Cursor[Any]) -> str:
    """The schema holding ``pg_trgm``, created when the database lacks it: in ``public`` when it
    exists and the migrating role may create in it, so that dropping one store's schema never
    drops the extension (with every other schema's search indexes), else in the current schema.
    Creating it needs a role that may (a trusted extension since PostgreSQL 13: the database's
    CREATE privilege)."""
    found = cur.execute(_TRIGRAMS_SCHEMA).fetchone()
    if found is None:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", _EXTENSION_LOCK)
        found = cur.execute(_TRIGRAMS_SCHEMA).fetchone()
    if found is None:
        home = cur.execute(_EXTENSION_HOME).fetchone()
        if home is None or home[0] is None:
            raise RuntimeError("no schema to create the pg_trgm extension in")
        cur.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA {}").format(sql.Identifier(home[0])))
        found = cur.execute(_TRIGRAMS_SCHEMA).fetchone()
    assert found is not None
    return str(found[0])


def search_index(cur: psycopg.Cursor[Any], table: str, columns: Sequence[str]) -> None:
    """Give ``table`` (a ``Records`` table) the index ``q`` narrows its rows with, over
    ``columns`` (its declared ``searchable`` fields), replacing the one it had.

    ``<table>_search`` is one GIN index of ``pg_trgm``'s trigrams of ``lower(column)`` for each
    column (``gin_trgm_ops``; the extension is created when missing, see ``_trigrams_schema``),
    which a ``q`` written ``lower(column) LIKE '%q%'`` reads per column (``BitmapOr``), each
    row rechecked against the pattern (``compliance_store.postgres.search``). PostgreSQL keeps
    it in step with every write itself, through the GIN pending list.
    """
    for name in (table, *columns):
        _check_name(name)
    if not columns:
        raise ValueError(f"a search index of {table} needs at least one column")
    schema = _trigrams_schema(cur)
    drop_search_index(cur, table)
    keys = sql.SQL(", ").join(
        sql.SQL("lower({}) {}.gin_trgm_ops").format(sql.Identifier(column), sql.Identifier(schema))
        for column in columns
    )
    cur.execute(
        sql.SQL("CREATE INDEX {} ON {} USING gin ({})").format(
            sql.Identifier(f"{table}_search"), sql.Identifier(table), keys
        )
    )


def drop_search_index(cur: psycopg.Cursor[Any], table: str) -> None:
    """Drop ``table``'s search index, if it has one (a table whose declaration no longer names
    searchable fields). The extension stays: other schemas' indexes may use it."""
    _check_name(table)
    cur.execute(f'DROP INDEX IF EXISTS "{table}_search"')
