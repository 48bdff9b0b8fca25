"""Plans and timings of the list statements, per filter set, for one vendors index layout.

Why: indexes are chosen from what the planners actually do at scale, not from what they should
do. The run bulk-seeds vendors (``scale_seed``) into a temporary SQLite file or a schema
``bench_<random>`` (dropped at the end), replaces the vendors list and filter indexes by one
layout, and for every single filter and every pair of the scale bench's filters
(``stores_bench._FILTERS``) runs the four statements of ``compliance_store.listing.PagedQuery``
as the stores run them: COUNT, a page (``LIMIT 50 OFFSET 200``), an anchor hop (``LIMIT 1 OFFSET
500`` from the first key) and a seek (``LIMIT 50 OFFSET 200`` from that anchor). Filter values
come from random seeded vendors, so common values come up more often, as in the bench.

It prints the plan of each statement for each filter set (``EXPLAIN QUERY PLAN`` /
``EXPLAIN``), the median time of three warm runs in ms, and a summary (median and max per
statement over singles and over pairs), then the write cost (500 single-row inserts, each its own
transaction, as creates are) and the table's size with its indexes.

``python -m bench.plans --store sqlite --vendors 100000 --layout v1 [--no-analyze]``
``python -m bench.plans --store postgresql --vendors 100000 --layout v2 [--no-vacuum]``

Layouts: ``v1`` (the indexes of the first migrations: scope, column, created_at, id), ``v2``
(migration 0006 / 0003: the same keys followed by the other filter columns, so a second filter is
checked inside the index), ``include`` (PostgreSQL: v1 keys with the other filter columns as
``INCLUDE`` payload).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import random
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from compliance_store.postgres.listing import PagedQuery as PostgresQuery
from compliance_store.postgres.store import parse_url as pg_parse_url
from compliance_store.sqlite.listing import PagedQuery as SqliteQuery
from compliance_store.sqlite.store import parse_url as sqlite_path

from .scale_seed import seed_bulk, vendor_mapper
from .seed import sqlite_url
from .stores_bench import _FILTERS, postgres_server_url

__all__ = ["LAYOUTS", "layout_statements", "main"]

COLUMNS = tuple(column for _, column in _FILTERS)
ALL_FILTERS = (
    "criticality",
    "processes_personal_data",
    "ict_service",
    "category",
    "country",
    "dpa_status",
    "status",
    "assignee_id",
)
"""Every filter column of vendors, in the order of ``VendorFilter``."""
LAYOUTS = ("v1", "v2", "include")
PAGE, OFFSET, EVERY = 50, 200, 500


def layout_statements(layout: str, *, postgres: bool) -> list[str]:
    """The CREATE INDEX statements of ``layout`` for vendors (the names the migrations use)."""
    scope = ("organization_id", "archived")

    def index(name: str, keys: Sequence[str], include: Sequence[str] = ()) -> str:
        text = f'CREATE INDEX "{name}" ON "vendors" ({_quoted(keys)})'
        return text + f" INCLUDE ({_quoted(include)})" if include else text

    statements = [index("vendors_list", (*scope, "created_at", "id"))]
    for column in ALL_FILTERS:
        others = tuple(other for other in ALL_FILTERS if other != column)
        keys = (*scope, column, "created_at", "id")
        if layout == "v1":
            statements.append(index(f"vendors_by_{column}", keys))
        elif layout == "v2":
            statements.append(index(f"vendors_by_{column}", (*keys, *others)))
        elif layout == "include" and postgres:
            statements.append(index(f"vendors_by_{column}", keys, others))
        else:
            raise ValueError(f"no layout {layout!r} on {'PostgreSQL' if postgres else 'SQLite'}")
    return statements


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


class _Db:
    """One connection to the seeded store, with its dialect's EXPLAIN."""

    def __init__(self, conn: Any, postgres: bool) -> None:
        self.conn = conn
        self.postgres = postgres

    def run(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        cursor = self.conn.execute(statement, params)
        return list(cursor.fetchall()) if cursor.description is not None else []

    def plan(self, statement: str, params: Sequence[Any]) -> str:
        if self.postgres:
            rows = self.run(f"EXPLAIN {statement}", params)
            lines = [str(row[0]).strip() for row in rows]
            return " | ".join(line.split("  (cost")[0].removeprefix("-> ") for line in lines if "cost" in line)
        return " | ".join(str(row[3]) for row in self.run(f"EXPLAIN QUERY PLAN {statement}", params))

    def timed(self, statement: str, params: Sequence[Any], repeat: int = 3) -> tuple[float, list[Any]]:
        rows = self.run(statement, params)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            rows = self.run(statement, params)
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1e3, rows


@contextlib.contextmanager
def _store(kind: str, server: str, workdir: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield sqlite_url(str(workdir / "plans.db"))
        return
    name = f"bench_{secrets.token_hex(6)}"
    separator = "&" if "?" in server else "?"
    try:
        yield f"{server}{separator}schema={name}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def _connect(url: str) -> _Db:
    if url.startswith("sqlite:"):
        return _Db(sqlite3.connect(sqlite_path(url), isolation_level=None), postgres=False)
    conninfo, schema = pg_parse_url(url)
    conn = psycopg.connect(conninfo, autocommit=True)
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(str(schema))))
    return _Db(conn, postgres=True)


def _relayout(db: _Db, layout: str, *, analyze: bool) -> float:
    """Replace the vendors list and filter indexes by ``layout``; returns the seconds it took."""
    started = time.perf_counter()
    names = ["vendors_list", *(f"vendors_by_{column}" for column in ALL_FILTERS)]
    for name in names:
        db.run(f'DROP INDEX IF EXISTS "{name}"')
    for statement in layout_statements(layout, postgres=db.postgres):
        db.run(statement)
    took = time.perf_counter() - started
    if db.postgres:
        db.run("VACUUM (ANALYZE) vendors" if analyze else "VACUUM vendors")
    elif analyze:
        db.run("ANALYZE")
    else:
        with contextlib.suppress(sqlite3.Error):
            db.run("DROP TABLE IF EXISTS sqlite_stat1")
            db.run("DROP TABLE IF EXISTS sqlite_stat4")
    return took


def _filter_sets(
    db: _Db, organization: str, rng: random.Random, samples: int
) -> list[tuple[tuple[str, ...], list[Any]]]:
    """Filter sets of one and two columns with values of random vendors (non-null ones)."""
    m = "%s" if db.postgres else "?"
    total = db.run(f"SELECT count(*) FROM vendors WHERE organization_id = {m}", (organization,))[0][0]
    quoted = ", ".join(f'"{column}"' for column in COLUMNS)
    chosen: list[tuple[tuple[str, ...], list[Any]]] = []
    for size in (1, 2):
        for columns in itertools.combinations(COLUMNS, size):
            found = 0
            while found < samples:
                index = rng.randrange(total)
                row = db.run(f"SELECT {quoted} FROM vendors WHERE id = {m}", (f"vnd_{index:014x}000000000000",))[0]
                values = dict(zip(COLUMNS, row, strict=True))
                if any(values[column] is None for column in columns):
                    continue
                chosen.append((columns, [values[column] for column in columns]))
                found += 1
    return chosen


def _measure(
    db: _Db, organization: str, filter_sets: Sequence[tuple[tuple[str, ...], list[Any]]]
) -> list[dict[str, Any]]:
    kind = PostgresQuery if db.postgres else SqliteQuery
    query: Any = kind(vendor_mapper(postgres=db.postgres))
    results = []
    for columns, values in filter_sets:
        active = ("archived", *columns)
        statements = query._statements_for(active)
        count_sql, page_sql, first_sql = statements.count_rows, statements.page, statements.first
        hop_sql, seek_sql = statements.hop, statements.seek
        params = [organization, False, *values]
        row: dict[str, Any] = {"filters": columns, "values": values}
        row["count_ms"], counted = db.timed(count_sql, params)
        row["total"] = counted[0][0]
        row["page_ms"], _ = db.timed(page_sql, [*params, PAGE, OFFSET])
        first = db.run(first_sql, params)
        anchor = first[0] if first else ("", "")
        row["hop_ms"], hopped = db.timed(hop_sql, [*params, *anchor, EVERY])
        anchor = hopped[0] if hopped else anchor
        row["seek_ms"], _ = db.timed(seek_sql, [*params, *anchor, PAGE, OFFSET])
        row["plans"] = {
            "count": db.plan(count_sql, params),
            "page": db.plan(page_sql, [*params, PAGE, OFFSET]),
            "hop": db.plan(hop_sql, [*params, *anchor, EVERY]),
            "seek": db.plan(seek_sql, [*params, *anchor, PAGE, OFFSET]),
        }
        results.append(row)
    return results


def _writes(db: _Db, organization: str, rows: int = 500) -> float:
    """Microseconds per single-row insert, each its own transaction (then removed again)."""
    mapper = vendor_mapper(postgres=db.postgres)
    m = "%s" if db.postgres else "?"
    template = db.run(f"SELECT {_quoted(mapper.names)} FROM vendors LIMIT 1")[0]
    at_id = mapper.names.index("id")
    insert = f"INSERT INTO vendors ({_quoted(mapper.names)}) VALUES ({', '.join([m] * len(mapper.names))})"
    if db.postgres:
        template = [psycopg.types.json.Jsonb(v) if isinstance(v, list) else v for v in template]
    started = time.perf_counter()
    for index in range(rows):
        row = list(template)
        row[at_id] = f"vnd_write{index:010d}"
        if db.postgres:  # an autocommit connection: each statement is its own transaction
            db.conn.execute(insert, row)
        else:
            db.conn.execute("BEGIN IMMEDIATE")
            db.conn.execute(insert, row)
            db.conn.execute("COMMIT")
    took = time.perf_counter() - started
    db.conn.execute(f"DELETE FROM vendors WHERE id LIKE {m}", ("vnd_write%",))
    return took / rows * 1e6


def _sizes(db: _Db) -> str:
    if db.postgres:
        table, indexes = db.run("SELECT pg_table_size('vendors'), pg_indexes_size('vendors')")[0]
        return f"table {table / 2**20:,.0f} MiB, indexes {indexes / 2**20:,.0f} MiB"
    try:
        rows = db.run("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
    except sqlite3.Error:
        pages, size = db.run("PRAGMA page_count")[0][0], db.run("PRAGMA page_size")[0][0]
        return f"file {pages * size / 2**20:,.0f} MiB"
    sizes = dict(rows)
    indexes = sum(v for k, v in sizes.items() if k.startswith("vendors_") or k.startswith("sqlite_autoindex_vendors"))
    return f"table {sizes.get('vendors', 0) / 2**20:,.0f} MiB, indexes {indexes / 2**20:,.0f} MiB"


def _summary(results: Sequence[dict[str, Any]]) -> list[str]:
    lines = [f"{'statement':<10}{'singles median':>16}{'max':>9}{'pairs median':>14}{'max':>9}   ms"]
    for kind in ("count", "page", "hop", "seek"):
        singles = [r[f"{kind}_ms"] for r in results if len(r["filters"]) == 1]
        pairs = [r[f"{kind}_ms"] for r in results if len(r["filters"]) == 2]
        lines.append(
            f"{kind:<10}{statistics.median(singles):>16.2f}{max(singles):>9.2f}"
            f"{statistics.median(pairs):>14.2f}{max(pairs):>9.2f}"
        )
    return lines


def _report(
    db: _Db,
    organization: str,
    filter_sets: Sequence[tuple[tuple[str, ...], list[Any]]],
    layout: str,
    analyze: bool,
    *,
    show_plans: bool,
) -> None:
    build = _relayout(db, layout, analyze=analyze)
    print(
        f"\n== layout {layout}, {'analysed' if analyze else 'no statistics'}; indexes built in {build:.1f} s; "
        f"{_sizes(db)}"
    )
    results = _measure(db, organization, filter_sets)
    print(f"{'filters':<48}{'total':>8}{'count':>8}{'page':>8}{'hop':>8}{'seek':>8}  count plan")
    for r in results:
        label = ", ".join(f"{c}={v}" for c, v in zip(r["filters"], r["values"], strict=True))
        print(
            f"{label[:47]:<48}{r['total']:>8,}{r['count_ms']:>8.2f}{r['page_ms']:>8.2f}"
            f"{r['hop_ms']:>8.2f}{r['seek_ms']:>8.2f}  {r['plans']['count']}"
        )
        if show_plans:
            for kind in ("page", "hop", "seek"):
                print(f"{'':<48}{kind:>8}: {r['plans'][kind]}")
    print("\n".join(_summary(results)))
    print(f"insert, one row per transaction: {_writes(db, organization):,.0f} us")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plans", description=__doc__)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--vendors", type=int, default=100_000)
    parser.add_argument("--layouts", default="v1,v2", help=f"comma-separated, of {', '.join(LAYOUTS)} (default v1,v2)")
    parser.add_argument(
        "--stats", default="analyze", help="comma-separated: analyze, none (SQLite: no sqlite_stat1; default analyze)"
    )
    parser.add_argument("--samples", type=int, default=2, help="value samples per filter set (default 2)")
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument("--plans", action="store_true", help="print every statement's plan")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compliance-plans-") as directory:
        with _store(args.store, postgres_server_url(args.postgres_url), Path(directory)) as url:
            started = time.perf_counter()
            bulk = seed_bulk(url, args.vendors)
            organization = bulk.seeded.organization_id
            db = _connect(url)
            filter_sets = _filter_sets(db, organization, random.Random(7), args.samples)
            print(f"{args.store}: seeded {args.vendors:,} vendors in {time.perf_counter() - started:.1f} s")
            for layout in args.layouts.split(","):
                for stats in args.stats.split(","):
                    _report(db, organization, filter_sets, layout, stats == "analyze", show_plans=args.plans)
            db.conn.close()


if __name__ == "__main__":
    main()
