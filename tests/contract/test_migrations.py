"""The SQLite schema: frozen migrations that end in the same schema however a file got there, a
helper that makes an area's table the way the store reads it, and a start-up check that refuses a
file lacking anything a registered table needs."""

from __future__ import annotations

import ast
import contextlib
import pathlib
import shutil
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from sqlite_utils import Database

from compliance_core import PageRequest
from compliance_core.areas.vendors import VENDORS, Vendor, VendorFilter
from compliance_core.kernel.page_cache import TotalCache
from compliance_core.kernel.records import Records
from compliance_store.listing import PagedQuery
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.codec import Mapper, make_converter
from compliance_store.sqlite.migrations import MIGRATIONS, migrations
from compliance_store.sqlite.migrations.helpers import (
    create_records_table,
    create_records_table_v2,
    create_records_table_v4,
    recount_blocks,
)

from . import samples
from .gadgets import (
    GADGET_BLOCK_ROWS,
    GADGETS,
    WITH_GADGETS,
    Gadget,
    GadgetFilter,
    check_blocks,
    check_served,
    fill_in_order,
)

NAMES = [name for name, _ in MIGRATIONS]
MIGRATIONS_DIR = pathlib.Path(migrations.__code__.co_filename).parent


def _schema(path: pathlib.Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"), key=repr)
    finally:
        conn.close()


def _applied(path: pathlib.Path) -> list[str]:
    db = Database(str(path))
    try:
        return [migration.name for migration in migrations().applied(db)]
    finally:
        db.close()


def _migrate_until(path: pathlib.Path, count: int) -> None:
    """Apply the first ``count`` migrations only, as an older release of the store did."""
    db = Database(str(path))
    try:
        if count < len(NAMES):
            migrations().apply(db, stop_before=NAMES[count])
        else:
            migrations().apply(db)
    finally:
        db.close()


def _open(path: pathlib.Path, **options: Any) -> SqliteStore:
    return SqliteStore(f"sqlite:///{path}", **options)


# Fresh and upgraded files


@pytest.fixture(scope="module")
def fresh_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A file migrated from nothing, made once for the upgrade tests to compare with."""
    fresh = tmp_path_factory.mktemp("fresh") / "fresh.db"
    _open(fresh).close()
    return fresh


@pytest.fixture(scope="module")
def stopped_files(tmp_path_factory: pytest.TempPathFactory) -> list[pathlib.Path]:
    """The file as each older release left it (after none, one, ... every migration), made by
    one walk through the migrations rather than one from nothing per release."""
    folder = tmp_path_factory.mktemp("stopped")
    walked = folder / "walk.db"
    stopped = []
    for done in range(len(NAMES) + 1):
        _migrate_until(walked, done)
        stopped.append(folder / f"after-{done}.db")
        shutil.copyfile(walked, stopped[-1])
    return stopped


@pytest.mark.parametrize("done", range(len(NAMES) + 1))
def test_a_file_upgraded_after_any_migration_ends_with_the_schema_of_a_fresh_one(
    tmp_path: pathlib.Path, fresh_file: pathlib.Path, stopped_files: list[pathlib.Path], done: int
) -> None:
    upgraded = tmp_path / "upgraded.db"
    shutil.copyfile(stopped_files[done], upgraded)
    store = _open(upgraded)
    store.close()
    assert _schema(upgraded) == _schema(fresh_file)
    assert _applied(upgraded) == _applied(fresh_file) == NAMES
    assert store.schema_version == len(NAMES)


def test_rows_from_before_the_counters_are_counted_after_the_upgrade(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "old.db"
    _migrate_until(path, NAMES.index("0002_list_counts"))
    vendors = Mapper(Vendor, "vendors", make_converter(), ("organization_id", "id"))
    conn = sqlite3.connect(path)
    old_columns = [row[1] for row in conn.execute('PRAGMA table_info("vendors")')]  # today's model has more
    insert = f"INSERT INTO vendors ({', '.join(old_columns)}) VALUES ({', '.join('?' for _ in old_columns)})"
    with conn:
        for organization_id, vendor_id, archived in [
            ("org_a", "vnd_1", False),
            ("org_a", "vnd_2", False),
            ("org_a", "vnd_3", True),
            ("org_b", "vnd_4", False),
        ]:
            ratings = {"inherent_probability": "unlikely", "inherent_impact": "minor"}  # NOT NULL before 0015
            ratings |= {"residual_probability": "unlikely", "residual_impact": "minor"}
            vendor = samples.plain_vendor(organization_id, vendor_id, archived=archived, **ratings)
            row = dict(zip(vendors.names, vendors.to_row(vendor), strict=True))
            conn.execute(insert, [row[column] for column in old_columns])
    conn.close()
    store = _open(path)
    try:
        with store.session(write=False) as session:
            totals = {
                (org, archived): session[VENDORS].list(org, VendorFilter(archived=archived), PageRequest())[1]
                for org in ("org_a", "org_b")
                for archived in (False, True)
            }
        assert totals == {("org_a", False): 2, ("org_a", True): 1, ("org_b", False): 1, ("org_b", True): 0}
    finally:
        store.close()


def test_every_migration_file_is_listed_once_in_order() -> None:
    files = sorted(path.stem for path in MIGRATIONS_DIR.glob("m[0-9]*.py"))
    assert [f"m{name}" for name in NAMES] == files
    assert sorted(NAMES) == NAMES and len(set(NAMES)) == len(NAMES)
    numbers = [int(name[:4]) for name in NAMES]
    # numbers are handed out to parallel branches, so one branch may lack another's until they merge
    assert numbers[0] == 1 and all(a < b for a, b in zip(numbers, numbers[1:])), numbers


@pytest.mark.parametrize("name", NAMES)
def test_a_migration_imports_nothing_that_could_change_under_it(name: str) -> None:
    """Table and column names are literals inside the migration: it may use sqlite-utils and the
    frozen helpers, never a module constant (of core or the store) that grows later."""
    tree = ast.parse((MIGRATIONS_DIR / f"m{name}.py").read_text())
    imported = {(node.level, node.module) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {(0, alias.name) for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {(0, "__future__"), (0, "sqlite_utils"), (1, "helpers")}


# The start-up check


@pytest.fixture
def migrated(tmp_path: pathlib.Path, migrated_sqlite: Callable[[pathlib.Path], str]) -> pathlib.Path:
    """A file migrated from nothing: a copy of the run's (migrating one takes most of a second)."""
    path = tmp_path / "migrated.db"
    migrated_sqlite(path)
    return path


@pytest.mark.parametrize(
    "statement, named",
    [
        ("DROP INDEX vendors_by_country", "vendors_by_country"),
        ("DROP INDEX vendors_list", "vendors_list"),
        ("DROP INDEX people_by_role", "people_by_role"),
        ("DROP TRIGGER people_revision_move", "people_revision_move"),
        ("DROP TRIGGER findings_count_delete", "findings_count_delete"),
        ("DROP TRIGGER vendors_count_update", "vendors_count_update"),
        ("ALTER TABLE findings DROP COLUMN closed_at", "closed_at"),
        ("DROP TABLE outbox", "outbox"),
    ],
)
def test_a_file_missing_an_index_trigger_column_or_table_is_refused_naming_it(
    migrated: pathlib.Path, statement: str, named: str
) -> None:
    conn = sqlite3.connect(migrated)
    conn.execute(statement)
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="a migration is missing") as raised:
        _open(migrated)
    assert named in str(raised.value)


def test_an_index_on_the_wrong_columns_is_refused(migrated: pathlib.Path) -> None:
    conn = sqlite3.connect(migrated)
    conn.execute("DROP INDEX findings_by_status")
    conn.execute("CREATE INDEX findings_by_status ON findings (organization_id, status)")
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="findings_by_status is on"):
        _open(migrated)


def test_a_filter_index_without_the_other_filters_is_refused(migrated: pathlib.Path) -> None:
    """The shape migrations 0001-0005 made: an index that cannot test a second filter."""
    conn = sqlite3.connect(migrated)
    conn.execute("DROP INDEX vendors_by_country")
    conn.execute("CREATE INDEX vendors_by_country ON vendors (organization_id, archived, country, created_at, id)")
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="vendors_by_country is on"):
        _open(migrated)


# A new area: its declaration, its migration through the helper, and the check between them


def _gadgets_migration(db: Database) -> None:
    create_records_table_v4(
        db,
        "gadgets",
        {
            "id": "TEXT NOT NULL",
            "organization_id": "TEXT NOT NULL",
            "kind": "TEXT NOT NULL",
            "order": "INTEGER NOT NULL",
            "archived": "INTEGER NOT NULL DEFAULT 0",
            "created_at": "TEXT NOT NULL",
        },
        filters=("kind", "order"),
        partition="archived",
        rows=GADGET_BLOCK_ROWS,
    )


def test_an_area_without_its_migration_is_refused(migrated: pathlib.Path) -> None:
    with pytest.raises(RuntimeError, match="table gadgets does not exist.*a migration is missing"):
        _open(migrated, areas=WITH_GADGETS)
    _open(migrated).close()  # the registered areas alone are served


def test_a_table_made_by_the_helper_is_served_counted_and_revised(migrated: pathlib.Path) -> None:
    db = Database(str(migrated))
    with db.atomic():
        _gadgets_migration(db)
    db.close()
    store = _open(migrated, areas=WITH_GADGETS)

    check_served(store)


def test_deep_pages_of_a_table_made_by_the_helper_are_found_through_its_blocks(migrated: pathlib.Path) -> None:
    db = Database(str(migrated))
    with db.atomic():
        _gadgets_migration(db)
    db.close()

    check_blocks(_open(migrated, areas=WITH_GADGETS))


def test_block_triggers_that_miss_a_filter_are_refused_until_recounted(migrated: pathlib.Path) -> None:
    """A filter added without ``recount_blocks`` would read 0 for its totals: refused instead."""
    db = Database(str(migrated))
    with db.atomic():
        _gadgets_migration(db)
        recount_blocks(db, "gadgets", filters=("kind",), partition="archived", rows=GADGET_BLOCK_ROWS)
    db.close()
    with pytest.raises(RuntimeError, match=r"gadgets_block_insert does not count \['order', 'kind,order'\]"):
        _open(migrated, areas=WITH_GADGETS)
    db = Database(str(migrated))
    with db.atomic():
        recount_blocks(db, "gadgets", filters=("kind", "order"), partition="archived", rows=GADGET_BLOCK_ROWS)
    db.close()
    check_served(_open(migrated, areas=WITH_GADGETS))


def test_a_table_made_by_the_second_helper_lacks_the_block_counts(migrated: pathlib.Path) -> None:
    db = Database(str(migrated))
    with db.atomic():
        create_records_table_v2(
            db,
            "gadgets",
            {
                "id": "TEXT",
                "organization_id": "TEXT",
                "kind": "TEXT",
                "order": "INTEGER",
                "archived": "INTEGER",
                "created_at": "TEXT",
            },
            filters=("kind", "order"),
            partition="archived",
        )
    db.close()
    with pytest.raises(RuntimeError, match="trigger gadgets_block_insert on gadgets does not exist"):
        _open(migrated, areas=WITH_GADGETS)


def test_a_table_made_by_the_first_helper_lacks_the_covering_filter_indexes(migrated: pathlib.Path) -> None:
    db = Database(str(migrated))
    with db.atomic():
        create_records_table(
            db,
            "gadgets",
            {"id": "TEXT", "organization_id": "TEXT", "kind": "TEXT", "order": "INTEGER", "created_at": "TEXT"},
            filters=("kind", "order"),
        )
    db.close()
    with pytest.raises(RuntimeError, match="index gadgets_by_kind is on"):
        _open(migrated, areas=WITH_GADGETS)


def test_the_helper_refuses_a_table_the_store_could_not_read(migrated: pathlib.Path) -> None:
    db = Database(str(migrated))
    try:
        with pytest.raises(ValueError, match="created_at"):
            create_records_table(db, "gizmos", {"id": "TEXT NOT NULL", "organization_id": "TEXT NOT NULL"})
        with pytest.raises(ValueError, match="partition"):
            create_records_table(
                db,
                "gizmos",
                {
                    "id": "TEXT",
                    "organization_id": "TEXT",
                    "archived": "INTEGER",
                    "created_at": "TEXT",
                },
                filters=("archived",),
                partition="archived",
            )
        with pytest.raises(ValueError, match="plain"):
            create_records_table(db, "gizmos; DROP TABLE vendors", {})
    finally:
        db.close()


# Deletes through the generic repository


@pytest.mark.parametrize("table", sorted(samples.TABLES))
def test_a_delete_keeps_the_count_and_the_revision_right(migrated: pathlib.Path, table: str) -> None:
    sample = samples.TABLES[table]
    records = sample.records
    assert records.filters is not None
    filter_type = records.filters
    first, second = sample.make(), sample.other("x_second")
    store = _open(migrated)

    def state() -> tuple[int, int, int]:
        with store.session(write=False) as session:
            repository = session[records]
            listed = repository.list("org_a", filter_type(**_partition(records, first)), PageRequest())[1]
            return listed, _rows(store, records, first), repository.revision("org_a")

    try:
        with store.session(write=True) as session:
            session[records].add(first)
            session[records].add(second)
        listed, rows, revision = state()
        assert listed == rows
        with store.session(write=True) as session:
            assert session[records].delete("org_a", first.id) is True
        assert state() == (listed - 1, rows - 1, revision + 1)
        with store.session(write=True) as session:
            assert session[records].delete("org_a", first.id) is False
            assert session[records].delete("org_b", second.id) is False  # another organization's id
        assert state() == (listed - 1, rows - 1, revision + 1)
        with store.session(write=False) as session:
            assert session[records].get("org_a", first.id) is None
            assert session[records].get("org_a", second.id) == second
    finally:
        store.close()


def _partition(records: Records[Any, Any], item: Any) -> dict[str, Any]:
    """The filter that lists ``item``'s partition (the list its total is counted in)."""
    return {records.partition: getattr(item, records.partition)} if records.partition else {}


def _rows(store: SqliteStore, records: Records[Any, Any], like: Any) -> int:
    """Rows in ``like``'s organization and partition, counted without the counters."""
    where, params = "organization_id = ?", [like.organization_id]
    for name, value in _partition(records, like).items():
        where, params = f"{where} AND {name} = ?", [*params, value]
    conn = sqlite3.connect(store.path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {records.name} WHERE {where}", params).fetchone()[0])
    finally:
        conn.close()


def test_a_deep_page_seeks_to_its_block_by_two_primary_key_ranges_then_one(
    migrated: pathlib.Path, monkeypatch: pytest.MonkeyPatch, sqlite_statements: list[str]
) -> None:
    """One filter, ten gadgets in blocks of two: the page at offset 6 reads the filter's block
    counts (one range of ``list_facet_blocks``' key), the fourth block's start (one row of
    ``list_blocks``) and two rows from there, skipping none; through a ``TotalCache``, the next
    deep page at the same revision finds its block in the kept running sums and reads only its
    start and its rows."""
    db = Database(str(migrated))
    with db.atomic():
        _gadgets_migration(db)
    db.close()
    statements = sqlite_statements
    monkeypatch.setattr(PagedQuery, "SEEK_FROM", 1)
    store = _open(migrated, areas=WITH_GADGETS)
    try:
        made = [
            Gadget(id=f"gdg_{n:02d}", organization_id="org_a", kind="lamp", created_at=samples.at(n)) for n in range(10)
        ]
        with store.session(write=True) as session:
            for gadget in made:
                session[GADGETS].add(gadget)
        statements.clear()
        with store.session(write=False) as session:
            items, total = session[GADGETS].list("org_a", GadgetFilter(kind="lamp"), PageRequest(page=4, per_page=2))
        assert (list(items), total) == (made[6:8], 10)
        sums = next(s for s in statements if "SELECT block, total FROM list_facet_blocks" in s)
        start = next(s for s in statements if "FROM list_blocks" in s)
        seek = next(s for s in statements if "(created_at, id) >=" in s)
        assert "LIMIT 2 OFFSET 0" in seek, seek
        assert not [s for s in statements if "OFFSET 6" in s], "no walk from the first row"
        cache, lamps = TotalCache(), GadgetFilter(kind="lamp")
        with store.session(write=False) as session:
            revision = session[GADGETS].revision("org_a")
            cache.list("gadgets", session[GADGETS], "org_a", lamps, PageRequest(page=4, per_page=2), revision)
            statements.clear()
            items, _ = cache.list(
                "gadgets", session[GADGETS], "org_a", lamps, PageRequest(page=5, per_page=1), revision
            )
        assert list(items) == made[4:5]
        assert not [s for s in statements if "list_facet_blocks" in s], statements
        assert len([s for s in statements if "FROM list_blocks" in s]) == 1, statements
    finally:
        store.close()
    with contextlib.closing(sqlite3.connect(migrated)) as conn:
        plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sums}"))
        assert "SEARCH list_facet_blocks USING PRIMARY KEY" in plan and "TEMP B-TREE" not in plan, plan
        plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {start}"))
        assert "SEARCH list_blocks USING" in plan, plan
        plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {seek}"))
        assert "gadgets_by_kind" in plan and "(created_at,id)>" in plan, plan


def test_counting_the_rows_already_there_gives_what_the_triggers_kept(migrated: pathlib.Path) -> None:
    """``count_blocks`` on a table written in list order (what a migration meets) leaves the
    blocks and counts its triggers kept while the rows went in."""
    db = Database(str(migrated))
    with db.atomic():
        _gadgets_migration(db)
    db.close()
    fill_in_order(_open(migrated, areas=WITH_GADGETS))
    kept = "SELECT * FROM {} WHERE table_name = 'gadgets' ORDER BY 1, 2, 3, 4, 5, 6, 7"
    with contextlib.closing(sqlite3.connect(migrated)) as conn:
        before = [conn.execute(kept.format(name)).fetchall() for name in ("list_blocks", "list_facet_blocks")]
        with conn:
            recount_blocks(
                Database(conn), "gadgets", filters=("kind", "order"), partition="archived", rows=GADGET_BLOCK_ROWS
            )
        after = [conn.execute(kept.format(name)).fetchall() for name in ("list_blocks", "list_facet_blocks")]
    assert len(before[0]) == 5 and after == before
