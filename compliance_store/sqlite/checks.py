"""The start-up check: the migrated file must hold what the registered tables need.

A model field without a column, or a ``Records`` table without its list index, a filter index,
its count or revision triggers or its search index, would otherwise show up later as a failing
write or search, a full scan or a wrong total or cached page. The store runs this once, after migrating, and refuses to open.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import attrs

from ..registry import expected_indexes, extra_facets, missing_facets, search_problems
from .search import indexed_columns
from .tables import Table

__all__ = ["schema_problems", "expected_indexes", "expected_triggers"]

_COLUMNS = "SELECT name FROM pragma_table_info(?)"
_GENERATE = "make migration NAME=... writes its migration"
_INDEX_COLUMNS = "SELECT name FROM pragma_index_info(?) ORDER BY seqno"


def expected_triggers(table: Table) -> tuple[str, ...]:
    """A ``Records`` table's ``list_counts``, ``list_revisions`` and ``list_blocks`` triggers."""
    if table.records is None:
        return ()
    return (
        *(f"{table.table}_count_{event}" for event in ("insert", "delete", "update")),
        *(f"{table.table}_revision_{event}" for event in ("insert", "delete", "update", "move")),
        *(f"{table.table}_block_{event}" for event in ("insert", "delete", "update")),
    )


def schema_problems(conn: sqlite3.Connection, tables: Iterable[Table]) -> list[str]:
    """What the file lacks for ``tables``, one sentence each (empty when nothing is missing)."""
    objects, texts = {}, {}
    for kind, name, owner, text in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        objects[(kind, name)] = owner
        texts[name] = text or ""
    problems = []
    for table in tables:
        if ("table", table.table) not in objects:
            generate = f" ({_GENERATE})" if table.records is not None else ""
            problems.append(f"table {table.table} does not exist{generate}")
            continue
        present = {name for (name,) in conn.execute(_COLUMNS, (table.table,))}
        missing = [field.name for field in attrs.fields(table.model) if field.name not in present]
        if missing:
            problems.append(f"table {table.table} lacks columns {missing} of its model ({_GENERATE})")
        for index, columns in expected_indexes(table).items():
            if objects.get(("index", index)) != table.table:
                problems.append(f"index {index} on {table.table} does not exist")
                continue
            found = tuple(name for (name,) in conn.execute(_INDEX_COLUMNS, (index,)))
            if found != columns:
                problems.append(f"index {index} is on {found}, not {columns}")
        for trigger in expected_triggers(table):
            if objects.get(("trigger", trigger)) != table.table:
                problems.append(f"trigger {trigger} on {table.table} does not exist")
        block_trigger = f"{table.table}_block_insert"
        missing = missing_facets(table, texts[block_trigger]) if block_trigger in texts else []
        if missing:
            problems.append(f"trigger {block_trigger} does not count {missing} (recount_blocks_v2)")
        extra = extra_facets(table, texts[block_trigger]) if block_trigger in texts else []
        if extra:
            problems.append(f"trigger {block_trigger} counts {extra}, which are no declared facets (keep_facets)")
        problems += search_problems(table, indexed_columns(conn, table.table), _GENERATE)
    return problems
