"""The SQLite store: a file shared by threads and server processes, in WAL mode.

    from compliance_core import Platform
    platform = Platform.open("sqlite:///compliance.db")

Schema changes are ordered sqlite-utils migrations applied when the store opens; every list
filter is pushed down into SQL and backed by an index.
"""

from .store import SqliteStore, open_store

__all__ = ["SqliteStore", "open_store"]
