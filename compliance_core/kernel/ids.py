"""Identifier generation as a port.

Ids are ``<prefix>_<14 hex digits of unix microseconds><12 hex random>``: they sort by creation
time, and within one generator they strictly increase, so records created in the same instant
(a bulk call) still list in the order they were made. Tests inject ``SequentialIds`` for
readable, repeatable ids.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from typing import Protocol

import attrs

__all__ = ["IdGenerator", "RandomIds", "SequentialIds"]


class IdGenerator(Protocol):
    def new(self, prefix: str) -> str: ...


class RandomIds:
    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def new(self, prefix: str) -> str:
        with self._lock:
            self._last = max(time.time_ns() // 1000, self._last + 1)
            stamp = self._last
        return f"{prefix}_{stamp:014x}{secrets.token_hex(6)}"


@attrs.define
class SequentialIds:
    start: int = 1
    _counter: itertools.count[int] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._counter = itertools.count(self.start)

    def new(self, prefix: str) -> str:
        return f"{prefix}_{next(self._counter):08d}"
