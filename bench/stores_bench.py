"""Benchmark 3: the same HTTP workloads on SQLite and on PostgreSQL, side by side.

For each store the run seeds the same 10,000 vendors (``seed.py``: the same attributes in the
same order; only the ids differ). On PostgreSQL they go into a fresh schema ``bench_<random>``,
vacuumed and analysed as autovacuum would soon after, and dropped at the end whatever happens (no
other schema is touched). It then starts ``compliance serve`` on the store (2 worker processes,
the server's default threads) and loads it with wrk, one workload after another:

1. **same page**: ``GET /v1/vendors?perPage=50`` again and again; after the first, the page
   cache answers (a revision read per request, on either store);
2. **random pages with filters**: 20,000 different list requests, each with one or two filters
   (criticality, country, dpaStatus, ictService, processesPersonalData, category) and a random
   page of 10-100 vendors that exists for those filters; a request comes back only after about
   a thousand others (the warm-up and the measured run each start the list from the top), half
   of them on each worker, more pages than its cache keeps, so nearly every request runs the count
   and the page query;
3. **single get**: ``GET /v1/vendors/{id}`` over every seeded vendor in a shuffled order (gets
   are not cached);
4. **create**: ``POST /v1/vendors`` with a new name each time and no Idempotency-Key; every
   create is a write transaction, and writers of one store are serialised (SQLite's single
   writer; PostgreSQL's advisory lock per schema), so creates queue behind each other whatever
   the number of workers.

Creates run last because they change the register (and with it every cached page). The table
gives req/s, p50 and p99 per store and the ratio PostgreSQL / SQLite. A second one gives the CPU
time per request of the server processes and, on PostgreSQL, of the backends that served them
(read from ``/proc`` when the database server runs on this machine), and how much CPU anything
else used meanwhile: on a shared machine, that column says which figures to distrust.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import os
import random
import resource
import secrets
import sqlite3
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson
import psycopg
from psycopg import sql

from compliance_core.areas.vendors import Vendor
from compliance_http.server import DEFAULT_THREADS
from compliance_store.postgres import mask_url, parse_url

from . import servers
from .http_bench import LIST_PATH, compliance_command
from .load import LoadResult, run_load
from .machine import CpuMeter, group_cpu_seconds, pids_cpu_seconds
from .seed import Seeded, seed_url, sqlite_url

__all__ = [
    "STORES",
    "StoresSettings",
    "StoreRun",
    "Run",
    "WORKLOADS",
    "postgres_server_url",
    "postgres_unavailable",
    "filtered_paths",
    "create_script",
    "run_stores_bench",
    "format_stores",
]

STORES = ("sqlite", "postgresql")
DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
WORKLOADS = ("same page", "filtered pages", "single get", "create")
_LABELS = {
    "same page": "list: the same page (perPage=50)",
    "filtered pages": "list: random pages, 1-2 filters",
    "single get": "get one vendor by id",
    "create": "create a vendor (POST)",
}
FILTERED_REQUESTS = 20_000
_FILTERS = (
    ("criticality", "criticality"),
    ("country", "country"),
    ("dpaStatus", "dpa_status"),
    ("ictService", "ict_service"),
    ("processesPersonalData", "processes_personal_data"),
    ("category", "category"),
)


def postgres_server_url(explicit: str | None = None) -> str:
    """The PostgreSQL server to use: ``explicit``, else ``$COMPLIANCE_POSTGRES_URL`` (as for the
    tests), else the local default."""
    return explicit or os.environ.get("COMPLIANCE_POSTGRES_URL") or DEFAULT_POSTGRES_URL


def postgres_unavailable(url: str) -> str | None:
    """Why the server at ``url`` cannot be used, or None when it answers."""
    try:
        _, schema = parse_url(url)
    except Exception as error:  # core's ValidationError: an unusable URL
        return f"{mask_url(url)} is not a PostgreSQL URL ({error})"
    if schema is not None:
        return f"{mask_url(url)} names a schema: give the server's URL, the benchmark makes a schema of its own"
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error as error:
        return f"no PostgreSQL server answers at {mask_url(url)} ({' '.join(str(error).split())})"
    return None


@attrs.frozen(kw_only=True)
class StoresSettings:
    stores: tuple[str, ...] = STORES
    postgres_url: str = DEFAULT_POSTGRES_URL
    vendors: int = 10_000
    workers: int = 2
    server_threads: int = DEFAULT_THREADS
    connections: int = 16
    threads: int = 2
    seconds: float = 10.0
    warmup: float = 2.0


@attrs.frozen(kw_only=True)
class Run:
    load: LoadResult
    cpu_busy: float | None
    """Share of all CPUs busy during the measured run (servers, database, wrk, anything else)."""
    other_busy: float | None
    """Share of all CPUs busy with anything but the run's own processes (``compliance serve``,
    its PostgreSQL backends and wrk): other work on a shared machine, PostgreSQL's background
    processes, interrupts. Above a few per cent, the run's figures are low."""
    server_cpu_us: float | None
    """CPU time of the ``compliance serve`` processes per request."""
    database_cpu_us: float | None
    """CPU time of the PostgreSQL backends connected for this run per request (None on SQLite, or
    when the database server's processes cannot be read)."""


@attrs.frozen(kw_only=True)
class StoreRun:
    store: str
    label: str
    """The store and its version, as the table heads it."""
    runs: dict[str, Run]
    seed_seconds: float


@attrs.frozen(kw_only=True)
class StoresResult:
    settings: StoresSettings
    stores: tuple[StoreRun, ...]
    distinct_filtered: int


# --- requests -----------------------------------------------------------------------------------


def _wire(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def _facets(vendor: Vendor) -> tuple[tuple[str, str], ...]:
    """The vendor's values for each list filter, as query parameters (a null matches no filter)."""
    return tuple(
        (wire, _wire(getattr(vendor, attribute)))
        for wire, attribute in _FILTERS
        if getattr(vendor, attribute) is not None
    )


def filtered_paths(
    records: Sequence[Vendor], count: int = FILTERED_REQUESTS, *, rng_seed: int = 7, picks: Sequence[int] | None = None
) -> tuple[str, ...]:
    """``count`` different list requests with one or two filters each and a random page size of
    10-100; the page asked for is one that holds vendors for those filters. Filter values are
    drawn from a random vendor's, so common values come up more often, as in real use. With
    ``picks``, the register is ``records[i] for i in picks`` (a pool reused, as ``scale_seed``
    seeds it)."""
    facets = [_facets(vendor) for vendor in records]
    uses = Counter(picks) if picks is not None else Counter(range(len(records)))
    totals: Counter[tuple[tuple[str, str], ...]] = Counter()
    for index, used in uses.items():
        for size in (1, 2):
            for combination in itertools.combinations(facets[index], size):
                totals[combination] += used
    rng = random.Random(rng_seed)
    chosen: dict[str, None] = {}
    attempts = 0
    while len(chosen) < count and attempts < count * 20:
        attempts += 1
        items = rng.choice(facets) if picks is None else facets[rng.choice(picks)]
        picked = tuple(sorted(rng.sample(items, min(len(items), rng.choice((1, 2)))), key=items.index))
        per_page = rng.randint(10, 100)
        page = rng.randint(1, -(-totals[picked] // per_page))
        query = urllib.parse.urlencode([*picked, ("page", page), ("perPage", per_page)])
        chosen[f"/v1/vendors?{query}"] = None
    return tuple(chosen)


def get_paths(records: Sequence[Vendor], *, rng_seed: int = 11) -> tuple[str, ...]:
    """Every seeded vendor once, in a shuffled order that is the same on every store."""
    order = list(range(len(records)))
    random.Random(rng_seed).shuffle(order)
    return tuple(f"/v1/vendors/{records[index].id}" for index in order)


CREATE_BODY = {
    "description": "Provides cloud hosting for engineering; added by the benchmark.",
    "category": "cloud",
    "country": "DE",
    "criticality": "important",
    "ictService": True,
    "processesPersonalData": True,
    "dpaStatus": "pending",
    "website": "https://vendor.bench.example",
}
"""What every benchmark create sends besides its unique name."""

_CREATE_SCRIPT = """\
-- POST /v1/vendors with a new name each time: thread t sends "Bench @TAG@ t-1", "... t-2", ...
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local started = 0

function setup(thread)
  started = started + 1
  thread:set("thread_number", started)
end

function init(args)
  sent = 0
end

function request()
  sent = sent + 1
  local name = string.format("Bench @TAG@ %d-%d", thread_number, sent)
  return wrk.format(nil, "/v1/vendors", nil, '{"name":"' .. name .. '",@REST@')
end
"""


def create_script(tag: str) -> str:
    """The wrk Lua script creating vendors named ``Bench <tag> <thread>-<n>``."""
    if not tag.isalnum():
        raise ValueError(f"not a plain tag: {tag!r}")
    rest = orjson.dumps(CREATE_BODY).decode()[1:]
    if "'" in rest or "\\" in rest:
        raise ValueError("the create body must not need Lua escapes")
    return _CREATE_SCRIPT.replace("@TAG@", tag).replace("@REST@", rest)


def _post(url: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, bytes]:
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname or servers.HOST, parsed.port, timeout=10)
    try:
        connection.request(
            "POST", path, body=orjson.dumps(body), headers={**headers, "Content-Type": "application/json"}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


# --- stores -------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Store:
    url: str
    label: str
    backends: Callable[[], set[int]] | None
    """The pids of the PostgreSQL backends serving this store (None on SQLite)."""


@contextlib.contextmanager
def _sqlite(workdir: Path) -> Iterator[_Store]:
    yield _Store(
        url=sqlite_url(str(workdir / "stores-sqlite.db")), label=f"SQLite {sqlite3.sqlite_version}", backends=None
    )


@contextlib.contextmanager
def _postgresql(server_url: str) -> Iterator[_Store]:
    """A fresh schema ``bench_<random>`` on the server, dropped (with everything in it) at the end,
    whatever happens; its connections carry an application name of their own so that their
    backends can be found."""
    name = f"bench_{secrets.token_hex(6)}"
    application = f"compliance-{name}"
    separator = "&" if "?" in server_url else "?"
    url = f"{server_url}{separator}schema={name}&application_name={application}"
    with psycopg.connect(server_url, autocommit=True, application_name="compliance-bench-monitor") as monitor:
        version = monitor.info.server_version

        def backends() -> set[int]:
            rows = monitor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,))
            return {int(pid) for (pid,) in rows.fetchall()}

        try:
            yield _Store(url=url, label=f"PostgreSQL {version // 10000}.{version % 10000}", backends=backends)
        finally:
            _drop_schema(server_url, name)


def _drop_schema(server_url: str, name: str) -> None:
    try:
        with psycopg.connect(server_url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("SET lock_timeout = '30s'")
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
    except psycopg.Error as error:
        print(
            f"WARNING: could not drop the benchmark schema {name} ({str(error).strip()}): drop it by hand", flush=True
        )


def _vacuum_analyze(url: str) -> None:
    """VACUUM (ANALYZE) the schema's tables (only those), as autovacuum would within a minute of
    seeding 10,000 rows: the planner has statistics and the visibility map is set (index-only
    scans) from the first request on, and autovacuum has nothing left to do during the run."""
    conninfo, schema = parse_url(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)).fetchall()
        for (table,) in tables:
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(str(schema), table)))


# --- runs ---------------------------------------------------------------------------------------


def _measure(
    server: servers.Server,
    settings: StoresSettings,
    headers: dict[str, str],
    store: _Store,
    *,
    paths: Sequence[str] = (),
    script: Callable[[], str] | None = None,
) -> Run:
    url = server.base_url + LIST_PATH

    def load(seconds: float) -> LoadResult:
        return run_load(
            url,
            seconds=seconds,
            connections=settings.connections,
            threads=settings.threads,
            headers=headers,
            paths=paths,
            script=script() if script is not None else None,
        )

    if settings.warmup > 0:
        load(settings.warmup)
    pids = store.backends() if store.backends is not None else set()
    database_before = pids_cpu_seconds(pids) if pids else 0.0
    meter = CpuMeter().start()
    started = time.monotonic()
    wrk_before = _children_cpu_seconds()
    server_before = group_cpu_seconds(server.process.pid)
    result = load(settings.seconds)
    server_after = group_cpu_seconds(server.process.pid)
    wrk_used = _children_cpu_seconds() - wrk_before
    elapsed = time.monotonic() - started
    busy = meter.stop()
    database_after = pids_cpu_seconds(pids | store.backends()) if store.backends is not None else None

    def used(before: float | None, after: float | None) -> float | None:
        return None if before is None or after is None else after - before

    server_used = used(server_before, server_after)
    database_used = used(database_before, database_after)
    other = None
    if busy is not None and server_used is not None and (database_used is not None or store.backends is None):
        ours = server_used + (database_used or 0.0) + wrk_used
        other = max(0.0, busy - ours / (elapsed * (os.cpu_count() or 1)))
    requests = result.requests or 1
    return Run(
        load=result,
        cpu_busy=busy,
        other_busy=other,
        server_cpu_us=None if server_used is None else server_used / requests * 1e6,
        database_cpu_us=None if database_used is None else database_used / requests * 1e6,
    )


def _children_cpu_seconds() -> float:
    """CPU seconds of this process's finished children: the load generator's runs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _check(server: servers.Server, path: str, headers: dict[str, str]) -> None:
    """The request answers 200 with something in it (a list page that holds vendors)."""
    status, _, body = servers.fetch(server.base_url + path, headers)
    if status != 200:
        raise RuntimeError(f"{server.name} answered {status} to {path}: {body[:500]!r}")
    answer = orjson.loads(body)
    if "data" in answer and not answer["data"]:
        raise RuntimeError(f"{server.name} answered {path} with an empty page")


def _run_store(
    name: str, store: _Store, seeded: Seeded, settings: StoresSettings, workdir: Path, filtered: Sequence[str]
) -> dict[str, Run]:
    auth = {"X-API-Key": seeded.api_key}
    port = servers.free_port()
    command = compliance_command() + [
        "serve",
        "--db",
        store.url,
        "--host",
        servers.HOST,
        "--port",
        str(port),
        "--workers",
        str(settings.workers),
        "--threads",
        str(settings.server_threads),
    ]
    gets = get_paths(seeded.records)
    runs: dict[str, Run] = {}
    with servers.start(
        f"compliance serve ({name})", command, port, workdir / f"stores-{name}.log", LIST_PATH, auth
    ) as server:
        _check(server, LIST_PATH, auth)
        runs["same page"] = _measure(server, settings, auth, store)
        for path in (filtered[0], filtered[-1], gets[0]):
            _check(server, path, auth)
        runs["filtered pages"] = _measure(server, settings, auth, store, paths=filtered)
        runs["single get"] = _measure(server, settings, auth, store, paths=gets)
        status, body = _post(server.base_url, "/v1/vendors", auth, {"name": "Bench check", **CREATE_BODY})
        if status != 201:
            raise RuntimeError(f"{server.name} answered {status} to a create: {body[:500]!r}")
        runs["create"] = _measure(server, settings, auth, store, script=lambda: create_script(secrets.token_hex(4)))
    return runs


def run_stores_bench(settings: StoresSettings, workdir: Path, *, log: Callable[[str], None] = print) -> StoresResult:
    results: list[StoreRun] = []
    distinct = 0
    for name in settings.stores:
        opener = _sqlite(workdir) if name == "sqlite" else _postgresql(settings.postgres_url)
        with opener as store:
            started = time.perf_counter()
            seeded = seed_url(store.url, settings.vendors)
            if name == "postgresql":
                _vacuum_analyze(store.url)
            took = time.perf_counter() - started
            log(f"{store.label}: seeded {seeded.vendors:,} vendors in {took:.1f} s (not measured); loading it")
            filtered = filtered_paths(seeded.records)
            distinct = len(filtered)
            runs = _run_store(name, store, seeded, settings, workdir, filtered)
        results.append(StoreRun(store=name, label=store.label, runs=runs, seed_seconds=took))
    return StoresResult(settings=settings, stores=tuple(results), distinct_filtered=distinct)


# --- report -------------------------------------------------------------------------------------


def _cell(value: float | None, spec: str, width: int) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:>{width}{spec}}"


def format_stores(result: StoresResult) -> str:
    s = result.settings
    stores = result.stores
    group = 27
    lines = [
        f"Stores: {s.vendors:,} vendors, compliance serve {s.workers} processes x {s.server_threads} threads, "
        f"wrk {s.threads} threads / {s.connections} keep-alive connections, {s.warmup:g} s warm-up + {s.seconds:g} s "
        f"per workload; random pages: {result.distinct_filtered:,} different requests",
        f"{'':<34}" + "".join(f"{store.label:^{group}}" for store in stores),
        f"{'workload':<34}"
        + f"{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}" * len(stores)
        + (f"{'PG/SQLite':>11}" if len(stores) == 2 else ""),
    ]
    for workload in WORKLOADS:
        line = f"{_LABELS[workload]:<34}"
        for store in stores:
            load = store.runs[workload].load
            line += f"{load.requests_per_second:>9,.0f}{load.p50_ms:>9.2f}{load.p99_ms:>9.2f}"
        if len(stores) == 2:
            first, second = (store.runs[workload].load.requests_per_second for store in stores)
            line += f"{second / first:>11.0%}" if first else f"{'n/a':>11}"
        lines.append(line)
    lines += [
        "",
        "CPU: us per request of the compliance serve processes and, on PostgreSQL, of the backends serving them;",
        "share of both CPUs busy during the run, and busy with anything else (other work, interrupts)",
        f"{'':<34}" + "".join(f"{store.label:^{23 if store.store == 'sqlite' else 33}}" for store in stores),
        f"{'workload':<34}"
        + "".join(
            f"{'server':>9}{'busy':>7}{'other':>7}"
            if store.store == "sqlite"
            else f"{'server':>9}{'database':>10}{'busy':>7}{'other':>7}"
            for store in stores
        ),
    ]
    for workload in WORKLOADS:
        line = f"{_LABELS[workload]:<34}"
        for store in stores:
            run = store.runs[workload]
            line += _cell(run.server_cpu_us, ",.0f", 9)
            if store.store != "sqlite":
                line += _cell(run.database_cpu_us, ",.0f", 10)
            line += _cell(run.cpu_busy, ".0%", 7) + _cell(run.other_busy, ".0%", 7)
        lines.append(line)
    noisy = [
        f"{store.label} {workload}"
        for store in stores
        for workload in WORKLOADS
        if (store.runs[workload].other_busy or 0.0) > 0.10
    ]
    if noisy:
        lines.append(
            "WARNING: other work kept more than 10% of the CPUs busy during "
            + ", ".join(noisy)
            + ": those figures are low"
        )
    failed = [
        f"{store.label} {workload}: {store.runs[workload].load.errors:,} of {store.runs[workload].load.requests:,}"
        for store in stores
        for workload in WORKLOADS
        if store.runs[workload].load.errors
    ]
    if failed:
        lines.append("WARNING: errors or non-2xx answers (" + "; ".join(failed) + "); the figures above include them")
    return "\n".join(line.rstrip() for line in lines)
