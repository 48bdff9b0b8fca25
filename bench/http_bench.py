"""Benchmark 1: GET /v1/vendors?perPage=50 through the full stack against a bare Falcon app that
answers the very same bytes, both on N waitress processes sharing one socket.

The ratio full/bare is the share of the server's capacity left after the platform's own work
(authentication, rate limit, the SQLite page query and count, rendering); the bare app sets the
ceiling that Python, Falcon and waitress impose on this machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import orjson

from compliance_http.server import DEFAULT_THREADS

from . import servers
from .load import LoadResult, run_load
from .machine import CpuMeter, group_cpu_seconds
from .seed import Seeded

__all__ = [
    "HttpSettings",
    "HttpResult",
    "Measured",
    "format_http",
    "run_http_bench",
    "LIST_PATH",
    "list_paths",
    "vendors_needed",
    "compliance_command",
]

LIST_PATH = "/v1/vendors?perPage=50"
_SIZES = range(25, 76)
"""perPage values of a spread run: 51 sizes averaging 50, so the bodies match LIST_PATH's on average."""


def _spread(pages: int) -> list[tuple[int, int]]:
    """(page, perPage) of each request of a spread run."""
    return [(k // len(_SIZES) + 1, _SIZES[k % len(_SIZES)]) for k in range(pages)]


def list_paths(pages: int) -> tuple[str, ...]:
    """``pages`` different list requests. One is LIST_PATH. More take perPage 25..75 in turn and
    move to the next page every 51 requests: every request asks for a different page of 50
    vendors on average, all in the first ~7,500 of the register (5,000 pages), so none pays for a
    very long OFFSET. The server's page cache keeps 32 MiB of pages per worker, about 300 pages
    of 50 seeded vendors, and a keep-alive connection stays on one worker: with 16 connections,
    5,000 pages keep even a worker that got a single connection from seeing a page again before
    some 300 others have pushed it out."""
    if pages < 1:
        raise ValueError("pages must be at least 1")
    if pages == 1:
        return (LIST_PATH,)
    return tuple(f"/v1/vendors?page={page}&perPage={size}" for page, size in _spread(pages))


def vendors_needed(pages: int) -> int:
    """Vendors the register must hold for every page of ``list_paths(pages)`` to be full."""
    return 50 if pages == 1 else max(page * size for page, size in _spread(pages))


@attrs.frozen(kw_only=True)
class HttpSettings:
    workers: int
    connections: int = 16
    threads: int = 2
    seconds: float = 10.0
    warmup: float = 2.0
    server_threads: int = DEFAULT_THREADS
    pages: int = 1
    """How many different pages the requests cycle through (``list_paths``)."""


@attrs.frozen(kw_only=True)
class HttpResult:
    settings: HttpSettings
    body_bytes: int
    content_type: str
    full: Measured
    bare: Measured

    @property
    def ratio(self) -> float:
        return self.full.load.requests_per_second / self.bare.load.requests_per_second


def compliance_command() -> list[str]:
    script = Path(servers.python()).with_name("compliance")
    if script.exists():
        return [str(script)]
    found = shutil.which("compliance")
    if found is None:
        raise RuntimeError("the `compliance` command is not installed (pip install -e . in the venv)")
    return [found]


@attrs.frozen(kw_only=True)
class Measured:
    load: LoadResult
    cpu_busy: float | None
    """Share of all CPUs busy during the measured run (server, load generator and anything else)."""
    server_cpu_us: float | None
    """CPU time the server's processes spent per request served."""


def _measure(server: servers.Server, settings: HttpSettings, headers: dict[str, str]) -> Measured:
    url = server.base_url + LIST_PATH
    paths = list_paths(settings.pages) if settings.pages > 1 else ()
    if settings.warmup > 0:
        run_load(
            url,
            seconds=settings.warmup,
            connections=settings.connections,
            threads=settings.threads,
            headers=headers,
            paths=paths,
        )
    meter = CpuMeter().start()
    cpu_before = group_cpu_seconds(server.process.pid)
    result = run_load(
        url,
        seconds=settings.seconds,
        connections=settings.connections,
        threads=settings.threads,
        headers=headers,
        paths=paths,
    )
    cpu_after = group_cpu_seconds(server.process.pid)
    busy = meter.stop()
    per_request = None
    if cpu_before is not None and cpu_after is not None and result.requests:
        per_request = (cpu_after - cpu_before) / result.requests * 1e6
    return Measured(load=result, cpu_busy=busy, server_cpu_us=per_request)


def run_http_bench(db_path: Path, seeded: Seeded, workdir: Path, settings: HttpSettings) -> HttpResult:
    auth = {"X-API-Key": seeded.api_key}
    port = servers.free_port()
    full_command = compliance_command() + [
        "serve",
        "--db",
        str(db_path),
        "--host",
        servers.HOST,
        "--port",
        str(port),
        "--workers",
        str(settings.workers),
        "--threads",
        str(settings.server_threads),
    ]
    with servers.start("full stack", full_command, port, workdir / "full-stack.log", LIST_PATH, auth) as full:
        status, headers, body = servers.fetch(full.base_url + LIST_PATH, auth)
        if status != 200:
            raise RuntimeError(f"full stack answered {status} to {LIST_PATH}: {body[:500]!r}")
        last = list_paths(settings.pages)[-1]
        status, _, tail = servers.fetch(full.base_url + last, auth)
        if status != 200 or not orjson.loads(tail)["data"]:
            raise RuntimeError(f"full stack answered {status} to {last} with no vendors: seed more")
        content_type = headers.get("content-type", "application/json")
        full_result = _measure(full, settings, auth)

    body_file = workdir / "vendors-page.json"
    body_file.write_bytes(body)
    port = servers.free_port()
    bare_command = [
        servers.python(),
        "-m",
        "bench.bare",
        "--host",
        servers.HOST,
        "--port",
        str(port),
        "--workers",
        str(settings.workers),
        "--threads",
        str(settings.server_threads),
        "--body",
        str(body_file),
        "--content-type",
        content_type,
    ]
    with servers.start("bare falcon", bare_command, port, workdir / "bare.log", LIST_PATH) as bare:
        status, _, copy = servers.fetch(bare.base_url + LIST_PATH)
        if status != 200 or copy != body:
            raise RuntimeError("the bare app does not serve the captured bytes")
        bare_result = _measure(bare, settings, {})

    return HttpResult(
        settings=settings, body_bytes=len(body), content_type=content_type, full=full_result, bare=bare_result
    )


def format_http(result: HttpResult) -> str:
    s = result.settings
    full, bare = result.full.load, result.bare.load
    if s.pages == 1:
        target = f"GET {LIST_PATH} ({result.body_bytes:,} bytes, {result.content_type})"
    else:
        paths = list_paths(s.pages)
        target = (
            f"GET /v1/vendors cycling through {s.pages:,} different pages ({paths[0]} ... {paths[-1]}: "
            f"perPage {_SIZES[0]}-{_SIZES[-1]}, ~{result.body_bytes:,} bytes each; the bare app answers "
            f"every one with the perPage=50 bytes)"
        )
    lines = [
        f"HTTP: {target}, {s.workers} waitress processes x {s.server_threads} threads, {full.generator} "
        f"{s.threads} threads / {s.connections} keep-alive connections, {s.warmup:g} s warm-up + {s.seconds:g} s",
        f"{'server':<26}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>7}"
        f"{'CPU busy':>10}{'server CPU us/req':>19}",
    ]
    for name, measured in (("full stack", result.full), ("bare Falcon (same bytes)", result.bare)):
        load = measured.load
        busy = "n/a" if measured.cpu_busy is None else f"{measured.cpu_busy:.0%}"
        cost = "n/a" if measured.server_cpu_us is None else f"{measured.server_cpu_us:,.0f}"
        lines.append(
            f"{name:<26}{load.requests_per_second:>9,.0f}{load.p50_ms:>9.2f}{load.p99_ms:>9.2f}"
            f"{load.requests:>10,}{load.errors:>7}{busy:>10}{cost:>19}"
        )
    ratio_ok = "met" if result.ratio >= 0.5 else "MISSED"
    p99_ok = "met" if full.p99_ms < 10 else "MISSED"
    lines.append(
        f"full/bare throughput: {result.ratio:.1%} (target >= 50%: {ratio_ok}); "
        f"full-stack p99 {full.p99_ms:.2f} ms (target < 10 ms: {p99_ok})"
    )
    if full.errors or bare.errors:
        lines.append("WARNING: errors or non-2xx answers during the run; the figures above include them")
    return "\n".join(lines)
