"""A route row and the helper that writes an area's rows compactly."""

from __future__ import annotations

import attrs

__all__ = ["Route", "group"]


@attrs.frozen(kw_only=True)
class Route:
    """One row: ``operation`` names a core operation (``"vendors.create"``)."""

    method: str
    path: str
    operation: str
    summary: str
    tag: str
    status: int | None = None


def group(tag: str, *rows: tuple[str, str, str, str] | tuple[str, str, str, str, int]) -> tuple[Route, ...]:
    """The rows of one tag: ``(method, path, operation, summary[, status])``."""
    return tuple(
        Route(
            method=row[0],
            path=row[1],
            operation=row[2],
            summary=row[3],
            tag=tag,
            status=row[4] if len(row) > 4 else None,
        )
        for row in rows
    )
