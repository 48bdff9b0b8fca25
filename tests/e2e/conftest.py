"""Fixtures for the end-to-end suite (the machinery is in ``e2e_support``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="session")
def harnesses(
    tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., ServerProcess]
) -> Iterator[Callable[[str], Harness]]:
    """Built on first use, so `-k local` starts no server."""
    built: dict[str, Harness] = {}
    opened: list[Platform] = []

    def get(kind: str) -> Harness:
        if kind in built:
            return built[kind]
        if kind == "local":
            built[kind] = local_harness()
        elif kind == "wsgi":
            platform = Platform.open(f"sqlite:///{tmp_path_factory.mktemp('wsgi') / 'wsgi.db'}")
            app = create_app(platform)

            def wsgi_client(secret: str) -> Client:
                return Client(HTTPTransport("http://testserver", secret, transport=httpx.WSGITransport(app=app)))

            built[kind] = Harness(kind, platform, client_for=wsgi_client)
        else:
            db = tmp_path_factory.mktemp("server") / "e2e.db"
            server = serve(db, workers=2)
            platform = Platform.open(f"sqlite:///{db}")
            built[kind] = Harness(
                kind, platform, client_for=lambda secret: Client(HTTPTransport(server.url, secret)), server=server
            )
        opened.append(built[kind].platform)
        return built[kind]

    yield get
    for platform in opened:
        platform.close()


@pytest.fixture(params=["local", "wsgi", pytest.param("server", marks=pytest.mark.slow)])
def harness(request: pytest.FixtureRequest, harnesses: Callable[[str], Harness]) -> Harness:
    return harnesses(request.param)


@pytest.fixture(scope="session")
def reference(harnesses: Callable[[str], Harness]) -> Harness:
    """The in-process, in-memory run every other transport must reproduce."""
    return harnesses("local")
