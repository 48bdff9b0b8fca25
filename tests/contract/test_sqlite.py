"""What only the SQLite store promises: one file shared by threads and processes, writers queued
on a lock file instead of SQLite's sleeping busy handler, reads on a read-only connection,
trigger-kept revisions, migrations applied once, health, and clear errors for a bad URL."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import pathlib
import queue
import sqlite3
import threading
from typing import Any

import pytest
from sqlite_utils import Database

from compliance_core import FrozenClock, Platform, ValidationError
from compliance_core.areas.api_keys import API_KEYS
from compliance_core.areas.findings import FINDINGS
from compliance_core.areas.people import PEOPLE
from compliance_core.areas.vendors import VENDORS, NewVendor
from compliance_core.kernel.idempotency import IDEMPOTENCY, IdempotencyRecord
from compliance_core.kernel.ratelimit import RATE_LIMITS
from compliance_core.kernel.records import Records
from compliance_core.platform import open_store
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.locking import TurnQueue, fcntl, lock_path
from compliance_store.sqlite.migrations import migrations

from . import samples


def _applied(path: str) -> list[str]:
    db = Database(path)
    try:
        assert migrations().pending(db) == []
        return [m.name for m in migrations().applied(db)]
    finally:
        db.close()


@pytest.fixture
def url(tmp_path: pathlib.Path) -> str:
    return f"sqlite:///{tmp_path / 'shared.db'}"


@pytest.fixture
def sqlite_store(url: str) -> Any:
    store = SqliteStore(url)
    yield store
    store.close()


def test_the_entry_point_opens_the_sqlite_store(url: str) -> None:
    with Platform.open(url) as platform:
        assert isinstance(platform.store, SqliteStore)
        assert platform.store.url == url


def test_health_reports_the_file_wal_mode_and_schema_version(sqlite_store: SqliteStore) -> None:
    assert sqlite_store.health() == {
        "backend": "sqlite",
        "status": "ok",
        "path": sqlite_store.path,
        "journalMode": "wal",
        "schemaVersion": len(_applied(sqlite_store.path)),
    }
    sqlite_store.close()
    report = sqlite_store.health()
    assert report["status"] == "error" and "closed" in report["detail"]


def test_migrations_apply_once_when_the_same_file_is_opened_again(url: str) -> None:
    first = SqliteStore(url)
    with first.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    first.close()
    again = SqliteStore(url)
    with again.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()
    applied = _applied(again.path)
    assert again.schema_version == first.schema_version == len(applied) == len(set(applied))
    again.close()


def test_stores_opening_a_new_file_at_once_migrate_it_once(url: str) -> None:
    stores: list[SqliteStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(SqliteStore(url))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {store.schema_version for store in stores} == {len(_applied(stores[0].path))}
    for store in stores:
        store.close()


def test_two_threads_writing_at_once_both_commit(sqlite_store: SqliteStore) -> None:
    platform = Platform(sqlite_store)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    errors: list[BaseException] = []

    def write(name: str) -> None:
        try:
            for n in range(20):
                platform.vendors.create(owner, NewVendor(name=f"{name}{n}"))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert platform.vendors.list(owner).total == 40


def _read_and_write_in_child(url: str, organization_id: str, queue: Any) -> None:
    store = SqliteStore(url)
    with store.session(write=False) as session:
        seen = session[VENDORS].get(organization_id, "vnd_full")
    with store.session(write=True) as session:
        session[VENDORS].add(samples.plain_vendor(organization_id, "vnd_child"))
    store.close()
    queue.put((os.getpid(), None if seen is None else seen.name))


def test_another_process_sees_committed_data_and_its_writes_are_seen(sqlite_store: SqliteStore) -> None:
    with sqlite_store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_read_and_write_in_child, args=(sqlite_store.url, "org_a", queue))
    child.start()
    pid, seen = queue.get(timeout=60)
    child.join(timeout=60)
    assert (pid != os.getpid(), seen, child.exitcode) == (True, samples.vendor().name, 0)
    with sqlite_store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_child") == samples.plain_vendor("org_a", "vnd_child")


def test_a_read_session_cannot_write(sqlite_store: SqliteStore) -> None:
    with pytest.raises(sqlite3.OperationalError):
        with sqlite_store.session(write=False) as session:
            session[VENDORS].add(samples.vendor())
    with sqlite_store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") is None


def test_a_read_inside_a_write_sees_the_writes_so_far(sqlite_store: SqliteStore) -> None:
    with sqlite_store.session(write=True) as outer:
        outer[VENDORS].add(samples.vendor())
        with sqlite_store.session(write=False) as inner:
            assert inner[VENDORS].get("org_a", "vnd_full") == samples.vendor()
        outer[PEOPLE].add(samples.person())
    with sqlite_store.session(write=False) as session:
        assert session[PEOPLE].get("org_a", "mem_full") == samples.person()


def test_a_memory_url_uses_a_private_file_removed_on_close() -> None:
    store = SqliteStore("sqlite:///:memory:")
    with store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    assert os.path.exists(store.path)
    store.close()
    assert not os.path.exists(store.path)


def test_a_relative_path_is_relative_to_the_working_directory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteStore("sqlite:///data.db")
    store.close()
    assert (tmp_path / "data.db").exists()


@pytest.mark.parametrize(
    "bad",
    [
        "postgresql://localhost/db",
        "sqlite://host/file.db",
        "sqlite:///",
        "sqlite:///file.db?mode=ro",
    ],
)
def test_a_malformed_url_is_a_validation_error_naming_it(bad: str) -> None:
    with pytest.raises(ValidationError) as raised:
        SqliteStore(bad)
    assert raised.value.details["field"] == "url" and raised.value.details["value"] == bad


def test_an_unopenable_file_is_a_validation_error(tmp_path: pathlib.Path) -> None:
    missing_dir = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}"
    with pytest.raises(ValidationError) as raised:
        SqliteStore(missing_dir)
    assert raised.value.details["value"] == missing_dir
    not_a_database = tmp_path / "notes.txt"
    not_a_database.write_text("hello, this is not SQLite" * 100)
    with pytest.raises(ValidationError):
        SqliteStore(f"sqlite:///{not_a_database}")


def test_options_are_checked(url: str) -> None:
    with pytest.raises(ValidationError) as raised:
        open_store(url, pool_size=5)
    assert raised.value.details["field"] == "pool_size"
    with pytest.raises(ValidationError):
        open_store(url, busy_timeout=-1)
    open_store(url, busy_timeout=2.5).close()


def test_sessions_after_close_are_refused(sqlite_store: SqliteStore) -> None:
    sqlite_store.close()
    with pytest.raises(RuntimeError):
        sqlite_store.session(write=False)


def test_only_core_types_are_stored_as_idempotency_results(sqlite_store: SqliteStore) -> None:
    record = IdempotencyRecord(
        organization_id="org_a",
        principal="p",
        key="k",
        operation="op",
        fingerprint="f",
        result=object(),
        created_at=samples.T0,
    )
    with pytest.raises(TypeError):
        with sqlite_store.session(write=True) as session:
            session[IDEMPOTENCY].put(record)
    conn = sqlite3.connect(sqlite_store.path)
    conn.execute(
        "INSERT INTO idempotency VALUES ('org_a', 'p', 'k', 'op', 'f', ?, ?)",
        ('{"type":"os:system","value":"echo"}', samples.T0.isoformat()),
    )
    conn.commit()
    conn.close()
    with pytest.raises(ValueError):
        with sqlite_store.session(write=False) as session:
            session[IDEMPOTENCY].get("org_a", "p", "k")


def test_a_result_stored_before_core_was_split_into_kernel_and_areas_still_loads(sqlite_store: SqliteStore) -> None:
    """Idempotency records live a day, so some written by the previous releases are read by this
    one: their types were named by import paths, of core modules where they were then."""
    record = IdempotencyRecord(
        organization_id="org_a",
        principal="p",
        key="k",
        operation="vendors.create",
        fingerprint="f",
        result=(samples.vendor(), samples.vendor().status),
        created_at=samples.T0,
    )
    with sqlite_store.session(write=True) as session:
        session[IDEMPOTENCY].put(record)
    conn = sqlite3.connect(sqlite_store.path)
    with conn:
        (stored,) = conn.execute("SELECT result FROM idempotency").fetchone()
        assert "compliance_core" not in stored and stored.count('"model":"Vendor') == 2
        old = stored.replace('"model":"Vendor', '"type":"compliance_core.vendors:Vendor')
        conn.execute("UPDATE idempotency SET result = ?", (old,))
    conn.close()
    with sqlite_store.session(write=False) as session:
        assert session[IDEMPOTENCY].get("org_a", "p", "k") == record


def test_a_write_nested_in_a_read_is_refused(sqlite_store: SqliteStore) -> None:
    with sqlite_store.session(write=False):
        with pytest.raises(RuntimeError):
            with sqlite_store.session(write=True):
                pass
    with sqlite_store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())


def test_a_path_that_needs_quoting_in_a_uri_still_opens_for_reading(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "odd name 100% &mode=rw;x"
    folder.mkdir()
    store = SqliteStore(f"sqlite:///{folder / 'data base.db'}")
    with store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()
    with pytest.raises(sqlite3.OperationalError):  # "&mode=rw" in the path did not reach the URI
        with store.session(write=False) as session:
            session[PEOPLE].add(samples.person())
    store.close()


# Revisions: the triggers also cover what the repositories never do (move between organizations)
# and writes made outside the store.


def _revisions(store: SqliteStore, records: Records[Any, Any]) -> dict[str, int]:
    with store.session(write=False) as session:
        repository = session[records]
        return {org: repository.revision(org) for org in ("org_a", "org_b")}


@pytest.mark.parametrize("table", sorted(samples.TABLES))
def test_deleting_a_row_or_moving_it_to_another_organization_moves_the_revisions(
    sqlite_store: SqliteStore, table: str
) -> None:
    sample = samples.TABLES[table]
    made = sample.make()
    with sqlite_store.session(write=True) as session:
        session[sample.records].add(made)
    start = _revisions(sqlite_store, sample.records)
    conn = sqlite3.connect(sqlite_store.path)
    with conn:
        conn.execute(f"UPDATE {table} SET organization_id = 'org_b' WHERE id = ?", (made.id,))
    moved = _revisions(sqlite_store, sample.records)
    with conn:
        conn.execute(f"DELETE FROM {table} WHERE id = ?", (made.id,))
    conn.close()
    deleted = _revisions(sqlite_store, sample.records)
    assert start["org_b"] == 0
    assert moved["org_a"] > start["org_a"] and moved["org_b"] > start["org_b"]
    assert deleted["org_a"] == moved["org_a"] and deleted["org_b"] > moved["org_b"]


def test_a_file_from_before_revisions_upgrades_and_counts_from_zero(url: str, tmp_path: pathlib.Path) -> None:
    db = Database(str(tmp_path / "shared.db"))
    migrations().apply(db, stop_before="0003_list_revisions")
    db.close()
    store = SqliteStore(url)
    try:
        assert _revisions(store, VENDORS) == {"org_a": 0, "org_b": 0}
        with store.session(write=True) as session:
            session[VENDORS].add(samples.vendor())
        assert _revisions(store, VENDORS)["org_a"] > 0
        assert store.schema_version == len(_applied(store.path))
    finally:
        store.close()


# Writers queue on <database>-writer.lock (threads of a process also on an in-process queue).

needs_fcntl = pytest.mark.skipif(fcntl is None, reason="no fcntl (Windows): threads queue in-process only")


@needs_fcntl
def test_the_writer_lock_file_is_created_beside_the_database(sqlite_store: SqliteStore) -> None:
    assert lock_path(sqlite_store.path) == sqlite_store.path + "-writer.lock"
    assert os.path.isfile(sqlite_store.path + "-writer.lock")


@needs_fcntl
def test_a_writer_waits_for_the_lock_file_instead_of_failing_at_the_busy_timeout(url: str) -> None:
    """Another holder of the lock file (here: a second open file description, as another process
    would have) keeps writers waiting past the busy timeout without an error, and they commit as
    soon as it lets go."""
    store = SqliteStore(url, busy_timeout=0.05)
    outcome: queue.Queue[BaseException | None] = queue.Queue()

    def write() -> None:
        try:
            with store.session(write=True) as session:
                session[VENDORS].add(samples.vendor())
            outcome.put(None)
        except BaseException as error:
            outcome.put(error)

    holder = os.open(lock_path(store.path), os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # type: ignore[union-attr]
        writer = threading.Thread(target=write)
        writer.start()
        writer.join(timeout=0.5)  # ten busy timeouts
        assert writer.is_alive() and outcome.empty()
        fcntl.flock(holder, fcntl.LOCK_UN)  # type: ignore[union-attr]
        writer.join()
    finally:
        os.close(holder)
    assert outcome.get_nowait() is None
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()
    store.close()


def test_threads_get_their_turn_in_arrival_order() -> None:
    turns = TurnQueue()
    assert turns.acquire(timeout=1.0)
    order: list[int] = []

    def wait_for_turn(number: int) -> None:
        assert turns.acquire(timeout=60.0)
        order.append(number)
        turns.release()

    threads = []
    for number in range(4):
        thread = threading.Thread(target=wait_for_turn, args=(number,))
        thread.start()
        threads.append(thread)
        while len(turns._waiters) <= number:  # queued before the next one starts
            thread.join(timeout=0.001)
    turns.release()
    for thread in threads:
        thread.join()
    assert order == [0, 1, 2, 3]


def test_a_turn_not_given_in_time_is_refused_and_leaves_the_queue() -> None:
    turns = TurnQueue()
    assert turns.acquire(timeout=1.0)
    refused: list[bool] = []
    waiter = threading.Thread(target=lambda: refused.append(turns.acquire(timeout=0.01)))
    waiter.start()
    waiter.join()
    turns.release()
    assert refused == [False]
    assert turns.acquire(timeout=0.01)  # free, not handed to the waiter that gave up
    turns.release()


ADMITTING_PROCESSES, ADMITTING_THREADS, ADMISSIONS = 2, 4, 50


def _admit_from_threads(url: str, secret: str, results: Any) -> None:
    """One process's share: threads admitting the same key at a frozen time (no refill)."""
    with Platform(SqliteStore(url), clock=FrozenClock()) as platform:
        errors: list[str] = []

        def admit() -> None:
            for _ in range(ADMISSIONS):
                try:
                    platform.access.admit(secret)
                except Exception as error:
                    errors.append(repr(error))

        threads = [threading.Thread(target=admit) for _ in range(ADMITTING_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    results.put(errors)


def test_admissions_from_several_processes_and_threads_all_commit_and_add_up(url: str) -> None:
    """No writer meets "database is locked", and no read-check-write of the bucket or the usage
    counter is lost: every admission is counted once and drew exactly one token."""
    burst = 10_000
    with Platform(SqliteStore(url), clock=FrozenClock()) as platform:
        boot = platform.bootstrap("Acme", "enterprise", rpm=burst, burst=burst)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    children = [
        context.Process(target=_admit_from_threads, args=(url, boot.owner_key.secret, results))
        for _ in range(ADMITTING_PROCESSES)
    ]
    for child in children:
        child.start()
    errors = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
    assert errors == [[]] * ADMITTING_PROCESSES
    assert [child.exitcode for child in children] == [0] * ADMITTING_PROCESSES
    admitted = ADMITTING_PROCESSES * ADMITTING_THREADS * ADMISSIONS
    store = SqliteStore(url)
    with store.session(write=False) as session:
        key_id = boot.owner_key.key.id
        usage = session[API_KEYS].usage(key_id, dt.date(2000, 1, 1))
        bucket = session[RATE_LIMITS].get(key_id)
    store.close()
    assert sum(day.requests for day in usage) == admitted
    assert bucket is not None and bucket.tokens == burst - admitted


def _write_through_the_inherited_store(store: SqliteStore, go: Any, results: Any) -> None:
    go.get(timeout=60)
    results.put("started")
    try:
        with store.session(write=True) as session:
            session[PEOPLE].add(samples.person())
        results.put("committed")
    except BaseException as error:
        results.put(repr(error))


@needs_fcntl
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_opens_its_own_lock_and_waits_for_the_parents_write(url: str) -> None:
    """Were the child to keep the parent's lock file description it would share the parent's
    ``flock``, go straight on to SQLite's lock and fail there after the 50 ms busy timeout. (The
    fork happens between transactions: SQLite forbids forking while a transaction is open.)"""
    store = SqliteStore(url, busy_timeout=0.05)
    with store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    context = multiprocessing.get_context("fork")
    go, results = context.Queue(), context.Queue()
    child = context.Process(target=_write_through_the_inherited_store, args=(store, go, results))
    child.start()
    with store.session(write=True) as session:
        session[FINDINGS].add(samples.finding())
        go.put("go")
        assert results.get(timeout=60) == "started"
        with pytest.raises(queue.Empty):
            results.get(timeout=0.5)
    assert results.get(timeout=60) == "committed"
    child.join(timeout=60)
    with store.session(write=False) as session:
        assert session[PEOPLE].get("org_a", "mem_full") == samples.person()
        assert session[FINDINGS].get("org_a", "fnd_full") == samples.finding()
    store.close()
