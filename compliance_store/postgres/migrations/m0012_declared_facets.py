"""0012_declared_facets: counters only for the facets each table declares (issue 17, point 2).

Migration 0009 counted, per block, every filter column and every pair of them, ids included:
one vendor insert upserted 37 counter rows (an update of a filter removed and added as many),
and a counter per owner or person id is read by almost no list. Each ``Records`` declaration now
names its facets (the low-cardinality filters a user pages by) and the pairs of them worth
counting; every table's ``<table>_list_blocks`` function and its triggers are replaced by
``helpers.keep_facets``'s, which count those and the unfiltered list only (a vendor insert: 9
counter rows), and whose update trigger fires only when a facet, the key or the partition
changes. The counts of every other column set are deleted; those kept were already kept by
0009's function, so nothing is counted again. A list filtered on a column that is no facet is
counted, once per filter set and revision.

Frozen: literal names only (the facets as declared when this migration was written).
"""

from __future__ import annotations

from typing import Any

import psycopg

from .helpers import keep_facets

__all__ = ["apply"]


def apply(cur: psycopg.Cursor[Any]) -> None:
    keep_facets(
        cur,
        "vendors",
        facets=("criticality", "processes_personal_data", "ict_service", "category", "country", "dpa_status", "status"),
        pairs=(("criticality", "processes_personal_data"),),
        partition="archived",
    )
    keep_facets(cur, "people", facets=("role", "department", "is_active"))
    keep_facets(cur, "findings", facets=("status", "severity", "type", "source"))
    keep_facets(cur, "finding_templates", facets=("category",))
    keep_facets(cur, "audit_log", facets=("entity_type", "action"))
    keep_facets(cur, "webhooks", facets=("active",))
    keep_facets(cur, "webhook_deliveries", facets=("state",))
    keep_facets(cur, "policies", facets=("status", "in_force"), partition="archived")
    keep_facets(cur, "policy_versions", facets=())
    keep_facets(cur, "policy_acknowledgements", facets=())
    keep_facets(
        cur,
        "risks",
        facets=("status", "category", "department", "treatment_strategy", "inherent_level", "residual_level"),
        partition="archived",
    )
