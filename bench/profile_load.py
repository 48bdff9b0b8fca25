"""Profile real server workers while wrk loads them: what the in-process profile cannot show
(the socket, waitress's threads, and time spent waiting for SQLite's write lock).

Each worker wraps the /v1 app so that every request runs under a per-thread cProfile, and dumps
the merged statistics when it is stopped; the harness then merges the workers' files.
``python -m bench.profile_load [--seconds 8] [--workers 2]``
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import os
import pstats
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compliance_core.platform import Platform

from . import servers
from .http_bench import LIST_PATH, list_paths
from .load import run_load
from .profile_stack import format_summary, summarize
from .seed import seed

__all__ = ["ProfilingApp", "profile_under_load"]


class ProfilingApp:
    """A WSGI wrapper: one profiler per waitress thread (cProfile sees only its own thread)."""

    def __init__(self, app: Any, timer: Callable[[], float] | None = None) -> None:
        self._app = app
        self._timer = timer
        self._local = threading.local()
        self._profilers: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        profiler = getattr(self._local, "profiler", None)
        if profiler is None:
            profiler = cProfile.Profile(self._timer) if self._timer else cProfile.Profile()
            self._local.profiler = profiler
            with self._lock:
                self._profilers.append(profiler)
        # The body is a list of bytes built inside the call, so the whole request is profiled.
        return profiler.runcall(lambda: list(self._app(environ, start_response)))

    def dump(self, path: Path) -> None:
        with self._lock:
            profilers = list(self._profilers)
        if not profilers:
            return
        stats = pstats.Stats(profilers[0])
        for profiler in profilers[1:]:
            stats.add(profiler)
        stats.dump_stats(str(path))


@contextlib.contextmanager
def _profiled_app(url: str, out: Path, clock: str) -> Iterator[ProfilingApp]:
    from compliance_http.app import create_app

    with Platform.open(url) as platform:
        app = ProfilingApp(create_app(platform), time.thread_time if clock == "cpu" else None)
        try:
            yield app
        finally:
            app.dump(out / f"worker-{os.getpid()}.pstats")


def _serve(args: argparse.Namespace) -> None:
    from compliance_http.server import serve_forever

    factory = functools.partial(_profiled_app, args.url, Path(args.out), args.clock)
    serve_forever(factory, servers.HOST, args.port, args.workers, args.threads)


def profile_under_load(
    db_path: Path,
    url: str,
    api_key: str,
    workdir: Path,
    *,
    workers: int,
    threads: int,
    seconds: float,
    connections: int = 16,
    pages: int = 1,
    clock: str = "cpu",
) -> tuple[int, float, pstats.Stats]:
    out = workdir / "profiles"
    out.mkdir(exist_ok=True)
    port = servers.free_port()
    command = [
        servers.python(),
        "-m",
        "bench.profile_load",
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
        "--clock",
        clock,
    ]
    auth = {"X-API-Key": api_key}
    with servers.start("profiled full stack", command, port, workdir / "profiled.log", LIST_PATH, auth) as server:
        result = run_load(
            server.base_url + LIST_PATH,
            seconds=seconds,
            connections=connections,
            threads=2,
            headers=auth,
            paths=list_paths(pages) if pages > 1 else (),
        )
    files = sorted(out.glob("worker-*.pstats"))
    if not files:
        raise RuntimeError(f"no worker wrote its profile:\n{(workdir / 'profiled.log').read_text()[-2000:]}")
    stats = pstats.Stats(str(files[0]))
    for extra in files[1:]:
        stats.add(str(extra))
    return result.requests, result.requests_per_second, stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_load")
    servers.add_load_options(parser, seconds=8.0)
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: each thread's CPU time (what the code costs); wall: elapsed time, "
        "which adds lock waits, SQLite busy sleeps and waiting for the GIL",
    )
    parser.add_argument("--save", help="also write the merged pstats here (for snakeviz, pstats)")
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args)
        return
    with tempfile.TemporaryDirectory(prefix="compliance-profile-") as directory:
        workdir = Path(directory)
        db_path = workdir / "bench.db"
        seeded = seed(str(db_path), args.vendors)
        requests, rate, stats = profile_under_load(
            db_path,
            seeded.url,
            seeded.api_key,
            workdir,
            workers=args.workers,
            threads=args.threads,
            seconds=args.seconds,
            connections=args.connections,
            clock=args.clock,
            pages=args.pages,
        )
        if args.save:
            stats.dump_stats(args.save)
    summary = summarize(stats, requests)
    target = LIST_PATH if args.pages == 1 else f"/v1/vendors ({args.pages:,} different pages)"
    print(
        f"Profile under load: {requests:,} x GET {target} by wrk ({args.connections} connections) on "
        f"{args.workers} workers x {args.threads} threads, {rate:,.0f} req/s while profiled, {args.clock} clock"
    )
    print("\n".join(format_summary(summary)))


if __name__ == "__main__":
    main()
