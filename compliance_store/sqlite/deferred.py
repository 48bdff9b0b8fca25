"""The write connection as a write session's repositories see it: the write lock is taken late and
held briefly.

Every write transaction holds the one write lock of the file, so the time it is held is the time
every other writer of every process waits. With the lock taken at the session's start, it was held
while Python built the rows (encoding the record, the outbox message's JSON, the audit entry) and,
with two threads in a process, while the holder waited for the GIL after each statement: a thread
busy in Python keeps the GIL for up to the 5 ms switch interval, so each statement of the holder
could stretch the lock by that much while the other processes' writers stood idle. That is why two
threads lost to one: the second thread's Python work landed inside the first one's lock.

So in a queued write (``SqliteStore.queued_session``, which the unit of work opens for every
service write) an INSERT is queued rather than run while the session has not yet read anything,
and the lock and ``BEGIN IMMEDIATE`` wait for the session's first other statement (a read, an update, a
delete: from then on the lock is held, so read-check-write sequences stay atomic) or for its
commit. A create then holds the lock only for ``BEGIN``, its queued INSERTs and ``COMMIT``.
Only INSERTs into tables whose one unique constraint is the primary key (rows keyed by a new id)
are queued: an INSERT that a unique column can refuse (a person's e-mail, a key's hash) runs at
once, so the repository that turns that refusal into a ``Conflict`` still sees it where it asked.
A plain ``session(write=True)`` begins at once and runs each statement when asked, as before (for
callers that count or time what one statement does).

After the commit, with the lock released, every ``CHECKPOINT_EVERY`` commits of a connection
copies the WAL back into the database (a passive checkpoint, which never waits for a writer);
SQLite's own automatic checkpoint, which runs inside the committing writer's lock, stays only as
a backstop at ``AUTOCHECKPOINT_PAGES``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from .locking import WriterLock

__all__ = ["DeferredWrite", "queueable_tables", "CHECKPOINT_EVERY", "AUTOCHECKPOINT_PAGES"]

CHECKPOINT_EVERY = 4
"""Commits of one connection between its passive checkpoints (chosen by measurement: see
docs/performance.md, "Issue 17: writes")."""

AUTOCHECKPOINT_PAGES = 8000
"""SQLite's automatic checkpoint (default 1,000 pages), kept for a WAL the passive checkpoints do
not keep small (e.g. a long reader pinning it)."""

_UNIQUE_INDEXES = "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND origin != 'pk'"


def queueable_tables(conn: sqlite3.Connection, tables: Iterable[str]) -> frozenset[str]:
    """The tables among ``tables`` whose only unique constraint is their primary key."""
    return frozenset(table for table in tables if conn.execute(_UNIQUE_INDEXES, (table,)).fetchone() is None)


class _Queued:
    """What ``execute`` answers for a queued INSERT: one row, as the INSERT will insert."""

    __slots__ = ()
    rowcount = 1

    def fetchone(self) -> None:
        return None

    def fetchall(self) -> list[Any]:
        return []


_QUEUED = _Queued()


class DeferredWrite:
    """One thread's write connection, between ``start()`` and ``commit()`` or ``rollback()``.

    :param conn: the thread's write connection (autocommit mode: this class says ``BEGIN``)
    :param writer: the process's write lock
    :param tables: the tables an INSERT into may be queued (``queueable_tables``)
    """

    __slots__ = ("_conn", "_writer", "_tables", "_queueable", "_pending", "_begun", "_commits", "open")

    def __init__(self, conn: sqlite3.Connection, writer: WriterLock, tables: frozenset[str]) -> None:
        self._conn = conn
        self._writer = writer
        self._tables = tables
        self._queueable: dict[str, bool] = {}
        self._pending: list[tuple[str, Any]] = []
        self._begun = False
        self._commits = 0
        self.open = False

    @property
    def in_transaction(self) -> bool:
        return self.open

    def start(self, *, queue: bool) -> None:
        """Open a write; without ``queue`` it begins at once (statements run when asked)."""
        self._pending.clear()
        self._begun = False
        self.open = True
        if not queue:
            try:
                self._begin()
            except BaseException:
                self.open = False
                raise

    def execute(self, sql: str, parameters: Any = ()) -> Any:
        if not self._begun:
            if self._queues(sql):
                self._pending.append((sql, parameters))
                return _QUEUED
            self._begin()
        return self._conn.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any]) -> Any:
        if not self._begun:
            self._begin()
        return self._conn.executemany(sql, parameters)

    def _queues(self, sql: str) -> bool:
        """Whether ``sql`` is an INSERT into a queueable table (remembered per INSERT text, of
        which a store has a fixed few; other statements are not remembered)."""
        if sql[:6].upper() != "INSERT":
            return False
        known = self._queueable.get(sql)
        if known is None:
            words = sql.split(None, 3)
            known = (
                len(words) > 2
                and words[0].upper() == "INSERT"
                and words[1].upper() == "INTO"
                and words[2].split("(")[0].strip('"') in self._tables
                and "RETURNING" not in sql.upper()
            )
            self._queueable[sql] = known
        return known

    def _begin(self) -> None:
        """Take the lock, begin, and run what was queued (a failure leaves the transaction open
        for ``rollback``)."""
        writer = self._writer
        writer.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            # Reload the schema before the queued statements, should another connection have
            # changed it (the statistics refresh drops and remakes sqlite_stat1): otherwise the
            # first write to a table whose triggers fill an FTS5 search index fails once with
            # "no such table" (SQLite 3.40; tests/contract/test_sqlite_queued_writes.py).
            self._conn.execute("SELECT 1 FROM sqlite_master LIMIT 0")
        except BaseException:
            writer.release()
            raise
        self._begun = True
        pending, self._pending = self._pending, []
        conn = self._conn
        for sql, parameters in pending:
            conn.execute(sql, parameters)

    def commit(self) -> None:
        """Run what is queued and commit; on any failure roll back and raise."""
        try:
            if not self._begun:
                if not self._pending:
                    return
                self._begin()
            self._conn.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise
        finally:
            self.open = False
        self._end()
        self._commits += 1
        if self._commits % CHECKPOINT_EVERY == 0:
            self._checkpoint()

    def rollback(self) -> None:
        self._pending.clear()
        self.open = False
        if self._begun:
            try:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
            finally:
                self._end()

    def _end(self) -> None:
        if self._begun:
            self._begun = False
            self._writer.release()

    def _checkpoint(self) -> None:
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.OperationalError:  # another connection is checkpointing: it does the work
            pass

    def __getattr__(self, name: str) -> Any:
        """Anything else a repository asks of the connection runs inside the transaction."""
        if not self._begun:
            self._begin()
        return getattr(self._conn, name)
