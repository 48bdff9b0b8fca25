"""Keep-alive load against one URL, or cycling through several paths on its host: wrk when
installed (a Lua script for the paths), else a multi-process http.client loop.

Both report the same ``LoadResult`` so the tables do not care which generator ran.
"""

from __future__ import annotations

import http.client
import multiprocessing
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Sequence

import attrs

__all__ = ["LoadResult", "run_load", "wrk_path", "parse_wrk", "cycle_script"]


@attrs.frozen(kw_only=True)
class LoadResult:
    generator: str
    requests: int
    seconds: float
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    """Socket errors, timeouts and non-2xx answers together: any of them spoils the figure."""


def wrk_path() -> str | None:
    return shutil.which("wrk")


def run_load(
    url: str,
    *,
    seconds: float,
    connections: int,
    threads: int,
    headers: dict[str, str] | None = None,
    paths: Sequence[str] = (),
    script: str | None = None,
) -> LoadResult:
    """Load ``url``; with ``paths``, requests go to those paths on ``url``'s host instead, in turn,
    so that together the generator's threads walk the list in order, again and again. ``script``
    is a wrk Lua script of the caller's (other methods, bodies): wrk only."""
    headers = headers or {}
    if paths and script is not None:
        raise ValueError("give paths or a script, not both")
    wrk = wrk_path()
    if wrk is not None:
        return _run_wrk(
            wrk,
            url,
            seconds,
            connections,
            threads,
            headers,
            script or (cycle_script(paths, threads) if paths else None),
        )
    if script is not None:
        raise RuntimeError("a wrk Lua script needs wrk (apt-get install wrk)")
    return _run_python(url, seconds, connections, threads, headers, paths)


_CYCLE_SCRIPT = """\
-- Thread t of T sends paths t+1, t+1+T, t+1+2T, ...: together the threads walk the list in order.
local paths = {%(paths)s}
local threads = %(threads)d
local started = 0

function setup(thread)
  thread:set("first", started)
  started = started + 1
end

function init(args)
  position = first
end

function request()
  local path = paths[position %% #paths + 1]
  position = position + threads
  return wrk.format(nil, path)
end
"""


def cycle_script(paths: Sequence[str], threads: int) -> str:
    """The wrk Lua script sending ``paths`` in turn (wrk's -H headers go with every request)."""
    for path in paths:
        if not path.startswith("/") or any(ch in path for ch in '"\\\n'):
            raise ValueError(f"not a plain request path: {path!r}")
    return _CYCLE_SCRIPT % {"paths": ", ".join(f'"{path}"' for path in paths), "threads": threads}


def _run_wrk(
    wrk: str, url: str, seconds: float, connections: int, threads: int, headers: dict[str, str], script: str | None
) -> LoadResult:
    command = [wrk, "--latency", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "5s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="wrk-script-") as lua:
        if script is not None:
            lua.write(script)
            lua.flush()
            command += ["-s", lua.name]
        command.append(url)
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return parse_wrk(done.stdout)


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()  # type: ignore[union-attr]
    return float(number) * _UNITS_MS[unit]


def parse_wrk(output: str) -> LoadResult:
    """Read the summary of ``wrk --latency``; wrk prints latencies with their own units."""
    percentiles = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+(?:us|ms|s|m))\s*$", output, re.M))
    total = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m)", output, re.M)
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M)
    if not (total and rate and "50" in percentiles and "99" in percentiles):
        raise RuntimeError(f"could not read wrk output:\n{output}")
    errors = sum(
        int(n)
        for n in re.findall(
            r"(?:connect|read|write|timeout) (\d+)", " ".join(re.findall(r"^\s*Socket errors:.*$", output, re.M))
        )
    )
    non_2xx = re.search(r"^\s*Non-2xx or 3xx responses:\s+(\d+)", output, re.M)
    errors += int(non_2xx.group(1)) if non_2xx else 0
    return LoadResult(
        generator="wrk",
        requests=int(total.group(1)),
        seconds=_ms(total.group(2) + total.group(3)) / 1000.0,
        requests_per_second=float(rate.group(1)),
        p50_ms=_ms(percentiles["50"]),
        p99_ms=_ms(percentiles["99"]),
        errors=errors,
    )


def _run_python(
    url: str, seconds: float, connections: int, threads: int, headers: dict[str, str], paths: Sequence[str]
) -> LoadResult:
    """The fallback: ``threads`` processes, each holding its share of persistent connections."""
    processes = max(1, min(threads, connections))
    shares = [connections // processes + (1 if i < connections % processes else 0) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        parts = pool.starmap(
            _python_worker,
            [(url, seconds, share, headers, list(paths), index, processes) for index, share in enumerate(shares)],
        )
    latencies = sorted(latency for part in parts for latency in part[0])
    errors = sum(part[1] for part in parts)
    if not latencies:
        raise RuntimeError(f"no request to {url} succeeded")
    cut = statistics.quantiles(latencies, n=100, method="inclusive")
    return LoadResult(
        generator="python http.client",
        requests=len(latencies),
        seconds=seconds,
        requests_per_second=len(latencies) / seconds,
        p50_ms=cut[49] * 1000,
        p99_ms=cut[98] * 1000,
        errors=errors,
    )


def _python_worker(
    url: str, seconds: float, connections: int, headers: dict[str, str], paths: list[str], index: int, processes: int
) -> tuple[list[float], int]:
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or "127.0.0.1"
    targets = paths or [parsed.path + (f"?{parsed.query}" if parsed.query else "")]
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    position = [index]  # this process sends targets index, index + processes, ... (under lock)

    def next_target() -> str:
        with lock:
            target = targets[position[0] % len(targets)]
            position[0] += processes
        return target

    def loop() -> None:
        mine: list[float] = []
        failed = 0
        connection = http.client.HTTPConnection(host, parsed.port, timeout=5)
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                connection.request("GET", next_target(), headers=headers)
                response = connection.getresponse()
                response.read()
                if response.status >= 300:
                    failed += 1
                    continue
            except (OSError, http.client.HTTPException):
                failed += 1
                connection.close()
                connection = http.client.HTTPConnection(host, parsed.port, timeout=5)
                continue
            mine.append(time.perf_counter() - started)
        connection.close()
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    workers = [threading.Thread(target=loop) for _ in range(connections)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return latencies, errors[0]
