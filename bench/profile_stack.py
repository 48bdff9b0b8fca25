"""Where a list request's time goes: the full stack's hot path, in one process, without sockets.

Two views: a stage breakdown (timed without the profiler, so it is not inflated) and cProfile's
own-time per function and per package. The HTTP benchmark says how fast; this says what to cut.
Requests are plain WSGI calls on a prepared environ (no test client, whose own checks would
outweigh the app), and repeat one request, which core's page cache answers after the first;
``--no-page-cache`` gives the service a cache that keeps nothing, to see what a miss costs.
``python -m bench.profile_stack [--requests N] [--no-page-cache]`` or ``python -m bench --profile N``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import falcon.testing

from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.pages import PageRequest
from compliance_core.platform import Platform

from .bare import create_bare_app
from .http_bench import LIST_PATH
from .seed import Seeded, seed

__all__ = ["ProfileResult", "Summary", "profile_list", "format_profile", "summarize", "format_summary"]

PATH, _, QUERY = LIST_PATH.partition("?")


@attrs.frozen(kw_only=True)
class ProfileResult:
    requests: int
    page_cache: bool
    stages: tuple[tuple[str, float], ...]
    """(stage, microseconds per request)"""
    summary: Summary


def _wsgi_get(app: Any, headers: dict[str, str]) -> Callable[[], bytes]:
    """GET LIST_PATH from ``app`` as a server would call it, raising unless it answers 200."""
    environ = falcon.testing.create_environ(PATH, query_string=QUERY, headers=headers)

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        if not status.startswith("200"):
            raise RuntimeError(f"{LIST_PATH} answered {status}")

    def call() -> bytes:
        request = dict(environ)
        request["wsgi.input"] = io.BytesIO()
        return b"".join(app(request, start_response))

    return call


def _per_call_us(call: Callable[[], object], count: int, rounds: int = 5) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(count):
            call()
        samples.append((time.perf_counter() - started) / count * 1e6)
    return statistics.median(samples)


def _package(filename: str) -> str:
    if filename == "~":
        return "builtins (C: sqlite3, orjson, ...)"
    if filename.startswith("<"):  # code compiled at run time: attrs/cattrs classes, store row readers
        for marker, name in (
            ("cattrs generated", "cattrs"),
            ("attrs generated", "attr"),
            ("row reader", "compliance_store"),
        ):
            if marker in filename:
                return name
        return f"generated {filename}"
    for marker in (
        "compliance_core",
        "compliance_store",
        "compliance_http",
        "falcon",
        "cattrs",
        "attr",
        "sqlite_utils",
        "waitress",
        "orjson",
        "blinker",
    ):
        if f"/{marker}/" in filename:
            return marker
    return "stdlib / other"


def _label(key: tuple[str, int, str]) -> str:
    filename, line, name = key
    if filename == "~":
        return name
    for marker in (
        "compliance_core/",
        "compliance_store/",
        "compliance_http/",
        "falcon/",
        "cattrs/",
        "attr/",
        "sqlite_utils/",
        "python3.11/",
    ):
        index = filename.find(marker)
        if index >= 0:
            return f"{filename[index:]}:{line} {name}"
    return f"{Path(filename).name}:{line} {name}"


@attrs.frozen(kw_only=True)
class Summary:
    total_us: float
    """Profiled time per request (all functions' own time)."""
    packages: tuple[tuple[str, float], ...]
    """(package, share of own time)"""
    functions: tuple[tuple[str, int, float, float], ...]
    """(function, calls per request, own us per request, cumulative us per request)"""


def summarize(stats: pstats.Stats, requests: int, top: int = 25) -> Summary:
    """Own time by package, and the ``top`` functions by own time, per request."""
    raw = stats.stats  # type: ignore[attr-defined]
    total_own = sum(entry[2] for entry in raw.values()) or 1.0
    by_package: dict[str, float] = defaultdict(float)
    for key, (_, _, own, _, _) in raw.items():
        by_package[_package(key[0])] += own
    packages = tuple(sorted(((name, own / total_own) for name, own in by_package.items()), key=lambda item: -item[1]))
    ranked = sorted(raw.items(), key=lambda item: -item[1][2])[:top]
    functions = tuple(
        (_label(key), round(calls / requests), own / requests * 1e6, cumulative / requests * 1e6)
        for key, (_, calls, own, cumulative, _) in ranked
    )
    return Summary(total_us=total_own / requests * 1e6, packages=packages, functions=functions)


def format_summary(summary: Summary) -> list[str]:
    lines = [f"cProfile own time by package ({summary.total_us:,.0f} us profiled per request):"]
    lines += [f"  {name:<40}{share:>7.1%}" for name, share in summary.packages if share >= 0.001]
    lines += ["", f"{'top functions by own time':<78}{'calls/req':>10}{'own us':>8}{'cum us':>8}"]
    lines += [
        f"{name[:78]:<78}{calls:>10}{own:>8.1f}{cumulative:>8.1f}" for name, calls, own, cumulative in summary.functions
    ]
    lines.append(
        "(cProfile adds its own overhead per call: compare the rows with each other, not with the stage timings)"
    )
    return lines


def profile_list(seeded: Seeded, requests: int = 2000, *, page_cache: bool = True) -> ProfileResult:
    from compliance_http.app import create_app

    headers = {"X-API-Key": seeded.api_key}
    with Platform.open(seeded.url) as platform:
        if not page_cache:
            platform.vendors.pages = PageCache(0)
        full = _wsgi_get(create_app(platform), headers)
        body = full()
        bare = _wsgi_get(create_bare_app(body, "application/json"), {})
        actor = platform.actor(seeded.organization_id)
        page = PageRequest(page=1, per_page=50)
        count = max(50, requests // 10)
        for _ in range(count):  # warm-up
            full()
        whole = _per_call_us(full, count)
        baseline = _per_call_us(bare, count)
        admit = _per_call_us(lambda: platform.access.admit(seeded.api_key), count)
        listing = _per_call_us(lambda: platform.vendors.list(actor, page=page), count)
        stages = (
            ("whole request (WSGI call, full stack)", whole),
            ("  bare Falcon, same bytes", baseline),
            ("  access.admit (key lookup, bucket, usage: a write tx)", admit),
            ("  vendors.list (read tx, revision or page query + models)", listing),
            ("  the rest: middleware, wire rendering, JSON, headers", whole - baseline - admit - listing),
        )

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(requests):
            full()
        profiler.disable()

    return ProfileResult(
        requests=requests, page_cache=page_cache, stages=stages, summary=summarize(pstats.Stats(profiler), requests)
    )


def format_profile(result: ProfileResult) -> str:
    cache = "page cache on: a hit after the first" if result.page_cache else "page cache off: every list a query"
    lines = [
        f"Profile: {result.requests} x GET {LIST_PATH} in-process (WSGI calls, SQLite, 10k vendors, {cache})",
        f"{'stage':<58}{'us/request':>11}",
    ]
    lines += [f"{stage:<58}{us:>11.0f}" for stage, us in result.stages]
    lines.append("")
    lines += format_summary(result.summary)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_stack")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument(
        "--no-page-cache",
        action="store_true",
        help="give the vendor service a page cache that keeps nothing (every list queries)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compliance-profile-") as directory:
        seeded = seed(str(Path(directory) / "bench.db"), args.vendors)
        print(format_profile(profile_list(seeded, args.requests, page_cache=not args.no_page_cache)))


if __name__ == "__main__":
    main()
