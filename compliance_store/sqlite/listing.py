"""SQLite's page queries: the shared ``compliance_store.listing.PagedQuery`` with SQLite's name for
the counter's partition column (``list_counts.archived``, as migration 0002 made it)."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from .. import listing

__all__ = ["PagedQuery"]

M = TypeVar("M")


class PagedQuery(listing.PagedQuery[M]):
    COUNTER_COLUMN: ClassVar[str] = "archived"
