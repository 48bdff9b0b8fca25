"""Counters only where they pay (issue 17): what one write costs in trigger statements, which
counter rows it keeps, and SQLite 0014 on a file that already holds records.

A write's budget is counted, never timed: SQLite's trace callback reports the writing statement
once as it starts, once as each of the table's triggers for that event starts (its WHEN clause
is tested inside) and once per statement a trigger body runs, so the statements a write fires
are the traced lines minus one minus the table's triggers for the event.
"""

from __future__ import annotations

import pathlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from sqlite_utils import Database

from compliance_core import PageRequest
from compliance_core.areas.risks import RISKS
from compliance_core.areas.vendors import (
    VENDORS,
    Criticality,
    DpaStatus,
    Impact,
    Likelihood,
    Vendor,
    VendorFilter,
    VendorStatus,
)
from compliance_core.kernel.audit import AUDIT_LOG
from compliance_core.kernel.records import Records
from compliance_core.kernel.uow import Store
from compliance_store.memory import MemoryStore
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.codec import Mapper, make_converter
from compliance_store.sqlite.migrations import MIGRATIONS, migrations

from . import samples

_BEFORE = "0014_declared_facets"

VENDOR_INSERT = 13
"""Issue 17's target for one vendor insert was 12 (42 before 0014): the list count, the
revision, the block's row count, the unfiltered count, 7 facets and 1 pair; since the search
index (SQLite 0026) one more, the row's trigrams into ``vendors_search``."""
VENDOR_FACET_UPDATE = 21
"""An update of one facet (81 before): the revision, and the row taken out of its block's
counts and put back, each a guarded statement per kept count (a changed key only moves). A
searched column unchanged, the search index is not touched."""
VENDOR_OTHER_UPDATE = 1
"""An update of a column that is neither a facet nor searched (an assignee): the revision alone."""
VENDOR_SEARCHED_UPDATE = 3
"""An update of a searched column (the name): the revision, and the row's old trigrams taken
out of ``vendors_search`` and its new ones put in."""
RISK_INSERT = 11
"""34 before 0014, 10 after: 6 facets (the owner is an id); one more for the search index."""
AUDIT_INSERT = 7
"""16 before 0014, 6 after, paid by every write that is audited: 2 facets (entity and actor are
ids); one more for the search index (action, entity and the actor's name are searched)."""


def _triggers(path: pathlib.Path, table: str, event: str) -> int:
    with sqlite3.connect(path) as conn:
        texts = [
            row[0]
            for row in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,))
        ]
    return sum(f" AFTER {event} ON " in text.upper() for text in texts)


def _fired(statements: list[str], path: pathlib.Path, table: str, event: str) -> int:
    """The trigger statements the one ``event`` write of ``table`` traced in ``statements`` ran."""
    verb = {"INSERT": f"INSERT INTO {table} ", "UPDATE": f"UPDATE {table} "}[event]
    traced = [s for s in statements if s.startswith(verb)]
    assert traced, f"no {verb!r} in {statements}"
    return len(traced) - 1 - _triggers(path, table, event)


@pytest.fixture
def sqlite_store(tmp_path: pathlib.Path) -> Iterator[SqliteStore]:
    store = SqliteStore(f"sqlite:///{tmp_path / 'budget.db'}")
    yield store
    store.close()


def test_one_write_fires_the_statements_of_its_declared_facets_only_on_sqlite(
    sqlite_store: SqliteStore, sqlite_statements: list[str]
) -> None:
    path = pathlib.Path(sqlite_store.path)
    vendor = samples.plain_vendor("org_a", "vnd_1", assignee_id="mem_1", country="DE")
    with sqlite_store.session(write=True) as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_0"))  # the organization's first block exists
        sqlite_statements.clear()
        session[VENDORS].add(vendor)
    assert _fired(sqlite_statements, path, "vendors", "INSERT") <= VENDOR_INSERT

    sqlite_statements.clear()
    with sqlite_store.session(write=True) as session:
        session[VENDORS].update(attrs.evolve(vendor, criticality=Criticality.CRITICAL))
    assert _fired(sqlite_statements, path, "vendors", "UPDATE") <= VENDOR_FACET_UPDATE

    sqlite_statements.clear()
    with sqlite_store.session(write=True) as session:
        session[VENDORS].update(attrs.evolve(vendor, criticality=Criticality.CRITICAL, assignee_id="mem_2"))
    assert _fired(sqlite_statements, path, "vendors", "UPDATE") <= VENDOR_OTHER_UPDATE

    sqlite_statements.clear()
    with sqlite_store.session(write=True) as session:
        session[VENDORS].update(
            attrs.evolve(vendor, criticality=Criticality.CRITICAL, name="Renamed", assignee_id="mem_2")
        )
    assert _fired(sqlite_statements, path, "vendors", "UPDATE") <= VENDOR_SEARCHED_UPDATE

    budgets: list[tuple[Records[Any, Any], int]] = [(RISKS, RISK_INSERT), (AUDIT_LOG, AUDIT_INSERT)]
    for records, budget in budgets:
        table = samples.TABLES[records.name]
        with sqlite_store.session(write=True) as session:
            session[records].add(table.make("org_a", f"{records.prefix}_0"))
            sqlite_statements.clear()
            session[records].add(table.make("org_a", f"{records.prefix}_1"))
        assert _fired(sqlite_statements, path, records.name, "INSERT") <= budget, records.name


def _counter_rows(store: Store, table: str, organization_id: str) -> list[str]:
    """The ``list_facet_blocks`` column sets the organization's rows of ``table`` have counts in."""
    if isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as conn:
            query = "SELECT columns FROM list_facet_blocks WHERE table_name = ? AND organization_id = ? AND total > 0"
            return sorted(row[0] for row in conn.execute(query, (table, organization_id)))
    import psycopg

    from compliance_store.postgres.store import parse_url

    dsn, schema = parse_url(store.url)
    with psycopg.connect(dsn, options=f"-c search_path={schema}") as conn:
        query = "SELECT columns FROM list_facet_blocks WHERE table_name = %s AND organization_id = %s AND total > 0"
        return sorted(row[0] for row in conn.execute(query, (table, organization_id)))


def test_a_vendor_is_counted_under_the_declared_facets_and_pairs_only(store: Store) -> None:
    """On each SQL store (PostgreSQL's function runs a fixed number of statements, each over a
    VALUES list of the kept counts: the rows it writes are what a write pays there)."""
    if isinstance(store, MemoryStore):
        pytest.skip("the memory store keeps no counters")
    vendor = samples.plain_vendor("org_c", "vnd_1", assignee_id="mem_1", country="DE", dpa_status=DpaStatus.SIGNED)
    with store.session(write=True) as session:
        session[VENDORS].add(vendor)
    expected = sorted(["", *VENDORS.facets, *(",".join(pair) for pair in VENDORS.facet_pairs)])
    assert _counter_rows(store, "vendors", "org_c") == expected
    assert "assignee_id" not in expected and len(expected) == 9


def test_totals_of_filters_without_counts_are_still_exact(store: Store) -> None:
    """An id filter, a pair nobody declared and three filters are counted, on every store."""
    made = [
        samples.plain_vendor(
            "org_d",
            f"vnd_{n:02d}",
            created_at=samples.at(n),
            assignee_id=f"mem_{n % 3}",
            criticality=list(Criticality)[n % 3],
            status=list(VendorStatus)[n % 2],
        )
        for n in range(12)
    ]
    with store.session(write=True) as session:
        for vendor in made:
            session[VENDORS].add(vendor)
        session[VENDORS].update(attrs.evolve(made[0], assignee_id="mem_1"))
    made[0] = attrs.evolve(made[0], assignee_id="mem_1")
    filters = [
        VendorFilter(assignee_id="mem_1"),
        VendorFilter(assignee_id="mem_1", criticality=Criticality.IMPORTANT),
        VendorFilter(criticality=Criticality.CRITICAL, status=VendorStatus.IN_PROGRESS),
        VendorFilter(criticality=Criticality.STANDARD, status=VendorStatus.NOT_ASSESSED, assignee_id="mem_0"),
    ]
    with store.session(write=False) as session:
        for kept in filters:
            items, total = session[VENDORS].list("org_d", kept, PageRequest(page=2, per_page=2))
            matching = [vendor for vendor in made if kept.matches(vendor)]
            assert total == len(matching), kept
            assert [vendor.id for vendor in items] == [vendor.id for vendor in matching[2:4]], kept


# SQLite 0014 on a file written before it


def _vendors(count: int) -> list[Vendor]:
    """Vendors in list order with every facet varied, some archived, some ids set."""
    return [
        samples.plain_vendor(
            f"org_{n % 2}",
            f"vnd_{n:05d}",
            created_at=samples.at(n),
            criticality=list(Criticality)[n % 3],
            processes_personal_data=n % 4 == 0,
            ict_service=n % 5 == 0,
            category=("cloud", "hr", "other")[n % 3],
            country=(None, "DE", "FR", "US")[n % 4],
            dpa_status=(None, *DpaStatus)[n % 4],
            status=list(VendorStatus)[n % 3],
            assignee_id=None if n % 7 == 0 else f"mem_{n % 5}",
            archived=n % 9 == 0,
            **_RATED,
        )
        for n in range(count)
    ]


_RATED: dict[str, Any] = {
    "inherent_probability": Likelihood.POSSIBLE,
    "inherent_impact": Impact.MINOR,
    "residual_probability": Likelihood.UNLIKELY,
    "residual_impact": Impact.MINOR,
    "rated": True,
}
"""Rated in full, as every vendor stored before migration 0015 (SQLite; 0013 on PostgreSQL) was."""


def _old_insert(mapper: Any, columns: list[str], vendors: list[Vendor]) -> tuple[str, list[list[Any]]]:
    """The statement and rows that write ``vendors`` into an older ``vendors`` table, which has
    only ``columns`` of today's model."""
    marks = ", ".join(mapper.mark for _ in columns)
    quoted = ", ".join(f'"{column}"' for column in columns)
    rows = [dict(zip(mapper.names, mapper.to_row(vendor), strict=True)) for vendor in vendors]
    return f"INSERT INTO vendors ({quoted}) VALUES ({marks})", [[row[c] for c in columns] for row in rows]


def _dump(path: pathlib.Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute(query).fetchall(), key=repr)


def test_a_file_written_before_0014_keeps_every_row_and_totals_and_ends_like_a_fresh_one(
    tmp_path: pathlib.Path,
) -> None:
    """2,500 vendors (three blocks of an organization) written under 0012's triggers, then
    upgraded: the same rows, the same blocks and the same kept counts as a fresh file written
    with the same vendors, the counts of other column sets gone, and the same totals and deep
    pages for facets, a pair, an id and three filters."""
    assert _BEFORE in [name for name, _ in MIGRATIONS]
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    db = Database(str(old))
    migrations().apply(db, stop_before=_BEFORE)
    db.close()
    vendors = _vendors(2500)
    mapper = Mapper(Vendor, "vendors", make_converter(), ("organization_id", "id"))
    with sqlite3.connect(old) as conn:
        columns = [row[1] for row in conn.execute('PRAGMA table_info("vendors")')]
        conn.executemany(*_old_insert(mapper, columns, vendors))
    conn.close()
    assert {row[0] for row in _dump(old, "SELECT DISTINCT columns FROM list_facet_blocks")} >= {"assignee_id"}

    SqliteStore(f"sqlite:///{old}").close()  # upgrades
    store = SqliteStore(f"sqlite:///{fresh}")
    try:
        with store.session(write=True) as session:
            for vendor in vendors:
                session[VENDORS].add(vendor)
    finally:
        store.close()

    rows = "SELECT * FROM vendors"
    assert _dump(old, rows) == _dump(fresh, rows) and len(_dump(old, rows)) == 2500
    for counters in ("list_blocks", "list_facet_blocks", "list_counts"):
        query = f"SELECT * FROM {counters} WHERE table_name = 'vendors'"
        assert _dump(old, query) == _dump(fresh, query), counters
    kept = {"", *VENDORS.facets, *(",".join(pair) for pair in VENDORS.facet_pairs)}
    assert {row[0] for row in _dump(old, "SELECT DISTINCT columns FROM list_facet_blocks")} <= kept

    filters = [
        VendorFilter(),
        VendorFilter(archived=True),
        VendorFilter(country="DE"),
        VendorFilter(criticality=Criticality.CRITICAL, processes_personal_data=True),
        VendorFilter(assignee_id="mem_3"),
        VendorFilter(status=VendorStatus.ASSESSED, category="hr"),
        VendorFilter(status=VendorStatus.ASSESSED, category="hr", ict_service=False),
    ]
    served = {}
    for path in (old, fresh):
        store = SqliteStore(f"sqlite:///{path}")
        try:
            with store.session(write=False) as session:
                served[path] = [
                    (total, [vendor.id for vendor in items])
                    for kept_filter in filters
                    for page in (1, 40)
                    for items, total in [
                        session[VENDORS].list("org_0", kept_filter, PageRequest(page=page, per_page=25))
                    ]
                ]
        finally:
            store.close()
    assert served[old] == served[fresh]
    expected = [
        (len(matching), [vendor.id for vendor in matching[(page - 1) * 25 : page * 25]])
        for kept_filter in filters
        for page in (1, 40)
        for matching in [[v for v in vendors if v.organization_id == "org_0" and kept_filter.matches(v)]]
    ]
    assert served[old] == expected


# PostgreSQL 0012 on a schema written before it


def test_a_schema_written_before_0012_ends_like_a_fresh_one_on_postgres(postgres_server: str) -> None:
    """The PostgreSQL twin of the SQLite test above (2,200 vendors: two blocks an organization)."""
    import secrets

    import psycopg
    from psycopg import sql

    from compliance_store.postgres import PostgresStore
    from compliance_store.postgres.codec import Mapper as PostgresMapper
    from compliance_store.postgres.codec import make_converter as postgres_converter
    from compliance_store.postgres.migrations import MIGRATIONS as POSTGRES_MIGRATIONS
    from compliance_store.postgres.migrations import migrate

    before = "0012_declared_facets"
    assert before in [name for name, _ in POSTGRES_MIGRATIONS]
    old, fresh = f"t_{secrets.token_hex(6)}_old", f"t_{secrets.token_hex(6)}_new"
    url = {name: f"{postgres_server}{'&' if '?' in postgres_server else '?'}schema={name}" for name in (old, fresh)}
    vendors = _vendors(2200)
    mapper = PostgresMapper(Vendor, "vendors", postgres_converter(), ("organization_id", "id"))
    admin = psycopg.connect(postgres_server, autocommit=True)
    try:
        with psycopg.connect(postgres_server, autocommit=True, options=f"-c search_path={old}") as conn:
            migrate(conn, old, stop_before=before)
            query = (
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = 'vendors'"
            )
            columns = [row[0] for row in conn.execute(query, (old,)).fetchall()]
            for start in range(0, len(vendors), 200):  # one row per counter per transaction, as the API writes
                with conn.transaction(), conn.cursor() as cur:
                    cur.executemany(*_old_insert(mapper, columns, vendors[start : start + 200]))
        PostgresStore(url[old], pool_min=0).close()  # upgrades
        store = PostgresStore(url[fresh], pool_min=0)
        try:
            for start in range(0, len(vendors), 200):
                with store.session(write=True) as session:
                    for vendor in vendors[start : start + 200]:
                        session[VENDORS].add(vendor)
        finally:
            store.close()

        def dump(schema: str, query: str) -> list[tuple[Any, ...]]:
            admin.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            return sorted(admin.execute(query).fetchall(), key=repr)

        assert dump(old, "SELECT * FROM vendors") == dump(fresh, "SELECT * FROM vendors")
        for counters in ("list_blocks", "list_facet_blocks", "list_counts"):
            query = f"SELECT to_jsonb(c)::text FROM {counters} AS c WHERE table_name = 'vendors'"  # -infinity
            assert dump(old, query) == dump(fresh, query), counters
        kept = {"", *VENDORS.facets, *(",".join(pair) for pair in VENDORS.facet_pairs)}
        assert {row[0] for row in dump(old, "SELECT DISTINCT columns FROM list_facet_blocks")} <= kept
        served = {}
        for schema in (old, fresh):
            store = PostgresStore(url[schema], pool_min=0)
            try:
                with store.session(write=False) as session:
                    served[schema] = [
                        session[VENDORS].list("org_0", kept_filter, PageRequest(page=page, per_page=25))[1]
                        for kept_filter in (VendorFilter(country="FR"), VendorFilter(assignee_id="mem_2"))
                        for page in (1, 40)
                    ]
            finally:
                store.close()
        assert served[old] == served[fresh]
    finally:
        for schema in (old, fresh):
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        admin.close()


def test_a_file_counting_more_than_the_declared_facets_is_refused(tmp_path: pathlib.Path) -> None:
    """Counters no list reads would cost every write again: the start-up check expects exactly
    the declared facets, so triggers remade for every filter (0012's) are refused, naming them."""
    from compliance_store.sqlite.migrations.helpers import recount_blocks

    path = tmp_path / "wide.db"
    SqliteStore(f"sqlite:///{path}").close()
    db = Database(str(path))
    with db.atomic():
        recount_blocks(db, "audit_log", filters=("entity_type", "entity_id", "action", "actor_id"))
    db.close()
    with pytest.raises(
        RuntimeError, match=r"audit_log_block_insert counts \['entity_id', 'actor_id', 'entity_type,entity_id'"
    ):
        SqliteStore(f"sqlite:///{path}")


def test_a_facet_must_be_a_filter_and_a_pair_two_facets_in_filter_order() -> None:
    def declare(**facets: Any) -> Records[Any, Any]:
        return Records(
            "vendors", model=Vendor, filters=VendorFilter, kind="vendor", prefix="vnd", partition="archived", **facets
        )

    assert declare(facets=("status",)).facets == ("status",)
    for wrong in (
        {"facets": ("name",)},  # no filter
        {"facets": ("archived",)},  # the partition is scope
        {"facets": ("status", "status")},
        {"facets": ("criticality", "status"), "facet_pairs": (("status", "criticality"),)},  # out of order
        {"facets": ("criticality",), "facet_pairs": (("criticality", "status"),)},  # status is no facet
    ):
        with pytest.raises(ValueError, match="facet"):
            declare(**wrong)
