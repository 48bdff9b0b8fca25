"""The memory store's tables, journal and sessions."""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, TypeVar, cast

from compliance_core.areas import AREAS
from compliance_core.kernel.registry import Area, Repo
from compliance_core.kernel.uow import Store

from ..copy import CopyReport, copy_store
from ..progress import Progress
from ..registry import served
from .repositories import (
    MemoryApiKeys,
    MemoryDeliveries,
    MemoryIdempotency,
    MemoryOrganizations,
    MemoryOutbox,
    MemoryPeople,
    MemoryRateLimits,
    MemoryRecords,
)

__all__ = ["Tables", "MemoryStore", "MemorySession", "open_store", "REPOSITORIES", "EXTENSIONS"]

R = TypeVar("R")
_MISSING = object()

REPOSITORIES: dict[str, Callable[[Tables], Any]] = {
    "organizations": MemoryOrganizations,
    "api_keys": MemoryApiKeys,
    "idempotency": MemoryIdempotency,
    "rate_limits": MemoryRateLimits,
    "outbox": MemoryOutbox,
}
"""The kernel's repositories, by name."""

EXTENSIONS: tuple[type, ...] = (MemoryPeople, MemoryDeliveries)
"""The classes serving the ``Records`` tables that declare ``queries`` (see
``compliance_store.registry.served``); every other declared table is a ``MemoryRecords``."""


class Tables:
    """Named dicts whose every change inside a write is journalled for rollback."""

    def __init__(self) -> None:
        self.data: defaultdict[str, dict[Hashable, Any]] = defaultdict(dict)
        self.journal: list[tuple[str, Hashable, Any]] | None = None

    def get(self, table: str, key: Hashable) -> Any:
        return self.data[table].get(key)

    def values(self, table: str) -> list[Any]:
        return list(self.data[table].values())

    def set(self, table: str, key: Hashable, value: Any) -> None:
        self._log(table, key)
        self.data[table][key] = value

    def delete(self, table: str, key: Hashable) -> None:
        if key in self.data[table]:
            self._log(table, key)
            del self.data[table][key]

    def _log(self, table: str, key: Hashable) -> None:
        if self.journal is None:
            raise RuntimeError("memory store written outside a write session")
        self.journal.append((table, key, self.data[table].get(key, _MISSING)))

    def undo(self) -> None:
        for table, key, old in reversed(self.journal or []):
            if old is _MISSING:
                self.data[table].pop(key, None)
            else:
                self.data[table][key] = old


class MemorySession:
    """The repositories of one store, by name (built once per store: they hold no state)."""

    def __init__(self, repositories: dict[str, Any]) -> None:
        self._repositories = repositories

    def __getitem__(self, repo: Repo[R]) -> R:
        return cast(R, self._repositories[repo.name])


class MemoryStore:
    """
    :param areas: the areas whose record tables it keeps (default: every registered area)
    """

    url = "memory://"

    def __init__(self, areas: Sequence[Area[Any]] = AREAS) -> None:
        self._tables = Tables()
        repositories: dict[str, Any] = {name: make(self._tables) for name, make in REPOSITORIES.items()}
        repositories |= {name: cls(self._tables) for name, cls in served(areas, EXTENSIONS).items()}
        for area in areas:
            for records in area.records:
                repositories.setdefault(
                    records.name, MemoryRecords(self._tables, records.name, records.newest_first, records.listing)
                )
        self._session = MemorySession(repositories)
        self._lock = threading.RLock()
        self._closed = False

    @contextlib.contextmanager
    def session(self, *, write: bool) -> Iterator[MemorySession]:
        with self._lock:
            if not write:
                yield self._session
                return
            if self._tables.journal is not None:
                raise RuntimeError("nested write sessions are not supported")
            self._tables.journal = []
            try:
                yield self._session
            except BaseException:
                self._tables.undo()
                raise
            finally:
                self._tables.journal = None

    def health(self) -> dict[str, Any]:
        return {"backend": "memory", "status": "error" if self._closed else "ok"}

    def copy_to(self, target: Store, *, replace: bool = False, progress: Progress | None = None) -> CopyReport:
        """Copy every row this store holds into ``target`` (any store), in one read session here
        and one write session there, and verify it: ``compliance_store.copy.copy_store`` (``progress``: where it reports rows written)."""
        return copy_store(self, target, replace=replace, progress=progress)

    def close(self) -> None:
        self._closed = True


def open_store(url: str = "memory://", **_: Any) -> MemoryStore:
    return MemoryStore()
