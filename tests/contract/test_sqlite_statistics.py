"""SQLite's planner statistics: taken after migrating, taken again when a table has grown or
shrunk enough, seen by connections already open; and with them a list filtered on two columns
is counted inside the covering index of the more selective one."""

from __future__ import annotations

import contextlib
import pathlib
import sqlite3
from typing import Any

import pytest

from compliance_core import PageRequest
from compliance_core.areas.vendors import VENDORS, DpaStatus, VendorFilter
from compliance_store.sqlite import SqliteStore

from . import samples

COUNTRIES = ("AT", "BE", "CH", "CZ", "DE", "DK", "ES", "FI", "FR", "GB", "IE", "IT", "NL", "PL", "SE")


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[sqlite3.Connection]]:
    """Every statement the store's connections run (values bound), and the read-only connections
    (those lists run on) it opened."""
    statements: list[str] = []
    opened: list[sqlite3.Connection] = []
    connect = SqliteStore._connect

    def tracing(self: Any, *, read_only: bool = False) -> Any:
        conn = connect(self, read_only=read_only)
        conn.set_trace_callback(statements.append)
        if read_only:
            opened.append(conn)
        return conn

    monkeypatch.setattr(SqliteStore, "_connect", tracing)
    return statements, opened


def _add(store: SqliteStore, start: int, count: int) -> None:
    """Vendors in 15 countries (count/15 rows per value) with one DPA status (count rows)."""
    with store.session(write=True) as session:
        for n in range(start, start + count):
            session[VENDORS].add(
                samples.plain_vendor(
                    "org_a",
                    f"vnd_{n:05d}",
                    samples.at(n),
                    dpa_status=DpaStatus.SIGNED,
                    country=COUNTRIES[n % len(COUNTRIES)],
                )
            )


def _plan(conn: sqlite3.Connection, statement: str) -> str:
    return " | ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))


def test_a_new_file_is_analysed_once_migrated(tmp_path: pathlib.Path) -> None:
    store = SqliteStore(f"sqlite:///{tmp_path / 'new.db'}")
    store.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "new.db")) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() == (1,)


def test_statistics_are_taken_again_only_when_a_table_grew_or_shrank_twofold(tmp_path: pathlib.Path) -> None:
    store = SqliteStore(f"sqlite:///{tmp_path / 'grow.db'}")
    try:
        assert store.refresh_statistics() == []  # analysed empty when migrated
        _add(store, 0, 40)
        assert store.refresh_statistics() == ["vendors"]
        assert store.refresh_statistics() == []
        _add(store, 40, 40)  # 80 rows: twice the 40 analysed, not more
        assert store.refresh_statistics() == []
        _add(store, 80, 1)
        assert store.refresh_statistics() == ["vendors"]
        with store.session(write=True) as session:
            for n in range(41):
                assert session[VENDORS].delete("org_a", f"vnd_{n:05d}")
        assert store.refresh_statistics() == ["vendors"]  # 40 rows left of 81
    finally:
        store.close()


def test_a_three_filter_count_reads_the_covering_index_of_the_most_selective_column(
    tmp_path: pathlib.Path, traced: tuple[list[str], list[sqlite3.Connection]]
) -> None:
    statements, readers = traced
    store = SqliteStore(f"sqlite:///{tmp_path / 'plan.db'}")
    try:
        _add(store, 0, 300)  # opens this thread's connections: they predate the statistics
        # (without them SQLite cannot tell the columns apart and scans the dpa_status range;
        # one or two filters read their totals from list_facet_blocks, three are counted)
        assert len(readers) == 1
        assert store.refresh_statistics() == ["vendors"]
        statements.clear()
        with store.session(write=False) as session:
            _, total = session[VENDORS].list(
                "org_a",
                VendorFilter(dpa_status=DpaStatus.SIGNED, country="DE", ict_service=False),
                PageRequest(per_page=5),
            )
        assert total == 20
        count = next(s for s in statements if "count(*)" in s.lower())
        plan = _plan(readers[0], count)  # a connection reloads them at its first read after the analysis
        assert "COVERING INDEX vendors_by_country" in plan, plan
    finally:
        store.close()
