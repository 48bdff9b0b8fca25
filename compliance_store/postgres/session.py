"""What one pooled connection hands out: the repository behind each handle.

The ``Catalog`` (each table's mapper, page queries, result codec) is prepared once per store from
its ``tables`` and shared by every connection; a ``PostgresSession`` binds it to one connection's
cursor and is reused for every transaction on that connection (a read one and a write one per
connection, built when the pool opens the connection), so opening a session allocates nothing
and ``session[VENDORS]`` is one dict lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, cast

import psycopg

from compliance_core.kernel.registry import Repo

from .codec import make_converter
from .tables import Table

__all__ = ["Catalog", "PostgresSession", "Connection"]

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


class PostgresSession:
    """The repositories of one connection, by repository name.

    :param write: built for write transactions (the outbox then claims what it reads)
    """

    __slots__ = ("_repositories",)

    def __init__(self, cur: psycopg.Cursor[Any], catalog: Catalog, *, write: bool) -> None:
        self._repositories: dict[str, Any] = {
            table.name: table.repository(cur, prepared, write=write) for table, prepared in catalog.prepared
        }

    def __getitem__(self, repo: Repo[R]) -> R:
        try:
            return cast(R, self._repositories[repo.name])
        except KeyError:
            raise KeyError(
                f"this PostgreSQL store keeps no repository {repo.name!r}: is its area among the store's areas?"
            ) from None


class Connection(psycopg.Connection[tuple[Any, ...]]):
    """A pooled connection carrying its two sessions (set by the store when the pool opens it)."""

    bound_cursor: psycopg.Cursor[tuple[Any, ...]]
    read_session: PostgresSession
    write_session: PostgresSession

    def bind(self, catalog: Catalog) -> None:
        """Build the connection's cursor and its read and write sessions (once)."""
        cursor = self.bound_cursor = self.cursor()
        self.read_session = PostgresSession(cursor, catalog, write=False)
        self.write_session = PostgresSession(cursor, catalog, write=True)
