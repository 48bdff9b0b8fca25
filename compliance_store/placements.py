"""Where a deep page starts, kept per filter set and revision inside the SQL stores.

A page at offset ``o`` of a filter set is found from a known key at or before it instead of by
walking ``o`` rows: the block counts the triggers keep give, for a declared facet set (and the
unfiltered list), the block holding ``o`` and the matches before it (``BlockSums``); any other
filter set seeks from ``Anchors``, every ``every``-th row's (created_at, id), collected by hops
as deep as pages were asked for (see ``docs/performance.md`` for what each costs and why).

Both are exact only at the revision they were read at, so ``Placements`` keeps them with it, and
only when the caller hands the revision it read in the same read transaction as the page query
(``compliance_core.kernel.records.RecordRepository.list``): a revision read inside a write
transaction could be rolled back and later name other records. Core never sees any of this.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from array import array
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

__all__ = ["BlockSums", "Anchors", "Placements", "ANCHOR_EVERY", "DEFAULT_PLACEMENT_BYTES"]

ANCHOR_EVERY = 500
"""Rows between two anchors: a deep page skips fewer than this many rows after its seek."""

DEFAULT_PLACEMENT_BYTES = 32 * 1024 * 1024
"""Bytes of block sums and anchors one table of one store keeps over all filter sets (what core's
total cache kept of both before, together: anchor keys and block sums share one bound now)."""

_ANCHOR_BYTES = 200
"""About what one anchor key holds with its two strings."""


class BlockSums:
    """One filter set's block counts at one revision, as running sums in page order (ascending
    blocks, or descending for a newest-first table): the set's total, and by bisection the
    block holding any offset."""

    __slots__ = ("blocks", "upto")

    def __init__(self, rows: Iterable[tuple[int, int]]) -> None:
        read = list(rows)
        self.blocks = array("l", (row[0] for row in read))
        self.upto = array("q", itertools.accumulate(row[1] for row in read))

    @property
    def total(self) -> int:
        return self.upto[-1] if self.upto else 0

    @property
    def nbytes(self) -> int:
        return self.blocks.itemsize * len(self.blocks) + self.upto.itemsize * len(self.upto)

    def locate(self, offset: int) -> tuple[int, int]:
        """The block holding the match at ``offset`` (below ``total``) and the matches before it."""
        index = bisect.bisect_right(self.upto, offset)
        return self.blocks[index], self.upto[index - 1] if index else 0


class Anchors:
    """Seek keys of one filter set at one revision: ``keys[k]`` is the (created_at, id) of the row
    at offset ``every * k`` in list order, as the store holds them (its own encoding).

    Since (created_at, id) is unique and is the page order, the rows from ``keys[k]`` on are
    exactly the rows from offset ``every * k`` on, so a page seeking from it equals the plain
    OFFSET one. ``keys`` is a tuple, never changed in place: collecting more assigns a longer one,
    so threads may share what is kept.
    """

    __slots__ = ("every", "keys")

    def __init__(self, every: int = ANCHOR_EVERY, keys: Sequence[tuple[Any, Any]] = ()) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.every = every
        self.keys: tuple[tuple[Any, Any], ...] = tuple(keys)

    @property
    def nbytes(self) -> int:
        return _ANCHOR_BYTES * len(self.keys)

    def wanted(self, offset: int) -> int:
        """How many keys a page at ``offset`` would seek with: 0 when it starts before the second
        anchor (a plain OFFSET page then skips fewer than ``every`` rows anyway)."""
        index = offset // self.every
        return 0 if index < 1 else index + 1

    def seek(self, offset: int) -> tuple[tuple[Any, Any] | None, int]:
        """The nearest collected anchor at or before ``offset`` and the offset left from it;
        (None, ``offset``) when there is none past the first row."""
        index = min(offset // self.every, len(self.keys) - 1)
        if index < 1:
            return None, offset
        return self.keys[index], offset - index * self.every


Placement = BlockSums | Anchors


class Placements:
    """The block sums or anchors of each filter set, each with the revision it was read at, the
    least recently used first out past ``budget`` bytes. One per table of a store (built with its
    page queries), safe to use from many threads: a lock guards the map, the queries run outside.
    """

    def __init__(self, budget: int = DEFAULT_PLACEMENT_BYTES) -> None:
        if budget < 0:
            raise ValueError("budget must be at least 0")
        self.budget = budget
        self.used = 0
        self.hits = 0
        """Lists handed a kept placement: for tests and diagnostics."""
        self._kept: OrderedDict[Hashable, tuple[int, Placement, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: Hashable, revision: int) -> Placement | None:
        """What was kept for ``key`` at ``revision``, else None."""
        with self._lock:
            entry = self._kept.get(key)
            if entry is None or entry[0] != revision:
                return None
            self._kept.move_to_end(key)
            self.hits += 1
            return entry[1]

    def put(self, key: Hashable, revision: int, placement: Placement) -> None:
        """Keep ``placement`` as read at ``revision`` (replacing what ``key`` held, unless that
        is more anchors of the same revision, which another thread collected meanwhile)."""
        size = placement.nbytes
        with self._lock:
            old = self._kept.get(key)
            if old is not None and old[0] == revision and old[2] > size and isinstance(old[1], Anchors):
                return
            if old is not None:
                self.used -= old[2]
            self._kept[key] = (revision, placement, size)
            self._kept.move_to_end(key)
            self.used += size
            while self.used > self.budget and self._kept:
                _, (_, _, freed) = self._kept.popitem(last=False)
                self.used -= freed
