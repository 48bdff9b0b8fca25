"""A copy into an empty target goes in chunks of one transaction each, is whole and verified at the
end, and leaves the target empty when it fails; its progress shows on a terminal only."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import attrs
import pytest

import compliance_store.copy as copying
from compliance_core.areas import AREAS
from compliance_core.kernel.uow import Store
from compliance_store.copy import copy_store, digest_store, tables
from compliance_store.progress import Silent, TerminalBar, progress_on

from . import test_copy
from .test_copy import seed

new_store = test_copy.new_store
"""The copy tests' fixture: an empty store of a kind, closed after the test."""


class _Counting:
    """The target, counting the write sessions the copy opens on it."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.url = store.url
        self.writes = 0

    def session(self, *, write: bool) -> AbstractContextManager[Any]:
        self.writes += write
        return self._store.session(write=write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Watching(Silent):
    """Progress that looks at the target from another connection after every row."""

    def __init__(self, committed: Callable[[], int]) -> None:
        self._committed = committed
        self.seen: list[int] = []

    def advance(self, done: int) -> None:
        self.seen.append(self._committed())


def _total(figures: dict[str, tuple[int, str]]) -> int:
    return sum(rows for rows, _ in figures.values())


@pytest.mark.parametrize("target_kind", ["sqlite", "postgresql"])
def test_a_copy_commits_chunk_by_chunk_and_is_all_there_at_the_end(
    new_store: Callable[[str], Store], target_kind: str
) -> None:
    source, target = new_store("sqlite"), new_store(target_kind)
    seed(source)
    expected = digest_store(source)
    rows = _total(expected)
    counting = _Counting(target)
    report = copy_store(source, counting, chunk_rows=7, progress=Silent())  # type: ignore[arg-type]

    assert report.verified and digest_store(target) == expected
    assert counting.writes == math.ceil(rows / 7) + 1  # the chunks, then one that finds nothing left


def test_each_chunk_is_visible_to_other_connections_once_committed(new_store: Callable[[str], Store]) -> None:
    from compliance_store.sqlite import SqliteStore

    source, target = new_store("sqlite"), new_store("sqlite")
    seed(source)
    rows = _total(digest_store(source))
    outside = SqliteStore(target.url)  # its own connections: sees what is committed only
    try:
        watching = _Watching(lambda: _total(digest_store(outside)))
        copy_store(source, target, chunk_rows=7, progress=watching)
    finally:
        outside.close()
    assert watching.seen[:7] == [0] * 7 and watching.seen[7] == 7  # the first chunk commits after its 7th row
    assert sorted(watching.seen) == watching.seen and set(watching.seen) <= set(range(0, rows, 7))


def test_a_chunked_copy_that_fails_leaves_the_target_empty(
    new_store: Callable[[str], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = new_store("sqlite"), new_store("sqlite")
    seed(source)
    empty = digest_store(target)
    plan = tables()
    vendors = next(t for t in plan if t.name == "vendors")
    written: list[Any] = []

    def failing(session: Any, row: Any) -> None:
        if len(written) == 3:
            raise RuntimeError("the disk filled up")
        written.append(row)
        vendors.load(session, row)

    monkeypatch.setattr(
        copying, "tables", lambda areas=AREAS: tuple(attrs.evolve(t, load=failing) if t is vendors else t for t in plan)
    )
    with pytest.raises(RuntimeError, match="disk filled up"):
        copy_store(source, target, chunk_rows=5)
    assert digest_store(target) == empty


def test_progress_is_a_bar_on_a_terminal_and_nothing_elsewhere(new_store: Callable[[str], Store]) -> None:
    terminal, piped = _Terminal(), io.StringIO()
    assert isinstance(progress_on(terminal), TerminalBar)
    assert isinstance(progress_on(piped), Silent)

    source = new_store("sqlite")
    seed(source)
    rows = _total(digest_store(source))
    copy_store(source, new_store("sqlite"), progress=progress_on(terminal))
    copy_store(source, new_store("sqlite"), progress=progress_on(piped))
    drawn = terminal.getvalue()
    assert drawn.startswith("\rcopying") and drawn.endswith("\n")
    assert f"{rows:,}/{rows:,} rows" in drawn.rstrip("\n").rsplit("\r", 1)[-1]
    assert piped.getvalue() == ""
