"""What only the PostgreSQL store promises: one database shared by processes on many machines,
writers serialised by an advisory lock (read-check-writes stay atomic across connections), reads
in snapshots that never wait, outbox claims that skip each other, a lost connection that is a
retryable ``InternalError`` and never half a write, migrations applied once however many stores
start at once, a start-up check that names what is missing, and clear errors for bad URLs.

Every test here needs a server (``tests/conftest.py`` skips them, saying why, when there is none,
unless ``COMPLIANCE_REQUIRE_POSTGRES=1``). Separate ``PostgresStore`` instances stand for separate
processes: each has its own pool and connections.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as dt
import multiprocessing
import pathlib
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import psycopg
import pytest
from psycopg import sql

from compliance_core import Conflict, FrozenClock, InternalError, PageRequest, Platform, RateLimited, ValidationError
from compliance_core.areas.api_keys import API_KEYS
from compliance_core.areas.organizations import ORGANIZATIONS
from compliance_core.areas.people import EMAILS, PEOPLE
from compliance_core.areas.vendors import VENDORS, NewVendor, VendorFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.registry import Repo
from compliance_core.kernel.uow import Store
from compliance_core.platform import open_store
from compliance_store.postgres import PostgresStore, mask_url, parse_url
from compliance_store.postgres.migrations import MIGRATIONS, applied, migrate
from compliance_store.postgres.migrations.helpers import (
    create_records_table,
    create_records_table_v4,
    recount_blocks,
)

from . import samples
from .gadgets import GADGET_BLOCK_ROWS, WITH_GADGETS, check_blocks, check_served, fill_in_order

NAMES = [name for name, _ in MIGRATIONS]
MIGRATIONS_DIR = pathlib.Path(migrate.__code__.co_filename).parent


def _with(url: str, **parameters: str) -> str:
    extra = "&".join(f"{name}={value}" for name, value in parameters.items())
    return f"{url}{'&' if '?' in url else '?'}{extra}"


@pytest.fixture
def admin(postgres_server: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection of the test's own, outside every store."""
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        yield conn


@pytest.fixture
def application() -> str:
    """A name the test's store connections carry, so the test can find (and kill) them."""
    return f"pgtest_{secrets.token_hex(4)}"


@pytest.fixture
def stores(postgres_url: str, application: str) -> Iterator[Callable[..., PostgresStore]]:
    """Opens stores (one per simulated process) on the run's emptied schema; closes them after."""
    opened: list[PostgresStore] = []

    def open_one(**options: Any) -> PostgresStore:
        store = PostgresStore(_with(postgres_url, application_name=application), **options)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def pg(stores: Callable[..., PostgresStore]) -> PostgresStore:
    return stores()


@pytest.fixture
def fresh(postgres_server: str, admin: psycopg.Connection[Any]) -> Iterator[str]:
    """The URL of a schema that does not exist yet (dropped after the test)."""
    name = f"t_{secrets.token_hex(6)}_fresh"
    yield _with(postgres_server, schema=name)
    admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def _terminate(admin: psycopg.Connection[Any], application: str, state: str | None = None) -> int:
    """Kill the store's backends (as a server restart or a network drop would), waiting until
    they are gone; returns how many."""
    query = "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = %s"
    params: list[Any] = [application]
    if state is not None:
        query, params = f"{query} AND state = %s", [*params, state]
    return len(admin.execute(query, params).fetchall())


def _in_schema(admin: psycopg.Connection[Any], schema: str, statement: str) -> Any:
    admin.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    try:
        return admin.execute(statement).fetchall()
    finally:
        admin.execute("RESET search_path")


def _threads(target: Callable[..., None], *args_list: tuple[Any, ...]) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(*args: Any) -> None:
        try:
            target(*args)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=args) for args in args_list]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


# -- opening: URLs, options, the entry point, health ------------------------------------------


def test_the_entry_point_opens_the_store_for_both_schemes(postgres_url: str) -> None:
    for url in (postgres_url, postgres_url.replace("postgresql://", "postgres://", 1)):
        with Platform.open(url) as platform:
            assert isinstance(platform.store, PostgresStore)
            assert platform.store.url == url
            assert platform.store.schema == parse_url(url)[1]


def test_the_schema_comes_from_the_option_or_the_url_and_both_must_agree(
    postgres_server: str, postgres_url: str
) -> None:
    schema = parse_url(postgres_url)[1]
    store = open_store(postgres_server, schema=schema)
    assert store.health()["schema"] == schema
    store.close()
    with pytest.raises(ValidationError) as raised:
        PostgresStore(postgres_url, schema="another")
    assert raised.value.details["field"] == "schema"
    for bad in ("Upper", "semi;colon", "", "1st", 5):
        with pytest.raises(ValidationError):
            PostgresStore(postgres_server, schema=bad)  # type: ignore[arg-type]


def test_options_are_checked(postgres_url: str) -> None:
    with pytest.raises(ValidationError) as raised:
        open_store(postgres_url, busy_timeout=5)
    assert raised.value.details["field"] == "busy_timeout"
    for options, field in (
        ({"pool_min": 5, "pool_max": 2}, "pool_max"),
        ({"pool_max": 0}, "pool_max"),
        ({"pool_min": -1}, "pool_min"),
        ({"pool_max": True}, "pool_max"),
        ({"pool_timeout": 0}, "pool_timeout"),
    ):
        with pytest.raises(ValidationError) as raised:
            open_store(postgres_url, **options)
        assert raised.value.details["field"] == field
    open_store(postgres_url, pool_min=0, pool_max=2, pool_timeout=2.5).close()


@pytest.mark.parametrize(
    "bad",
    [
        "sqlite:///file.db",
        "postgresql://user:pw@localhost/db?schema=a&schema=b",
        "postgresql://user:pw@localhost/db?no_such_parameter=1",
    ],
)
def test_a_malformed_url_is_a_validation_error_naming_it_without_its_password(bad: str) -> None:
    with pytest.raises(ValidationError) as raised:
        PostgresStore(bad)
    assert raised.value.details["field"] == "url"
    assert "pw" not in str(raised.value.details["value"])


def test_an_unreachable_server_is_a_validation_error_without_the_password() -> None:
    url = "postgresql://someone:hunter2@127.0.0.1:1/nowhere?connect_timeout=2"
    with pytest.raises(ValidationError) as raised:
        PostgresStore(url)
    assert raised.value.details["value"] == "postgresql://someone:***@127.0.0.1:1/nowhere?connect_timeout=2"
    assert "hunter2" not in repr(raised.value)


def test_urls_are_masked_and_the_schema_parameter_is_taken_out() -> None:
    assert mask_url("postgresql://u:p%40ss@h:5/d?password=x&sslmode=require") == (
        "postgresql://u:***@h:5/d?password=***&sslmode=require"
    )
    assert parse_url("postgres://u@h/d?sslmode=require&schema=s_1&application_name=a") == (
        "postgres://u@h/d?sslmode=require&application_name=a",
        "s_1",
    )
    assert parse_url("postgresql://u@h/d") == ("postgresql://u@h/d", None)


def test_health_reports_the_masked_url_schema_version_and_pool(postgres_url: str) -> None:
    store = PostgresStore(postgres_url.replace("postgresql://postgres@", "postgresql://postgres:not-needed@"))
    report = store.health()
    assert report["status"] == "ok" and report["backend"] == "postgresql"
    assert "not-needed" not in repr(report) and ":***@" in report["url"]
    assert report["schema"] == parse_url(postgres_url)[1]
    assert report["schemaVersion"] == len(NAMES) == store.schema_version
    assert report["pool"]["min"] == 1 and report["pool"]["max"] == 10
    assert "not-needed" not in repr(store)
    store.close()
    closed = store.health()
    assert closed["status"] == "error" and "closed" in closed["detail"]
    with pytest.raises(RuntimeError):
        store.session(write=False)
    store.close()  # twice is harmless


# -- types: what the columns hold --------------------------------------------------------------


def test_enums_are_stored_by_value_documents_as_json_and_times_as_utc_timestamptz(
    pg: PostgresStore, admin: psycopg.Connection[Any]
) -> None:
    with pg.session(write=True) as session:
        session[ORGANIZATIONS].add(samples.organization(id="org_a"))
        session[VENDORS].add(samples.vendor())
        session[OUTBOX].add(samples.outbox_message())
    schema = pg.schema
    assert _in_schema(admin, schema, "SELECT plan FROM organizations") == [("enterprise",)]
    row = _in_schema(
        admin,
        schema,
        "SELECT status, criticality, jsonb_typeof(sub_processors), sub_processors -> 0 ->> 'purpose_category', "
        "archived, pg_typeof(created_at)::text, dpa_signed_at FROM vendors",
    )
    assert row == [
        ("assessed", "critical", "array", "data_storage", True, "timestamp with time zone", dt.date(2025, 2, 28))
    ]
    assert _in_schema(admin, schema, "SELECT payload -> 'data' ->> 'title' FROM outbox") == [("Ünïcode ✓",)]
    with pg.session(write=False) as session:
        stored = session[VENDORS].get("org_a", "vnd_full")
    assert stored is not None and stored.created_at.tzinfo is dt.UTC


def test_pages_order_ids_by_code_point_whatever_the_database_collation(pg: PostgresStore) -> None:
    ids = ["vnd_B", "vnd_a", "vnd_Z", "vnd__", "vnd_1", "vnd_é"]
    with pg.session(write=True) as session:
        for vendor_id in ids:
            session[VENDORS].add(samples.plain_vendor("org_a", vendor_id))
    with pg.session(write=False) as session:
        items, total = session[VENDORS].list("org_a", VendorFilter(), PageRequest())
    assert [v.id for v in items] == sorted(ids) and total == len(ids)


# -- sessions: nesting, read-only, snapshots, aborted transactions --------------------------


def test_a_read_session_cannot_write(pg: PostgresStore) -> None:
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        with pg.session(write=False) as session:
            session[VENDORS].add(samples.vendor())
    with pg.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") is None


def test_a_read_inside_a_write_sees_the_writes_so_far_and_a_write_inside_a_read_is_refused(pg: PostgresStore) -> None:
    with pg.session(write=True) as outer:
        outer[VENDORS].add(samples.vendor())
        with pg.session(write=False) as inner:
            assert inner[VENDORS].get("org_a", "vnd_full") == samples.vendor()
        outer[PEOPLE].add(samples.person())
    with pg.session(write=False) as session:
        assert session[PEOPLE].get("org_a", "mem_full") == samples.person()
        with pytest.raises(RuntimeError):
            with pg.session(write=True):
                pass
        with pg.session(write=False) as again:
            assert again[VENDORS].get("org_a", "vnd_full") == samples.vendor()


def test_a_read_session_is_one_snapshot_and_never_waits_for_a_writer(stores: Callable[..., PostgresStore]) -> None:
    reader, writer = stores(), stores()
    with writer.session(write=True) as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_1"))
    holding, release = threading.Event(), threading.Event()

    def write_and_hold() -> None:
        with writer.session(write=True) as session:
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_2"))
            holding.set()
            release.wait(30)

    with reader.session(write=False) as snapshot:
        assert snapshot[VENDORS].list("org_a", VendorFilter(), PageRequest())[1] == 1
        thread = threading.Thread(target=write_and_hold)
        thread.start()
        assert holding.wait(30)
        started = time.monotonic()
        with reader.session(write=False) as other:  # nested: the same snapshot, at once
            assert other[VENDORS].get("org_a", "vnd_2") is None
        release.set()
        thread.join(30)
        # committed meanwhile, yet this session's snapshot still has one vendor, and its total agrees
        items, total = snapshot[VENDORS].list("org_a", VendorFilter(), PageRequest())
        assert ([v.id for v in items], total) == (["vnd_1"], 1)
    assert time.monotonic() - started < 5
    with reader.session(write=False) as later:
        assert later[VENDORS].list("org_a", VendorFilter(), PageRequest())[1] == 2


def test_a_statement_error_caught_inside_a_write_does_not_commit_the_rest(pg: PostgresStore) -> None:
    """In PostgreSQL a failed statement aborts the transaction: the store says so at the end
    instead of letting COMMIT silently roll back."""
    with pytest.raises(InternalError) as raised:
        with pg.session(write=True) as session:
            session[VENDORS].add(samples.vendor())
            with contextlib.suppress(psycopg.errors.UniqueViolation):
                session[VENDORS].add(samples.vendor())
    assert raised.value.details["reason"] == "transaction_aborted"
    with pg.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") is None


def test_a_conflict_leaves_the_transaction_usable_as_on_sqlite(pg: PostgresStore) -> None:
    first, clash = samples.person(id="mem_1"), samples.person(id="mem_2")
    other = samples.person(id="mem_3", email="other@example.com")
    with pg.session(write=True) as session:
        session[PEOPLE].add(first)
        session[API_KEYS].add(samples.api_key(id="key_1"))
        with pytest.raises(Conflict):
            session[PEOPLE].add(clash)
        with pytest.raises(Conflict):
            session[API_KEYS].add(samples.api_key(id="key_2"))
        session[PEOPLE].add(other)
        with pytest.raises(Conflict):
            session[PEOPLE].update(attrs.evolve(other, email=first.email))
        session[PEOPLE].update(attrs.evolve(other, name="Still fine"))
        session[PEOPLE].update(attrs.evolve(samples.person(id="mem_missing"), email=first.email + ".x"))
    with pg.session(write=False) as session:
        assert session[EMAILS].find_emails("org_a", [first.email, other.email]) == {first.email, other.email}
        assert session[PEOPLE].get("org_a", "mem_3").name == "Still fine"  # type: ignore[union-attr]
        assert session[PEOPLE].get("org_a", "mem_2") is None
        assert session[API_KEYS].get("org_a", "key_2") is None


# -- concurrency across connections ------------------------------------------------------------


def test_an_idempotency_key_used_at_once_from_two_processes_creates_once(stores: Callable[..., PostgresStore]) -> None:
    first, second = Platform(stores()), Platform(stores())
    organization_id = first.bootstrap("Acme").organization.id
    owners = [first.actor(organization_id), second.actor(organization_id)]
    start = threading.Barrier(8)
    results: list[Any] = []

    def call(platform: Platform, owner: Any) -> None:
        start.wait(30)
        results.append(platform.vendors.create(owner, NewVendor(name="Once"), idempotency_key="race"))

    errors = _threads(call, *[(platform, owner) for platform, owner in zip((first, second) * 4, owners * 4)])
    assert errors == []
    assert len(results) == 8 and all(result == results[0] for result in results)
    assert first.vendors.list(owners[0]).total == 1 == second.vendors.list(owners[1]).total


def test_read_check_writes_from_two_processes_never_lose_an_update(stores: Callable[..., PostgresStore]) -> None:
    """Without the writer lock two READ COMMITTED transactions would both read 100 and both
    write 99."""
    first, second = stores(), stores()
    with first.session(write=True) as session:
        session[RATE_LIMITS].put("key_1", Bucket(tokens=100.0, updated_at=samples.T0))

    def drain(store: PostgresStore) -> None:
        for _ in range(25):
            with store.session(write=True) as session:
                bucket = session[RATE_LIMITS].get("key_1")
                assert bucket is not None
                time.sleep(0.001)
                session[RATE_LIMITS].put("key_1", Bucket(tokens=bucket.tokens - 1, updated_at=bucket.updated_at))

    assert _threads(drain, (first,), (first,), (second,), (second,)) == []
    with second.session(write=False) as session:
        assert session[RATE_LIMITS].get("key_1") == Bucket(tokens=0.0, updated_at=samples.T0)


def test_rate_limit_leases_from_two_processes_never_over_grant(stores: Callable[..., PostgresStore]) -> None:
    """60 requests a minute, burst 60, the clock frozen (no refill): exactly 60 admissions in all,
    however the two processes' threads interleave."""
    clock = FrozenClock()
    first, second = Platform(stores(), clock=clock), Platform(stores(), clock=clock)
    secret = first.bootstrap("Tiny", plan="enterprise", rpm=60, burst=60).owner_key.secret
    admitted: list[int] = []
    refused: list[int] = []
    start = threading.Barrier(6)

    def admit(platform: Platform) -> None:
        start.wait(30)
        for _ in range(20):
            try:
                platform.access.admit(secret)
                admitted.append(1)
            except RateLimited:
                refused.append(1)

    assert _threads(admit, *[(first,), (second,)] * 3) == []
    assert (len(admitted), len(refused)) == (60, 60)
    for platform in (first, second):
        platform.access.flush()
    with first.store.session(write=False) as session:
        key = session[API_KEYS].find_by_hash(__import__("hashlib").sha256(secret.encode()).hexdigest())
        assert key is not None
        assert session[RATE_LIMITS].get(key.id).tokens == 0  # type: ignore[union-attr]
        assert sum(day.requests for day in session[API_KEYS].usage(key.id, dt.date(2000, 1, 1))) == 60


def test_a_second_writer_waits_for_the_first_to_commit(stores: Callable[..., PostgresStore]) -> None:
    first, second = stores(), stores()
    holding, release = threading.Event(), threading.Event()
    order: list[str] = []

    def hold() -> None:
        with first.session(write=True) as session:
            session[VENDORS].add(samples.plain_vendor("org_a", "vnd_1"))
            holding.set()
            release.wait(30)
            order.append("first commits")

    def follow() -> None:
        assert holding.wait(30)
        with second.session(write=True) as session:
            order.append("second writes")
            assert session[VENDORS].get("org_a", "vnd_1") is not None  # the first's commit, seen at once

    threads = [threading.Thread(target=hold), threading.Thread(target=follow)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    assert order == []
    release.set()
    for thread in threads:
        thread.join(30)
    assert order == ["first commits", "second writes"]


# -- the outbox: claims skip each other --------------------------------------------------------


def test_rows_claimed_by_another_transaction_are_skipped_by_a_claiming_write(
    postgres_url: str, admin: psycopg.Connection[Any]
) -> None:
    # A lock wait fails after 3 s instead of hanging the test (options given in the URL are
    # kept beside the store's own).
    pg = PostgresStore(_with(postgres_url, options="-c%20lock_timeout%3D3000"))
    messages = [samples.outbox_message(id=f"evt_{n}", occurred_at=samples.at(n)) for n in range(4)]
    with pg.session(write=True) as session:
        for message in messages:
            session[OUTBOX].add(message)
    admin.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(pg.schema)))
    with admin.transaction():  # another worker's claim on the two oldest, held open
        claimed = admin.execute(
            "SELECT id FROM outbox WHERE published_at IS NULL ORDER BY occurred_at, id LIMIT 2 FOR UPDATE"
        ).fetchall()
        assert claimed == [("evt_0",), ("evt_1",)]
        started = time.monotonic()
        with pg.session(write=True) as session:
            assert session[OUTBOX].pending(limit=10) == messages[2:]  # skipped, not waited for
            session[OUTBOX].mark_published(["evt_2", "evt_3"], samples.at(100))
        assert time.monotonic() - started < 5
        with pg.session(write=False) as session:  # a read only looks, and takes no row locks
            assert session[OUTBOX].pending(limit=10) == messages[:2]
            assert session[OUTBOX].pending(limit=10)[0].occurred_at.tzinfo is dt.UTC
    admin.execute("RESET search_path")
    pg.close()


def test_workers_in_two_processes_deliver_every_message_exactly_once(stores: Callable[..., PostgresStore]) -> None:
    first, second = stores(), stores()
    ids = [f"evt_{n:03d}" for n in range(60)]
    with first.session(write=True) as session:
        for n, message_id in enumerate(ids):
            session[OUTBOX].add(samples.outbox_message(id=message_id, occurred_at=samples.at(n)))
    delivered: list[str] = []

    def work(store: PostgresStore) -> None:
        while True:
            with store.session(write=True) as session:
                batch = session[OUTBOX].pending(limit=7)
                if not batch:
                    return
                delivered.extend(message.id for message in batch)
                session[OUTBOX].mark_published([message.id for message in batch], samples.at(1000))

    assert _threads(work, (first,), (second,), (first,), (second,)) == []
    assert sorted(delivered) == ids


# -- lost connections --------------------------------------------------------------------------


def test_a_connection_lost_in_the_middle_of_a_write_is_an_internal_error_and_writes_nothing(
    stores: Callable[..., PostgresStore], admin: psycopg.Connection[Any], application: str
) -> None:
    store = stores(pool_min=1, pool_max=1)
    with pytest.raises(InternalError) as raised:
        with store.session(write=True) as session:
            session[VENDORS].add(samples.vendor())
            assert _terminate(admin, application) == 1
            session[PEOPLE].add(samples.person())
    assert raised.value.details["reason"] == "connection_lost"
    assert isinstance(raised.value.__cause__, psycopg.OperationalError)
    with store.session(write=False) as session:  # on a new connection
        assert session[VENDORS].get("org_a", "vnd_full") is None
        assert session[PEOPLE].get("org_a", "mem_full") is None
    with store.session(write=True) as session:  # and the writer lock died with the old one
        session[VENDORS].add(samples.vendor())
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()


def test_a_connection_lost_in_a_read_is_an_internal_error(
    stores: Callable[..., PostgresStore], admin: psycopg.Connection[Any], application: str
) -> None:
    store = stores(pool_min=1, pool_max=1)
    with pytest.raises(InternalError):
        with store.session(write=False) as session:
            session[ORGANIZATIONS].count()
            _terminate(admin, application)
            session[ORGANIZATIONS].count()
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].count() == 0


def test_a_pooled_connection_that_died_while_idle_is_replaced_unnoticed(
    stores: Callable[..., PostgresStore], admin: psycopg.Connection[Any], application: str
) -> None:
    store = stores(pool_min=1, pool_max=1)
    with store.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    assert _terminate(admin, application, state="idle") == 1
    with store.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()


class _DyingStore:
    """A PostgresStore whose next write loses its connection just before the unit of work adds
    its outbox rows, that is after the service has written everything (the idempotency record
    included) and before COMMIT."""

    def __init__(self, store: PostgresStore, kill: Callable[[], None]) -> None:
        self._store = store
        self._kill = kill
        self.url = store.url
        self.armed = False

    @contextlib.contextmanager
    def session(self, *, write: bool) -> Iterator[Any]:
        with self._store.session(write=write) as session:
            yield _DyingSession(self, session) if write else session

    def health(self) -> dict[str, Any]:
        return self._store.health()

    def close(self) -> None:
        self._store.close()


@attrs.define
class _DyingSession:
    store: _DyingStore
    session: Any

    def __getitem__(self, repo: Repo[Any]) -> Any:
        if repo.name == OUTBOX.name and self.store.armed:
            self.store.armed = False
            self.store._kill()
        return self.session[repo]


def test_a_create_that_lost_its_connection_is_retried_with_the_same_key_and_creates_once(
    stores: Callable[..., PostgresStore], admin: psycopg.Connection[Any], application: str
) -> None:
    dying = _DyingStore(stores(pool_min=1, pool_max=1), lambda: _terminate(admin, application, "idle in transaction"))
    store: Store = dying
    platform = Platform(store)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    data = NewVendor(name="Hosting")
    dying.armed = True
    with pytest.raises(InternalError):
        platform.vendors.create(owner, data, idempotency_key="retry-me")
    assert platform.vendors.list(owner).total == 0
    created = platform.vendors.create(owner, data, idempotency_key="retry-me")
    assert platform.vendors.create(owner, data, idempotency_key="retry-me") == created
    assert platform.vendors.list(owner).total == 1
    with platform.store.session(write=False) as session:
        assert [m.type for m in session[OUTBOX].pending()] == [
            "organization.created",
            "api_key.created",
            "vendor.created",
        ]


def _use_inherited_store(store: PostgresStore, results: Any) -> None:
    try:
        store.session(write=False)
        results.put("opened a session")
    except RuntimeError as error:
        results.put(str(error))
    store.close()  # must leave the parent's connections alone


def test_a_forked_child_must_open_its_own_store_and_leaves_the_parents_alone(pg: PostgresStore) -> None:
    with pg.session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_use_inherited_store, args=(pg, results))
    child.start()
    assert "another process" in results.get(timeout=60)
    child.join(timeout=60)
    with pg.session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()


# -- migrations --------------------------------------------------------------------------------


def _catalog(admin: psycopg.Connection[Any], schema: str) -> list[tuple[Any, ...]]:
    """Every column, index, trigger and function of the schema, as PostgreSQL describes them."""
    queries = (
        "SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name, ordinal_position "
        "FROM information_schema.columns WHERE table_schema = %(s)s",
        "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %(s)s",
        "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled FROM pg_trigger t "
        "JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %(s)s AND NOT t.tgisinternal",
        "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = %(s)s",
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE connamespace = %(s)s::regnamespace",
    )
    rows = [tuple(row) for query in queries for row in admin.execute(query, {"s": schema}).fetchall()]
    return sorted((tuple(str(v).replace(schema, "<schema>") for v in row) for row in rows), key=repr)


def _applied_in(url: str) -> list[str]:
    conninfo, schema = parse_url(url)
    with psycopg.connect(conninfo, autocommit=True, options=f"-c search_path={schema}") as conn:
        return applied(conn)


def test_stores_starting_at_once_on_a_new_schema_migrate_it_once(fresh: str) -> None:
    opened: list[PostgresStore] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait(30)
        opened.append(PostgresStore(fresh, pool_min=0))

    assert _threads(open_one, (), (), (), ()) == []
    assert {store.schema_version for store in opened} == {len(NAMES)}
    assert _applied_in(fresh) == NAMES
    with opened[0].session(write=True) as session:
        session[VENDORS].add(samples.vendor())
    with opened[1].session(write=False) as session:
        assert session[VENDORS].get("org_a", "vnd_full") == samples.vendor()
    for store in opened:
        store.close()


def test_opening_a_migrated_schema_again_changes_nothing(fresh: str, admin: psycopg.Connection[Any]) -> None:
    PostgresStore(fresh, pool_min=0).close()
    schema = parse_url(fresh)[1]
    assert schema is not None
    before = _catalog(admin, schema), _in_schema(admin, schema, "SELECT name, applied_at FROM compliance_migrations")
    store = PostgresStore(fresh, pool_min=0)
    assert store.schema_version == len(NAMES)
    store.close()
    after = _catalog(admin, schema), _in_schema(admin, schema, "SELECT name, applied_at FROM compliance_migrations")
    assert after == before


@pytest.fixture(scope="module")
def fresh_catalog(postgres_server: str) -> Iterator[list[tuple[Any, ...]]]:
    """The catalog of a schema migrated from nothing, made once for the upgrade tests below (each
    of which would otherwise migrate a fresh schema of its own to compare with)."""
    name = f"t_{secrets.token_hex(6)}_fresh"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        try:
            PostgresStore(_with(postgres_server, schema=name), pool_min=0).close()
            yield _catalog(admin, name)
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.mark.parametrize("done", range(len(NAMES)))
def test_a_schema_upgraded_after_any_migration_ends_like_a_fresh_one(
    fresh: str, postgres_server: str, admin: psycopg.Connection[Any], fresh_catalog: list[tuple[Any, ...]], done: int
) -> None:
    upgraded = parse_url(fresh)[1]
    assert upgraded is not None
    with psycopg.connect(postgres_server, autocommit=True, options=f"-c search_path={upgraded}") as conn:
        assert migrate(conn, upgraded, stop_before=NAMES[done]) == NAMES[:done]
    assert _applied_in(fresh) == NAMES[:done]
    PostgresStore(fresh, pool_min=0).close()
    assert _catalog(admin, upgraded) == fresh_catalog
    assert _applied_in(fresh) == NAMES


def test_every_migration_file_is_listed_once_in_order() -> None:
    files = sorted(path.stem for path in MIGRATIONS_DIR.glob("m[0-9]*.py"))
    assert [f"m{name}" for name in NAMES] == files
    numbers = [int(name[:4]) for name in NAMES]
    # numbers are handed out to parallel branches, so one branch may lack another's until they merge
    assert numbers[0] == 1 and all(a < b for a, b in zip(numbers, numbers[1:])), numbers


@pytest.mark.parametrize("name", NAMES)
def test_a_migration_imports_nothing_that_could_change_under_it(name: str) -> None:
    tree = ast.parse((MIGRATIONS_DIR / f"m{name}.py").read_text())
    imported = {(node.level, node.module) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {(0, alias.name) for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {(0, "__future__"), (0, "typing"), (0, "psycopg"), (1, "helpers")}


# -- the start-up check ------------------------------------------------------------------------


@pytest.fixture
def migrated(fresh: str, admin: psycopg.Connection[Any]) -> Callable[[str], None]:
    """Migrate the fresh schema, then change it with a statement (run inside the schema)."""
    PostgresStore(fresh, pool_min=0).close()
    schema = parse_url(fresh)[1]
    assert schema is not None

    def change(statement: str) -> None:
        admin.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        admin.execute(statement)  # type: ignore[call-overload]
        admin.execute("RESET search_path")

    return change


@pytest.mark.parametrize(
    "statement, named",
    [
        ("DROP INDEX vendors_by_country", "index vendors_by_country on vendors does not exist"),
        ("DROP INDEX vendors_list", "index vendors_list on vendors does not exist"),
        ("DROP TRIGGER people_revision_update ON people", "trigger people_revision_update on people does not exist"),
        ("DROP TRIGGER findings_count_delete ON findings", "trigger findings_count_delete on findings"),
        (
            "ALTER TABLE vendors DISABLE TRIGGER vendors_count_update",
            "trigger vendors_count_update on vendors is disabled",
        ),
        ("ALTER TABLE findings DROP COLUMN template_id", "table findings lacks columns ['template_id']"),
        ("DROP TABLE outbox", "table outbox does not exist"),
        ("DROP TABLE list_revisions CASCADE", "table list_revisions does not exist"),
    ],
)
def test_a_schema_missing_an_index_trigger_column_or_table_is_refused_naming_it(
    fresh: str, migrated: Callable[[str], None], statement: str, named: str
) -> None:
    migrated(statement)
    with pytest.raises(RuntimeError, match="a migration is missing") as raised:
        PostgresStore(fresh, pool_min=0)
    assert named in str(raised.value)


def test_an_index_on_the_wrong_columns_is_refused(fresh: str, migrated: Callable[[str], None]) -> None:
    migrated("DROP INDEX findings_by_status")
    migrated("CREATE INDEX findings_by_status ON findings (organization_id, status)")
    with pytest.raises(RuntimeError, match="findings_by_status is on"):
        PostgresStore(fresh, pool_min=0)


def test_a_filter_index_without_the_other_filters_is_refused(fresh: str, migrated: Callable[[str], None]) -> None:
    """The shape migration 0002 made: an index that cannot test a second filter."""
    migrated("DROP INDEX vendors_by_country")
    migrated("CREATE INDEX vendors_by_country ON vendors (organization_id, archived, country, created_at, id)")
    with pytest.raises(RuntimeError, match="vendors_by_country is on"):
        PostgresStore(fresh, pool_min=0)


# A new area: its declaration, its migration through the helper, and the check between them


@contextlib.contextmanager
def _migration(url: str, server: str) -> Iterator[psycopg.Cursor[Any]]:
    """A cursor in one transaction on the schema of the store at ``url``, as a migration gets."""
    with psycopg.connect(server, autocommit=True, options=f"-c search_path={parse_url(url)[1]}") as conn:
        with conn.transaction():
            yield conn.cursor()


def _gadgets_migration(cur: psycopg.Cursor[Any]) -> None:
    create_records_table_v4(
        cur,
        "gadgets",
        {
            "id": 'text COLLATE "C" NOT NULL',
            "organization_id": 'text COLLATE "C" NOT NULL',
            "kind": "text NOT NULL",
            "order": "integer NOT NULL",
            "archived": "boolean NOT NULL DEFAULT false",
            "created_at": "timestamptz NOT NULL",
        },
        filters=("kind", "order"),
        partition="archived",
        rows=GADGET_BLOCK_ROWS,
    )


def test_an_area_without_its_migration_is_refused(fresh: str, migrated: Callable[[str], None]) -> None:
    with pytest.raises(RuntimeError, match="table gadgets does not exist.*a migration is missing"):
        PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS)
    PostgresStore(fresh, pool_min=0).close()  # the registered areas alone are served


def test_a_table_made_by_the_helper_is_served_counted_and_revised(
    fresh: str, migrated: Callable[[str], None], postgres_server: str
) -> None:
    with _migration(fresh, postgres_server) as cur:
        _gadgets_migration(cur)
    store = PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS)

    check_served(store)


def test_deep_pages_of_a_table_made_by_the_helper_are_found_through_its_blocks(
    fresh: str, migrated: Callable[[str], None], postgres_server: str
) -> None:
    with _migration(fresh, postgres_server) as cur:
        _gadgets_migration(cur)

    check_blocks(PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS))


def test_block_triggers_that_miss_a_filter_are_refused_until_recounted(
    fresh: str, migrated: Callable[[str], None], postgres_server: str
) -> None:
    """A filter added without ``recount_blocks`` would read 0 for its totals: refused instead."""
    with _migration(fresh, postgres_server) as cur:
        _gadgets_migration(cur)
        recount_blocks(cur, "gadgets", filters=("kind",), partition="archived", rows=GADGET_BLOCK_ROWS)
    with pytest.raises(RuntimeError, match=r"gadgets_list_blocks does not count \['order', 'kind,order'\]"):
        PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS)
    with _migration(fresh, postgres_server) as cur:
        recount_blocks(cur, "gadgets", filters=("kind", "order"), partition="archived", rows=GADGET_BLOCK_ROWS)
    check_served(PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS))


def test_the_helper_refuses_a_table_the_store_could_not_read(postgres_server: str) -> None:
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        cur = conn.cursor()
        with pytest.raises(ValueError, match="created_at"):
            create_records_table(cur, "gizmos", {"id": "text", "organization_id": "text"})
        with pytest.raises(ValueError, match="partition"):
            create_records_table(
                cur,
                "gizmos",
                {"id": "text", "organization_id": "text", "archived": "boolean", "created_at": "timestamptz"},
                filters=("archived",),
                partition="archived",
            )
        with pytest.raises(ValueError, match="plain"):
            create_records_table(cur, "gizmos; DROP TABLE vendors", {})


def test_counts_and_revisions_follow_a_row_moved_to_another_organization_and_partition(
    pg: PostgresStore, admin: psycopg.Connection[Any]
) -> None:
    """The triggers' UPDATE branches, which the services never take (a record keeps its
    organization) but a data fix in SQL might."""
    with pg.session(write=True) as session:
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_1"))
        session[VENDORS].add(samples.plain_vendor("org_a", "vnd_2"))

    def state() -> tuple[dict[tuple[str, bool], int], tuple[int, int]]:
        with pg.session(write=False) as session:
            totals = {
                (org, archived): session[VENDORS].list(org, VendorFilter(archived=archived), PageRequest())[1]
                for org in ("org_a", "org_b")
                for archived in (False, True)
            }
            return totals, (session[VENDORS].revision("org_a"), session[VENDORS].revision("org_b"))

    _, before = state()
    _in_schema(
        admin,
        pg.schema,
        "UPDATE vendors SET organization_id = 'org_b', archived = true WHERE id = 'vnd_1' RETURNING id",
    )
    totals, after = state()
    assert totals == {("org_a", False): 1, ("org_a", True): 0, ("org_b", False): 0, ("org_b", True): 1}
    assert after[0] == before[0] + 1 and after[1] == before[1] + 1


def test_counting_the_rows_already_there_gives_what_the_triggers_kept(
    fresh: str, migrated: Callable[[str], None], postgres_server: str
) -> None:
    """``count_blocks`` on a table written in list order (what a migration meets) leaves the
    blocks and counts its triggers kept while the rows went in."""
    with _migration(fresh, postgres_server) as cur:
        _gadgets_migration(cur)
    fill_in_order(PostgresStore(fresh, pool_min=0, areas=WITH_GADGETS))
    # as text: block 0 starts at -infinity, which Python's datetime cannot hold
    kept = "SELECT t::text FROM {} AS t WHERE table_name = 'gadgets' ORDER BY 1"
    options = f"-c search_path={parse_url(fresh)[1]}"
    with psycopg.connect(postgres_server, autocommit=True, options=options) as conn:
        before = [conn.execute(kept.format(name)).fetchall() for name in ("list_blocks", "list_facet_blocks")]
        with conn.transaction():
            recount_blocks(
                conn.cursor(), "gadgets", filters=("kind", "order"), partition="archived", rows=GADGET_BLOCK_ROWS
            )
        after = [conn.execute(kept.format(name)).fetchall() for name in ("list_blocks", "list_facet_blocks")]
    assert len(before[0]) == 5 and after == before
