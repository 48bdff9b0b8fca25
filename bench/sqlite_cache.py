"""SQLite page cache and memory map against file size: what the store's connection settings
(``compliance_store.sqlite.store``) were chosen from.

A list request reads index pages (the count: a whole filter range) and table pages (the page's
rows, scattered over the file). Each connection has its own page cache (``cache_size``); pages
it misses are copied in by a ``read()`` from the operating system's cache, unless the file is
memory-mapped (``mmap_size``), when they are read in place. The run opens one file (``--db``, or
a new one bulk-seeded with ``--vendors``), then for each setting opens ``--connections`` read-only
connections (the server's threads each have one) and sends them, in turn, requests like the
scale bench's: one or two filters with a random vendor's values, ``count(*)`` and a page of 10-100
rows at an offset below 500 (what a seek from an anchor leaves; ``--pages-only``: the page
alone, as when the total is cached). It prints the mean and p99 ms
per request, after a warm-up of the same length.

``python -m bench.sqlite_cache --vendors 1000000 [--settings 16000:0,16000:2048,...]``
(``cache KiB:mmap MiB``; the default compares the store's setting with a map over the file).
Requests taking turns on one thread show the map's saving on each read, not what it costs
workers under load (``compliance_store.sqlite.store.CACHE_KIB`` says why the store has none).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from compliance_store.sqlite.store import CACHE_KIB

from .scale_seed import seed_bulk
from .seed import sqlite_url
from .stores_bench import _FILTERS

__all__ = ["main"]

COLUMNS = tuple(column for _, column in _FILTERS)


def _requests(conn: sqlite3.Connection, count: int, rng: random.Random) -> list[tuple[str, list[Any], int, int]]:
    organization = conn.execute("SELECT organization_id FROM vendors LIMIT 1").fetchone()[0]
    total = conn.execute("SELECT max(rowid) FROM vendors").fetchone()[0]
    quoted = ", ".join(f'"{column}"' for column in COLUMNS)
    made = []
    while len(made) < count:
        row = conn.execute(f"SELECT {quoted} FROM vendors WHERE rowid = ?", (rng.randint(1, total),)).fetchone()
        if row is None:
            continue
        values = {c: v for c, v in zip(COLUMNS, row, strict=True) if v is not None}
        picked = rng.sample(sorted(values), min(len(values), rng.choice((1, 2))))
        where = " AND ".join(["organization_id = ?", "archived = 0", *(f'"{c}" = ?' for c in picked)])
        made.append((where, [organization, *(values[c] for c in picked)], rng.randint(10, 100), rng.randrange(500)))
    return made


def _run(
    connections: list[sqlite3.Connection], requests: list[tuple[str, list[Any], int, int]], *, count: bool
) -> list[float]:
    times = []
    for conn, (where, params, per_page, offset) in zip(itertools.cycle(connections), requests):
        started = time.perf_counter()
        if count:
            conn.execute(f"SELECT count(*) FROM vendors WHERE {where}", params).fetchone()
        conn.execute(
            f"SELECT * FROM vendors WHERE {where} ORDER BY created_at, id LIMIT ? OFFSET ?", [*params, per_page, offset]
        ).fetchall()
        times.append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sqlite_cache", description=__doc__)
    parser.add_argument("--db", help="an existing file holding seeded vendors")
    parser.add_argument("--vendors", type=int, default=100_000, help="seed a new file of this size (without --db)")
    parser.add_argument("--settings", default="rule,16000:2048", help="cache KiB:mmap MiB, or 'rule' (the store's)")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument(
        "--pages-only", action="store_true", help="no count (the server counts a filter set once per change)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compliance-cache-") as directory:
        path = args.db or str(Path(directory) / "cache.db")
        if not args.db:
            seed_bulk(sqlite_url(path), args.vendors)
        size = os.path.getsize(path)
        with sqlite3.connect(path) as conn:
            rng = random.Random(5)
            warmup, measured = _requests(conn, args.requests, rng), _requests(conn, args.requests, rng)
        print(f"{path}: {size / 2**20:,.0f} MiB; {args.connections} connections, {args.requests:,} requests")
        print(f"{'setting':<28}{'mean ms':>9}{'p50 ms':>9}{'p99 ms':>9}")
        for setting in args.settings.split(","):
            if setting == "rule":
                cache_kib, mmap_bytes = CACHE_KIB, 0
            else:
                kib, mib = setting.split(":")
                cache_kib, mmap_bytes = int(kib), int(mib) * 2**20
            connections = []
            for _ in range(args.connections):
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
                conn.execute(f"PRAGMA cache_size = -{cache_kib}")
                conn.execute(f"PRAGMA mmap_size = {mmap_bytes}")
                connections.append(conn)
            _run(connections, warmup, count=not args.pages_only)
            times = sorted(_run(connections, measured, count=not args.pages_only))
            label = f"cache {cache_kib / 1024:,.0f} MiB, mmap {mmap_bytes / 2**20:,.0f} MiB"
            p99 = times[int(len(times) * 0.99)]
            print(
                f"{label:<28}{statistics.fmean(times) * 1e3:>9.2f}{times[len(times) // 2] * 1e3:>9.2f}{p99 * 1e3:>9.2f}"
            )
            for conn in connections:
                conn.close()


if __name__ == "__main__":
    main()
