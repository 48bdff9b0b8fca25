"""A real store whose next writes are held until several callers have reached theirs: tests of
races make the calls they race overlap for sure, instead of hoping the scheduler does."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from compliance_core.kernel.uow import Store


class Overlapping:
    """``overlap(n, after=repo)``: the next ``n`` write sessions opened by a thread that has read
    ``repo`` since are held until all ``n`` are waiting. Other sessions (an HTTP request's
    admission bookkeeping, say) pass, so only the calls under test are lined up."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._barrier = threading.Barrier(1)
        self._held = 0
        self._after: object = None
        self._lock = threading.Lock()
        self._read = threading.local()
        self.url = store.url

    def overlap(self, n: int, after: object) -> None:
        self._barrier = threading.Barrier(n, timeout=30)
        self._after = after
        self._held = n

    @contextlib.contextmanager
    def session(self, *, write: bool) -> Iterator[Any]:
        if write and getattr(self._read, "seen", False):
            self._read.seen = False
            with self._lock:
                hold = self._held > 0
                self._held -= hold
            if hold:
                self._barrier.wait()
        with self._store.session(write=write) as session:
            yield session if write else _Watched(session, self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _Watched:
    def __init__(self, session: Any, store: Overlapping) -> None:
        self._session = session
        self._store = store

    def __getitem__(self, repo: Any) -> Any:
        if repo is self._store._after:
            self._store._read.seen = True
        return self._session[repo]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
