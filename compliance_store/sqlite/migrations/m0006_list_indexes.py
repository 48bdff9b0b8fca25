"""0006_list_indexes: filter indexes that cover the other filters, and planner statistics.

Each ``<table>_by_<column>`` index of a table with more than one filter column is rebuilt on the
scope, the column, ``(created_at, id)`` and then the table's other filter columns (``helpers.
filter_index_columns``). A list filtered on two columns used to read one index range and then a
table row per entry to test the second column; now the second column is tested inside the index.
Measured with ``python -m bench.plans`` (100,000 vendors, the bench's 6 singles and 15 pairs,
median / max ms of the COUNT, the anchor hop and the page at OFFSET 200; "before" is the schema
as 0001 made it, without statistics as the store then kept none):

=================  ==============  ===================  ==============
pairs              before          covering, no stats   covering, analysed
=================  ==============  ===================  ==============
count              11.5 / 19.7     1.8 / 5.0            1.3 / 4.8
anchor hop         0.69 / 4.39     0.08 / 0.59          0.08 / 0.27
page               0.27 / 2.14     0.21 / 0.62          0.20 / 0.32
=================  ==============  ===================  ==============

Singles are unchanged (their index already covered them). The cost: the vendors indexes grow from
105 to 151 MiB at 100k (the table is 51 MiB); a single-row insert is unchanged within noise
(0.50-0.59 ms). Composite indexes per pair would answer counts exactly but need 15 indexes for
vendors' 6 bench filters (28 for all 8): rejected. ``finding_templates`` has one filter: nothing to
add. The list indexes (``<table>_list``) serve unfiltered lists, whose totals come from
``list_counts``: unchanged.

With two usable indexes SQLite must guess which column is more selective; without
``sqlite_stat1`` it takes one blindly (``country=CA AND dpa_status=not_required`` scanned the
dpa_status range, 2.2 ms, instead of the country range, 0.4 ms). The store analyses after
migrating and keeps the statistics current (``compliance_store.sqlite.store``).

Frozen: literal names only; the indexes are made by ``helpers.cover_filter_indexes`` (itself
frozen).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import cover_filter_indexes

__all__ = ["apply"]


def apply(db: Database) -> None:
    cover_filter_indexes(
        db,
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
    cover_filter_indexes(db, "people", filters=("role", "department", "is_active"))
    cover_filter_indexes(db, "findings", filters=("status", "severity", "type", "source"))
