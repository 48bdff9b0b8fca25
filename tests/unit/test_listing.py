"""Core's ``Listing``: what ``q``, ``sort`` and ``since``/``until`` mean (the reference every
store is held to), what a declaration may name, and the page cache keeping searched pages
apart from plain ones."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs
import pytest

from compliance_core import PageRequest, ValidationError
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.pages import Listing, Position, fold
from compliance_core.kernel.records import Records

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@attrs.frozen
class Row:
    id: str
    name: str | None
    due: dt.date | None
    created_at: dt.datetime = T0


LISTING = Listing(searchable=("name",), sortable=("name", "due"), ranged="due", ranged_date=True)
ROWS = [
    Row("r1", "Łódź Logistics", dt.date(2027, 1, 1)),
    Row("r2", "acme", None),
    Row("r3", "Zeta", dt.date(2027, 2, 1)),
    Row("r4", None, dt.date(2027, 1, 1)),
]


def _ids(request: PageRequest) -> list[str]:
    return [row.id for row in LISTING.select(ROWS, request)[0]]


def test_fold_lowercases_each_character_to_one() -> None:
    assert fold("ŁÓDŹ ΣΑΣ İ") == "łódź σασ i"
    assert fold("ACME") == "acme"


def test_q_is_a_case_insensitive_substring_of_a_searchable_field() -> None:
    assert _ids(PageRequest(q="ŁÓD")) == ["r1"]
    assert _ids(PageRequest(q="cm")) == ["r2"]
    assert _ids(PageRequest(q="")) == ["r1", "r2", "r3", "r4"]


def test_sort_puts_rows_without_a_value_last_and_breaks_ties_by_id() -> None:
    assert _ids(PageRequest(sort="name")) == ["r3", "r2", "r1", "r4"]  # code point order, None last
    assert _ids(PageRequest(sort="-name")) == ["r1", "r2", "r3", "r4"]
    assert _ids(PageRequest(sort="due")) == ["r1", "r4", "r3", "r2"]
    assert _ids(PageRequest(sort="-due")) == ["r3", "r4", "r1", "r2"]


def test_from_is_inclusive_to_exclusive_and_rows_without_a_date_are_outside() -> None:
    assert _ids(PageRequest(since=dt.date(2027, 1, 1))) == ["r1", "r3", "r4"]
    assert _ids(PageRequest(since=dt.date(2027, 1, 1), until=dt.date(2027, 2, 1))) == ["r1", "r4"]


def test_a_sorted_walk_continues_after_the_last_rows_value() -> None:
    after = Position(T0, "r4", 2, "due", dt.date(2027, 1, 1))
    assert _ids(PageRequest.walking(5, after, sort="due")) == ["r3", "r2"]


def test_what_a_list_does_not_offer_is_a_validation_error_naming_it() -> None:
    for request, field in [
        (PageRequest(sort="-colour"), "sort"),
        (PageRequest(since=T0), "from"),
        (PageRequest(q="x"), None),
    ]:
        listing = Listing() if field is None else LISTING
        with pytest.raises(ValidationError) as raised:
            listing.check(request)
        assert raised.value.details["field"] == (field or "q")
    with pytest.raises(ValidationError):
        PageRequest(q="a\x00b")
    with pytest.raises(ValidationError):
        PageRequest(since=dt.datetime(2027, 1, 1))  # no offset
    with pytest.raises(ValidationError) as raised:
        PageRequest.walking(5, Position(T0, "r1", 1, "name"), sort="-name")
    assert raised.value.details["field"] == "cursor"


def test_a_declaration_naming_no_field_of_the_model_is_refused() -> None:
    with pytest.raises(ValueError, match="colour"):
        Records("rows", model=Row, kind="row", prefix="row", sortable=("colour",))


def test_only_sortable_or_ranged_fields_may_be_indexed() -> None:
    assert Records(
        "rows", model=Row, kind="row", prefix="row", sortable=("name",), ranged="due", indexed=("name", "due")
    )
    with pytest.raises(ValueError, match="indexed"):
        Records("rows", model=Row, kind="row", prefix="row", sortable=("name",), indexed=("due",))


def test_a_page_that_only_sorts_keeps_the_plain_lists_rows_and_total() -> None:
    assert LISTING.keeps_rows(PageRequest(sort="-name"))
    assert not LISTING.keeps_rows(PageRequest(q="acme"))
    assert not LISTING.keeps_rows(PageRequest(since=dt.date(2027, 1, 1)))
    assert Listing(sortable=("name",)).keeps_rows(PageRequest(until=dt.date(2027, 1, 1)))


class _Repo:
    def __init__(self) -> None:
        self.calls: list[PageRequest] = []

    def get(self, organization_id: str, item_id: str) -> Any:
        return None

    def revision(self, organization_id: str) -> int:
        return 1

    def list(
        self, organization_id: str, filters: Any, page: PageRequest, total: Any = None, revision: Any = None
    ) -> Any:
        self.calls.append(page)
        rows, counted = LISTING.select(ROWS, page)
        return rows, counted if total is None else total


def test_the_page_cache_never_serves_a_plain_page_for_a_searched_request_nor_its_total() -> None:
    cache, repository = PageCache(admit_after=0), _Repo()
    plain = cache.fetch("rows", repository, "org", None, PageRequest())
    searched = cache.fetch("rows", repository, "org", None, PageRequest(q="acme"))
    resorted = cache.fetch("rows", repository, "org", None, PageRequest(sort="-name"))
    assert (plain.total, searched.total, resorted.total) == (4, 1, 4)
    assert [r.id for r in searched.items] == ["r2"]
    assert [r.id for r in resorted.items] == ["r1", "r2", "r3", "r4"]
    assert len(repository.calls) == 3
