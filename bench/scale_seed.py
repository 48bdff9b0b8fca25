"""Seeding a million vendors in seconds, bypassing the platform but not the store's schema.

The store is opened first (``seed_url`` with no vendors: its migrations create the tables, indexes
and the triggers that keep ``list_counts`` and ``list_revisions``; the tenant and its 20 people go
in through the platform). A pool of vendors made by ``seed._vendor`` (validated as the API would)
is encoded once by the store's own ``Mapper``; each seeded row is a random pool row with its own
id, name and creation time (strictly increasing, spread over two years). Rows go in in one
transaction: ``executemany`` on SQLite, ``COPY`` on PostgreSQL (the row triggers fire for both),
and the counters are then checked against ``count(*)``. (On PostgreSQL the two per-row counter
triggers are switched off during the COPY and the counters set from the rows in the same
transaction: a counter row updated once per copied row is quadratic there.)
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from array import array
from collections.abc import Iterator
from typing import Any

import attrs
import psycopg
from psycopg import sql
from sqlite_utils import Database

from compliance_core.areas.vendors import VENDORS, Vendor
from compliance_store.codec import make_converter
from compliance_store.postgres import codec as pg_codec
from compliance_store.postgres.migrations import helpers as postgres_helpers
from compliance_store.postgres.store import parse_url
from compliance_store.sqlite import codec as sqlite_codec
from compliance_store.sqlite.migrations import helpers as sqlite_helpers
from compliance_store.sqlite.store import parse_url as sqlite_path

from .seed import Seeded, _vendor, seed_url

__all__ = ["ScaleSeeded", "vendor_mapper", "seed_bulk"]

POOL = 4096


@attrs.frozen(kw_only=True)
class ScaleSeeded:
    seeded: Seeded
    pool: tuple[Vendor, ...] = attrs.field(repr=False)
    picks: array[int] = attrs.field(repr=False)
    """The pool index of every seeded vendor, in creation order."""


def vendor_mapper(*, postgres: bool) -> Any:
    """The store's own mapper for the vendors table (columns, encodings, SELECT text)."""
    mapper = pg_codec.Mapper if postgres else sqlite_codec.Mapper
    return mapper(Vendor, VENDORS.name, make_converter())


def seed_bulk(url: str, vendors: int, *, rng_seed: int = 2024) -> ScaleSeeded:
    postgres = not url.startswith("sqlite:")
    seeded = seed_url(url, 0, rng_seed=rng_seed)
    organization = seeded.organization_id
    rng = random.Random(rng_seed)
    mapper = vendor_mapper(postgres=postgres)
    conn: Any = psycopg.connect(parse_url(url)[0]) if postgres else sqlite3.connect(sqlite_path(url))
    try:
        if postgres:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(str(parse_url(url)[1]))))
        people = [row[0] for row in conn.execute("SELECT id FROM people ORDER BY id").fetchall()]
        start = dt.datetime.now(dt.UTC) - dt.timedelta(days=730)
        pool = tuple(_vendor(rng, index, organization, f"vnd_pool{index:06d}", people, start) for index in range(POOL))
        picks = array("H", (rng.randrange(POOL) for _ in range(vendors)))
        rows = _rows(mapper, pool, picks, start, dt.timedelta(days=730) / max(vendors, 1))
        if postgres:
            _copy(conn, mapper, rows)
        else:
            conn.execute("BEGIN IMMEDIATE")
            for event in ("insert", "delete", "update"):
                conn.execute(f"DROP TRIGGER vendors_block_{event}")
            conn.executemany(mapper.insert_sql, rows)
            sqlite_helpers.count_blocks_v2(Database(conn), "vendors", **FACETED)
        conn.commit()
        _check_counters(conn, organization, vendors, postgres=postgres)
    finally:
        conn.close()
    return ScaleSeeded(seeded=attrs.evolve(seeded, vendors=vendors), pool=pool, picks=picks)


def _rows(
    mapper: Any, pool: tuple[Vendor, ...], picks: array[int], start: dt.datetime, step: dt.timedelta
) -> Iterator[list[Any]]:
    names = mapper.names
    at_id, at_name = names.index("id"), names.index("name")
    at_created, at_updated = names.index("created_at"), names.index("updated_at")
    encode = mapper.codecs["created_at"][0] or (lambda value: value)
    encoded = [mapper.to_row(vendor) for vendor in pool]
    stems = [vendor.name.rsplit(" ", 1)[0] for vendor in pool]
    for index, pick in enumerate(picks):
        row = list(encoded[pick])
        row[at_id] = f"vnd_{index:014x}000000000000"
        row[at_name] = f"{stems[pick]} {index:07d}"
        row[at_created] = row[at_updated] = encode(start + step * index)
        yield row


_TRIGGERS = ("vendors_count_insert", "vendors_revision_insert", "vendors_block_insert")
FACETED: dict[str, Any] = {"facets": VENDORS.facets, "pairs": VENDORS.facet_pairs, "partition": "archived"}
"""The vendors' declared facets (``list_facet_blocks``), counted after a bulk load as the
migration helper counts the rows already there: per row, 9 counter upserts would slow the
seeding on SQLite, and on PostgreSQL update the same few rows a million times in one
transaction."""
_COUNTS = (
    "INSERT INTO list_counts AS counts (table_name, organization_id, partition_value, total) "
    "SELECT 'vendors', organization_id, archived, count(*) FROM vendors GROUP BY organization_id, archived "
    "ON CONFLICT (table_name, organization_id, partition_value) DO UPDATE SET total = EXCLUDED.total"
)
_REVISIONS = (
    "INSERT INTO list_revisions AS revisions (table_name, organization_id, revision) "
    "SELECT 'vendors', organization_id, count(*) FROM vendors GROUP BY organization_id "
    "ON CONFLICT (table_name, organization_id) DO UPDATE SET revision = revisions.revision + EXCLUDED.revision"
)


def _copy(conn: Any, mapper: Any, rows: Iterator[list[Any]]) -> None:
    """COPY with the per-row counter triggers off (one row updated a million times in one
    transaction is quadratic on PostgreSQL), then the counters set as those triggers would have
    left them (the table held no vendors before) and the facets counted again, all in the
    caller's transaction."""
    for name in _TRIGGERS:
        conn.execute(sql.SQL("ALTER TABLE vendors DISABLE TRIGGER {}").format(sql.Identifier(name)))
    columns = sql.SQL(", ").join(map(sql.Identifier, mapper.names))
    with conn.cursor() as cur, cur.copy(sql.SQL("COPY vendors ({}) FROM STDIN").format(columns)) as copy:
        for row in rows:
            copy.write_row(row)
    conn.execute(_COUNTS)
    conn.execute(_REVISIONS)
    for name in _TRIGGERS:
        conn.execute(sql.SQL("ALTER TABLE vendors ENABLE TRIGGER {}").format(sql.Identifier(name)))
    with conn.cursor() as cur:
        postgres_helpers.recount_blocks_v2(cur, "vendors", **FACETED)


def _check_counters(conn: Any, organization: str, vendors: int, *, postgres: bool) -> None:
    """The trigger-kept total of the live register must equal the rows actually there."""
    partition = "partition_value = false" if postgres else "archived = 0"
    mark = "%s" if postgres else "?"
    counted = conn.execute(
        f"SELECT total FROM list_counts WHERE table_name = 'vendors' AND organization_id = {mark} AND {partition}",
        (organization,),
    ).fetchone()
    actual = conn.execute(f"SELECT count(*) FROM vendors WHERE organization_id = {mark}", (organization,)).fetchone()
    if counted is None or int(counted[0]) != vendors or int(actual[0]) != vendors:
        raise RuntimeError(f"counters wrong after seeding: list_counts {counted}, count(*) {actual[0]}, want {vendors}")
