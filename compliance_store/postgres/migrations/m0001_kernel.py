"""0001_kernel: the tables every store keeps whatever the areas, and the list counters.

Organizations, API keys and their per-day usage, idempotency records, rate-limit buckets and the
outbox live here, in the database, so any number of server processes on any number of machines
share them. ``list_counts`` (a row count per table, organization and partition value) and
``list_revisions`` (a change counter per table and organization, for the page cache) are kept by
the triggers ``helpers.create_records_table`` puts on each organization-scoped table.

The outbox ``payload`` and the idempotency ``result`` are ``json``: documents stored and handed
back whole, never queried into, so they are kept exactly as written (key order and number
spelling included: the body a webhook gets is the one core rendered), where ``jsonb`` would
reorder keys and renormalise numbers.

Identifiers are ``text COLLATE "C"``: lists are ordered by ``(created_at, id)`` and ``C`` orders
``id`` by code point, as the memory and SQLite stores do, whatever the database's collation.

Frozen: the statements are literal text and stay as released.
"""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["apply"]

_STATEMENTS = (
    """CREATE TABLE organizations (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    plan text NOT NULL,
    rate_limit_rpm integer,
    rate_limit_burst integer,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
)""",
    """CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,
    organization_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    prefix text NOT NULL,
    secret_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    created_by text
)""",
    "CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash)",
    "CREATE INDEX api_keys_list ON api_keys (organization_id, created_at, id)",
    # "Refuse revoking the last owner key" counts an organization's active keys of one role.
    """CREATE INDEX api_keys_active_by_role ON api_keys (organization_id, role, expires_at)
    WHERE revoked_at IS NULL""",
    """CREATE TABLE key_usage (
    key_id text COLLATE "C" NOT NULL,
    day date NOT NULL,
    requests bigint NOT NULL,
    PRIMARY KEY (key_id, day)
)""",
    """CREATE TABLE idempotency (
    organization_id text COLLATE "C" NOT NULL,
    principal text NOT NULL,
    key text NOT NULL,
    operation text NOT NULL,
    fingerprint text NOT NULL,
    result json NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, principal, key)
)""",
    "CREATE INDEX idempotency_created_at ON idempotency (created_at)",
    """CREATE TABLE rate_limit_buckets (
    key_id text COLLATE "C" PRIMARY KEY,
    tokens double precision NOT NULL,
    updated_at timestamptz NOT NULL
)""",
    """CREATE TABLE outbox (
    id text COLLATE "C" PRIMARY KEY,
    type text NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    subject_id text NOT NULL,
    payload json NOT NULL,
    occurred_at timestamptz NOT NULL,
    published_at timestamptz
)""",
    # Only unpublished rows: the index a delivering worker reads stays as small as its backlog.
    "CREATE INDEX outbox_pending ON outbox (occurred_at, id) WHERE published_at IS NULL",
    """CREATE TABLE list_counts (
    table_name text NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    partition_value boolean NOT NULL,
    total bigint NOT NULL,
    PRIMARY KEY (table_name, organization_id, partition_value)
)""",
    """CREATE TABLE list_revisions (
    table_name text NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    revision bigint NOT NULL,
    PRIMARY KEY (table_name, organization_id)
)""",
)


def apply(cur: psycopg.Cursor[Any]) -> None:
    for statement in _STATEMENTS:
        cur.execute(statement)
