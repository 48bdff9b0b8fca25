"""Fixtures for the HTTP suite: an app over a platform (memory, or each store where a test asks),
with a frozen clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import falcon
import pytest

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.platform import Bootstrap
from compliance_http.app import create_app
from http_support import Api, issue_key


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


STORES = ("memory", "sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``every_store`` runs on each store instead of memory alone: for what the HTTP
    layer asks of a store that the store-contract suites do not already hold every store to
    (searches and cursors through the wire, byte-identical pages, files streamed into a blob)."""
    if metafunc.definition.get_closest_marker("every_store") and "store" in metafunc.fixturenames:
        metafunc.parametrize("store", STORES, indirect=True)


@pytest.fixture
def store(request: pytest.FixtureRequest) -> str:
    """The store an HTTP test runs on: the reference memory store, unless marked ``every_store``.
    The HTTP layer is the same over every store, and ``tests/contract`` holds each store to the
    memory store's behaviour; running every HTTP test on all three tripled the suite's time."""
    return str(getattr(request, "param", "memory"))


@pytest.fixture
def store_url(request: pytest.FixtureRequest, store: str, tmp_path: Path) -> str:
    """The store's URL: SQLite a migrated copy, PostgreSQL this run's schema, emptied first
    (skipped when no server is reachable, see tests/conftest.py)."""
    if store == "memory":
        return "memory://"
    if store == "sqlite":
        return str(request.getfixturevalue("migrated_sqlite")(tmp_path / "http.db"))
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def platform(store: str, store_url: str, clock: FrozenClock) -> Iterator[Platform]:
    # PostgreSQL has no default blob store (its servers share no directory): files in memory
    settings = {"blobs": "memory://"} if store == "postgresql" else None
    with Platform.open(store_url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
        yield platform


@pytest.fixture
def boot(platform: Platform) -> Bootstrap:
    return platform.bootstrap("Acme")


@pytest.fixture
def app(platform: Platform) -> falcon.App:
    return create_app(platform)


@pytest.fixture
def api(app: falcon.App, boot: Bootstrap) -> Api:
    """The organization's owner."""
    return Api(app, boot.owner_key.secret)


@pytest.fixture
def as_role(app: falcon.App, platform: Platform, boot: Bootstrap) -> Callable[[Role | str], Api]:
    return lambda role: Api(app, issue_key(platform, boot.organization.id, role))


@pytest.fixture
def other(app: falcon.App, platform: Platform) -> Api:
    """The owner of a second organization on the same platform."""
    return Api(app, platform.bootstrap("Other Org").owner_key.secret)
