"""The SQLite store's queued write sessions (``compliance_store.sqlite.deferred``): new rows wait
for the session's first read or its commit, so the write lock is held for the SQL alone."""

from __future__ import annotations

import pathlib
import sqlite3
import threading
from collections.abc import Iterator

import pytest

from compliance_core import Conflict, Platform
from compliance_core.areas.people import PEOPLE
from compliance_core.areas.vendors import VENDORS, NewVendor
from compliance_store.sqlite import SqliteStore

from . import samples


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(f"sqlite:///{tmp_path / 'queued.db'}", busy_timeout=5.0)
    yield opened
    opened.close()


def _write_in_thread(store: SqliteStore, vendor_id: str) -> threading.Thread:
    def write() -> None:
        with store.session(write=True) as session:
            session[VENDORS].add(samples.plain_vendor("org_a", vendor_id))

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_session_that_only_inserted_lets_other_writers_commit_until_it_commits(store: SqliteStore) -> None:
    with store.queued_session() as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_queued"))
        other = _write_in_thread(store, "vnd_other")
        other.join(timeout=10)
        assert not other.is_alive()
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_queued") is not None
        assert session[VENDORS].get("org_a", "vnd_other") is not None


def test_a_read_takes_the_lock_sees_the_queued_rows_and_holds_other_writers_off(store: SqliteStore) -> None:
    with store.queued_session() as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_queued"))
        assert session[VENDORS].get("org_a", "vnd_queued") == samples.plain_vendor("org_a", "vnd_queued")
        other = _write_in_thread(store, "vnd_other")
        other.join(timeout=0.3)
        assert other.is_alive()  # waits for this session's commit
        with store.session(write=False) as joined:  # a read inside the write joins it
            assert joined[VENDORS].get("org_a", "vnd_other") is None
    other.join(timeout=10)
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_other") is not None


def test_an_insert_a_unique_column_refuses_still_fails_where_it_was_asked(store: SqliteStore) -> None:
    with store.session(write=True) as session:
        session[PEOPLE].add(samples.person())
    with pytest.raises(Conflict):
        with store.queued_session() as session:
            session[PEOPLE].add(samples.person(id="mem_twin"))
            pytest.fail("the refusal should have come from the add")


def test_a_queued_row_refused_at_commit_rolls_the_whole_session_back_and_frees_the_lock(store: SqliteStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        with store.queued_session() as session:
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_first"))
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_twice"))
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_twice"))
    with store.session(write=True) as session:
        assert session[VENDORS].get("org_a", "vnd_first") is None
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_after"))
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_after") is not None


def test_an_exception_drops_what_was_queued(store: SqliteStore) -> None:
    with pytest.raises(RuntimeError):
        with store.queued_session() as session:
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_dropped"))
            raise RuntimeError("the caller gave up")
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_dropped") is None


def test_the_platform_writes_through_queued_sessions_from_several_threads(store: SqliteStore) -> None:
    platform = Platform(store)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    errors: list[BaseException] = []

    def create(prefix: str) -> None:
        try:
            for n in range(25):
                platform.vendors.create(owner, NewVendor(name=f"{prefix} {n}"))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=create, args=(prefix,)) for prefix in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert platform.vendors.list(owner).total == 100
    assert len(platform.audit_log.list(owner).items) > 0


def test_a_write_after_another_connection_changed_the_schema_succeeds(tmp_path) -> None:
    """Another process refreshing the planner statistics (dropping and remaking sqlite_stat1)
    changes the schema under an open store: its next write, to a table with a search index,
    still goes through (it once failed with "no such table: vendors")."""
    import sqlite3 as _sqlite3

    from compliance_core import Platform
    from compliance_core.areas.vendors import NewVendor

    path = tmp_path / "changed.db"
    platform = Platform.open(f"sqlite:///{path}")
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    other = _sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("DROP TABLE IF EXISTS sqlite_stat1")
    other.execute("ANALYZE")
    other.execute("COMMIT")
    other.close()
    assert platform.vendors.create(owner, NewVendor(name="After the refresh")).name == "After the refresh"
    platform.close()
