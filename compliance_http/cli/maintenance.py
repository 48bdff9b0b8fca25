"""``compliance maintenance``: every declared chore run once, now, and the store's planner
statistics refreshed where it keeps its own (what a running server does on a schedule, for a
database no server is serving, or from cron)."""

from __future__ import annotations

import argparse
from typing import Any

from compliance_core import InternalError

from ..server import refresh_statistics
from .output import emit
from .stores import open_platform, serve_settings

__all__ = ["maintenance"]


def maintenance(args: argparse.Namespace) -> int:
    """Print each chore's count under its declared key (``Chore.report``), plus
    ``analyzedTables`` on a store that keeps statistics. A failing chore leaves the others to run:
    the report of those that ran is printed, and the failures are one ``internal_error`` on
    stderr (exit code 1)."""
    with open_platform(args.db, settings=serve_settings()) as platform:
        chores = platform.run_chores()
        analysed = refresh_statistics(platform.store)
    report: dict[str, Any] = dict(chores.counts)
    if analysed is not None:
        report["analyzedTables"] = analysed
    emit(report)
    if chores.failures:
        failed = {key: f"{type(error).__name__}: {error}" for key, error in chores.failures.items()}
        raise InternalError(f"{len(failed)} chore(s) failed: {', '.join(failed)}", {"failed": failed})
    return 0
