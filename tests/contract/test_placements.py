"""What the SQL stores keep to find deep pages: the arithmetic of seeking from anchors and block
sums, and the per-revision cache of both, bounded by bytes."""

from __future__ import annotations

import pytest

from compliance_store.placements import Anchors, BlockSums, Placements


def _keys(count: int, every: int = 500) -> list[tuple[str, str]]:
    """The anchors of a set of ``count`` rows: the keys of rows 0, every, 2 * every, ..."""
    return [(f"t{n:07d}", f"id{n:07d}") for n in range(0, count, every)]


@pytest.mark.parametrize(
    ("offset", "anchor", "rest"),
    [
        (0, None, 0),
        (499, None, 499),  # before the second anchor: a plain OFFSET of fewer than 500
        (500, 500, 0),  # exactly at a multiple
        (999, 500, 499),  # just before the next
        (1000, 1000, 0),
        (1001, 1000, 1),  # just after
        (2450, 2000, 450),  # the last, partial page of 2,500 rows (2,000 is the last anchor)
    ],
)
def test_a_page_seeks_from_the_nearest_anchor_at_or_before_it(offset: int, anchor: int | None, rest: int) -> None:
    anchors = Anchors(500, _keys(2500))
    assert len(anchors.keys) == 5
    found, left = anchors.seek(offset)
    assert (found, left) == ((None if anchor is None else (f"t{anchor:07d}", f"id{anchor:07d}")), rest)
    assert 0 <= left < 500
    assert anchors.wanted(offset) == (0 if anchor is None else anchor // 500 + 1)


def test_without_collected_anchors_a_page_is_a_plain_offset_and_an_empty_set_has_none() -> None:
    assert Anchors(500).seek(1234) == (None, 1234)
    assert Anchors(500, _keys(1)).seek(700) == (None, 700)
    assert Anchors(500, _keys(1200)).seek(5000) == (("t0001000", "id0001000"), 4000)  # never past the keys
    assert Anchors(500).wanted(0) == 0 and Anchors(500).wanted(500) == 2
    with pytest.raises(ValueError):
        Anchors(0)


def test_block_sums_give_the_total_and_the_block_of_any_offset() -> None:
    sums = BlockSums([(3, 4), (4, 0), (7, 5)])  # blocks 3, 4 (emptied), 7
    assert sums.total == 9 and sums.nbytes > 0
    assert [sums.locate(offset) for offset in (0, 3, 4, 8)] == [(3, 0), (3, 0), (7, 4), (7, 4)]
    assert BlockSums([]).total == 0


def test_placements_are_kept_per_revision_and_bounded_by_bytes() -> None:
    sums = BlockSums([(0, 2)] * 3)  # 48 bytes
    placements = Placements(budget=100)
    placements.put("a", 1, sums)
    assert placements.get("a", 1) is sums and placements.hits == 1
    assert placements.get("a", 2) is None  # another revision
    placements.put("b", 1, BlockSums([(0, 2)] * 2))
    placements.get("a", 1)  # "a" used last
    placements.put("c", 1, BlockSums([(0, 2)] * 2))  # past 100 bytes: the least recently used ("b") goes
    assert placements.get("b", 1) is None and placements.get("a", 1) is sums
    assert placements.used == 80 and len(placements) == 2
    with pytest.raises(ValueError):
        Placements(budget=-1)


def test_fewer_anchors_never_replace_more_of_the_same_revision() -> None:
    placements = Placements()
    longer = Anchors(10, _keys(30, every=10))
    placements.put("a", 1, longer)
    placements.put("a", 1, Anchors(10, _keys(10, every=10)))  # another thread, collected less
    assert placements.get("a", 1) is longer
    fresh = Anchors(10, _keys(10, every=10))
    placements.put("a", 2, fresh)  # a later revision replaces them whatever their length
    assert placements.get("a", 2) is fresh and placements.used == fresh.nbytes
