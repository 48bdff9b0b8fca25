"""Fixtures shared by every suite: a PostgreSQL schema of its own for this test run.

The server is ``$COMPLIANCE_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``).
Each test run (each xdist worker) creates one schema ``t_<random>``, migrates it once, empties
its tables before every test that asks for ``postgres_url`` and drops it at the end: emptying
about a dozen small tables costs under a millisecond where migrating costs far more.

Without a reachable server the PostgreSQL tests are skipped, saying why, unless
``COMPLIANCE_REQUIRE_POSTGRES=1`` (as in CI), which makes them fail instead.
"""

from __future__ import annotations

import os
import pathlib
import secrets
import shutil
from collections.abc import Callable, Iterator
from typing import NoReturn

import attrs
import psycopg
import pytest
from psycopg import sql

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
_KEPT = ("compliance_migrations",)
"""Tables a test run keeps between tests (the migrations stay applied)."""
_COUNTERS = ("list_counts", "list_revisions", "list_blocks", "list_facet_blocks")


@attrs.frozen
class PostgresSchema:
    """The run's schema on the server at ``server_url``."""

    server_url: str
    name: str

    @property
    def url(self) -> str:
        """The store URL for this schema."""
        separator = "&" if "?" in self.server_url else "?"
        return f"{self.server_url}{separator}schema={self.name}"


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("COMPLIANCE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (COMPLIANCE_REQUIRE_POSTGRES=1) but {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL tests skipped: {reason} (set COMPLIANCE_POSTGRES_URL to a reachable server)")


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of a reachable PostgreSQL server (without a schema), or the test is skipped."""
    url = os.environ.get("COMPLIANCE_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    from compliance_store.postgres import mask_url

    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error as error:
        _unavailable(f"no server is reachable at {mask_url(url)} ({str(error).strip()})")
    return url


@pytest.fixture(scope="session")
def postgres_schema(postgres_server: str) -> Iterator[PostgresSchema]:
    """This run's migrated schema, dropped when the run ends."""
    from compliance_store.postgres import PostgresStore

    schema = PostgresSchema(postgres_server, f"t_{secrets.token_hex(6)}")
    PostgresStore(schema.url, pool_min=0).close()  # creates and migrates it
    try:
        yield schema
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema.name)))


@pytest.fixture(scope="session")
def _postgres_emptier(postgres_schema: PostgresSchema) -> Iterator[psycopg.Connection]:
    with psycopg.connect(postgres_schema.server_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def postgres_url(postgres_schema: PostgresSchema, _postgres_emptier: psycopg.Connection) -> str:
    """The URL of this run's schema, every table emptied (the migrations stay applied)."""
    conn = _postgres_emptier
    found = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (postgres_schema.name,)).fetchall()
    # The counters last: deleting an organization-scoped row fires triggers that write them.
    tables = sorted((name for (name,) in found if name not in _KEPT), key=lambda name: (name in _COUNTERS, name))
    # DELETE, not TRUNCATE: on tables this small it takes well under a millisecond where
    # TRUNCATE (new files for every table and index) takes some 25.
    conn.execute(
        sql.SQL("; ").join(sql.SQL("DELETE FROM {}").format(sql.Identifier(postgres_schema.name, t)) for t in tables)
    )
    return postgres_schema.url


@pytest.fixture(scope="session")
def new_postgres_schema(postgres_server: str) -> Iterator[Callable[[], str]]:
    """Makes more migrated schemas for suites that keep one platform for a whole module (the
    per-test ``postgres_url`` is emptied before every test); all are dropped when the run ends."""
    from compliance_store.postgres import PostgresStore

    made: list[PostgresSchema] = []

    def make() -> str:
        schema = PostgresSchema(postgres_server, f"t_{secrets.token_hex(6)}")
        made.append(schema)
        PostgresStore(schema.url, pool_min=0).close()
        return schema.url

    yield make
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        for schema in made:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema.name)))


@pytest.fixture(scope="session")
def _migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """An empty SQLite file, migrated once per test run (per xdist worker)."""
    from compliance_store.sqlite import SqliteStore

    path = tmp_path_factory.mktemp("migrated") / "migrated.db"
    SqliteStore(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def migrated_sqlite(_migrated_sqlite: pathlib.Path) -> Callable[[pathlib.Path], str]:
    """``migrated_sqlite(path)`` puts a copy of the run's migrated empty file at ``path`` and
    returns its store URL: a test's own database in a millisecond, where migrating a new file
    takes most of a second (the suite opens a SQLite store in well over a thousand tests). Opening
    the copy runs the store's start-up check as usual; the migrations themselves are tested on
    files of their own (tests/contract/test_migrations.py)."""

    def copy(path: pathlib.Path) -> str:
        shutil.copyfile(_migrated_sqlite, path)
        return f"sqlite:///{path}"

    return copy


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the test files so that the ones that take longest start first: a file with a test
    marked ``long`` (the fuzz: minutes in one test), then files starting real servers (``slow``),
    then the rest, each group's files with the most tests first. Under ``--dist loadfile
    --no-loadscope-reorder`` the workers take files in this order, so the longest runs overlap
    the many short files instead of ending the run on one worker while the others idle (xdist's
    own reordering, by test count alone, sent the one-test fuzz last). Tests inside a file keep
    their order."""
    rank: dict[str, int] = {}
    count: dict[str, int] = {}
    for item in items:
        path = _file_of(item)
        weight = 0 if item.get_closest_marker("long") else 1 if item.get_closest_marker("slow") else 2
        rank[path] = min(rank.get(path, 2), weight)
        count[path] = count.get(path, 0) + 1
    first_seen = {path: n for n, path in enumerate(dict.fromkeys(_file_of(item) for item in items))}
    items.sort(key=lambda item: (rank[_file_of(item)], -count[_file_of(item)], first_seen[_file_of(item)]))
