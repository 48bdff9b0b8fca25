"""0009_list_blocks: deep pages found by counts per block instead of walked to.

The PostgreSQL side of SQLite's migration 0012 (its docstring says why): ``list_blocks`` holds
each block's start key (about a thousand rows of an organization's table per block, in
(created_at, id) order), ``list_facet_blocks`` the rows per block, partition and value of each
filter column, pair of columns and none, replacing ``list_facets`` (a total is their sum), and
the triggers ``<table>_block_insert|delete|update`` over ``<table>_list_blocks()``
(``helpers.count_blocks``) keep both in the writing transaction, replacing ``<table>_facet_*``.

Frozen: literal names only; blocks, counts and triggers are made by ``helpers.count_blocks``
(itself frozen), which fills them from the rows already there.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import count_blocks

__all__ = ["apply"]

_LIST_BLOCKS = """CREATE TABLE list_blocks (
    table_name text NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    block integer NOT NULL,
    start_created_at timestamptz NOT NULL,
    start_id text COLLATE "C" NOT NULL,
    high_created_at timestamptz NOT NULL,
    high_id text COLLATE "C" NOT NULL,
    rows bigint NOT NULL,
    PRIMARY KEY (table_name, organization_id, block)
)"""

_BY_START = """CREATE UNIQUE INDEX list_blocks_by_start
    ON list_blocks (table_name, organization_id, start_created_at, start_id)"""

_LIST_FACET_BLOCKS = """CREATE TABLE list_facet_blocks (
    table_name text NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    partition_value boolean NOT NULL,
    columns text NOT NULL,
    value1 text NOT NULL,
    value2 text NOT NULL,
    block integer NOT NULL,
    total bigint NOT NULL,
    PRIMARY KEY (table_name, organization_id, partition_value, columns, value1, value2, block)
)"""

_FACETED = (
    "vendors",
    "people",
    "findings",
    "finding_templates",
    "audit_log",
    "webhooks",
    "webhook_deliveries",
    "policies",
    "policy_versions",
    "policy_acknowledgements",
    "risks",
)


def apply(cur: psycopg.Cursor[Any]) -> None:
    cur.execute(_LIST_BLOCKS)
    cur.execute(_BY_START)
    cur.execute(_LIST_FACET_BLOCKS)
    for table in _FACETED:
        for event in ("insert", "delete", "update"):
            cur.execute(f'DROP TRIGGER "{table}_facet_{event}" ON "{table}"')
        cur.execute(f'DROP FUNCTION "{table}_list_facets"()')
    cur.execute("DROP TABLE list_facets")
    count_blocks(
        cur,
        "vendors",
        filters=(
            "criticality",
            "processes_personal_data",
            "ict_service",
            "category",
            "country",
            "dpa_status",
            "status",
            "assignee_id",
        ),
        partition="archived",
    )
    count_blocks(cur, "people", filters=("role", "department", "is_active"))
    count_blocks(cur, "findings", filters=("status", "severity", "type", "source", "task_id", "control_id"))
    count_blocks(cur, "finding_templates", filters=("category",))
    count_blocks(cur, "audit_log", filters=("entity_type", "entity_id", "action", "actor_id"))
    count_blocks(cur, "webhooks", filters=("active",))
    count_blocks(cur, "webhook_deliveries", filters=("webhook_id", "state"))
    count_blocks(cur, "policies", filters=("status", "in_force", "assignee_id"), partition="archived")
    count_blocks(cur, "policy_versions", filters=("policy_id",))
    count_blocks(cur, "policy_acknowledgements", filters=("policy_id", "version_id", "person_id"))
    count_blocks(
        cur,
        "risks",
        filters=(
            "status",
            "category",
            "department",
            "owner_id",
            "treatment_strategy",
            "inherent_level",
            "residual_level",
        ),
        partition="archived",
    )
