"""The search index behind ``q`` (SQLite's FTS5 trigram table, PostgreSQL's ``pg_trgm`` GIN index)
narrows a search and never changes its answer: every character whose folding SQLite agrees with
is found through it, the index follows every write, a ``q`` holding LIKE's or FTS5's own
characters means itself, and a ``q`` the index can serve is read from it."""

from __future__ import annotations

import sqlite3
from typing import Any

import attrs
import psycopg
import pytest
from sqlite_utils import Database

from compliance_core import PageRequest
from compliance_core.areas.vendors import VENDORS, VendorFilter
from compliance_core.kernel.pages import Page, check_position, fold
from compliance_core.kernel.uow import Store
from compliance_store.postgres import PostgresStore
from compliance_store.postgres import search as postgres_search
from compliance_store.postgres.store import parse_url
from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.listing import folding_to
from compliance_store.sqlite.migrations.helpers import search_index
from compliance_store.sqlite.search import match_expression, unsafe_characters

from . import samples


def _vendor(organization_id: str, id: str, n: int = 0, **fields: Any) -> Any:
    return attrs.evolve(samples.plain_vendor(organization_id, id, created_at=samples.at(n)), **fields)


def _ids(store: Store, q: str, organization_id: str = "org_s") -> list[str]:
    with store.session(write=False) as session:
        items, total = session[VENDORS].list(organization_id, VendorFilter(), PageRequest(q=q, per_page=200))
    assert total == len(items)
    return [item.id for item in items]


def test_each_character_folding_to_a_safe_one_is_found_through_the_index() -> None:
    """Exhaustive over every character Python folds to another: the row ``a<x>b`` is a candidate
    for the folded ``a<c>b`` whenever ``c`` is not unsafe, and a ``q`` through an unsafe
    character is not narrowed there at all."""
    sources = folding_to()
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE texts (t TEXT)")
    search_index(Database(conn), "texts", ("t",))
    rows = [(target, char) for target, found in sources.items() for char in found]
    conn.executemany(
        "INSERT INTO texts (rowid, t) VALUES (?, ?)", [(n, f"a{char}b") for n, (_, char) in enumerate(rows)]
    )
    unsafe = unsafe_characters()
    missed = []
    for n, (target, char) in enumerate(rows):
        needle = fold(f"a{char}b")
        assert needle == f"a{target}b"
        match = match_expression(needle)
        if target in unsafe:
            assert match is None
            continue
        assert match is not None
        hits = {rowid for (rowid,) in conn.execute("SELECT rowid FROM texts_search(?)", (match,))}
        if n not in hits:
            missed.append(char)
    assert missed == []
    assert not set("abcdefghijklmnopqrstuvwxyz0123456789") & unsafe  # İ is indexed as i
    assert len(unsafe) < len(sources) // 2


def test_a_q_without_a_run_of_three_safe_characters_has_no_expression() -> None:
    assert match_expression("ab") is None
    assert match_expression("łódź") == '"łód" AND "ódź"'
    assert match_expression('a"b"') == '"a""b" AND """b"""'
    assert match_expression("aaaa") == '"aaa"'
    georgian = next(char for char in unsafe_characters() if "\u10d0" <= char <= "\u10ff")
    assert match_expression(f"ab{georgian}cd") is None


@pytest.mark.parametrize("q", ["initech", "İNİTECH", "łódź", "ŁÓDŹ", "ch ł", "ech"])
def test_the_index_follows_every_write(store: Store, q: str) -> None:
    vendor = _vendor("org_s", "vnd_1", name="Initech Łódź", description="a supplier")
    other = _vendor("org_t", "vnd_2", name="Initech Łódź")
    with store.session(write=True) as session:
        session[VENDORS].add(vendor)
        session[VENDORS].add(other)
    assert _ids(store, q) == ["vnd_1"]
    with store.session(write=True) as session:
        session[VENDORS].update(attrs.evolve(vendor, name="Globex", description=""))
    assert _ids(store, q) == []
    assert _ids(store, "globex") == ["vnd_1"]
    with store.session(write=True) as session:
        session[VENDORS].update(attrs.evolve(vendor, name="Globex", description="İnitech Łódź"))
    assert _ids(store, q) == ["vnd_1"]
    with store.session(write=True) as session:
        assert session[VENDORS].delete("org_s", "vnd_1")
    assert _ids(store, q) == [] and _ids(store, "globex") == []
    assert _ids(store, q, "org_t") == ["vnd_2"]


TEXTS = ["100% sure", "100 percent", "a_b", "axb", "back\\slash", 'say "hi"', "AND OR NOT", "x*y", "[ab]"]


@pytest.mark.parametrize(
    "q", ["0% s", "%", "a_b", "_", "k\\s", "\\", '"hi"', '"', "and or", "not", "x*y", "*", "[ab]", "[a"]
)
def test_a_q_of_like_or_fts5_characters_means_itself(store: Store, q: str) -> None:
    vendors = [_vendor("org_s", f"vnd_{n}", n, name=text) for n, text in enumerate(TEXTS)]
    with store.session(write=True) as session:
        for vendor in vendors:
            session[VENDORS].add(vendor)
    expected, _ = VENDORS.listing.select(vendors, PageRequest(q=q, per_page=200))
    assert _ids(store, q) == [vendor.id for vendor in expected]


def test_pages_read_from_the_index_or_in_order_are_the_same(store: Store) -> None:
    """A rare ``q`` pages from the index's candidates, a common one along the list's order
    (``PagedQuery._reads_in_order``, which the archived=False filter's block sums let choose);
    each page, numbered or walked, equals the reference either way."""
    vendors = [_vendor("org_s", f"vnd_{n:03d}", n, name=f"Acme {n}" if n % 3 else f"Rare {n}") for n in range(120)]
    with store.session(write=True) as session:
        for vendor in vendors:
            session[VENDORS].add(vendor)
    filters = VendorFilter(archived=False)
    for q in ("acme", "rare", "rare 1", "me 1"):
        for sort in (None, "name", "-name", "-created_at"):
            search: dict[str, Any] = {"q": q, "sort": sort}
            expected, total = VENDORS.listing.select(vendors, PageRequest(per_page=200, **search))
            numbered: list[str] = []
            for number in range(1, total // 7 + 2):
                with store.session(write=False) as session:
                    items, counted = session[VENDORS].list(
                        "org_s", filters, PageRequest(page=number, per_page=7, **search)
                    )
                assert counted == total
                numbered += [item.id for item in items]
            walked: list[str] = []
            request: PageRequest | None = PageRequest.walking(7, **search)
            while request is not None:
                with store.session(write=False) as session:
                    repository = session[VENDORS]
                    after = check_position(repository, "org_s", request.after)
                    items, _ = repository.list("org_s", filters, attrs.evolve(request, after=after))
                walked += [item.id for item in items]
                request = Page.of(items, total, request).next_request
            assert numbered == walked == [vendor.id for vendor in expected], (q, sort)


def test_a_q_is_read_from_the_index_on_sqlite(tmp_path: Any, sqlite_statements: list[str]) -> None:
    store = SqliteStore(f"sqlite:///{tmp_path / 'search.db'}")
    try:
        with store.session(write=True) as session:
            for n in range(30):
                session[VENDORS].add(samples.plain_vendor("org_s", f"vnd_{n}", created_at=samples.at(n)))
        for q, narrowed in (("vnd_1", True), ("Vendor", True), ("_1", False), ("ა\u10d1\u10d2", False)):
            sqlite_statements.clear()
            _ids(store, q)
            searched = [s for s in sqlite_statements if s.startswith("SELECT") and "vendors" in s]
            assert any("vendors_search" in s for s in searched) == narrowed, (q, searched)
    finally:
        store.close()


def test_a_q_is_read_from_the_index_on_postgres(store: Store) -> None:
    """The term the page queries write is the one the index serves (the planner told to avoid a
    scan, since a table this small would rather be scanned)."""
    if not isinstance(store, PostgresStore):
        pytest.skip("PostgreSQL's plan")
    conninfo, schema = parse_url(store.url)
    term, values = postgres_search.LIKE, [postgres_search.like_pattern("acme")]
    columns = VENDORS.listing.searchable
    where = " OR ".join(term.format(column=f'"{column}"', mark="%s") for column in columns)
    with psycopg.connect(conninfo, options=f"-c search_path={schema}") as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(f"EXPLAIN SELECT count(*) FROM vendors WHERE {where}", values * len(columns)).fetchall()
    assert any("vendors_search" in line for (line,) in plan), plan
