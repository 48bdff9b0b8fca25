"""PostgreSQL's page queries: the shared ``compliance_store.listing.PagedQuery`` with PostgreSQL's
name for the block counts' partition column (``partition_value``). Read sessions run at
REPEATABLE READ, so a page, its total and the revision they are kept at come from one snapshot."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from .. import listing

__all__ = ["PagedQuery"]

M = TypeVar("M")


class PagedQuery(listing.PagedQuery[M]):
    COUNTER_COLUMN: ClassVar[str] = "partition_value"
    NULLS_FIRST_DESCENDING: ClassVar[bool] = True
    TEXT_ORDER: ClassVar[str] = ' COLLATE "C"'
    """Text in code point order whatever the database's collation (as Python and SQLite's
    BINARY order it); ``lower`` follows the database's ctype, which under any UTF-8 locale folds
    as core's ``fold`` does."""
