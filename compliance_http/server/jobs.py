"""The background work of a server process: the declared chores and the planner statistics (in
the lead worker, or in ``compliance worker``), and the key usage flush (in every worker).

Chores come from their declarations (``Platform.chores``: the kernel's purges and each area's
``Area(chores=...)``), each on its own ``Chore.every``, so an area's new chore runs here without
an edit of the server.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from compliance_core import Platform
from compliance_core.access import LEASE_SECONDS
from compliance_core.kernel.registry import Chore

from ..middleware import AccessLog

__all__ = ["STATISTICS_EVERY", "RefreshesStatistics", "RunsChores", "flushing", "refresh_statistics", "running_chores"]

log = logging.getLogger(__name__)

STATISTICS_EVERY = 600.0
"""Seconds between two looks at whether the store's planner statistics need refreshing
(``RefreshesStatistics``: SQLite); the first is made at start-up, after the chores' first run."""


class RunsChores(Protocol):
    """What ``running_chores`` needs of a platform."""

    @property
    def chores(self) -> tuple[Chore[Any], ...]: ...

    @property
    def store(self) -> object: ...

    def run_chore(self, chore: Chore[Any], now: dt.datetime | None = None) -> int: ...


@runtime_checkable
class RefreshesStatistics(Protocol):
    """A store whose query planner needs statistics taken by the application (SQLite: see
    ``compliance_store.sqlite.statistics``; PostgreSQL's autovacuum analyses by itself)."""

    def refresh_statistics(self) -> list[str]: ...


def refresh_statistics(store: object) -> list[str] | None:
    """The tables ``store`` analysed again (None: the store keeps no statistics of its own)."""
    return store.refresh_statistics() if isinstance(store, RefreshesStatistics) else None


@contextlib.contextmanager
def running_chores(platform: RunsChores, *, statistics_every: float = STATISTICS_EVERY) -> Iterator[threading.Thread]:
    """Run every chore of ``platform`` now and then each on its own schedule (``Chore.every``),
    and refresh the store's planner statistics now and every ``statistics_every`` seconds, in one
    thread, while the block runs. A failing chore is logged with its traceback and tried again at
    its next time, and the others still run. The server runs this in its lead worker only: every
    worker shares the store, and every chore is harmless run twice, so one runner per server is
    enough (a second, ``compliance worker``, does no harm).

    >>> with running_chores(platform):  # doctest: +SKIP
    ...     server.run()
    """
    jobs: list[tuple[float, Callable[[], None]]] = [
        (chore.every.total_seconds(), _chore_job(platform, chore)) for chore in platform.chores
    ]
    jobs.append((statistics_every, _statistics_job(platform.store, statistics_every)))
    stop = threading.Event()

    def run() -> None:
        due = [0.0] * len(jobs)
        while True:
            for index, (every, job) in enumerate(jobs):
                if due[index] <= time.monotonic():
                    job()
                    due[index] = time.monotonic() + every
            if stop.wait(max(0.0, min(due) - time.monotonic())):
                return

    runner = threading.Thread(target=run, name="chores", daemon=True)
    runner.start()
    try:
        yield runner
    finally:
        stop.set()
        runner.join()


def _chore_job(platform: RunsChores, chore: Chore[Any]) -> Callable[[], None]:
    def job() -> None:
        try:
            count = platform.run_chore(chore)
        except Exception:  # a busy or failing store must not kill the worker
            log.exception("could not %s; retrying in %.0f s", chore.name, chore.every.total_seconds())
        else:
            if count or chore.log_zero:
                log.info(chore.done, count)

    return job


def _statistics_job(store: object, every: float) -> Callable[[], None]:
    def job() -> None:
        try:
            analysed = refresh_statistics(store)
        except Exception:
            log.exception("could not refresh the planner statistics; retrying in %.0f s", every)
        else:
            if analysed:
                log.info("refreshed the planner statistics (tables grown or shrunk: %s)", ", ".join(analysed))

    return job


@contextlib.contextmanager
def flushing(platform: Platform, access_log: AccessLog | None = None, every: float = LEASE_SECONDS) -> Iterator[None]:
    """Write the key usage this worker counted (and give back unspent rate-limit tokens) every
    ``every`` seconds, so a key's usage read through another worker is at most that stale; closing
    the platform writes the rest."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            if access_log is not None:
                access_log.flush()
            try:
                platform.access.flush()
            except Exception:  # a busy or failing store must not kill the worker; retry next time
                log.exception("could not write key usage")

    flusher = threading.Thread(target=run, name="usage-flush", daemon=True)
    flusher.start()
    try:
        yield
    finally:
        stop.set()
        flusher.join()
        if access_log is not None:
            access_log.flush()
