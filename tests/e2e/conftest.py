"""Fixtures for the end-to-end suite (the machinery is in ``e2e_support``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from compliance_core import Client, Platform
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport
from e2e_support import Harness, ServerProcess, local_harness, start_server


@pytest.fixture(scope="session")
def serve() -> Iterator[Callable[..., ServerProcess]]:
    """Start `compliance serve` processes; all of them are stopped at the end of the session."""
    started: list[ServerProcess] = []

    def run(db: Path | str, **options: Any) -> ServerProcess:
        server = start_server(db, **options)
        started.append(server)
        return server

    yield run
    for server in started:
        server.stop()


@attrs.define
class Postgres:
    """The schema the PostgreSQL harnesses share, and what must stop before it is dropped."""

    url: str
    cleanups: list[Callable[[], object]] = attrs.Factory(list)


@pytest.fixture(scope="session")
def e2e_postgres(new_postgres_schema: Callable[[], str]) -> Iterator[Postgres]:
    """Skipped without a server. Torn down before the schema is dropped: the servers and
    platforms built on it stop here, not at the end of ``serve`` and ``harnesses``."""
    postgres = Postgres(new_postgres_schema())
    yield postgres
    for cleanup in reversed(postgres.cleanups):
        cleanup()


@pytest.fixture(scope="session")
def harnesses(
    tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., ServerProcess]
) -> Iterator[Callable[..., Harness]]:
    """``get(name, postgres=None)``: the harness ``local``, ``wsgi`` or ``server`` (on memory or
    SQLite), or ``<transport>+postgresql`` on the ``e2e_postgres`` schema. Built on first use, so
    `-k local` starts no server."""
    built: dict[str, Harness] = {}
    opened: list[Platform] = []

    def get(name: str, postgres: Postgres | None = None) -> Harness:
        if name in built:
            return built[name]
        kind, _, store = name.partition("+")
        assert store in ("", "postgresql") and (postgres is not None) == (store == "postgresql"), name
        postgres_url = None if postgres is None else postgres.url
        if kind == "local":
            built[name] = local_harness() if postgres_url is None else local_harness(postgres_url)
        elif kind == "wsgi":
            url = postgres_url or f"sqlite:///{tmp_path_factory.mktemp('wsgi') / 'wsgi.db'}"
            platform = Platform.open(url)
            app = create_app(platform)

            def wsgi_client(secret: str) -> Client:
                return Client(HTTPTransport("http://testserver", secret, transport=httpx.WSGITransport(app=app)))

            built[name] = Harness(kind, platform, client_for=wsgi_client)
        else:
            db = postgres_url or tmp_path_factory.mktemp("server") / "e2e.db"
            server = serve(db, workers=2)
            if postgres is not None:
                postgres.cleanups.append(server.stop)
            platform = Platform.open(postgres_url or f"sqlite:///{db}")
            built[name] = Harness(
                kind, platform, client_for=lambda secret: Client(HTTPTransport(server.url, secret)), server=server
            )
        built[name].store = store or "default"
        if postgres is not None:
            postgres.cleanups.append(built[name].platform.close)
        else:
            opened.append(built[name].platform)
        return built[name]

    yield get
    for platform in opened:
        platform.close()


HARNESSES = [
    "local",
    "wsgi",
    pytest.param("server", marks=pytest.mark.slow),
    "local+postgresql",
    "wsgi+postgresql",
    pytest.param("server+postgresql", marks=pytest.mark.slow),
]
"""Every transport on the default stores (memory in-process, SQLite over HTTP) and on PostgreSQL."""


@pytest.fixture(params=HARNESSES)
def harness(request: pytest.FixtureRequest, harnesses: Callable[..., Harness]) -> Harness:
    if request.param.endswith("+postgresql"):
        return harnesses(request.param, request.getfixturevalue("e2e_postgres"))
    return harnesses(request.param)


@pytest.fixture(scope="session")
def reference(harnesses: Callable[..., Harness]) -> Harness:
    """The in-process, in-memory run every other transport must reproduce."""
    return harnesses("local")
