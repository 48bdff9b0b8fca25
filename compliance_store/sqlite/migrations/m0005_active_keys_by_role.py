"""0005_active_keys_by_role: count an organization's active keys of one role from an index.

Revoking a key first counts the organization's active Owner keys (the last one cannot be
revoked). The partial index holds only keys not revoked, by organization, role and expiry, so
that count reads a few index entries whatever the number of revoked keys. ``revoked_at`` (always
NULL in it) is among its columns so the count is answered from the index alone (SQLite reports a
covering index only when every column the query names is in it).

Frozen: literal names only.
"""

from __future__ import annotations

from sqlite_utils import Database

__all__ = ["apply"]


def apply(db: Database) -> None:
    db.execute(
        'CREATE INDEX "api_keys_active_by_role"\n'
        '    ON "api_keys" ("organization_id", "role", "revoked_at", "expires_at") WHERE "revoked_at" IS NULL'
    )
