"""Planner statistics (``sqlite_stat1``) kept close to the data.

A list filtered on two columns can be answered from either column's index; SQLite picks the more
selective one only when ``sqlite_stat1`` says how many rows share a value (without it,
``country = 'CA' AND dpa_status = 'not_required'`` at 100k vendors scanned the dpa_status range:
2.2 ms instead of 0.4). So the store analyses after migrating and whenever a ``Records`` table's
row count (summed from ``list_counts``, which costs nothing) has moved more than ``STALE_RATIO``
times away from the count the statistics were taken at: checked by the server's lead worker at
start-up and every purge period, and by ``compliance maintenance``. Growth by doubling costs in total about
twice one analysis of the final size (0.2 s at 100k vendors).

Three choices made from measurement on SQLite 3.40:

- **Full ANALYZE, not ``analysis_limit``:** a limited analysis samples the first rows of each
  index, which all belong to one organization and one filter value, and records "about 1,000
  rows per value" for every column alike: the planner then cannot tell the columns apart.
- **Not ``PRAGMA optimize``:** before SQLite 3.46 it only considers tables the same connection
  has queried, and the lists run on read-only connections, which cannot write ``sqlite_stat1``.
- **``sqlite_stat1`` dropped and made again:** a connection reads the statistics when it loads
  the schema, and rewriting rows of ``sqlite_stat1`` does not make open connections (every
  thread's, in every server process) load it again; dropping and recreating the table changes
  the schema, so each of them reloads it at its next transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .tables import Table

__all__ = ["STALE_RATIO", "has_statistics", "stale_tables", "analyze"]

STALE_RATIO = 2.0
"""How far (either way) a table's row count may move from the analysed count before the
statistics are taken again."""

_HAS_STATS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'"
_ANALYSED = "SELECT idx, stat FROM sqlite_stat1"
_ROWS = "SELECT table_name, sum(total) FROM list_counts GROUP BY table_name"


def has_statistics(conn: sqlite3.Connection) -> bool:
    """Whether the file was ever analysed (``sqlite_stat1`` exists)."""
    return conn.execute(_HAS_STATS).fetchone() is not None


def stale_tables(conn: sqlite3.Connection, tables: Iterable[Table]) -> list[str]:
    """The ``Records`` tables whose row count has moved more than ``STALE_RATIO`` times from the
    one ``sqlite_stat1`` holds (a table without statistics counts as 0 rows analysed); every one
    of them when the file was never analysed."""
    if not has_statistics(conn):
        return [table.table for table in tables if table.records is not None]
    analysed = {str(index): str(stat) for index, stat in conn.execute(_ANALYSED) if index is not None}
    rows = {str(name): int(total or 0) for name, total in conn.execute(_ROWS)}
    stale = []
    for table in tables:
        if table.records is None:
            continue
        now = rows.get(table.table, 0)
        stat = analysed.get(f"{table.table}_list")
        then = int(stat.split()[0]) if stat else 0
        if max(now, then) > STALE_RATIO * min(now, then):
            stale.append(table.table)
    return stale


def analyze(conn: sqlite3.Connection) -> None:
    """Take the statistics of every table again, in one write transaction (the caller holds the
    store's write lock): ``sqlite_stat1`` is dropped and made anew so every open connection
    reloads it (see the module)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DROP TABLE IF EXISTS sqlite_stat1")
        conn.execute("ANALYZE")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
