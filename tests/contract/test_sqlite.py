"""What only the SQLite store promises: one file shared by threads and processes, migrations
applied once, health, and clear errors for a bad URL."""

from __future__ import annotations

import multiprocessing
import os
import pathlib
import sqlite3
import threading
from typing import Any

import pytest
from sqlite_utils import Database

from compliance_core import NewVendor, Platform, ValidationError
from compliance_core.idempotency import IdempotencyRecord
from compliance_core.platform import open_store
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.schema import migrations

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
        "backend": "sqlite", "status": "ok", "path": sqlite_store.path, "journalMode": "wal",
        "schemaVersion": len(_applied(sqlite_store.path)),
    }
    sqlite_store.close()
    report = sqlite_store.health()
    assert report["status"] == "error" and "closed" in report["detail"]


def test_migrations_apply_once_when_the_same_file_is_opened_again(url: str) -> None:
    first = SqliteStore(url)
    with first.session(write=True) as session:
        session.vendors.add(samples.vendor())
    first.close()
    again = SqliteStore(url)
    with again.session(write=False) as session:
        assert session.vendors.get("org_a", "vnd_full") == samples.vendor()
    applied = _applied(again.path)
    assert again.schema_version == first.schema_version == len(applied) == len(set(applied))
    again.close()


def test_stores_opening_a_new_file_at_once_migrate_it_once(url: str) -> None:
    stores: list[SqliteStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(SqliteStore(url))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
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
        except BaseException as error:  # noqa: BLE001
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
        seen = session.vendors.get(organization_id, "vnd_full")
    with store.session(write=True) as session:
        session.vendors.add(samples.plain_vendor(organization_id, "vnd_child"))
    store.close()
    queue.put((os.getpid(), None if seen is None else seen.name))


def test_another_process_sees_committed_data_and_its_writes_are_seen(sqlite_store: SqliteStore) -> None:
    with sqlite_store.session(write=True) as session:
        session.vendors.add(samples.vendor())
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_read_and_write_in_child, args=(sqlite_store.url, "org_a", queue))
    child.start()
    pid, seen = queue.get(timeout=60)
    child.join(timeout=60)
    assert (pid != os.getpid(), seen, child.exitcode) == (True, samples.vendor().name, 0)
    with sqlite_store.session(write=False) as session:
        assert session.vendors.get("org_a", "vnd_child") == samples.plain_vendor("org_a", "vnd_child")


def test_a_read_session_cannot_write(sqlite_store: SqliteStore) -> None:
    with pytest.raises(sqlite3.OperationalError):
        with sqlite_store.session(write=False) as session:
            session.vendors.add(samples.vendor())
    with sqlite_store.session(write=False) as session:
        assert session.vendors.get("org_a", "vnd_full") is None


def test_a_read_inside_a_write_sees_the_writes_so_far(sqlite_store: SqliteStore) -> None:
    with sqlite_store.session(write=True) as outer:
        outer.vendors.add(samples.vendor())
        with sqlite_store.session(write=False) as inner:
            assert inner.vendors.get("org_a", "vnd_full") == samples.vendor()
        outer.people.add(samples.person())
    with sqlite_store.session(write=False) as session:
        assert session.people.get("org_a", "mem_full") == samples.person()


def test_a_memory_url_uses_a_private_file_removed_on_close() -> None:
    store = SqliteStore("sqlite:///:memory:")
    with store.session(write=True) as session:
        session.vendors.add(samples.vendor())
    assert os.path.exists(store.path)
    store.close()
    assert not os.path.exists(store.path)


def test_a_relative_path_is_relative_to_the_working_directory(tmp_path: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteStore("sqlite:///data.db")
    store.close()
    assert (tmp_path / "data.db").exists()


@pytest.mark.parametrize("bad", [
    "postgresql://localhost/db", "sqlite://host/file.db", "sqlite:///", "sqlite:///file.db?mode=ro",
])
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
    record = IdempotencyRecord(organization_id="org_a", principal="p", key="k", operation="op", fingerprint="f",
                               result=object(), created_at=samples.T0)
    with pytest.raises(TypeError):
        with sqlite_store.session(write=True) as session:
            session.idempotency.put(record)
    conn = sqlite3.connect(sqlite_store.path)
    conn.execute("INSERT INTO idempotency VALUES ('org_a', 'p', 'k', 'op', 'f', ?, ?)",
                 ('{"type":"os:system","value":"echo"}', samples.T0.isoformat()))
    conn.commit()
    conn.close()
    with pytest.raises(ValueError):
        with sqlite_store.session(write=False) as session:
            session.idempotency.get("org_a", "p", "k")
