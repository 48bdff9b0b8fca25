"""What one thread's connection hands out: the repository behind each handle.

The ``Catalog`` (each table's mapper, page queries, result codec) is prepared once per store from
its ``tables`` and shared by every thread; a ``SqliteSession`` binds it to one connection and is
reused for every transaction on that connection, so opening a session allocates nothing and
``session[VENDORS]`` is one dict lookup.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from compliance_core.kernel.registry import Repo

from .codec import make_converter
from .deferred import DeferredWrite
from .tables import Table

__all__ = ["Catalog", "SqliteSession"]

R = TypeVar("R")


class Catalog:
    """Each table with what its repository prepared from it, once per store."""

    __slots__ = ("tables", "prepared")

    def __init__(self, tables: Sequence[Table]) -> None:
        converter = make_converter()
        self.tables = tuple(tables)
        self.prepared: tuple[tuple[Table, Any], ...] = tuple(
            (table, table.repository.prepare(table, converter)) for table in self.tables
        )


class SqliteSession:
    """The repositories of one connection, by repository name (a write session's repositories
    get the connection's ``DeferredWrite``, which they use as they would the connection)."""

    __slots__ = ("_repositories",)

    def __init__(self, conn: sqlite3.Connection | DeferredWrite, catalog: Catalog) -> None:
        self._repositories: dict[str, Any] = {
            table.name: table.repository(conn, prepared) for table, prepared in catalog.prepared
        }

    def __getitem__(self, repo: Repo[R]) -> R:
        try:
            return cast(R, self._repositories[repo.name])
        except KeyError:
            raise KeyError(
                f"this SQLite store keeps no repository {repo.name!r}: is its area among the store's areas?"
            ) from None
