"""The start-up check: the migrated schema must hold what the registered tables need.

A model field without a column, or a ``Records`` table without its list index, a filter index,
its count or revision triggers (or with one disabled) or its search index, would otherwise show
up later as a failing write, a full scan or a wrong total or cached page. The store runs this once, after migrating,
and refuses to open.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import psycopg

from ..registry import expected_indexes, extra_facets, missing_facets, search_problems
from .search import search_indexes
from .tables import SUPPORT_TABLES, Table

__all__ = ["schema_problems", "expected_indexes", "expected_triggers"]

_COLUMNS = """SELECT c.relname, a.attname
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')"""
_INDEXES = """SELECT i.relname, t.relname, array_agg(a.attname ORDER BY k.position)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
WHERE n.nspname = current_schema()
GROUP BY i.relname, t.relname"""
_TRIGGERS = """SELECT g.tgname, c.relname, g.tgenabled
FROM pg_trigger g
JOIN pg_class c ON c.oid = g.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND NOT g.tgisinternal"""
_GENERATE = "make migration NAME=... writes its migration"
_FUNCTIONS = """SELECT p.proname, p.prosrc
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema()"""


def expected_triggers(table: Table) -> tuple[str, ...]:
    """A ``Records`` table's ``list_counts``, ``list_revisions`` and ``list_blocks`` triggers."""
    if table.records is None:
        return ()
    kinds = ("count", "revision", "block")
    return tuple(f"{table.table}_{kind}_{event}" for kind in kinds for event in ("insert", "delete", "update"))


def schema_problems(conn: psycopg.Connection[Any], tables: Iterable[Table]) -> list[str]:
    """What the connection's current schema lacks for ``tables``, one sentence each (empty when
    nothing is missing)."""
    cur = conn.cursor()
    columns: dict[str, set[str]] = {}
    for table_name, column in cur.execute(_COLUMNS).fetchall():
        columns.setdefault(table_name, set()).add(column)
    indexes = {name: (owner, tuple(found)) for name, owner, found in cur.execute(_INDEXES).fetchall()}
    triggers = {name: (owner, enabled) for name, owner, enabled in cur.execute(_TRIGGERS).fetchall()}
    functions = dict(cur.execute(_FUNCTIONS).fetchall())
    searches = search_indexes(cur)
    required: list[tuple[str, tuple[str, ...], Table | None]] = [
        (table.table, tuple(f.name for f in attrs.fields(table.model)), table) for table in tables
    ]
    required += [(name, names, None) for name, names in SUPPORT_TABLES.items()]
    problems = []
    for name, needed, table in required:
        if name not in columns:
            generate = f" ({_GENERATE})" if table is not None and table.records is not None else ""
            problems.append(f"table {name} does not exist{generate}")
            continue
        missing = [column for column in needed if column not in columns[name]]
        if missing:
            model = f" of its model ({_GENERATE})" if table is not None else ""
            problems.append(f"table {name} lacks columns {missing}{model}")
        if table is None:
            continue
        for index, wanted in expected_indexes(table).items():
            owner, found = indexes.get(index, (None, ()))
            if owner != name:
                problems.append(f"index {index} on {name} does not exist")
            elif found != wanted:
                problems.append(f"index {index} is on {found}, not {wanted}")
        for trigger in expected_triggers(table):
            owner, enabled = triggers.get(trigger, (None, "D"))
            if owner != name:
                problems.append(f"trigger {trigger} on {name} does not exist")
            elif enabled == "D":
                problems.append(f"trigger {trigger} on {name} is disabled")
        function = f"{name}_list_blocks"
        missing = missing_facets(table, functions[function]) if function in functions else []
        if missing:
            problems.append(f"function {function} does not count {missing} (recount_blocks_v2)")
        extra = extra_facets(table, functions[function]) if function in functions else []
        if extra:
            problems.append(f"function {function} counts {extra}, which are no declared facets (keep_facets)")
        problems += search_problems(table, searches.get(name), _GENERATE)
    return problems
