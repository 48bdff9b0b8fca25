"""SQLite's page queries: the shared ``compliance_store.listing.PagedQuery`` with SQLite's name for
the block counts' partition column (``list_facet_blocks.archived``, as migration 0012 made it), and
``q`` through the ``fold`` function every connection of the store has (``register_fold``: core's
``fold``, since SQLite's own ``lower`` folds ASCII letters only)."""

from __future__ import annotations

import sqlite3
from typing import Any, ClassVar, TypeVar

from compliance_core.kernel.pages import fold

from .. import listing

__all__ = ["PagedQuery", "register_fold"]

M = TypeVar("M")


class PagedQuery(listing.PagedQuery[M]):
    COUNTER_COLUMN: ClassVar[str] = "archived"
    CONTAINS: ClassVar[str] = "instr(fold({column}), {mark}) > 0"


def _fold(value: Any) -> Any:
    return fold(value) if isinstance(value, str) else None


def register_fold(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``fold`` SQL function the searched pages call."""
    conn.create_function("fold", 1, _fold, deterministic=True)
