"""Time as a port: core never reads the wall clock itself, so tests can move time at will."""

from __future__ import annotations

import datetime as dt
from typing import Protocol

import attrs

__all__ = ["Clock", "SystemClock", "FrozenClock", "utc"]


def utc(value: dt.datetime) -> dt.datetime:
    """Normalise to aware UTC; a naive value is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


class Clock(Protocol):
    def now(self) -> dt.datetime: ...


class SystemClock:
    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)


@attrs.define
class FrozenClock:
    """A clock that moves only when told: for tests and deterministic examples."""

    current: dt.datetime = attrs.field(factory=lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC), converter=utc)

    def now(self) -> dt.datetime:
        return self.current

    def advance(self, **delta: float) -> dt.datetime:
        self.current = self.current + dt.timedelta(**delta)
        return self.current
