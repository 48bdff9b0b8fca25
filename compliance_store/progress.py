"""Progress of long bulk work (a store copy, an import) on a terminal, and silence elsewhere.

A bar is drawn only when the stream is a terminal: a log file or a pipe read by another program
gets nothing but what the command prints when done. One line, redrawn in place with a carriage
return at most ten times a second, so drawing costs nothing next to the writes it reports.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

__all__ = ["Progress", "TerminalBar", "Silent", "progress_on"]


class Progress(Protocol):
    """What bulk work reports as it goes."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, done: int) -> None: ...

    def finish(self) -> None: ...


class Silent:
    """Progress nobody watches."""

    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass

    def finish(self) -> None:
        pass


class TerminalBar:
    """``label [#########.........]  45,000/100,000 rows  12,345/s`` on one line of ``stream``."""

    WIDTH = 30

    def __init__(self, stream: TextIO, *, interval: float = 0.1) -> None:
        self._stream = stream
        self._interval = interval
        self._label = ""
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._drawn = 0.0

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, max(0, total), 0
        self._started = time.monotonic()
        self._drawn = 0.0
        self._draw()

    def advance(self, done: int) -> None:
        self._done += done
        now = time.monotonic()
        if now - self._drawn >= self._interval:
            self._draw(now)

    def finish(self) -> None:
        self._draw()
        self._stream.write("\n")
        self._stream.flush()

    def _draw(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._drawn = now
        share = self._done / self._total if self._total else 1.0
        filled = min(self.WIDTH, int(share * self.WIDTH))
        rate = self._done / (now - self._started) if now > self._started else 0.0
        self._stream.write(
            f"\r{self._label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
            f"{self._done:,}/{self._total:,} rows  {rate:,.0f}/s"
        )
        self._stream.flush()


def progress_on(stream: TextIO | None = None) -> Progress:
    """A bar on ``stream`` (default: standard error) when it is a terminal, else silence."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return TerminalBar(stream) if isatty is not None and isatty() else Silent()
