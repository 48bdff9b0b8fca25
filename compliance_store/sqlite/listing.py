"""SQLite's page queries: the shared ``compliance_store.listing.PagedQuery`` with SQLite's name for
the block counts' partition column (``list_facet_blocks.archived``, as migration 0012 made it)."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from .. import listing

__all__ = ["PagedQuery"]

M = TypeVar("M")


class PagedQuery(listing.PagedQuery[M]):
    COUNTER_COLUMN: ClassVar[str] = "archived"
