"""Time every SQL statement inside live workers under wrk load: which statement a request waits
on (a write lock shows up as a long ``BEGIN IMMEDIATE``), and how many statements a request runs.

Only for diagnosis: each worker process swaps ``sqlite3.connect`` for one returning a timing
``Connection`` subclass before it opens the store, and writes its totals when stopped.
``python -m bench.sql_timing [--seconds 6] [--workers 2] [--threads 8]``
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compliance_core.platform import Platform

from . import servers
from .http_bench import LIST_PATH, list_paths
from .load import run_load
from .seed import seed

__all__ = ["time_statements"]


def _statement(sql: str) -> str:
    words = sql.split()
    return " ".join(words[:4])[:48] if words else ""


@contextlib.contextmanager
def _timed_app(url: str, out: Path) -> Iterator[Any]:
    from compliance_http.app import create_app

    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    lock = threading.Lock()

    class TimedConnection(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            started = time.perf_counter()
            try:
                return super().execute(sql, *args)
            finally:
                elapsed = time.perf_counter() - started
                with lock:
                    entry = totals[_statement(sql)]
                    entry[0] += 1
                    entry[1] += elapsed

    connect = sqlite3.connect
    sqlite3.connect = functools.partial(connect, factory=TimedConnection)  # type: ignore[assignment]
    with Platform.open(url) as platform:
        try:
            yield create_app(platform)
        finally:
            with lock:
                (out / f"sql-{os.getpid()}.json").write_text(json.dumps(totals))


def _serve(args: argparse.Namespace) -> None:
    from compliance_http.server import serve_forever

    serve_forever(
        functools.partial(_timed_app, args.url, Path(args.out)), servers.HOST, args.port, args.workers, args.threads
    )


def time_statements(
    url: str,
    api_key: str,
    workdir: Path,
    *,
    workers: int,
    threads: int,
    seconds: float,
    connections: int = 16,
    pages: int = 1,
) -> tuple[int, float, dict[str, tuple[int, float]]]:
    out = workdir / "sql"
    out.mkdir(exist_ok=True)
    port = servers.free_port()
    command = [
        servers.python(),
        "-m",
        "bench.sql_timing",
        "--serve",
        "--url",
        url,
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--out",
        str(out),
    ]
    auth = {"X-API-Key": api_key}
    with servers.start("timed full stack", command, port, workdir / "timed.log", LIST_PATH, auth) as server:
        result = run_load(
            server.base_url + LIST_PATH,
            seconds=seconds,
            connections=connections,
            threads=2,
            headers=auth,
            paths=list_paths(pages) if pages > 1 else (),
        )
    merged: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for path in out.glob("sql-*.json"):
        for statement, (calls, total) in json.loads(path.read_text()).items():
            merged[statement][0] += calls
            merged[statement][1] += total
    if not merged:
        raise RuntimeError(f"no worker wrote its timings:\n{(workdir / 'timed.log').read_text()[-2000:]}")
    return result.requests, result.requests_per_second, {k: (int(v[0]), v[1]) for k, v in merged.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sql_timing")
    servers.add_load_options(parser, seconds=6.0)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args)
        return
    with tempfile.TemporaryDirectory(prefix="compliance-sql-") as directory:
        workdir = Path(directory)
        seeded = seed(str(workdir / "bench.db"), args.vendors)
        requests, rate, timings = time_statements(
            seeded.url,
            seeded.api_key,
            workdir,
            workers=args.workers,
            threads=args.threads,
            seconds=args.seconds,
            connections=args.connections,
            pages=args.pages,
        )
    spread = "" if args.pages == 1 else f", {args.pages:,} different pages"
    print(
        f"SQL statements in {args.workers} workers x {args.threads} threads under wrk ({args.connections} "
        f"connections{spread}): {requests:,} requests, {rate:,.0f} req/s (start-up statements included)"
    )
    print(f"{'statement':<50}{'calls/req':>10}{'mean ms':>10}{'ms/req':>9}")
    for statement, (calls, total) in sorted(timings.items(), key=lambda item: -item[1][1]):
        if calls >= requests / 2:
            print(f"{statement:<50}{calls / requests:>10.2f}{total / calls * 1e3:>10.3f}{total / requests * 1e3:>9.3f}")


if __name__ == "__main__":
    main()
