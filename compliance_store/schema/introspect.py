"""What a database holds, read back in the terms the declarations use.

The generator compares the declarations with the schema the existing migrations make, not with
the migration files' text: a released migration may make a table one way and a later one change
it, and only the database they build says what holds now. Each reader takes a connection to a
database (a scratch one the migrations were just applied to) and returns the tables it finds.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import attrs
import psycopg

from ..postgres import search as postgres_search
from ..sqlite import search as sqlite_search

__all__ = ["FoundTable", "sqlite_tables", "postgres_tables"]


@attrs.frozen(kw_only=True)
class FoundTable:
    """One table as the database holds it.

    :param columns: each column's type as the database reports it and whether it is nullable
    :param indexes: its indexes by name, with their columns in order
    :param counting: the text of the code that keeps its block counts (the SQLite insert trigger,
        the PostgreSQL function), which quotes every column set it counts; None when it has none
        (a kernel table)
    :param search: the columns its search index covers (``<table>_search``: SQLite's FTS5 table
        with its triggers, PostgreSQL's trigram index); None when it has none, ``()`` for one
        made otherwise, which serves no ``q``
    """

    name: str
    columns: dict[str, tuple[str, bool]]
    indexes: dict[str, tuple[str, ...]]
    counting: str | None = None
    search: tuple[str, ...] | None = None

    def counts(self, key: str) -> bool:
        """Whether the block counts are kept for ``key`` (``"a"`` or ``"a,b"``), as the start-up
        check reads them (``registry.missing_facets``)."""
        return self.counting is not None and f"'{key}'" in self.counting


def sqlite_tables(conn: sqlite3.Connection) -> dict[str, FoundTable]:
    """The tables of the file but SQLite's own, the virtual tables and their shadow tables (a
    search index is read as part of the table it indexes)."""
    objects = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    tables = {}
    texts = {name: text or "" for kind, name, _, text in objects if kind == "trigger"}
    derived = sqlite_search.index_tables(conn)
    for kind, name, _, _ in objects:
        if kind != "table" or name.startswith("sqlite_") or name in derived:
            continue
        columns = {
            column: (declared.upper(), not notnull)
            for column, declared, notnull in conn.execute(
                'SELECT name, type, "notnull" FROM pragma_table_info(?)', (name,)
            )
        }
        indexes = {
            index: tuple(c for (c,) in conn.execute("SELECT name FROM pragma_index_info(?) ORDER BY seqno", (index,)))
            for kind_, index, owner, _ in objects
            if kind_ == "index" and owner == name
        }
        tables[name] = FoundTable(
            name=name,
            columns=columns,
            indexes=indexes,
            counting=texts.get(f"{name}_block_insert"),
            search=sqlite_search.indexed_columns(conn, name),
        )
    return tables


_COLUMNS = """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum"""
_INDEXES = """SELECT i.relname, t.relname, array_agg(a.attname ORDER BY k.position)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
WHERE n.nspname = current_schema()
GROUP BY i.relname, t.relname"""
_FUNCTIONS = """SELECT p.proname, p.prosrc
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema()"""


def postgres_tables(conn: psycopg.Connection[Any]) -> dict[str, FoundTable]:
    """The tables of the connection's current schema."""
    cur = conn.cursor()
    columns: dict[str, dict[str, tuple[str, bool]]] = {}
    for table, column, kind, nullable in cur.execute(_COLUMNS).fetchall():
        columns.setdefault(table, {})[column] = (kind, nullable)
    indexes: dict[str, dict[str, tuple[str, ...]]] = {}
    for index, table, found in cur.execute(_INDEXES).fetchall():
        indexes.setdefault(table, {})[index] = tuple(found)
    functions = dict(cur.execute(_FUNCTIONS).fetchall())
    searches = postgres_search.search_indexes(cur)
    return {
        name: FoundTable(
            name=name,
            columns=found,
            indexes=indexes.get(name, {}),
            counting=functions.get(f"{name}_list_blocks"),
            search=searches.get(name),
        )
        for name, found in columns.items()
    }
