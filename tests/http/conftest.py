"""Fixtures for the HTTP suite: an app over a platform on each store, with a frozen clock."""

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


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def platform(request: pytest.FixtureRequest, clock: FrozenClock, tmp_path: Path) -> Iterator[Platform]:
    """Every HTTP test runs on the reference memory store, on SQLite and on PostgreSQL (this
    run's schema, emptied first; skipped when no server is reachable, see tests/conftest.py)."""
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = request.getfixturevalue("migrated_sqlite")(tmp_path / "http.db")
    else:
        url = request.getfixturevalue("postgres_url")
    # PostgreSQL has no default blob store (its servers share no directory): files in memory
    settings = {"blobs": "memory://"} if request.param == "postgresql" else None
    with Platform.open(url, clock=clock, ids=SequentialIds(), settings=settings) as platform:
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
