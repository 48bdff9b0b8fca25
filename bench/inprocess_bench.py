"""Benchmark 2: ``platform.vendors.list`` in-process against the least a Python program could do
for the same answer: one sqlite3 page query, one count, and a dict per row.

The difference is what the service layer and the store adapter cost per call (authorization, the
read session, turning rows into frozen attrs models); the HTTP benchmark adds the transport. The
service answers a repeated request from its page cache (one revision read instead of the page
query), so it is timed twice: as built, and with a page cache that keeps nothing, which is what
every request costs when the data changes between reads or the pages asked for outnumber the cache.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.pages import PageRequest
from compliance_core.platform import Platform

from .seed import Seeded

__all__ = ["Timing", "Scenario", "InProcessResult", "run_inprocess_bench", "format_inprocess"]

PER_PAGE = 50
PAGE_SQL = "SELECT * FROM vendors WHERE organization_id = ? AND archived = 0 ORDER BY created_at, id LIMIT ? OFFSET ?"
COUNT_SQL = "SELECT count(*) FROM vendors WHERE organization_id = ? AND archived = 0"


@attrs.frozen(kw_only=True)
class Timing:
    name: str
    mean_us: float
    median_us: float
    best_us: float
    calls: int


@attrs.frozen(kw_only=True)
class Scenario:
    label: str
    pages: tuple[int, ...]
    platform: Timing
    uncached: Timing
    """The platform call with a page cache that keeps nothing."""
    plain: Timing

    @property
    def ratio(self) -> float:
        """How many times slower the platform call is than the plain query (median per call)."""
        return self.platform.median_us / self.plain.median_us

    @property
    def uncached_ratio(self) -> float:
        return self.uncached.median_us / self.plain.median_us


@attrs.frozen(kw_only=True)
class InProcessResult:
    scenarios: tuple[Scenario, ...]


def _plain_list(connection: sqlite3.Connection, organization_id: str, page: int) -> tuple[list[dict[str, Any]], int]:
    cursor = connection.execute(PAGE_SQL, (organization_id, PER_PAGE, (page - 1) * PER_PAGE))
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    total = connection.execute(COUNT_SQL, (organization_id,)).fetchone()[0]
    return rows, total


def _timing(name: str, batches: list[float], per_batch: int) -> Timing:
    per_call = [seconds / per_batch * 1e6 for seconds in batches]
    return Timing(
        name=name,
        mean_us=statistics.fmean(per_call),
        median_us=statistics.median(per_call),
        best_us=min(per_call),
        calls=len(batches) * per_batch,
    )


def run_inprocess_bench(db_path: Path, seeded: Seeded, *, repeats: int = 30, page_count: int = 20) -> InProcessResult:
    """Two scenarios: page 1 (what the HTTP benchmark asks for) and ``page_count`` pages spread over
    the whole register (OFFSET grows with the page). Each runs ``repeats`` batches per candidate,
    alternating so that drift hits both alike."""
    last_page = max(1, -(-seeded.vendors // PER_PAGE))
    step = max(1, last_page // page_count)
    spread = tuple(range(1, last_page + 1, step))[:page_count]
    with Platform.open(seeded.url) as platform:
        actor = platform.actor(seeded.organization_id)
        connection = sqlite3.connect(str(db_path))
        try:
            expected = platform.vendors.list(actor, page=PageRequest(page=2, per_page=PER_PAGE))
            rows, total = _plain_list(connection, seeded.organization_id, 2)
            if total != expected.total or [r["id"] for r in rows] != [v.id for v in expected.items]:
                raise RuntimeError("the plain query does not return the platform's page; fix PAGE_SQL")
            scenarios = tuple(
                _scenario(label, pages, repeats, platform, actor, connection, seeded.organization_id)
                for label, pages in (
                    (f"page 1 (x{page_count})", (1,) * page_count),
                    (f"pages {spread[0]}..{spread[-1]} ({len(spread)} pages)", spread),
                )
            )
        finally:
            connection.close()
    return InProcessResult(scenarios=scenarios)


def _scenario(
    label: str,
    pages: tuple[int, ...],
    repeats: int,
    platform: Platform,
    actor: Any,
    connection: sqlite3.Connection,
    organization_id: str,
) -> Scenario:
    requests = [PageRequest(page=k, per_page=PER_PAGE) for k in pages]
    uncached = attrs.evolve(platform.vendors, pages=PageCache(0))

    def platform_batch() -> None:
        for request in requests:
            platform.vendors.list(actor, page=request)

    def uncached_batch() -> None:
        for request in requests:
            uncached.list(actor, page=request)

    def plain_batch() -> None:
        for k in pages:
            _plain_list(connection, organization_id, k)

    candidates: list[tuple[Callable[[], None], list[float]]] = [
        (platform_batch, []),
        (uncached_batch, []),
        (plain_batch, []),
    ]
    for batch, _ in candidates:  # warm the caches
        batch()
    for _ in range(repeats):
        for batch, times in candidates:
            started = time.perf_counter()
            batch()
            times.append(time.perf_counter() - started)
    return Scenario(
        label=label,
        pages=pages,
        platform=_timing("platform.vendors.list", candidates[0][1], len(pages)),
        uncached=_timing("  without page cache", candidates[1][1], len(pages)),
        plain=_timing("plain sqlite3 + dicts", candidates[2][1], len(pages)),
    )


def format_inprocess(result: InProcessResult) -> str:
    lines = [
        f"In-process: one page of {PER_PAGE} + total per call, 10,000 vendors",
        f"{'pages':<24}{'call':<24}{'mean us':>9}{'median us':>11}{'best us':>9}{'calls':>7}",
    ]
    for scenario in result.scenarios:
        for timing in (scenario.platform, scenario.uncached, scenario.plain):
            lines.append(
                f"{scenario.label:<24}{timing.name:<24}{timing.mean_us:>9.0f}{timing.median_us:>11.0f}"
                f"{timing.best_us:>9.0f}{timing.calls:>7}"
            )
        lines.append(
            f"{'':<24}platform / plain (median): {scenario.ratio:.2f}x; without page cache: "
            f"{scenario.uncached_ratio:.2f}x"
        )
    return "\n".join(lines)
