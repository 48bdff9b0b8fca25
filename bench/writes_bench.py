"""Benchmark of writes (issue 17, point 8): creates over HTTP and in-process.

HTTP: ``compliance serve`` at its default settings (one process per CPU, default threads) on a
fresh SQLite file and a fresh PostgreSQL schema, loaded by wrk with ``POST /v1/vendors`` (a new
name each time, no Idempotency-Key) from 8 keep-alive connections; beside it the plain sqlite3 app
of ``plain_writes.py`` writing the same three rows per create into a file migrated the same way.
In-process: ``platform.vendors.create`` in a loop on SQLite and on the memory store, from one
thread and from two (each thread its own share of the creates). Import: 200,000 validated vendors
written through the unit of work in chunks (``seed.import_vendors``), as a library user seeds.

``python -m bench.writes_bench [--stores sqlite,postgresql] [--seconds 10]``
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import random
import secrets
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from compliance_core.areas.vendors import NewVendor
from compliance_core.platform import Platform

from . import servers
from .http_bench import compliance_command
from .load import LoadResult, run_load, wrk_path
from .seed import IMPORT_CHUNK, MAX_LIMIT, _vendor, import_vendors, seed_url, sqlite_url
from .stores_bench import (
    CREATE_BODY,
    _post,
    _postgresql,
    create_script,
    postgres_server_url,
    postgres_unavailable,
)

__all__ = [
    "WriteSettings",
    "HttpWrites",
    "InProcessWrites",
    "run_http_writes",
    "run_inprocess_writes",
    "run_import",
    "run_writes",
    "ImportWrites",
    "format_writes",
]

CLIENTS = 8
"""Keep-alive connections of the HTTP load, as the issue asks."""


@attrs.frozen(kw_only=True)
class WriteSettings:
    stores: tuple[str, ...] = ("sqlite", "postgresql")
    postgres_url: str | None = None
    seconds: float = 10.0
    warmup: float = 2.0
    connections: int = CLIENTS
    threads: int = 2
    creates: int = 3000
    """In-process creates per timing."""
    import_vendors: int = 200_000
    """Vendors of the import timing (0: none)."""


@attrs.frozen(kw_only=True)
class HttpWrites:
    label: str
    load: LoadResult


@attrs.frozen(kw_only=True)
class ImportWrites:
    vendors: int
    chunk: int
    build_seconds: float
    """Making the validated vendors (not the import's: the caller hands them in)."""
    seconds: float


@attrs.frozen(kw_only=True)
class InProcessWrites:
    label: str
    threads: int
    per_second: float
    p50_ms: float
    p99_ms: float


def _load(url: str, settings: WriteSettings, headers: dict[str, str]) -> LoadResult:
    def once(seconds: float) -> LoadResult:
        return run_load(
            url,
            seconds=seconds,
            connections=settings.connections,
            threads=settings.threads,
            headers=headers,
            script=create_script(secrets.token_hex(4)),
        )

    if settings.warmup > 0:
        once(settings.warmup)
    return once(settings.seconds)


def _serve_and_load(
    name: str, command: list[str], port: int, workdir: Path, settings: WriteSettings, auth: dict[str, str]
) -> LoadResult:
    log = workdir / f"writes-{name.replace(' ', '-')}.log"
    with servers.start(name, command, port, log, "/v1/vendors", auth) as server:
        status, body = _post(server.base_url, "/v1/vendors", auth, {"name": "Bench check", **CREATE_BODY})
        if status != 201:
            raise RuntimeError(f"{name} answered {status} to a create: {body[:500]!r}")
        return _load(server.base_url + "/v1/vendors", settings, auth)


def _full(url: str, workdir: Path, settings: WriteSettings, label: str) -> tuple[HttpWrites, str]:
    seeded = seed_url(url, 0)
    port = servers.free_port()
    command = compliance_command() + ["serve", "--db", url, "--host", servers.HOST, "--port", str(port)]
    auth = {"X-API-Key": seeded.api_key}
    load = _serve_and_load(f"compliance serve ({label})", command, port, workdir, settings, auth)
    return HttpWrites(label=f"compliance serve, {label}", load=load), seeded.organization_id


def run_http_writes(settings: WriteSettings, workdir: Path, *, log: Callable[[str], None] = print) -> list[HttpWrites]:
    rows: list[HttpWrites] = []
    if "sqlite" in settings.stores:
        full, _ = _full(sqlite_url(str(workdir / "writes-full.db")), workdir, settings, "SQLite")
        rows.append(full)
        log(_row(full))
        plain_db = workdir / "writes-plain.db"
        organization = seed_url(sqlite_url(str(plain_db)), 0).organization_id
        port = servers.free_port()
        command = [
            servers.python(),
            "-m",
            "bench.plain_writes",
            "--db",
            str(plain_db),
            "--organization",
            organization,
            "--host",
            servers.HOST,
            "--port",
            str(port),
            "--workers",
            str(_default_workers()),
        ]
        plain = HttpWrites(
            label="plain sqlite3 app, SQLite",
            load=_serve_and_load("plain sqlite3 writes", command, port, workdir, settings, {}),
        )
        rows.append(plain)
        log(_row(plain))
    if "postgresql" in settings.stores:
        server_url = postgres_server_url(settings.postgres_url)
        reason = postgres_unavailable(server_url)
        if reason is not None:
            log(f"PostgreSQL: SKIPPED, {reason}")
        else:
            with _postgresql(server_url) as store:
                full, _ = _full(store.url, workdir, settings, "PostgreSQL")
            rows.append(full)
            log(_row(full))
    return rows


def _default_workers() -> int:
    return os.cpu_count() or 1


def _create_loop(platform: Platform, actor: object, tag: str, count: int, latencies: list[float]) -> None:
    mine = []
    for index in range(count):
        started = time.perf_counter()
        platform.vendors.create(actor, NewVendor(name=f"Bench {tag}-{index}", website="https://vendor.bench.example"))  # type: ignore[arg-type]
        mine.append(time.perf_counter() - started)
    latencies.extend(mine)


def _timed(platform: Platform, actor: object, threads: int, creates: int) -> tuple[float, list[float]]:
    _create_loop(platform, actor, f"warm{threads}", 200, [])
    latencies: list[float] = []
    workers = [
        threading.Thread(target=_create_loop, args=(platform, actor, f"t{threads}-{k}", creates // threads, latencies))
        for k in range(threads)
    ]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - started, sorted(latencies)


def run_inprocess_writes(settings: WriteSettings, workdir: Path) -> list[InProcessWrites]:
    rows = []
    for label, url in (("SQLite", sqlite_url(str(workdir / "writes-inprocess.db"))), ("memory", "memory://")):
        with Platform.open(url) as platform:
            boot = platform.bootstrap("Write Bench", "enterprise", rpm=MAX_LIMIT, burst=MAX_LIMIT)
            actor = platform.actor(boot.organization.id)
            for threads in (1, 2):
                took, latencies = _timed(platform, actor, threads, settings.creates)
                rows.append(
                    InProcessWrites(
                        label=label,
                        threads=threads,
                        per_second=len(latencies) / took,
                        p50_ms=statistics.median(latencies) * 1000,
                        p99_ms=latencies[int(len(latencies) * 0.99)] * 1000,
                    )
                )
    return rows


def run_import(settings: WriteSettings, workdir: Path) -> ImportWrites:
    """``import_vendors`` of ``settings.import_vendors`` validated vendors into a new SQLite file,
    timed alone; the vendors are made from a pool of 4,096 seeded ones (each evolved to its own
    id, name and creation time, so validated again), timed apart."""
    started = time.perf_counter()
    url = sqlite_url(str(workdir / "writes-import.db"))
    organization = seed_url(url, 0).organization_id  # the tenant and its twenty people
    with Platform.open(url) as platform:
        people = [person.id for person in platform.people.list(platform.actor(organization)).items]
        rng = random.Random(7)
        begin = platform.clock.now() - dt.timedelta(days=730)
        pool = [_vendor(rng, index, organization, f"vnd_pool{index}", people, begin) for index in range(4096)]
        step = dt.timedelta(days=730) / max(1, settings.import_vendors)
        vendors = [
            attrs.evolve(
                pool[index % len(pool)],
                id=platform.ids.new("vnd"),
                name=f"Imported {index:07d}",
                created_at=begin + index * step,
                updated_at=begin + index * step,
            )
            for index in range(settings.import_vendors)
        ]
        built = time.perf_counter() - started
        started = time.perf_counter()
        import_vendors(platform, vendors)
        took = time.perf_counter() - started
    return ImportWrites(vendors=len(vendors), chunk=IMPORT_CHUNK, build_seconds=built, seconds=took)


def run_writes(
    settings: WriteSettings, workdir: Path, *, log: Callable[[str], None] = print
) -> tuple[list[HttpWrites], list[InProcessWrites], ImportWrites | None]:
    """Every part of this benchmark; the HTTP part only with wrk (its POST script is Lua)."""
    http: list[HttpWrites] = []
    if wrk_path() is None:
        log("Creates over HTTP: SKIPPED, the POST load needs wrk (apt-get install wrk)")
    else:
        http = run_http_writes(settings, workdir, log=log)
    inprocess = run_inprocess_writes(settings, workdir)
    imported = run_import(settings, workdir) if settings.import_vendors > 0 else None
    return http, inprocess, imported


def _row(row: HttpWrites) -> str:
    load = row.load
    return (
        f"{row.label:<32}{load.requests_per_second:>9,.0f}{load.p50_ms:>9.2f}{load.p99_ms:>9.2f}"
        f"{load.requests:>10,}{load.errors:>7}"
    )


def format_writes(
    settings: WriteSettings,
    http: list[HttpWrites],
    inprocess: list[InProcessWrites],
    imported: ImportWrites | None = None,
) -> str:
    lines = []
    if http:
        lines += [
            f"Creates over HTTP: POST /v1/vendors, default `compliance serve`, {http[0].load.generator} "
            f"{settings.connections} connections, {settings.warmup:g} s warm-up + {settings.seconds:g} s",
            f"{'server':<32}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>7}",
            *(_row(row) for row in http),
        ]
        by_label = {row.label: row.load for row in http}
        full = by_label.get("compliance serve, SQLite")
        plain = by_label.get("plain sqlite3 app, SQLite")
        if full is not None:
            rate_ok = "met" if full.requests_per_second >= 1500 else "MISSED"
            p99_ok = "met" if full.p99_ms <= 20 else "MISSED"
            line = (
                f"SQLite: {full.requests_per_second:,.0f} creates/s (target >= 1,500: {rate_ok}), "
                f"p99 {full.p99_ms:.1f} ms (target <= 20: {p99_ok})"
            )
            if plain is not None:
                share = full.requests_per_second / plain.requests_per_second
                line += f", {share:.0%} of the plain app (target >= 70%: {'met' if share >= 0.7 else 'MISSED'})"
            lines.append(line)
    if inprocess:
        if lines:
            lines.append("")
        lines += [
            f"Creates in-process: platform.vendors.create, {settings.creates:,} per timing",
            f"{'store':<10}{'threads':>8}{'creates/s':>11}{'p50 ms':>9}{'p99 ms':>9}",
        ]
        for row in inprocess:
            lines.append(f"{row.label:<10}{row.threads:>8}{row.per_second:>11,.0f}{row.p50_ms:>9.2f}{row.p99_ms:>9.2f}")
        best = max((row.per_second for row in inprocess if row.label == "SQLite"), default=0.0)
        lines.append(
            f"SQLite in-process: {best:,.0f} creates/s (target >= 3,000: {'met' if best >= 3000 else 'MISSED'})"
        )
    if imported is not None:
        if lines:
            lines.append("")
        rate = imported.vendors / imported.seconds if imported.seconds else 0.0
        ok = "met" if imported.vendors >= 200_000 and imported.seconds <= 60 else "MISSED"
        lines.append(
            f"Import: {imported.vendors:,} vendors into SQLite in chunks of {imported.chunk:,} (one transaction "
            f"each): {imported.seconds:.1f} s, {rate:,.0f}/s (making them: {imported.build_seconds:.1f} s, not "
            f"counted); target 200,000 in <= 60 s: {ok}"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.writes_bench", description=__doc__)
    parser.add_argument("--stores", default="sqlite,postgresql", help="comma-separated: sqlite, postgresql")
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--creates", type=int, default=3000, help="in-process creates per timing (default 3000)")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-inprocess", action="store_true")
    parser.add_argument("--import-vendors", type=int, default=200_000, help="vendors imported (0: skip)")
    return parser


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="compliance-writes-") as directory:
        yield Path(directory)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = WriteSettings(
        stores=tuple(name.strip() for name in args.stores.split(",") if name.strip()),
        postgres_url=args.postgres_url,
        seconds=args.seconds,
        warmup=args.warmup,
        creates=args.creates,
        import_vendors=args.import_vendors,
    )
    with _workdir() as workdir:
        http = [] if args.skip_http else run_http_writes(settings, workdir, log=lambda line: print(line, flush=True))
        inprocess = [] if args.skip_inprocess else run_inprocess_writes(settings, workdir)
        imported = run_import(settings, workdir) if settings.import_vendors > 0 else None
        print(format_writes(settings, http, inprocess, imported), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
