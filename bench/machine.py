"""What the figures were measured on, and whether something else was using the CPU meanwhile
(a benchmark run beside a test suite on two cores measures the test suite)."""

from __future__ import annotations

import os
import platform
import sqlite3
import time
from collections.abc import Iterable

__all__ = ["describe", "busy_share", "CpuMeter", "group_cpu_seconds", "pids_cpu_seconds"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory() -> str:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except OSError:
        pass
    return "unknown RAM"


def describe() -> str:
    return (
        f"{os.cpu_count()} CPU ({_cpu_model()}), {_memory()}, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {platform.system()} {platform.release()}"
    )


def _cpu_times() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as handle:
            fields = [int(x) for x in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields), idle


class CpuMeter:
    """The share of all CPUs busy between ``start()`` and ``stop()`` (None off Linux). During a
    load run, idle CPU next to low throughput means waiting (locks, sleeps), not computing."""

    def __init__(self) -> None:
        self._before: tuple[int, int] | None = None

    def start(self) -> CpuMeter:
        self._before = _cpu_times()
        return self

    def stop(self) -> float | None:
        after = _cpu_times()
        if self._before is None or after is None or after[0] == self._before[0]:
            return None
        return 1.0 - (after[1] - self._before[1]) / (after[0] - self._before[0])


def busy_share(seconds: float = 1.0) -> float | None:
    """The share of all CPUs busy over ``seconds`` while this process sleeps."""
    meter = CpuMeter().start()
    time.sleep(seconds)
    return meter.stop()


def group_cpu_seconds(pgid: int) -> float | None:
    """CPU seconds (user + system) used so far by the live processes of process group ``pgid``:
    a server's parent and workers. Divided by the requests served, it is the server's own cost per
    request, whatever else the machine was doing."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    found = False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields[0] is the state: pgrp is the 5th field of the whole line
            total += int(fields[11]) + int(fields[12])
            found = True
    return total / ticks if found else None


def pids_cpu_seconds(pids: Iterable[int]) -> float | None:
    """CPU seconds (user + system) used so far by those of ``pids`` still alive: PostgreSQL
    backends, say, when the server runs on this machine (None when none of them can be read)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    found = False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
        found = True
    return total / ticks if found else None
