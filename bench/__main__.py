"""``python -m bench``: seed one SQLite database, run the HTTP and in-process benchmarks on it and
print both tables; then run the same HTTP workloads on SQLite and PostgreSQL side by side (when a
PostgreSQL server answers). A missed target is reported, not failed: the exit status is 0 unless
the benchmark itself could not run."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from compliance_http.server import DEFAULT_THREADS

from .blobs_bench import format_blobs, run_blobs_bench
from .frameworks_bench import run_frameworks_cli
from .http_bench import HttpSettings, format_http, run_http_bench, vendors_needed
from .inprocess_bench import format_inprocess, run_inprocess_bench
from .load import wrk_path
from .machine import busy_share, describe
from .pdf_bench import format_pdf, run_pdf_bench
from .scale import format_scale, run_scale_bench
from .seed import seed
from .stores_bench import (
    STORES,
    StoresSettings,
    format_stores,
    postgres_server_url,
    postgres_unavailable,
    run_stores_bench,
)
from .writes_bench import WriteSettings, format_writes, run_writes


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
    parser.add_argument(
        "--skip-http", action="store_true", help="skip the HTTP benchmark (full stack against bare Falcon)"
    )
    parser.add_argument("--skip-inprocess", action="store_true", help="skip the in-process benchmark")
    parser.add_argument(
        "--skip-pdf", action="store_true", help="skip the policy PDF benchmark (adversarial Markdown, n to 8n)"
    )
    parser.add_argument(
        "--skip-blobs", action="store_true", help="skip the blob streaming benchmark (a 1 GB upload's peak memory)"
    )
    parser.add_argument(
        "--stores",
        type=_stores,
        default=None,
        metavar="LIST",
        help="stores of the side-by-side benchmark, comma-separated: sqlite, postgresql (default: both when a "
        "PostgreSQL server answers, else that benchmark is skipped, saying so)",
    )
    parser.add_argument("--skip-stores", action="store_true", help="skip the SQLite/PostgreSQL side-by-side benchmark")
    parser.add_argument(
        "--skip-writes",
        action="store_true",
        help="skip the writes benchmark (creates over HTTP with 8 clients on SQLite, PostgreSQL and a plain "
        "sqlite3 app; creates in-process; a 200,000-vendor import)",
    )
    parser.add_argument(
        "--import-vendors",
        type=int,
        default=200_000,
        metavar="N",
        help="vendors of the writes benchmark's import (default 200000; 0 skips it)",
    )
    parser.add_argument(
        "--postgres-url",
        default=None,
        metavar="URL",
        help="PostgreSQL server of the side-by-side benchmark, without a schema (default: $COMPLIANCE_POSTGRES_URL, "
        "else postgresql://postgres@127.0.0.1:5432/test); it works in a schema bench_<random> dropped at the end",
    )
    parser.add_argument(
        "--store-workers",
        type=int,
        default=2,
        help="server processes of the side-by-side benchmark (default 2)",
    )
    parser.add_argument(
        "--scale",
        type=_sizes,
        default=(),
        metavar="SIZES",
        help="also run the lists-at-scale benchmark (issue 8) at these vendor counts, e.g. 10000,100000,1000000: "
        "random pages and filters, full stack against plain SQL + orjson, on the --stores (off by default: "
        "about 2 min per size and store, plus seeding)",
    )
    parser.add_argument("--skip-scale", action="store_true", help="do not run the lists-at-scale benchmark")
    parser.add_argument(
        "--frameworks",
        type=_sizes,
        nargs="?",
        const=(10_000, 100_000),
        default=(),
        metavar="SIZES",
        help="run only the frameworks' lists benchmark (issue 19: controls, framework rows, task templates and "
        "statement rows in-process, beside vendors) at these row counts (default 10000,100000) on the --stores",
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also profile N in-process GET /v1/vendors?perPage=50 requests (cProfile)",
    )
    return parser


def _stores(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip().lower() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in STORES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(STORES)}, not {text!r}")
    return tuple(name for name in STORES if name in names)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1000:
        raise argparse.ArgumentTypeError(f"expected vendor counts of at least 1000, comma-separated, not {text!r}")
    return tuple(sorted(set(sizes)))


def _terminate_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every server started is stopped on the way out."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def _stores_to_run(args: argparse.Namespace) -> tuple[tuple[str, ...], str | None]:
    """The stores of the side-by-side benchmark, and why it cannot run (None when it can)."""
    if args.skip_stores and (args.skip_scale or not args.scale):
        return (), None
    stores = args.stores if args.stores is not None else STORES
    if wrk_path() is None:
        return stores, "it needs wrk for its Lua scripts (apt-get install wrk)"
    if "postgresql" in stores:
        reason = postgres_unavailable(postgres_server_url(args.postgres_url))
        if reason is not None:
            return stores, (
                f"{reason}; set COMPLIANCE_POSTGRES_URL or --postgres-url to a server, "
                "or run --stores sqlite for SQLite alone"
            )
    return stores, None


def _main_benchmarks(args: argparse.Namespace, workdir: Path) -> None:
    """The HTTP and in-process benchmarks (and the profile) on one seeded SQLite database."""
    db_path = workdir / "bench.db"
    started = time.perf_counter()
    seeded = seed(str(db_path), args.vendors)
    print(
        f"Seeded {seeded.vendors:,} vendors into {db_path.name} in {time.perf_counter() - started:.1f} s "
        f"(not measured)",
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


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.frameworks:
        return run_frameworks_cli(args.frameworks, args.stores or STORES, args.postgres_url)
    if args.pages < 1:
        parser.error("--pages must be at least 1")
    if vendors_needed(args.pages) > args.vendors:
        parser.error(f"--pages {args.pages} needs at least {vendors_needed(args.pages)} vendors (--vendors)")
    stores, skipped = _stores_to_run(args)
    if skipped and args.stores is not None:
        print(f"python -m bench: --stores {','.join(args.stores)}: {skipped}", file=sys.stderr)
        return 2
    _terminate_on_sigterm()
    with tempfile.TemporaryDirectory(prefix="compliance-bench-") as directory:
        print(f"Machine: {describe()}", flush=True)
        busy = busy_share(1.0)
        if busy is not None and busy > 0.10:
            print(
                f"WARNING: other processes kept {busy:.0%} of the CPUs busy just before the run; "
                "the figures below will be low",
                flush=True,
            )
        workdir = Path(directory)
        if not (args.skip_http and args.skip_inprocess and not args.profile):
            _main_benchmarks(args, workdir)
        if not args.skip_pdf:
            print()
            print(format_pdf(run_pdf_bench()), flush=True)
        if not args.skip_blobs:
            print()
            print(format_blobs(run_blobs_bench(directory=workdir)), flush=True)
        if not args.skip_writes:
            print()
            _run_writes(args, workdir)
        if skipped:
            print()
            print(f"SQLite/PostgreSQL side by side: SKIPPED, {skipped}", flush=True)
        elif stores:
            _run_stores(args, stores, workdir)
        if not skipped and stores and args.scale and not args.skip_scale:
            _run_scale(args, stores, workdir)
        elif not args.skip_scale:
            print()
            print(
                "Lists at scale: not run (python -m bench --skip-http --skip-inprocess --skip-stores "
                "--scale 10000,100000,1000000)",
                flush=True,
            )
    return 0


def _settings(args: argparse.Namespace, stores: tuple[str, ...]) -> StoresSettings:
    return StoresSettings(
        stores=stores,
        postgres_url=postgres_server_url(args.postgres_url),
        vendors=args.vendors,
        workers=args.store_workers,
        server_threads=args.server_threads,
        connections=args.connections,
        threads=args.threads,
        seconds=args.seconds,
        warmup=args.warmup,
    )


def _run_stores(args: argparse.Namespace, stores: tuple[str, ...], workdir: Path) -> None:
    if args.skip_stores:
        return
    print()
    result = run_stores_bench(_settings(args, stores), workdir, log=lambda line: print(line, flush=True))
    print(format_stores(result), flush=True)


def _run_writes(args: argparse.Namespace, workdir: Path) -> None:
    settings = WriteSettings(
        postgres_url=postgres_server_url(args.postgres_url),
        seconds=args.seconds,
        warmup=args.warmup,
        import_vendors=args.import_vendors,
    )
    print(format_writes(settings, *run_writes(settings, workdir, log=lambda line: print(line, flush=True))), flush=True)


def _run_scale(args: argparse.Namespace, stores: tuple[str, ...], workdir: Path) -> None:
    print()
    settings = _settings(args, stores)
    rows = run_scale_bench(settings, args.scale, workdir, log=lambda line: print(line, flush=True))
    print(format_scale(rows, settings), flush=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; servers stopped", file=sys.stderr)
        sys.exit(130)
