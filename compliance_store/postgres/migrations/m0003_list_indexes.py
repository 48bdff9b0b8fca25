"""0003_list_indexes: filter indexes that cover the other filters.

Each ``<table>_by_<column>`` index of a table with more than one filter column is rebuilt on the
scope, the column, ``(created_at, id)`` and then the table's other filter columns as key columns
(``helpers.filter_index_columns``). A list filtered on two columns used to read one index and
then the heap to test the second column, and the planner often preferred a bitmap heap scan or a
sequential scan for the count; now the count is an index-only scan and a page tests the second
column inside the index. Measured with ``python -m bench.plans --store postgresql`` (100,000
vendors, vacuumed and analysed; the bench's 6 singles and 15 pairs; median / max ms):

===============  ==============  ==============  ==================
pairs            before          after (keys)    ``INCLUDE`` instead
===============  ==============  ==============  ==================
count            11.2 / 59.9     4.4 / 8.1       5.4 / 24.2
anchor hop       0.72 / 2.99     0.44 / 1.60     0.82 / 2.77
page             0.95 / 4.65     0.88 / 2.19     2.50 / 6.56
===============  ==============  ==============  ==================

``INCLUDE`` columns are no index condition: a plain Index Scan (every page) tests them on the heap
row, so key columns win. The cost: a single-filter count scans a wider index (median 5.5 ->
9.3 ms; the totals are cached per filter set, so a count runs once per filter set and change),
the vendors indexes grow from 102 to 158 MiB at 100k (the table is 47 MiB), and a single-row
insert is unchanged within noise. ``finding_templates`` has one filter: nothing to add.

Index-only scans need the visibility map: autovacuum keeps it, and ``compliance migrate-store``
vacuums and analyses the tables it filled (``compliance_store.copy``).

Frozen: literal names only; the indexes are made by ``helpers.cover_filter_indexes`` (itself
frozen).
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import cover_filter_indexes

__all__ = ["apply"]


def apply(cur: psycopg.Cursor[Any]) -> None:
    cover_filter_indexes(
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
    cover_filter_indexes(cur, "people", filters=("role", "department", "is_active"))
    cover_filter_indexes(cur, "findings", filters=("status", "severity", "type", "source"))
