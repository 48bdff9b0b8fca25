"""Progress bars of the long commands (``import``, ``migrate-store``), drawn with rich on standard
error when it is a terminal; a log or a pipe gets nothing but the command's JSON report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

__all__ = ["progress_bar", "CopyBar", "copy_bar"]


def _on_terminal(stream: TextIO | None) -> TextIO | None:
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return stream if isatty is not None and isatty() else None


def _bar(stream: TextIO) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rows"),
        TimeRemainingColumn(),
        console=Console(file=stream),
    )


@contextmanager
def progress_bar(label: str, stream: TextIO | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """``update(done, total)`` drawing a bar labelled ``label`` on a terminal; None elsewhere."""
    terminal = _on_terminal(stream)
    if terminal is None:
        yield None
        return
    with _bar(terminal) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


class CopyBar:
    """The store copy's ``Progress`` (``compliance_store.copy``: start, advance, finish) on rich."""

    def __init__(self, stream: TextIO) -> None:
        self._bar = _bar(stream)
        self._task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        self._bar.start()
        self._task = self._bar.add_task(label, total=total)

    def advance(self, done: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, done)

    def finish(self) -> None:
        self._bar.stop()


def copy_bar(stream: TextIO | None = None) -> CopyBar | None:
    """A ``CopyBar`` on a terminal, None elsewhere (the copy then reports nothing)."""
    terminal = _on_terminal(stream)
    return None if terminal is None else CopyBar(terminal)
