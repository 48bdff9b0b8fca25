"""The memory store's tables, journal and sessions."""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Hashable, Iterator

from .repositories import (
    MemoryApiKeys,
    MemoryIdempotency,
    MemoryOrganizations,
    MemoryOutbox,
    MemoryPeople,
    MemoryRateLimits,
    MemoryRecords,
)

__all__ = ["Tables", "MemoryStore", "MemorySession", "open_store"]

_MISSING = object()


class Tables:
    """Named dicts whose every change inside a write is journalled for rollback."""

    NAMES = ("organizations", "api_keys", "key_hashes", "usage", "vendors", "people", "emails",
             "findings", "idempotency", "buckets", "outbox", "revisions")

    def __init__(self) -> None:
        self.data: dict[str, dict[Hashable, Any]] = {name: {} for name in self.NAMES}
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
    def __init__(self, tables: Tables) -> None:
        self.organizations = MemoryOrganizations(tables)
        self.api_keys = MemoryApiKeys(tables)
        self.vendors = MemoryRecords(tables, "vendors")
        self.people = MemoryPeople(tables)
        self.findings = MemoryRecords(tables, "findings")
        self.idempotency = MemoryIdempotency(tables)
        self.rate_limits = MemoryRateLimits(tables)
        self.outbox = MemoryOutbox(tables)


class MemoryStore:
    url = "memory://"

    def __init__(self) -> None:
        self._tables = Tables()
        self._lock = threading.RLock()
        self._closed = False

    @contextlib.contextmanager
    def session(self, *, write: bool) -> Iterator[MemorySession]:
        with self._lock:
            if not write:
                yield MemorySession(self._tables)
                return
            if self._tables.journal is not None:
                raise RuntimeError("nested write sessions are not supported")
            self._tables.journal = []
            try:
                yield MemorySession(self._tables)
            except BaseException:
                self._tables.undo()
                raise
            finally:
                self._tables.journal = None

    def health(self) -> dict[str, Any]:
        return {"backend": "memory", "status": "error" if self._closed else "ok"}

    def close(self) -> None:
        self._closed = True


def open_store(url: str = "memory://", **_: Any) -> MemoryStore:
    return MemoryStore()
