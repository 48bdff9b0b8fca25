"""How often a searched list counts (issue 18, point 3): a total depends on ``q`` only as every
store folds it, so one count serves ``ACME`` and ``acme`` at one revision, on every store; and the
risk heat map, which reads every match in pages of one transaction, counts them once."""

from __future__ import annotations

import pathlib
from collections.abc import Callable

from compliance_core import FrozenClock, PageRequest, Platform
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.vendors.models import NewVendor
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.uow import Store
from compliance_store.sqlite import SqliteStore


def test_a_q_in_another_case_reuses_the_count(store: Store) -> None:
    pages = PageCache(budget=0)
    platform = Platform(store, clock=FrozenClock(), page_cache=pages)
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    for name in ("Acme Cloud", "ACME mail", "Globex", "acme backup"):
        platform.vendors.create(owner, NewVendor(name=name))
    first = platform.vendors.list(owner, page=PageRequest(q="ACME", per_page=2))
    hits = pages.totals.hits
    again = platform.vendors.list(owner, page=PageRequest(q="acme", page=2, per_page=2))
    assert (first.total, again.total) == (3, 3)
    assert pages.totals.hits == hits + 1  # the second ran no count
    assert len(first.items) == 2 and len(again.items) == 1
    platform.vendors.create(owner, NewVendor(name="Acme again"))  # a write: counted anew
    assert platform.vendors.list(owner, page=PageRequest(q="Acme")).total == 4
    assert pages.totals.hits == hits + 1


def test_the_heat_map_counts_its_risks_once(
    sqlite_statements: list[str], migrated_sqlite: Callable[[pathlib.Path], str], tmp_path: pathlib.Path
) -> None:
    store = SqliteStore(migrated_sqlite(tmp_path / "heat.db"))
    try:
        platform = Platform(store, clock=FrozenClock())
        owner = platform.actor(platform.bootstrap("Acme").organization.id)
        for n in range(450):  # three pages of 200
            platform.risks.create(
                owner, NewRisk(title=f"Fraud {n}" if n % 3 else f"Outage {n}", likelihood=2, impact=3)
            )
        sqlite_statements.clear()
        chart = platform.risks.heat_map(owner, search=PageRequest(q="fraud"))
        assert chart.total == 300
        counts = [s for s in sqlite_statements if s.startswith("SELECT count(*) FROM risks")]
        assert len(counts) == 1, counts
    finally:
        store.close()
