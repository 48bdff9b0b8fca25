"""The schema the existing migrations make, built where it harms nothing: an in-memory SQLite
database, or a PostgreSQL schema of a random name dropped straight after it is read."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql
from sqlite_utils import Database

from ..postgres.migrations import MIGRATIONS as POSTGRES_MIGRATIONS
from ..postgres.store import parse_url
from ..sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from .introspect import FoundTable, postgres_tables, sqlite_tables

__all__ = ["sqlite_schema", "postgres_schema"]

SqliteSteps = Sequence[tuple[str, Callable[[Database], None]]]
PostgresSteps = Sequence[tuple[str, Callable[[psycopg.Cursor[Any]], None]]]


def sqlite_schema(steps: SqliteSteps = SQLITE_MIGRATIONS) -> dict[str, FoundTable]:
    """The tables ``steps`` (the store's migrations, in order) make in a new database."""
    conn = sqlite3.connect(":memory:")
    try:
        db = Database(conn)
        for _, apply in steps:
            apply(db)
        return sqlite_tables(conn)
    finally:
        conn.close()


def postgres_schema(server_url: str, steps: PostgresSteps = POSTGRES_MIGRATIONS) -> dict[str, FoundTable]:
    """The tables ``steps`` make in a new schema on the server at ``server_url`` (a ``schema``
    the URL names is ignored: the scratch schema is never one a store lives in)."""
    conninfo, _ = parse_url(server_url)
    scratch = f"schema_scratch_{secrets.token_hex(6)}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(scratch)))
        try:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(scratch)))
            with conn.transaction():
                cur = conn.cursor()
                for _, apply in steps:
                    apply(cur)
            return postgres_tables(conn)
        finally:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(scratch)))
