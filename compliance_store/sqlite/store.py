"""The SQLite store: one file shared by any number of threads and server processes.

Each thread gets two connections (a connection must not cross threads): one for write sessions
and one opened read-only for read sessions, so a write through a read session fails ("attempt to
write a readonly database") without toggling ``PRAGMA query_only`` around every read. The file
runs in WAL mode so readers never wait for the writer, and every write session is
``BEGIN IMMEDIATE`` so a read-check-write sequence (idempotency keys, rate-limit buckets) holds
the one write lock from its first read: no other thread or process can interleave. Writers queue
for that lock on a ``WriterLock`` (see ``locking``) rather than in SQLite's sleeping busy handler.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from sqlite_utils import Database

from compliance_core.areas import AREAS
from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store

from ..copy import CopyReport, copy_store
from ..progress import Progress
from .checks import schema_problems
from .deferred import AUTOCHECKPOINT_PAGES, DeferredWrite, queueable_tables
from .listing import register_fold
from .locking import WriterLock
from .migrations import MIGRATION_SET, migrations
from .search import unsafe_characters
from .session import Catalog, SqliteSession
from .statistics import analyze, has_statistics, stale_tables
from .tables import registry

__all__ = ["SqliteStore", "open_store", "parse_url", "CACHE_KIB"]

_SCHEME = "sqlite://"
_MEMORY = ":memory:"
_VERSION_SQL = "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = ?"


CACHE_KIB = 16_000
"""Each connection's page cache, whatever the file's size; and no memory map.

Each connection (two per server thread) has its own page cache; a page it misses is copied in
from the operating system's cache by a ``read()``. A memory map (``mmap_size``) would read pages
in place instead, and did win alone (``python -m bench.sqlite_cache --pages-only`` at 1M vendors,
4 connections taking turns: 0.47 ms mean against 0.71), but not serving: under the scale bench's
load at 1M vendors (2.3 GiB) the mapped workers took about 30 page faults a request, against
under 2 without the map, and their slowest requests stalled for tens of milliseconds (p99 38-56
ms against 22-26 ms with a 16 or 64 MiB cache and no map, p99 at 10k 22-31 ms either way; see
docs/performance.md). A larger cache measured no better than 16 MiB, and costs per connection."""


def parse_url(url: str) -> str:
    """The file path in ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` (or ``:memory:``)."""
    if not isinstance(url, str) or not url.startswith(_SCHEME):
        raise ValidationError.field("url", url, "must look like sqlite:///path/to/file.db")
    rest = url[len(_SCHEME) :]
    if not rest.startswith("/"):
        raise ValidationError.field(
            "url", url, "a sqlite URL has no host: use sqlite:///relative.db or sqlite:////absolute.db"
        )
    path = rest[1:]
    if not path:
        raise ValidationError.field("url", url, "names no database file")
    if "?" in path or "#" in path:
        raise ValidationError.field("url", url, "query parameters are not supported; pass options instead")
    return path


class _Bound:
    """One thread's two connections, the session reused for every transaction on each, and the
    write lock of the thread's process (taken by the write connection's ``DeferredWrite``)."""

    __slots__ = ("conn", "write", "session", "reader", "read_session", "pid", "thread")

    def __init__(
        self,
        conn: sqlite3.Connection,
        reader: sqlite3.Connection,
        catalog: Catalog,
        writer: WriterLock,
        queueable: frozenset[str],
    ) -> None:
        self.conn = conn
        self.write = DeferredWrite(conn, writer, queueable)
        self.session = SqliteSession(self.write, catalog)
        self.reader = reader
        self.read_session = SqliteSession(reader, catalog)
        self.pid = os.getpid()
        self.thread = threading.current_thread()

    def close(self) -> None:
        for conn in (self.conn, self.reader):
            try:
                conn.close()
            except sqlite3.Error:
                pass


class _Transaction:
    """A write is a ``DeferredWrite`` on the write connection: ``BEGIN IMMEDIATE`` ...
    ``COMMIT``/``ROLLBACK`` inside the process's write lock, begun at once or, for a queued
    write, at the session's first read or at its commit (see ``deferred``). A read is a deferred transaction on the read-only
    connection: one consistent snapshot for a page and its count. A read inside an open write on
    the same thread joins the write (and sees its changes); a read inside a read joins it too; a
    write nested in either is refused."""

    __slots__ = ("_bound", "_write", "_queue", "_conn")

    def __init__(self, bound: _Bound, write: bool, *, queue: bool = False) -> None:
        self._bound = bound
        self._write = write
        self._queue = queue
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> SqliteSession:
        bound = self._bound
        if self._write:
            if bound.write.open or bound.reader.in_transaction:
                raise RuntimeError("nested write sessions are not supported")
            bound.write.start(queue=self._queue)
            self._conn = bound.conn
            return bound.session
        if bound.write.open:
            return bound.session
        if bound.reader.in_transaction:
            return bound.read_session
        bound.reader.execute("BEGIN")
        self._conn = bound.reader
        return bound.read_session

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        conn = self._conn
        if conn is None:
            return
        self._conn = None
        if not self._write:
            if conn.in_transaction:
                conn.execute("COMMIT")
            return
        if exc_type is None:
            self._bound.write.commit()
        else:
            self._bound.write.rollback()


class SqliteStore:
    """A store over one SQLite file.

    :param url: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``;
        ``sqlite:///:memory:`` uses a private temporary file removed by ``close()`` (an in-memory
        database cannot be shared by the per-thread connections)
    :param busy_timeout: seconds a writer waits, before failing as "database is locked", for
        another thread of this process or for SQLite's lock held by a writer that does not use
        this store's lock file (the wait for this store's writers in other processes is unbounded:
        it ends when they commit, roll back or exit)
    :param areas: the areas whose ``Records`` tables it serves (default: every registered area);
        opening fails when the migrated file lacks a table, column, index or trigger they need

    >>> from compliance_core.areas.organizations import ORGANIZATIONS
    >>> store = SqliteStore("sqlite:///:memory:")
    >>> with store.session(write=False) as session:
    ...     session[ORGANIZATIONS].count()
    0
    >>> store.close()
    """

    def __init__(self, url: str, *, busy_timeout: float = 10.0, areas: Sequence[Area[Any]] = AREAS) -> None:
        path = parse_url(url)
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) or busy_timeout <= 0:
            raise ValidationError.field("busy_timeout", busy_timeout, "must be a positive number of seconds")
        self.url = url
        self._catalog = Catalog(registry(areas))
        self._temp_dir: str | None = None
        if path == _MEMORY:
            self._temp_dir = tempfile.mkdtemp(prefix="compliance-sqlite-")
            path = os.path.join(self._temp_dir, "compliance.db")
        # Absolute, so connections opened later by new threads reach the same file even if the
        # working directory changes.
        self.path = os.path.abspath(path)
        self._reader_uri = f"{pathlib.Path(self.path).as_uri()}?mode=ro"
        self._busy_timeout = float(busy_timeout)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._bound: list[_Bound] = []
        self._writer: WriterLock | None = None
        self._queueable: frozenset[str] = frozenset()
        self._closed = False
        try:
            self.schema_version = self._migrate()
            if any(table.lists is not None and table.lists.searchable for table in self._catalog.tables):
                unsafe_characters()  # read once per process, here rather than by the first search
        except BaseException:
            if self._writer is not None:
                self._writer.close()
            self._remove_temp_dir()
            raise

    def _connect(self, *, read_only: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._reader_uri if read_only else self.path,
            uri=read_only,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            cached_statements=512,
        )
        if not read_only:
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.execute("PRAGMA mmap_size = 0")
        register_fold(conn)
        return conn

    def _open_file(self) -> tuple[sqlite3.Connection, str]:
        """A first connection and the file's journal mode; a missing directory or a file that is
        not a database is the caller's bad URL."""
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            return conn, conn.execute("PRAGMA journal_mode").fetchone()[0]
        except sqlite3.DatabaseError as error:
            if conn is not None:
                conn.close()
            raise ValidationError.field("url", self.url, f"cannot open the SQLite database: {error}") from None

    def _migrate(self) -> int:
        """Set WAL mode and apply pending migrations, holding the write lock so two processes
        opening a new file at once cannot both apply them; then check the file against the
        tables served."""
        conn, mode = self._open_file()
        try:
            writer = self._writer_lock()
            db = Database(conn, execute_plugins=False)
            steps = migrations()
            migrated = bool(steps.pending(db))
            if mode != "wal" or migrated:
                # Inside the writer lock: a switch to WAL racing another opener's migration can
                # meet SQLITE_BUSY without the busy handler waiting (SQLite's deadlock rule).
                writer.acquire()
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    if steps.pending(db):
                        conn.execute("BEGIN IMMEDIATE")
                        steps.apply(db)
                        conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                finally:
                    writer.release()
            problems = schema_problems(conn, self._catalog.tables)
            if problems:
                raise RuntimeError(
                    f"{self.path} does not hold what the code needs ({'; '.join(problems)}): a migration is missing"
                )
            if migrated or not has_statistics(conn):  # the growth checks are refresh_statistics'
                _analyze(writer, conn)
            self._queueable = queueable_tables(conn, [table.table for table in self._catalog.tables])
            return int(conn.execute(_VERSION_SQL, (MIGRATION_SET,)).fetchone()[0])
        finally:
            conn.close()

    def refresh_statistics(self) -> list[str]:
        """Analyse the file again when a table's row count has moved more than
        ``statistics.STALE_RATIO`` times since its statistics were taken (see
        ``compliance_store.sqlite.statistics``); returns those tables (empty: nothing to do).
        The server's lead worker calls it every purge period, ``compliance maintenance`` on
        demand; it waits for the write lock like any writer."""
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        with self._lock:
            writer = self._writer_lock()
        conn = self._connect()
        try:
            stale = stale_tables(conn, self._catalog.tables)
            if stale:
                _analyze(writer, conn)
            return stale
        finally:
            conn.close()

    def _thread(self) -> _Bound:
        bound: _Bound | None = getattr(self._local, "bound", None)
        if bound is None or bound.pid != os.getpid():
            bound = self._bind()
        return bound

    def _writer_lock(self) -> WriterLock:
        """This process's write lock, opened again in a forked child (call with ``_lock`` held,
        or before other threads can see the store)."""
        writer = self._writer
        if writer is None or writer.pid != os.getpid():
            if writer is not None:
                writer.close()
            try:
                writer = WriterLock(self.path, self._busy_timeout)
            except OSError as error:
                raise ValidationError.field("url", self.url, f"cannot create the writer lock file: {error}") from None
            self._writer = writer
        return writer

    def _bind(self) -> _Bound:
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        conn = self._connect()
        try:
            reader = self._connect(read_only=True)
        except BaseException:
            conn.close()
            raise
        with self._lock:
            bound = _Bound(conn, reader, self._catalog, self._writer_lock(), self._queueable)
            # Connections of finished threads are closed here; ones inherited across fork() are
            # left alone (closing SQLite handles opened by the parent process is unsafe).
            alive = []
            for other in self._bound:
                if other.pid == bound.pid and not other.thread.is_alive():
                    other.close()
                else:
                    alive.append(other)
            self._bound = [*alive, bound]
        self._local.bound = bound
        return bound

    def session(self, *, write: bool) -> _Transaction:
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        return _Transaction(self._thread(), write)

    def queued_session(self) -> _Transaction:
        """A write session whose INSERTs of new rows wait for its first read or its commit, so
        the write lock is held only for the SQL (see ``deferred``); the unit of work's."""
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        return _Transaction(self._thread(), True, queue=True)

    def health(self) -> dict[str, Any]:
        report: dict[str, Any] = {"backend": "sqlite", "path": self.path}
        try:
            with self.session(write=False):
                conn = self._thread().reader
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                version = conn.execute(_VERSION_SQL, (MIGRATION_SET,)).fetchone()[0]
        except (sqlite3.Error, RuntimeError) as error:
            return {**report, "status": "error", "detail": str(error)}
        return {**report, "status": "ok", "journalMode": mode, "schemaVersion": version}

    def after_bulk_load(self) -> None:
        """After ``compliance migrate-store`` filled this file: refresh the statistics now."""
        self.refresh_statistics()

    def copy_to(self, target: Store, *, replace: bool = False, progress: Progress | None = None) -> CopyReport:
        """Copy every row this store holds into ``target`` (any store), from one read session here,
        in chunked transactions there, and verify it: ``compliance_store.copy.copy_store`` (``progress``: where it reports rows written)."""
        return copy_store(self, target, replace=replace, progress=progress)

    def close(self) -> None:
        """Close every connection this process opened (and remove a ``:memory:`` temp file)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pid = os.getpid()
            mine = [bound for bound in self._bound if bound.pid == pid]
            self._bound = [bound for bound in self._bound if bound.pid != pid]
            writer, self._writer = self._writer, None
        for bound in mine:
            bound.close()
        if writer is not None:
            writer.close()
        self._remove_temp_dir()

    def _remove_temp_dir(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __repr__(self) -> str:
        return f"SqliteStore({self.url!r})"


def _analyze(writer: WriterLock, conn: sqlite3.Connection) -> None:
    writer.acquire()
    try:
        analyze(conn)
    finally:
        writer.release()


def open_store(url: str, **options: Any) -> SqliteStore:
    """The ``compliance.stores`` entry point for ``sqlite://`` URLs.

    :param options: ``busy_timeout`` (seconds); any other option is a ``ValidationError``
    """
    unknown = sorted(set(options) - {"busy_timeout"})
    if unknown:
        raise ValidationError.field(unknown[0], options[unknown[0]], "is not an option of the sqlite store")
    return SqliteStore(url, **options)
