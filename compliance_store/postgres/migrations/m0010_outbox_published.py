"""0010_outbox_published: an index for purging published outbox messages.

``Platform.purge_outbox`` deletes the messages published more than a week ago, every few minutes
from the server's lead worker, inside a write (which holds the schema's writer lock); the only
outbox index so far covers the unpublished rows, so each purge would scan the whole table. This
one holds only published rows, so a purge reads just the range it deletes. (SQLite's
``outbox_pending`` index already starts with ``published_at``.)

Frozen: literal names only.
"""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["apply"]


def apply(cur: psycopg.Cursor[Any]) -> None:
    cur.execute("CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL")
