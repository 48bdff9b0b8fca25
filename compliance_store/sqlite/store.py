"""The SQLite store: one file shared by any number of threads and server processes.

Each thread gets its own connection (a connection must not cross threads), the file runs in WAL
mode so readers never wait for the writer, and every write session is ``BEGIN IMMEDIATE`` so a
read-check-write sequence (idempotency keys, rate-limit buckets) holds the one write lock from its
first read: no other thread or process can interleave. Waiting writers queue on the busy timeout.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from types import TracebackType
from typing import Any

from sqlite_utils import Database

from compliance_core.errors import ValidationError

from .schema import MIGRATION_SET, migrations, missing_columns
from .session import Catalog, SqliteSession

__all__ = ["SqliteStore", "open_store", "parse_url"]

_SCHEME = "sqlite://"
_MEMORY = ":memory:"
_VERSION_SQL = "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = ?"


def parse_url(url: str) -> str:
    """The file path in ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` (or ``:memory:``)."""
    if not isinstance(url, str) or not url.startswith(_SCHEME):
        raise ValidationError.field("url", url, "must look like sqlite:///path/to/file.db")
    rest = url[len(_SCHEME):]
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
    """One thread's connection and the session reused for every transaction on it."""

    __slots__ = ("conn", "session", "pid", "thread")

    def __init__(self, conn: sqlite3.Connection, catalog: Catalog) -> None:
        self.conn = conn
        self.session = SqliteSession(conn, catalog)
        self.pid = os.getpid()
        self.thread = threading.current_thread()


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``/``ROLLBACK`` for a write; a read is a deferred
    transaction (one consistent snapshot for a page and its count) with ``query_only`` on, so a
    write through a read session fails instead of committing silently. A read inside an open
    transaction on the same thread joins it; a nested write is refused."""

    __slots__ = ("_bound", "_write", "_nested")

    def __init__(self, bound: _Bound, write: bool) -> None:
        self._bound = bound
        self._write = write
        self._nested = False

    def __enter__(self) -> SqliteSession:
        conn = self._bound.conn
        if conn.in_transaction:
            if self._write:
                raise RuntimeError("nested write sessions are not supported")
            self._nested = True
        elif self._write:
            conn.execute("BEGIN IMMEDIATE")
        else:
            conn.execute("BEGIN")
            conn.execute("PRAGMA query_only = 1")
        return self._bound.session

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._nested:
            return
        conn = self._bound.conn
        if not self._write:
            conn.execute("PRAGMA query_only = 0")
            if conn.in_transaction:
                conn.execute("COMMIT")
            return
        if exc_type is None:
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        elif conn.in_transaction:
            conn.execute("ROLLBACK")


class SqliteStore:
    """A store over one SQLite file.

    :param url: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``;
        ``sqlite:///:memory:`` uses a private temporary file removed by ``close()`` (an in-memory
        database cannot be shared by the per-thread connections)
    :param busy_timeout: seconds a writer waits for the write lock before failing

    >>> store = SqliteStore("sqlite:///:memory:")
    >>> with store.session(write=False) as session:
    ...     session.organizations.count()
    0
    >>> store.close()
    """

    def __init__(self, url: str, *, busy_timeout: float = 10.0) -> None:
        path = parse_url(url)
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) or busy_timeout <= 0:
            raise ValidationError.field("busy_timeout", busy_timeout, "must be a positive number of seconds")
        self.url = url
        self._temp_dir: str | None = None
        if path == _MEMORY:
            self._temp_dir = tempfile.mkdtemp(prefix="compliance-sqlite-")
            path = os.path.join(self._temp_dir, "compliance.db")
        self.path = path
        self._busy_timeout = float(busy_timeout)
        self._catalog = Catalog.build()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._bound: list[_Bound] = []
        self._closed = False
        try:
            self.schema_version = self._migrate()
        except BaseException:
            self._remove_temp_dir()
            raise

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            cached_statements=512,
        )
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -16000")
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
        opening a new file at once cannot both apply them."""
        conn, mode = self._open_file()
        try:
            if mode != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            db = Database(conn, execute_plugins=False)
            steps = migrations()
            if steps.pending(db):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    steps.apply(db)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            for mapper in self._catalog.mappers():
                missing = missing_columns(db, mapper.table, mapper.names)
                if missing:
                    raise RuntimeError(f"table {mapper.table} lacks columns {missing}: a migration is missing")
            return int(conn.execute(_VERSION_SQL, (MIGRATION_SET,)).fetchone()[0])
        finally:
            conn.close()

    def _thread(self) -> _Bound:
        bound: _Bound | None = getattr(self._local, "bound", None)
        if bound is None or bound.pid != os.getpid():
            bound = self._bind()
        return bound

    def _bind(self) -> _Bound:
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        bound = _Bound(self._connect(), self._catalog)
        with self._lock:
            # Connections of finished threads are closed here; ones inherited across fork() are
            # left alone (closing SQLite handles opened by the parent process is unsafe).
            alive = []
            for other in self._bound:
                if other.pid == bound.pid and not other.thread.is_alive():
                    other.conn.close()
                else:
                    alive.append(other)
            self._bound = [*alive, bound]
        self._local.bound = bound
        return bound

    def session(self, *, write: bool) -> _Transaction:
        if self._closed:
            raise RuntimeError(f"the store {self.url} is closed")
        return _Transaction(self._thread(), write)

    def health(self) -> dict[str, Any]:
        report: dict[str, Any] = {"backend": "sqlite", "path": self.path}
        try:
            with self.session(write=False):
                conn = self._thread().conn
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                version = conn.execute(_VERSION_SQL, (MIGRATION_SET,)).fetchone()[0]
        except (sqlite3.Error, RuntimeError) as error:
            return {**report, "status": "error", "detail": str(error)}
        return {**report, "status": "ok", "journalMode": mode, "schemaVersion": version}

    def close(self) -> None:
        """Close every connection this process opened (and remove a ``:memory:`` temp file)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pid = os.getpid()
            mine = [bound for bound in self._bound if bound.pid == pid]
            self._bound = [bound for bound in self._bound if bound.pid != pid]
        for bound in mine:
            try:
                bound.conn.close()
            except sqlite3.Error:
                pass
        self._remove_temp_dir()

    def _remove_temp_dir(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __repr__(self) -> str:
        return f"SqliteStore({self.url!r})"


def open_store(url: str, **options: Any) -> SqliteStore:
    """The ``compliance.stores`` entry point for ``sqlite://`` URLs.

    :param options: ``busy_timeout`` (seconds); any other option is a ``ValidationError``
    """
    unknown = sorted(set(options) - {"busy_timeout"})
    if unknown:
        raise ValidationError.field(unknown[0], options[unknown[0]], "is not an option of the sqlite store")
    return SqliteStore(url, **options)
