"""``q`` through the search index on PostgreSQL: ``pg_trgm``'s GIN index ``<table>_search`` on
``lower(column) gin_trgm_ops`` for each searchable column (``migrations.helpers.search_index``).

A ``q`` of three characters or more is the term ``lower(column) LIKE '%q%'`` (``%``, ``_`` and
``\\`` escaped), which holds exactly where ``strpos(lower(column), q) > 0`` does and which the
index serves: ``pg_trgm`` finds the rows holding the pattern's trigrams and PostgreSQL rechecks
each against the pattern, so the index narrows and never decides. A shorter ``q`` has no trigram
to look up and keeps ``strpos`` (a scan, as before); the planner chooses between the index and
the list's order with the table's statistics.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg

__all__ = ["MIN_LENGTH", "LIKE", "like_pattern", "search_indexes"]

MIN_LENGTH = 3
"""Below this a ``q`` holds no trigram ``pg_trgm`` could look up."""

LIKE = "lower({column}) LIKE {mark}"
"""The term of a ``q`` of ``MIN_LENGTH`` characters or more on one searchable column."""

_SEARCH_INDEXES = """SELECT t.relname, am.amname,
    array(SELECT pg_get_indexdef(x.indexrelid, k, false) FROM generate_series(1, x.indnatts) AS k ORDER BY k),
    array(SELECT o.opcname FROM unnest(x.indclass::oid[]) WITH ORDINALITY AS c(id, n)
          JOIN pg_opclass o ON o.oid = c.id ORDER BY c.n)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
JOIN pg_am am ON am.oid = i.relam
WHERE n.nspname = current_schema() AND i.relname = t.relname || '_search'"""
_LOWER = re.compile(r'lower\(("?)([a-z_][a-z0-9_]*)\1\)\Z')


def like_pattern(needle: str) -> str:
    """The LIKE pattern of a text holding ``needle`` anywhere (``\\`` is LIKE's escape)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search_indexes(cur: psycopg.Cursor[Any]) -> dict[str, tuple[str, ...]]:
    """The columns each table's search index covers in the cursor's current schema (the start-up
    check and the migration generator read it); a table without one is absent. An index that is
    not GIN on ``lower(column) gin_trgm_ops`` for each of its columns covers ``()``: it serves no
    ``q`` and must be made again."""
    found: dict[str, tuple[str, ...]] = {}
    for table, method, expressions, classes in cur.execute(_SEARCH_INDEXES).fetchall():
        columns = [_LOWER.match(expression) for expression in expressions]
        if method != "gin" or any(name != "gin_trgm_ops" for name in classes) or not all(columns):
            found[table] = ()
        else:
            found[table] = tuple(match.group(2) for match in columns if match is not None)
    return found
