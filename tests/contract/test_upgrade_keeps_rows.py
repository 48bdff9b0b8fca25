"""A database made by the last release (the schema its migrations left, filled the way it filled
it) upgrades through today's migrations with every row kept and the platform answering the same,
on SQLite and on PostgreSQL.

The old database gets its rows from one the platform filled today (``test_copy.seed``, something
in every table): each table the old schema has takes the columns it had, inserted under its own
triggers, so its counters are the ones the release kept. Opening it with today's store runs the
migrations since; then every old column of every row must read as it did.
"""

from __future__ import annotations

import pathlib
import secrets
import sqlite3
from typing import Any

import psycopg
from psycopg import sql
from sqlite_utils import Database

from compliance_store.copy import tables
from compliance_store.postgres import PostgresStore
from compliance_store.postgres.migrations import migrate
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.migrations import migrations

from .test_copy import _answers, seed

SQLITE_RELEASE_STOPS_BEFORE = "0013_signature_issuers"
POSTGRES_RELEASE_STOPS_BEFORE = "0011_signature_issuers"
"""The first migration of each store the last release did not have."""

COPIED = [table.name for table in tables()]


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def _sqlite_columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


def _sqlite_rows(path: pathlib.Path, layout: dict[str, list[str]]) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: sorted(conn.execute(f'SELECT {_quoted(columns)} FROM "{table}"').fetchall(), key=repr)
            for table, columns in layout.items()
        }
    finally:
        conn.close()


def test_a_sqlite_file_of_the_last_release_upgrades_with_every_row_kept(tmp_path: pathlib.Path) -> None:
    today, old = tmp_path / "today.db", tmp_path / "old.db"
    store = SqliteStore(f"sqlite:///{today}")
    seeded = seed(store)
    answers = _answers(store, seeded)
    store.close()
    db = Database(str(old))
    migrations().apply(db, stop_before=SQLITE_RELEASE_STOPS_BEFORE)
    db.close()

    conn = sqlite3.connect(old)
    conn.execute("ATTACH DATABASE ? AS today", (str(today),))
    layout: dict[str, list[str]] = {}
    with conn:
        for table in COPIED:
            had = _sqlite_columns(conn, "main", table)
            if not had:
                continue  # a table the release did not have
            layout[table] = [column for column in had if column in _sqlite_columns(conn, "today", table)]
            columns = _quoted(layout[table])
            conn.execute(f'INSERT INTO main."{table}" ({columns}) SELECT {columns} FROM today."{table}"')
    conn.close()
    assert sum(len(rows) for rows in _sqlite_rows(old, layout).values()) > len(layout)

    upgraded = SqliteStore(f"sqlite:///{old}")
    try:
        assert _answers(upgraded, seeded) == answers
    finally:
        upgraded.close()
    assert _sqlite_rows(old, layout) == _sqlite_rows(today, layout)


def _pg_columns(conn: psycopg.Connection[Any], schema: str, table: str) -> list[str]:
    query = (
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s"
        " ORDER BY ordinal_position"
    )
    return [row[0] for row in conn.execute(query, (schema, table))]


def _pg_rows(
    conn: psycopg.Connection[Any], schema: str, layout: dict[str, list[str]]
) -> dict[str, list[tuple[Any, ...]]]:
    rows = {}
    for table, columns in layout.items():
        listed = sql.SQL(", ").join(sql.Identifier(column) for column in columns)
        query = sql.SQL("SELECT {} FROM {}").format(listed, sql.Identifier(schema, table))
        rows[table] = sorted(conn.execute(query).fetchall(), key=repr)
    return rows


def test_a_postgresql_schema_of_the_last_release_upgrades_with_every_row_kept(postgres_server: str) -> None:
    today, old = f"t_{secrets.token_hex(6)}_today", f"t_{secrets.token_hex(6)}_old"
    url = postgres_server + ("&" if "?" in postgres_server else "?")
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        try:
            store = PostgresStore(f"{url}schema={today}", pool_min=0)
            seeded = seed(store)
            answers = _answers(store, seeded)
            store.close()
            with psycopg.connect(postgres_server, autocommit=True, options=f"-c search_path={old}") as conn:
                migrate(conn, old, stop_before=POSTGRES_RELEASE_STOPS_BEFORE)

            layout: dict[str, list[str]] = {}
            with admin.transaction():
                for table in COPIED:
                    had = _pg_columns(admin, old, table)
                    if not had:
                        continue
                    layout[table] = [column for column in had if column in _pg_columns(admin, today, table)]
                    columns = sql.SQL(", ").join(sql.Identifier(column) for column in layout[table])
                    admin.execute(
                        sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(
                            sql.Identifier(old, table), columns, columns, sql.Identifier(today, table)
                        )
                    )
            assert sum(len(rows) for rows in _pg_rows(admin, old, layout).values()) > len(layout)

            upgraded = PostgresStore(f"{url}schema={old}", pool_min=0)
            try:
                assert _answers(upgraded, seeded) == answers
            finally:
                upgraded.close()
            assert _pg_rows(admin, old, layout) == _pg_rows(admin, today, layout)
        finally:
            for schema in (today, old):
                admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
