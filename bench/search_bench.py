"""Searched, sorted and ranged vendor lists against the same list filtered only (issue 18), on
SQLite and PostgreSQL, straight on the store (no page cache, no HTTP): the median time of one
page and its total, each request a different page so nothing is reused. PostgreSQL runs in a
schema of its own, dropped at the end (a run neither reads another's rows nor waits on its
migration), and the vendors go in 5,000 per transaction; the table is then vacuumed and
analyzed, as autovacuum does after such a load (a table just filled has no statistics, and the
planner then takes an index of 10,000 rows for a few and sorts them; and its search index still
holds every new row in its pending list, which the planner rightly prices above a scan).

The searches: ``łódź`` (in 28 % of the names: a page fills from the first rows in order),
``number 12`` (1 % of the descriptions), ``wonka 12`` (0.1 %: the few a search index finds at
once) and ``12`` (two characters, which no trigram index serves). The load prints what one
vendor insert cost on average (within transactions of 5,000: the statements and index entries
it fires, not a commit each); ``--creates N`` then times N vendor creates through the platform
(each one transaction: the vendor, its audit entry and its event, as a user's create), median
and 99th percentile. Last, the broad ``q`` as a user pages it through the platform, where the
total cache keeps its count (``PLATFORM_STEPS``).

    .venv/bin/python -m bench.search_bench --vendors 10000 [--stores sqlite,postgresql] [--creates 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import secrets
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from compliance_core import PageRequest, Platform
from compliance_core.areas.vendors.models import VENDORS, NewVendor, Vendor, VendorFilter
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.pages import Position
from compliance_core.kernel.permissions import Actor, Role

WORDS = ["Acme", "Łódź", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Cyberdyne"]
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _vendor(organization_id: str, n: int) -> Vendor:
    return Vendor(
        id=f"vnd_{n:08d}",
        organization_id=organization_id,
        name=f"{WORDS[n % 10]} {WORDS[(n // 10) % 10]} {n}",
        description=f"Supplier number {n} of {WORDS[(n * 7) % 10]}",
        category=WORDS[n % 7],
        next_review_due=(T0 + dt.timedelta(days=n % 365)).date(),
        created_at=T0 + dt.timedelta(seconds=n),
        updated_at=T0 + dt.timedelta(seconds=n),
    )


@contextlib.contextmanager
def _store(kind: str, postgres_url: str) -> Iterator[tuple[Any, Callable[[], None]]]:
    """The store and what makes its statistics current once the vendors are in."""
    if kind == "sqlite":
        from compliance_store.sqlite.store import SqliteStore

        store: Any = SqliteStore("sqlite:///" + tempfile.mkdtemp() + "/bench.db")
        try:
            yield store, lambda: None
        finally:
            store.close()
        return
    import psycopg
    from psycopg import sql

    from compliance_store.postgres.store import PostgresStore

    schema = f"bench_{secrets.token_hex(6)}"
    store = PostgresStore(f"{postgres_url}?schema={schema}", pool_min=0)

    def analyze() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}.vendors").format(sql.Identifier(schema)))

    try:
        yield store, analyze
    finally:
        store.close()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


CASES: dict[str, dict[str, Any]] = {
    "filter only (category)": {},
    "q=łódź": {"q": "łódź"},
    "q=number 12": {"q": "number 12"},
    "q=wonka 12": {"q": "wonka 12"},
    "q=12": {"q": "12"},
    "sort=name": {"sort": "name"},
    "sort=-next_review_due": {"sort": "-next_review_due"},
    "from/to one month": {"since": dt.date(2026, 3, 1), "until": dt.date(2026, 4, 1)},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--creates", type=int, default=0, help="platform creates timed after the searches")
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    for kind in args.stores.split(","):
        with _store(kind, args.postgres_url) as (store, analyze):
            _run(store, analyze, kind, args.vendors, args.requests)
            if args.creates:
                _creates(store, kind, args.creates)


def _run(store: Any, analyze: Callable[[], None], kind: str, vendors: int, requests: int) -> None:
    organization_id = "org_" + uuid.uuid4().hex[:10]
    started = time.perf_counter()
    for start in range(0, vendors, 5000):
        with store.session(write=True) as session:
            for n in range(start, min(start + 5000, vendors)):
                session[VENDORS].add(_vendor(organization_id, n))
    loaded = time.perf_counter() - started
    analyze()
    print(f"{kind}, {vendors} vendors loaded at {loaded / vendors * 1e6:.0f} µs a vendor insert")
    print(f"{kind}, {vendors} vendors: median ms of one page (50) and its total, different pages")
    for name, search in CASES.items():
        filters = VendorFilter(category=None if search else WORDS[3])
        times = []
        for request_number in range(requests):
            request = PageRequest(page=1 + request_number % 20, **search)
            started = time.perf_counter()
            with store.session(write=False) as session:
                _, total = session[VENDORS].list(organization_id, filters, request)
            times.append((time.perf_counter() - started) * 1000)
        print(f"  {name:28} {statistics.median(times):8.2f} ms  (total {total})")
    times = []
    request = PageRequest(walk=True, sort="name")
    for _ in range(requests):
        started = time.perf_counter()
        with store.session(write=False) as session:
            page = session[VENDORS].list(organization_id, VendorFilter(), request)[0]
        times.append((time.perf_counter() - started) * 1000)
        last = page[-1]
        after = Position(last.created_at, last.id, 0, "name", last.name)
        request = attrs.evolve(request, after=after)
    print(f"  {'sort=name, cursor walk':28} {statistics.median(times):8.2f} ms  (its first {requests} pages)")
    _through_platform(store, organization_id, requests)


PLATFORM_STEPS = (
    ("łódź, page 1 (counted)", "łódź", 1),
    ("łódź, page 2 (total kept)", "łódź", 2),
    ("ŁÓDŹ, page 3 (same rows)", "ŁÓDŹ", 3),
)
"""A broad ``q`` as a user pages it through the platform: the first page counts its matches, the
platform's total cache serves the count to the next pages at the same revision, and a ``q`` in
another case has the same rows (so the same count)."""


def _through_platform(store: Any, organization_id: str, requests: int) -> None:
    """The broad ``q`` through the platform's list (the total cache on, pages not kept), each
    round with fresh caches, as a new process meets it; median ms of each step."""
    actor = Actor(organization_id=organization_id, role=Role.OWNER, auth_type="local")
    times: dict[str, list[float]] = {name: [] for name, _, _ in PLATFORM_STEPS}
    for _ in range(max(3, requests // 2)):
        platform = Platform(store, page_cache=PageCache(budget=0))
        platform.vendors.list(actor, page=PageRequest(q="wonka 1"))  # a platform's first list
        for name, q, number in PLATFORM_STEPS:
            started = time.perf_counter()
            platform.vendors.list(actor, page=PageRequest(q=q, page=number))
            times[name].append((time.perf_counter() - started) * 1000)
    print("  through the platform (total cache on, fresh each round):")
    for name, values in times.items():
        print(f"    {name:26} {statistics.median(values):8.2f} ms")


def _creates(store: Any, kind: str, count: int) -> None:
    """``count`` vendor creates in a new organization, one transaction each, as a user makes them."""
    platform = Platform(store)
    owner = platform.actor(platform.bootstrap("Search bench").organization.id)
    times = []
    for n in range(count):
        request = NewVendor(name=f"{WORDS[n % 10]} created {n}", description=f"Supplier number {n} of {WORDS[n % 7]}")
        started = time.perf_counter()
        platform.vendors.create(owner, request)
        times.append((time.perf_counter() - started) * 1000)
    p99 = statistics.quantiles(times, n=100)[98]
    print(f"  {f'{count} creates':28} {statistics.median(times):8.2f} ms  (p99 {p99:.2f} ms)")


if __name__ == "__main__":
    main()
