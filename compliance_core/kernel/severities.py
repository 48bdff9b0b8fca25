"""How serious a gap is: the scale findings are raised on and finding templates suggest, kept in
the kernel because two areas share it and areas never import each other."""

from __future__ import annotations

import enum

__all__ = ["Severity"]


class Severity(enum.StrEnum):
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"
