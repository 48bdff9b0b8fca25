"""The store contract: every store passes the same behavioural tests.

``STORES`` maps a name to a factory taking the test's ``request`` and ``tmp_path``; the ``store``
fixture runs each test once per entry. A new store joins the contract by adding one factory here.
PostgreSQL runs in this test run's own schema, emptied before each test (``tests/conftest.py``),
and is skipped, saying why, when no server is reachable (unless ``COMPLIANCE_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compliance_core import Actor, FrozenClock, Platform, SequentialIds
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.uow import Store
from compliance_core.platform import Bootstrap
from compliance_store.memory import MemoryStore


def _sqlite(request: pytest.FixtureRequest, tmp: pathlib.Path) -> Store:
    # Imported when a test asks for it, so one store that does not import fails its own tests
    # instead of every store's.
    from compliance_store.sqlite import SqliteStore

    return SqliteStore(request.getfixturevalue("migrated_sqlite")(tmp / "contract.db"))


def _postgres(request: pytest.FixtureRequest, tmp: pathlib.Path) -> Store:
    from compliance_store.postgres import PostgresStore

    return PostgresStore(request.getfixturevalue("postgres_url"))


STORES: dict[str, Callable[[pytest.FixtureRequest, pathlib.Path], Store]] = {
    "memory": lambda request, tmp: MemoryStore(),
    "sqlite": _sqlite,
    "postgresql": _postgres,
}


@pytest.fixture(params=sorted(STORES))
def store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Store]:
    opened = STORES[request.param](request, tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def platform(store: Store, clock: FrozenClock) -> Platform:
    return Platform(store, clock=clock, ids=SequentialIds())


@pytest.fixture
def boot(platform: Platform) -> Bootstrap:
    """The first organization; its own events (``organization.created``, ``api_key.created``)
    are marked delivered, so a test's outbox holds only what the test recorded."""
    booted = platform.bootstrap("Acme")
    with platform.uow.write(None) as tx:
        tx[OUTBOX].mark_published([message.id for message in tx[OUTBOX].pending(1000)], platform.clock.now())
    return booted


@pytest.fixture
def owner(platform: Platform, boot: Bootstrap) -> Actor:
    return platform.actor(boot.organization.id)


@pytest.fixture
def outsider(platform: Platform) -> Actor:
    """The owner of a second organization."""
    return platform.actor(platform.bootstrap("Globex").organization.id)


@pytest.fixture
def sqlite_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement run (values bound) by the connections SQLite stores open from now on."""
    from compliance_store.sqlite import SqliteStore

    statements: list[str] = []
    connect = SqliteStore._connect

    def traced(self: Any, *, read_only: bool = False) -> Any:
        conn = connect(self, read_only=read_only)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(SqliteStore, "_connect", traced)
    return statements
