"""``python -m bench``: seed one SQLite database, run the HTTP and in-process benchmarks on it and
print both tables. A missed target is reported, not failed: the exit status is 0 unless the
benchmark itself could not run."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from compliance_http.server import DEFAULT_THREADS

from .http_bench import HttpSettings, format_http, run_http_bench, vendors_needed
from .inprocess_bench import format_inprocess, run_inprocess_bench
from .load import wrk_path
from .machine import busy_share, describe
from .seed import seed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured load per server (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured load before each run (default 2)")
    parser.add_argument("--connections", type=int, default=16, help="keep-alive connections (default 16)")
    parser.add_argument("--threads", type=int, default=2, help="load-generator threads (default 2)")
    parser.add_argument(
        "--server-threads",
        type=int,
        default=DEFAULT_THREADS,
        help=f"waitress threads per server process, both sides (default {DEFAULT_THREADS})",
    )
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="server processes on each side (default: CPU count)"
    )
    parser.add_argument("--vendors", type=int, default=10_000, help="vendors seeded (default 10000)")
    parser.add_argument(
        "--pages",
        type=int,
        default=1,
        metavar="N",
        help="HTTP: cycle through N different list pages of ~50 vendors instead of asking "
        "for page 1 again and again (5000 defeats the page cache, which holds about 300 "
        "such pages in its 32 MiB per worker; default 1)",
    )
    parser.add_argument("--repeats", type=int, default=30, help="in-process timing batches (default 30)")
    parser.add_argument("--skip-http", action="store_true", help="run only the in-process benchmark")
    parser.add_argument("--skip-inprocess", action="store_true", help="run only the HTTP benchmark")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also profile N in-process GET /v1/vendors?perPage=50 requests (cProfile)",
    )
    return parser


def _terminate_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every server started is stopped on the way out."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.pages < 1:
        parser.error("--pages must be at least 1")
    if vendors_needed(args.pages) > args.vendors:
        parser.error(f"--pages {args.pages} needs at least {vendors_needed(args.pages)} vendors (--vendors)")
    _terminate_on_sigterm()
    with tempfile.TemporaryDirectory(prefix="compliance-bench-") as directory:
        print(f"Machine: {describe()}", flush=True)
        workdir = Path(directory)
        db_path = workdir / "bench.db"
        started = time.perf_counter()
        seeded = seed(str(db_path), args.vendors)
        print(
            f"Seeded {seeded.vendors:,} vendors into {db_path.name} in {time.perf_counter() - started:.1f} s "
            f"(not measured)",
            flush=True,
        )
        busy = busy_share(1.0)
        if busy is not None and busy > 0.10:
            print(
                f"WARNING: other processes kept {busy:.0%} of the CPUs busy just before the run; "
                "the figures below will be low",
                flush=True,
            )
        if not args.skip_http:
            if wrk_path() is None:
                print(
                    "wrk is not installed: using the Python http.client load generator, whose own cost "
                    "caps the figures (apt-get install wrk for the real ones)",
                    flush=True,
                )
            settings = HttpSettings(
                workers=args.workers,
                connections=args.connections,
                threads=args.threads,
                seconds=args.seconds,
                warmup=args.warmup,
                pages=args.pages,
                server_threads=args.server_threads,
            )
            print()
            print(format_http(run_http_bench(db_path, seeded, workdir, settings)), flush=True)
        if not args.skip_inprocess:
            print()
            print(format_inprocess(run_inprocess_bench(db_path, seeded, repeats=args.repeats)), flush=True)
        if args.profile:
            from .profile_stack import format_profile, profile_list

            print()
            print(format_profile(profile_list(seeded, args.profile)), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; servers stopped", file=sys.stderr)
        sys.exit(130)
