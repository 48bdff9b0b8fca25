"""The PostgreSQL store: one database (one schema of it) shared by any number of server
processes on any number of machines, through a bounded ``psycopg_pool.ConnectionPool``.

Transactions
------------
Each unit of work is one PostgreSQL transaction on one pooled connection.

- **A write session** is ``BEGIN`` (READ COMMITTED) followed at once by
  ``pg_advisory_xact_lock(WRITERS, <schema>)``: writers of the store are serialised exactly as
  SQLite's are, whatever process or machine they run in, and the lock goes with the transaction
  (commit, rollback or a dropped connection all release it). Every read-check-write core does
  inside one write -- the idempotency record looked up and then stored, a rate-limit bucket read
  and leased from, an e-mail checked and then taken, the active Owner keys counted before one is
  revoked -- therefore runs with no other writer in between. Because each statement of a READ
  COMMITTED transaction sees everything committed before it started, and every other writer
  committed before this one got the lock, the first read already sees the latest state: no
  SERIALIZABLE retries and no ``SELECT ... FOR UPDATE`` on rows that may not exist yet are needed.
- **A read session** is ``BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY``: a page and its total
  (and a cached page's revision) come from one snapshot, a read never waits for a writer (MVCC),
  and a write through a read session fails.

The cost is write throughput: one writer at a time per schema, so writes are bounded by the
latency of one write transaction (a few round trips, roughly a millisecond on a local network)
rather than by the server's cores. Reads are unaffected and scale with the pool and the server.
That is the trade the platform already makes on SQLite, and it buys simple, provable atomicity
for every rule core checks; request admission batches its writes (rate-limit leases, usage
counts) so a busy server does not queue one write per request. A deployment that outgrows one
writer would shard by schema (one store per schema has its own lock).

A read session opened inside a write session (same thread) reads through the write transaction
and sees its writes so far; a read inside a read reuses the outer one; a write inside either is
refused (``RuntimeError``), as on SQLite.

Lost connections
----------------
A connection that breaks inside a session (the server restarts, a network drop, the backend is
terminated) raises core's ``InternalError`` -- a 500 the caller retries with the same
Idempotency-Key -- and never leaves half a write: the transaction was not committed, so the
server discards it, and the pool replaces the broken connection. A pooled connection found dead
before anything was sent (at ``BEGIN``) is replaced once, silently. A connection lost during
``COMMIT`` is also ``InternalError``; whether that one commit happened is then unknown, which is
exactly what a retry with the same Idempotency-Key resolves.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from compliance_core.areas import AREAS
from compliance_core.kernel.errors import InternalError, ValidationError
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store

from ..copy import CopyReport, copy_store
from ..progress import Progress
from . import locks
from .checks import schema_problems
from .codec import scalar
from .migrations import applied, migrate
from .session import Catalog, Connection, PostgresSession
from .tables import SUPPORT_TABLES, registry

__all__ = ["PostgresStore", "open_store", "parse_url", "mask_url"]

_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}\Z")
_OPTIONS = ("schema", "pool_min", "pool_max", "pool_timeout")
_LOST = (psycopg.OperationalError, psycopg.InterfaceError)
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
_VERSION = "SELECT count(*) FROM compliance_migrations"


def parse_url(url: str) -> tuple[str, str | None]:
    """``(conninfo, schema)`` from a ``postgresql://`` (or ``postgres://``) URL: the URL libpq
    gets, without the ``schema`` query parameter, and that parameter's value (None when absent).

    >>> parse_url("postgresql://app@db.internal:5432/compliance?schema=tenant_a&sslmode=require")
    ('postgresql://app@db.internal:5432/compliance?sslmode=require', 'tenant_a')
    """
    if not isinstance(url, str) or not url.startswith(_SCHEMES):
        raise ValidationError.field("url", url, "must look like postgresql://user@host:5432/database")
    base, _, query = url.partition("?")
    if "#" in query:
        raise ValidationError.field("url", mask_url(url), "a fragment (#) has no meaning here")
    kept, schemas = [], []
    for item in query.split("&") if query else []:
        name, _, value = item.partition("=")
        if name == "schema":
            schemas.append(value)
        elif item:
            kept.append(item)
    if len(schemas) > 1:
        raise ValidationError.field("url", mask_url(url), "names the schema more than once")
    conninfo = base + ("?" + "&".join(kept) if kept else "")
    try:
        conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as error:
        raise ValidationError.field("url", mask_url(url), f"is not a valid PostgreSQL URL: {error}") from None
    return conninfo, (schemas[0] if schemas else None)


def mask_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (for reports and messages).

    >>> mask_url("postgresql://app:s3cret@db:5432/c?password=other&sslmode=require")
    'postgresql://app:***@db:5432/c?password=***&sslmode=require'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        users, _, hosts = netloc.rpartition("@")
        if ":" in users:
            users = users.split(":", 1)[0] + ":***"
        netloc = f"{users}@{hosts}"
    query = "&".join(
        ("password=***" if item.split("=", 1)[0] == "password" else item) for item in parts.query.split("&")
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _check_options(schema: Any, pool_min: Any, pool_max: Any, pool_timeout: Any) -> None:
    if schema is not None and (not isinstance(schema, str) or not _SCHEMA.match(schema)):
        raise ValidationError.field("schema", schema, "must be a lower-case SQL name: letters, digits and _")
    for name, value in (("pool_min", pool_min), ("pool_max", pool_max)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000:
            raise ValidationError.field(name, value, "must be a whole number of connections")
    if pool_max < 1 or pool_max < pool_min:
        raise ValidationError.field("pool_max", pool_max, "must be at least 1 and at least pool_min")
    if isinstance(pool_timeout, bool) or not isinstance(pool_timeout, (int, float)) or pool_timeout <= 0:
        raise ValidationError.field("pool_timeout", pool_timeout, "must be a positive number of seconds")


class _Transaction:
    """One session: a pooled connection in one transaction, or (nested) the session already open
    on this thread."""

    __slots__ = ("_store", "_write", "_conn", "_session")

    def __init__(self, store: PostgresStore, write: bool) -> None:
        self._store = store
        self._write = write
        self._conn: Connection | None = None
        self._session: PostgresSession | None = None

    def __enter__(self) -> PostgresSession:
        store = self._store
        current: _Transaction | None = getattr(store._local, "current", None)
        if current is not None and current._session is not None:
            if self._write:
                raise RuntimeError(
                    "nested write sessions are not supported"
                    if current._write
                    else "a write session cannot start inside a read session"
                )
            return current._session
        conn = store._begin(self._write)
        self._conn = conn
        self._session = conn.write_session if self._write else conn.read_session
        store._local.current = self
        return self._session

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        conn = self._conn
        if conn is None:
            return
        self._conn = None
        self._session = None
        self._store._local.current = None
        self._store._end(conn, exc)


class PostgresStore:
    """A store in one PostgreSQL database (optionally one schema of it).

    :param url: ``postgresql://user:password@host:5432/database`` (``postgres://`` too; any libpq
        URI parameter, plus ``?schema=name``)
    :param schema: the schema to live in, created if missing and put first on every connection's
        ``search_path`` (default: the URL's ``?schema=``, else the connection's current schema);
        instances in different schemas of one database are fully separate
    :param pool_min: connections the pool keeps open
    :param pool_max: the most connections the pool opens; a session waits for a free one
    :param pool_timeout: seconds a session waits for a free connection before ``InternalError``
    :param areas: the areas whose ``Records`` tables it serves (default: every registered area);
        opening fails when the migrated schema lacks a table, column, index or trigger they need

    Opening migrates (see ``migrations``) and checks the schema on a connection of its own while
    the pool opens its first connections; ``close()`` closes the pool.

    >>> from compliance_core.areas.organizations import ORGANIZATIONS
    >>> store = PostgresStore("postgresql://postgres@127.0.0.1:5432/test", schema="example")  # doctest: +SKIP
    >>> with store.session(write=False) as session:  # doctest: +SKIP
    ...     session[ORGANIZATIONS].count()
    0
    >>> store.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        pool_min: int = 1,
        pool_max: int = 10,
        pool_timeout: float = 30.0,
        areas: Sequence[Area[Any]] = AREAS,
    ) -> None:
        conninfo, in_url = parse_url(url)
        if schema is not None and in_url is not None and schema != in_url:
            raise ValidationError.field("schema", schema, f"differs from the URL's schema {in_url}")
        schema = schema if schema is not None else in_url
        _check_options(schema, pool_min, pool_max, pool_timeout)
        self.url = url
        self.display_url = mask_url(url)
        self._catalog = Catalog(registry(areas))
        self._kwargs = _connection_kwargs(conninfo, schema)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._closed = False
        self._pid = os.getpid()
        self.pool_min, self.pool_max, self.pool_timeout = pool_min, pool_max, float(pool_timeout)
        # The pool connects in the background while this thread migrates and checks the schema
        # on a connection of its own (which fails fast, naming the cause, when the server is out
        # of reach).
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            conninfo,
            connection_class=Connection,
            kwargs=self._kwargs,
            min_size=pool_min,
            max_size=pool_max,
            timeout=self.pool_timeout,
            configure=self._configure,
            name=f"compliance:{schema or 'default'}",
            num_workers=2,
            open=False,
        )
        self._pool.open(wait=False)
        try:
            self.schema, self.schema_version = self._migrate(conninfo, schema)
        except BaseException:
            self._pool.close()
            raise
        self._begin_write = f"BEGIN; SELECT pg_advisory_xact_lock({locks.WRITERS}, {locks.schema_key(self.schema)})"

    def _connect(self, conninfo: str) -> Connection:
        try:
            return Connection.connect(conninfo, **self._kwargs)
        except psycopg.Error as error:
            raise ValidationError.field("url", self.display_url, f"cannot connect to PostgreSQL: {error}") from None

    def _migrate(self, conninfo: str, schema: str | None) -> tuple[str, int]:
        """Apply pending migrations and check the schema against the tables served; returns the
        schema in use and how many migrations it has."""
        conn = self._connect(conninfo)
        try:
            migrate(conn, schema)
            current = scalar(conn.cursor(), "SELECT current_schema()")
            problems = schema_problems(conn, self._catalog.tables)
            if problems:
                raise RuntimeError(
                    f"schema {current} of {self.display_url} does not hold what the code needs "
                    f"({'; '.join(problems)}): a migration is missing"
                )
            return str(current), len(applied(conn))
        finally:
            conn.close()

    def _configure(self, conn: Connection) -> None:
        """Runs once per new pooled connection."""
        conn.prepared_max = 512  # every table's statements, each prepared after a few runs
        conn.bind(self._catalog)

    def _begin(self, write: bool) -> Connection:
        """A pooled connection with its transaction begun (the writer lock taken for a write).
        A connection found broken before anything was sent is replaced once."""
        statement = self._begin_write if write else _BEGIN_READ
        for attempt in (1, 2):
            try:
                conn = self._pool.getconn()
            except PoolClosed:
                raise RuntimeError(f"the store {self.display_url} is closed") from None
            except PoolTimeout as error:
                raise InternalError(
                    f"no database connection became free within {self.pool_timeout:g} s", {"reason": "pool_timeout"}
                ) from error
            except _LOST as error:
                raise _lost(True) from error
            try:
                conn.bound_cursor.execute(statement, prepare=False)
                return conn
            except _LOST as error:
                broken = conn.broken
                _rollback(conn)  # a BEGIN cancelled (statement_timeout) on a live connection
                self._pool.putconn(conn)
                if attempt == 2 or not broken:
                    raise _lost(broken) from error
            except BaseException:
                _rollback(conn)
                self._pool.putconn(conn)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _end(self, conn: Connection, exc: BaseException | None) -> None:
        """Commit (no exception) or roll back, and give the connection back to the pool, which
        replaces it if it broke."""
        try:
            if exc is not None:
                _rollback(conn)
            elif conn.info.transaction_status == TransactionStatus.INERROR:
                _rollback(conn)
                raise InternalError(
                    "a statement of the transaction failed (its error was caught inside the session); "
                    "nothing was written",
                    {"reason": "transaction_aborted"},
                )
            else:
                try:
                    conn.bound_cursor.execute("COMMIT", prepare=False)
                except _LOST as error:
                    raise InternalError(
                        "the database connection was lost while committing; retry with the same Idempotency-Key",
                        {"reason": "connection_lost"},
                    ) from error
        finally:
            self._pool.putconn(conn)
        if isinstance(exc, _LOST):
            raise _lost(conn.broken) from exc

    def session(self, *, write: bool) -> _Transaction:
        if self._closed:
            raise RuntimeError(f"the store {self.display_url} is closed")
        if os.getpid() != self._pid:
            raise RuntimeError("this PostgreSQL store was opened in another process: open one in each process")
        return _Transaction(self, write)

    def health(self) -> dict[str, Any]:
        report: dict[str, Any] = {"backend": "postgresql", "url": self.display_url, "schema": self.schema}
        if self._closed or os.getpid() != self._pid:
            return {**report, "status": "error", "detail": f"the store {self.display_url} is closed"}
        try:
            with self._pool.connection(timeout=min(self.pool_timeout, 5.0)) as conn:
                version = scalar(conn.cursor(), _VERSION)
                server = conn.info.server_version
        except (psycopg.Error, PoolTimeout, PoolClosed) as error:
            return {**report, "status": "error", "detail": str(error).strip()}
        stats = self._pool.get_stats()
        return {
            **report,
            "status": "ok",
            "schemaVersion": int(version),
            "serverVersion": f"{server // 10000}.{server % 10000}",
            "pool": {
                "min": self.pool_min,
                "max": self.pool_max,
                "size": stats.get("pool_size", 0),
                "idle": stats.get("pool_available", 0),
            },
        }

    def after_bulk_load(self) -> None:
        """After ``compliance migrate-store`` filled this schema: ``VACUUM (ANALYZE)`` every
        table, so counts run as index-only scans (they need the visibility map) with statistics
        from the first request rather than after autovacuum's next round. VACUUM cannot run in a
        transaction: each runs alone on a pooled (autocommit) connection."""
        names = [*(table.table for table in self._catalog.tables), *SUPPORT_TABLES]
        with self._pool.connection(timeout=self.pool_timeout) as conn:
            for name in dict.fromkeys(names):
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(name)))

    def copy_to(self, target: Store, *, replace: bool = False, progress: Progress | None = None) -> CopyReport:
        """Copy every row this store holds into ``target`` (any store), from one read session here,
        in chunked transactions there, and verify it: ``compliance_store.copy.copy_store`` (``progress``: where it reports rows written)."""
        return copy_store(self, target, replace=replace, progress=progress)

    def close(self) -> None:
        """Close the pool and its connections (in a forked child: forget the parent's pool
        without touching the parent's connections)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if os.getpid() == self._pid:
            self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.display_url!r}, schema={self.schema!r})"


def _connection_kwargs(conninfo: str, schema: str | None) -> dict[str, Any]:
    """Connection parameters on top of the URL: autocommit (the store issues BEGIN and COMMIT
    itself), UTC (timestamps come back UTC-aware) and the schema first on the search path."""
    given = conninfo_to_dict(conninfo)
    settings = "-c TimeZone=UTC" + (f" -c search_path={schema}" if schema is not None else "")
    options = f"{given['options']} {settings}" if given.get("options") else settings
    kwargs: dict[str, Any] = {"autocommit": True, "options": options}
    if "application_name" not in given:
        kwargs["application_name"] = "compliance"
    if "connect_timeout" not in given:
        kwargs["connect_timeout"] = 10
    return kwargs


def _rollback(conn: Connection) -> None:
    """Roll back if the connection still can; a broken one is discarded by the pool, and the
    server drops its transaction with it."""
    if conn.broken or conn.closed:
        return
    try:
        conn.bound_cursor.execute("ROLLBACK", prepare=False)
    except psycopg.Error:
        pass


def _lost(broken: bool) -> InternalError:
    """What a session that failed on the connection (or was aborted by the server: a deadlock, a
    cancelled statement) raises: nothing was written, and the request can be retried."""
    if broken:
        return InternalError(
            "the database connection was lost; nothing was written and the request can be retried",
            {"reason": "connection_lost"},
        )
    return InternalError(
        "the database aborted the transaction; nothing was written and the request can be retried",
        {"reason": "transaction_aborted"},
    )


def open_store(url: str, **options: Any) -> PostgresStore:
    """The ``compliance.stores`` entry point for ``postgresql://`` (and ``postgres://``) URLs.

    :param options: ``schema``, ``pool_min``, ``pool_max``, ``pool_timeout``; any other option is
        a ``ValidationError``
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValidationError.field(unknown[0], options[unknown[0]], "is not an option of the postgresql store")
    return PostgresStore(url, **options)
