"""What the vendors table's triggers cost per written row, on SQLite and PostgreSQL: inserts,
updates that change a filter field (the per-block counts move), updates that change none (they
do not) and deletes, one row per transaction as the API writes them (500 of each), over a register
of ``--rows`` vendors.

Many writes in one transaction are another matter on PostgreSQL: every write updates the same
counter rows again, and each update of a row walks the versions the transaction already made of
it, so the cost grows with the square of the rows (``bench.scale_seed`` turns the triggers off
for its bulk load and counts afterwards). Compare commits by running it from each (``git archive`` into a directory,
``PYTHONPATH`` pointing there): the facet counts of migration SQLite 0011 / PostgreSQL 0008 are
what this was written to price, and the block counts of SQLite 0012 / PostgreSQL 0009 that
replaced them.

``python -m bench.triggers [--rows 20000] [--stores sqlite,postgresql]``
"""

from __future__ import annotations

import argparse
import contextlib
import random
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from compliance_core.areas.vendors import NewVendor
from compliance_core.platform import Platform

from .stores_bench import postgres_server_url

__all__ = ["measure"]

BATCH = 500


def _rows(template: list[Any], columns: list[str], count: int, start: int) -> Iterator[list[Any]]:
    at = {name: columns.index(name) for name in ("id", "country", "category", "assignee_id")}
    rng = random.Random(start)
    for number in range(start, start + count):
        row = list(template)
        row[at["id"]] = f"vnd_{number:012d}"
        row[at["country"]] = rng.choice(("DE", "FR", "US", "GB", "NL"))
        row[at["category"]] = f"category {number % 50}"
        row[at["assignee_id"]] = None
        yield row


def _statements(mark: str) -> dict[str, str]:
    """The writes timed after the insert, each of one row by its key."""
    return {
        "filter update": f"UPDATE vendors SET country = 'SE' WHERE organization_id = {mark} AND id = {mark}",
        "other update": f"UPDATE vendors SET name = name || 'x' WHERE organization_id = {mark} AND id = {mark}",
        "delete": f"DELETE FROM vendors WHERE organization_id = {mark} AND id = {mark}",
    }


def measure(store: str, rows: int, open_store: Callable[[str], Any], url: str, connect: Callable[[], Any]) -> str:
    """Seed one vendor through the platform (so the row is what the API writes), copy it into
    ``rows`` vendors (200 a transaction: not what is measured here), then time
    ``BATCH`` single-row transactions of each write; returns one printed line."""
    platform_store = open_store(url)
    try:
        platform = Platform(platform_store)
        owner = platform.actor(platform.bootstrap("Triggers").organization.id)
        platform.vendors.create(owner, NewVendor(name="Template vendor", criticality="important"))
    finally:
        platform_store.close()
    conn, mark, columns = connect()
    template = list(conn.execute("SELECT * FROM vendors").fetchone())
    marks = ", ".join([mark] * len(columns))
    insert_sql = f"INSERT INTO vendors VALUES ({marks})"

    def transaction(work: Callable[[], None]) -> float:
        started = time.perf_counter()
        conn.execute("BEGIN")
        work()
        conn.execute("COMMIT")
        return time.perf_counter() - started

    register = list(_rows(template, columns, rows, 1))
    for start in range(0, rows, 200):  # small transactions: see the module on PostgreSQL
        transaction(lambda start=start: _executemany(conn, insert_sql, register[start : start + 200]))  # type: ignore[misc]
    first = rows * 10
    batch = list(_rows(template, columns, BATCH, first))
    ids = [row[columns.index("id")] for row in batch]
    organization = template[columns.index("organization_id")]
    timings = {"insert": sum(transaction(lambda row=row: conn.execute(insert_sql, row)) for row in batch)}  # type: ignore[misc]
    for name, statement in _statements(mark).items():
        timings[name] = sum(
            transaction(lambda statement=statement, id=id: conn.execute(statement, (organization, id)))  # type: ignore[misc]
            for id in ids
        )
    conn.close()
    per_row = ", ".join(f"{name} {seconds / BATCH * 1e6:,.0f} us" for name, seconds in timings.items())
    return f"{store:<11} {rows:>8,} vendors: {per_row} per row"


def _executemany(conn: Any, statement: str, rows: list[list[Any]]) -> None:
    if isinstance(conn, sqlite3.Connection):
        conn.executemany(statement, rows)
    else:
        with conn.cursor() as cur:
            cur.executemany(statement, rows)


def _sqlite(rows: int) -> str:
    from compliance_store.sqlite import SqliteStore

    with tempfile.TemporaryDirectory(prefix="compliance-triggers-") as directory:
        path = Path(directory) / "triggers.db"

        def connect() -> tuple[Any, str, list[str]]:
            conn = sqlite3.connect(path, isolation_level=None)
            return conn, "?", [row[1] for row in conn.execute("PRAGMA table_info(vendors)")]

        return measure("SQLite", rows, SqliteStore, f"sqlite:///{path}", connect)


def _postgresql(rows: int, server: str) -> str:
    from compliance_store.postgres import PostgresStore

    schema = f"bench_{secrets.token_hex(4)}"
    separator = "&" if "?" in server else "?"

    def connect() -> tuple[Any, str, list[str]]:
        conn = psycopg.connect(server, autocommit=True)
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        found = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = 'vendors' "
            "ORDER BY ordinal_position",
            (schema,),
        )
        return conn, "%s", [name for (name,) in found]

    try:
        return measure(
            "PostgreSQL",
            rows,
            lambda url: PostgresStore(url, pool_min=0),
            f"{server}{separator}schema={schema}",
            connect,
        )
    finally:
        with psycopg.connect(server, autocommit=True) as admin, contextlib.suppress(psycopg.Error):
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.triggers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000, help="vendors already there (default 20000)")
    parser.add_argument("--stores", default="sqlite,postgresql", help="sqlite, postgresql or both (default)")
    parser.add_argument("--postgres-url", default=None, help="the PostgreSQL server (default: as make bench)")
    args = parser.parse_args(argv)
    for name in args.stores.split(","):
        print(
            _sqlite(args.rows) if name == "sqlite" else _postgresql(args.rows, postgres_server_url(args.postgres_url))
        )


if __name__ == "__main__":
    main()
