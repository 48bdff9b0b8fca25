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

from compliance_http.server import DEFAULT_THREADS

from . import servers
from .load import LoadResult, run_load
from .machine import CpuMeter
from .seed import Seeded

__all__ = ["HttpSettings", "HttpResult", "run_http_bench", "LIST_PATH"]

LIST_PATH = "/v1/vendors?perPage=50"


@attrs.frozen(kw_only=True)
class HttpSettings:
    workers: int
    connections: int = 16
    threads: int = 2
    seconds: float = 10.0
    warmup: float = 2.0
    server_threads: int = DEFAULT_THREADS


@attrs.frozen(kw_only=True)
class HttpResult:
    settings: HttpSettings
    body_bytes: int
    content_type: str
    full: LoadResult
    bare: LoadResult
    full_cpu: float | None
    """Share of all CPUs busy during the full stack's measured run (server and wrk together)."""
    bare_cpu: float | None

    @property
    def ratio(self) -> float:
        return self.full.requests_per_second / self.bare.requests_per_second


def _compliance_command() -> list[str]:
    script = Path(servers.python()).with_name("compliance")
    if script.exists():
        return [str(script)]
    found = shutil.which("compliance")
    if found is None:
        raise RuntimeError("the `compliance` command is not installed (pip install -e . in the venv)")
    return [found]


def _measure(url: str, settings: HttpSettings, headers: dict[str, str]) -> tuple[LoadResult, float | None]:
    if settings.warmup > 0:
        run_load(url, seconds=settings.warmup, connections=settings.connections, threads=settings.threads,
                 headers=headers)
    meter = CpuMeter().start()
    result = run_load(url, seconds=settings.seconds, connections=settings.connections, threads=settings.threads,
                      headers=headers)
    return result, meter.stop()


def run_http_bench(db_path: Path, seeded: Seeded, workdir: Path, settings: HttpSettings) -> HttpResult:
    auth = {"X-API-Key": seeded.api_key}
    port = servers.free_port()
    full_command = _compliance_command() + [
        "serve", "--db", str(db_path), "--host", servers.HOST, "--port", str(port), "--workers", str(settings.workers),
        "--threads", str(settings.server_threads),
    ]
    with servers.start("full stack", full_command, port, workdir / "full-stack.log", LIST_PATH, auth) as full:
        status, headers, body = servers.fetch(full.base_url + LIST_PATH, auth)
        if status != 200:
            raise RuntimeError(f"full stack answered {status} to {LIST_PATH}: {body[:500]!r}")
        content_type = headers.get("content-type", "application/json")
        full_result, full_cpu = _measure(full.base_url + LIST_PATH, settings, auth)

    body_file = workdir / "vendors-page.json"
    body_file.write_bytes(body)
    port = servers.free_port()
    bare_command = [servers.python(), "-m", "bench.bare", "--host", servers.HOST, "--port", str(port),
                    "--workers", str(settings.workers), "--threads", str(settings.server_threads),
                    "--body", str(body_file), "--content-type", content_type]
    with servers.start("bare falcon", bare_command, port, workdir / "bare.log", LIST_PATH) as bare:
        status, _, copy = servers.fetch(bare.base_url + LIST_PATH)
        if status != 200 or copy != body:
            raise RuntimeError("the bare app does not serve the captured bytes")
        bare_result, bare_cpu = _measure(bare.base_url + LIST_PATH, settings, {})

    return HttpResult(settings=settings, body_bytes=len(body), content_type=content_type, full=full_result,
                      bare=bare_result, full_cpu=full_cpu, bare_cpu=bare_cpu)


def format_http(result: HttpResult) -> str:
    s = result.settings
    rows = [("full stack", result.full, result.full_cpu), ("bare Falcon (same bytes)", result.bare, result.bare_cpu)]
    lines = [
        f"HTTP: GET {LIST_PATH} ({result.body_bytes:,} bytes, {result.content_type}), {s.workers} waitress "
        f"processes x {s.server_threads} threads, {result.full.generator} {s.threads} threads / "
        f"{s.connections} keep-alive connections, {s.warmup:g} s warm-up + {s.seconds:g} s",
        f"{'server':<26}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>8}{'CPU busy':>10}",
    ]
    for name, load, cpu in rows:
        busy = "n/a" if cpu is None else f"{cpu:.0%}"
        lines.append(f"{name:<26}{load.requests_per_second:>10,.0f}{load.p50_ms:>9.2f}{load.p99_ms:>9.2f}"
                     f"{load.requests:>10,}{load.errors:>8}{busy:>10}")
    ratio_ok = "met" if result.ratio >= 0.5 else "MISSED"
    p99_ok = "met" if result.full.p99_ms < 10 else "MISSED"
    lines.append(f"full/bare throughput: {result.ratio:.1%} (target >= 50%: {ratio_ok}); "
                 f"full-stack p99 {result.full.p99_ms:.2f} ms (target < 10 ms: {p99_ok})")
    if result.full.errors or result.bare.errors:
        lines.append("WARNING: errors or non-2xx answers during the run; the figures above include them")
    return "\n".join(lines)
