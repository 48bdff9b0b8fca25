"""Benchmark 6 (issue 8): lists at scale. Random pages (perPage 10-100) with one or two random
filters, at each register size (default 10k, 100k, 1M vendors) on SQLite and PostgreSQL, against
the full stack (``compliance serve``) and the limit (``plain.py``: the same SQL with the plain
driver and orjson, served by the same prefork code with the same processes and threads).

Each size gets a fresh store (a file, or a schema ``bench_<random>`` dropped afterwards) seeded by
``scale_seed`` (not timed; PostgreSQL then vacuumed and analysed as autovacuum would, SQLite
analysed as the server's lead worker would at start-up). Both servers
run on it in turn and wrk walks the same 20,000 requests (``stores_bench.filtered_paths``) with
the warm-up and duration of the other benchmarks.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from compliance_store.sqlite import SqliteStore

from . import servers
from .http_bench import LIST_PATH, compliance_command
from .scale_seed import seed_bulk
from .stores_bench import (
    Run,
    StoresSettings,
    _check,
    _measure,
    _postgresql,
    _sqlite,
    _Store,
    _vacuum_analyze,
    filtered_paths,
)

__all__ = ["ScaleRow", "run_scale_bench", "format_scale"]


@attrs.frozen(kw_only=True)
class ScaleRow:
    store: str
    label: str
    vendors: int
    seed_seconds: float
    full: Run
    plain: Run


def _serve(
    name: str, command: list[str], port: int, workdir: Path, auth: dict[str, str]
) -> contextlib.AbstractContextManager[servers.Server]:
    return servers.start(name, command, port, workdir / f"scale-{name.split()[0]}.log", LIST_PATH, auth)


def _one(name: str, vendors: int, settings: StoresSettings, workdir: Path, log: Callable[[str], None]) -> ScaleRow:
    opener = _sqlite(workdir) if name == "sqlite" else _postgresql(settings.postgres_url)
    with opener as store:
        started = time.perf_counter()
        bulk = seed_bulk(store.url, vendors)
        if name == "postgresql":
            _vacuum_analyze(store.url)
        else:
            _refresh_statistics(store.url)
        took = time.perf_counter() - started
        log(f"{store.label}: seeded {vendors:,} vendors in {took:.1f} s, counters checked (not measured)")
        paths = filtered_paths(bulk.pool, picks=bulk.picks)
        auth = {"X-API-Key": bulk.seeded.api_key}
        common = ["--host", servers.HOST, "--workers", str(settings.workers), "--threads", str(settings.server_threads)]
        runs: dict[str, Run] = {}
        for kind in ("full", "plain"):
            port = servers.free_port()
            if kind == "full":
                command = compliance_command() + ["serve", "--db", store.url, "--port", str(port), *common]
            else:
                command = [servers.python(), "-m", "bench.plain", "--url", store.url, "--port", str(port), *common]
                command += ["--organization", bulk.seeded.organization_id]
            with _serve(f"{kind} ({name})", command, port, workdir, auth) as server:
                for path in (paths[0], paths[-1]):
                    _check(server, path, auth)
                runs[kind] = _measure(server, settings, auth, store, paths=paths)
        _remove(store)
    return ScaleRow(store=name, label=store.label, vendors=vendors, seed_seconds=took, **runs)


def _refresh_statistics(url: str) -> None:
    """Analyse the seeded file as the server's lead worker would at start-up (the seed writes
    past the store, so nothing has yet): the run measures lists, not the first analysis."""
    store = SqliteStore(url)
    try:
        store.refresh_statistics()
    finally:
        store.close()


def _remove(store: _Store) -> None:
    if store.url.startswith("sqlite:"):
        path = Path(store.url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                Path(f"{path}{suffix}").unlink()


def run_scale_bench(
    settings: StoresSettings, sizes: tuple[int, ...], workdir: Path, *, log: Callable[[str], None] = print
) -> list[ScaleRow]:
    return [_one(name, vendors, settings, workdir, log) for name in settings.stores for vendors in sizes]


def format_scale(rows: list[ScaleRow], settings: StoresSettings) -> str:
    s = settings
    lines = [
        f"Lists at scale: random pages (perPage 10-100) with 1-2 random filters, 20,000 different requests; "
        f"{s.workers} processes x {s.server_threads} threads, wrk {s.threads} threads / {s.connections} connections, "
        f"{s.warmup:g} s warm-up + {s.seconds:g} s",
        f"{'store':<18}{'vendors':>10}{'full req/s':>12}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'plain req/s':>13}{'p50 ms':>9}{'p99 ms':>9}{'full/plain':>12}{'srv us/req':>12}{'other':>7}",
    ]
    for row in rows:
        full, plain = row.full.load, row.plain.load
        ratio = full.requests_per_second / plain.requests_per_second if plain.requests_per_second else 0.0
        cpu = f"{row.full.server_cpu_us:,.0f}" if row.full.server_cpu_us is not None else "n/a"
        other = f"{row.full.other_busy:.0%}" if row.full.other_busy is not None else "n/a"
        lines.append(
            f"{row.label:<18}{row.vendors:>10,}{full.requests_per_second:>12,.0f}{full.p50_ms:>9.2f}{full.p99_ms:>9.2f}"
            f"{plain.requests_per_second:>13,.0f}{plain.p50_ms:>9.2f}{plain.p99_ms:>9.2f}{ratio:>12.0%}{cpu:>12}{other:>7}"
        )
    lines.append("Ratios against the smallest size (full stack / plain SQL):")
    for name in dict.fromkeys(row.store for row in rows):
        mine = [row for row in rows if row.store == name]
        base = mine[0]
        for row in mine[1:]:
            rate = [
                getattr(row, k).load.requests_per_second / getattr(base, k).load.requests_per_second
                for k in ("full", "plain")
            ]
            p99 = [getattr(row, k).load.p99_ms / getattr(base, k).load.p99_ms for k in ("full", "plain")]
            lines.append(
                f"  {row.label}: req/s {row.vendors:,}/{base.vendors:,} {rate[0]:.0%} / {rate[1]:.0%}; "
                f"p99 {row.vendors:,}/{base.vendors:,} {p99[0]:.1f}x / {p99[1]:.1f}x"
            )
    errors = [
        f"{r.label} {r.vendors:,} (full {r.full.load.errors:,} of {r.full.load.requests:,}, "
        f"plain {r.plain.load.errors:,} of {r.plain.load.requests:,})"
        for r in rows
        if r.full.load.errors or r.plain.load.errors
    ]
    if errors:
        lines.append(
            "WARNING: errors, non-2xx answers or wrk's 5 s timeouts in "
            + "; ".join(errors)
            + ": those figures include them"
        )
    noisy = [f"{r.label} {r.vendors:,}" for r in rows if max(r.full.other_busy or 0, r.plain.other_busy or 0) > 0.10]
    if noisy:
        lines.append("WARNING: other work kept >10% of the CPUs busy during " + ", ".join(noisy) + ": figures low")
    return "\n".join(line.rstrip() for line in lines)
