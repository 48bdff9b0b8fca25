"""The organization's context as other areas pin it: the newest snapshot of its answers.

An approved statement of applicability names the context it was decided on; the context area
keeps the snapshots and offers this port (``Area(ports=...)``), so the SoA pins one without
importing it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .registry import Session

__all__ = ["PinnedContext", "ContextHistory", "port_of"]


@attrs.frozen(kw_only=True)
class PinnedContext:
    snapshot_id: str
    taken_at: dt.datetime
    answers: int
    """How many answers the context held then."""


@attrs.frozen
class ContextHistory:
    latest: Callable[[Session, str], PinnedContext | None]
    """The organization's newest snapshot, None before its first answer."""


def port_of(ports: Iterable[Any], kind: type[Any]) -> Any | None:
    """The platform's port of ``kind`` (None when no area offers one: a platform built without it)."""
    return next((port for port in ports if isinstance(port, kind)), None)
