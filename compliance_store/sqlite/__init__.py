"""The SQLite store: a file shared by threads and server processes, in WAL mode.

    from compliance_core import Platform
    platform = Platform.open("sqlite:///compliance.db")

Schema changes are frozen, ordered sqlite-utils migrations (``migrations/``) applied when the
store opens; ``tables.TABLES`` says which repository serves each table (every area's ``Records``
declarations included), and the store refuses to open a file that lacks a table, column, index
or trigger they need. Every list filter is pushed down into SQL and backed by an index.
"""

from .store import SqliteStore, open_store, parse_url

__all__ = ["SqliteStore", "open_store", "parse_url"]
