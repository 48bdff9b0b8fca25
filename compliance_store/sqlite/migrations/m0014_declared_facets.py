"""0014_declared_facets: counters only for the facets each table declares (issue 17, point 2).

Migration 0012 counted, per block, every filter column and every pair of them, ids included:
one vendor insert ran 42 trigger statements (an update of a filter 81, a risk insert 34, each
audit row 16), and a counter per owner or person id is read by almost no list. Each ``Records``
declaration now names its facets (the low-cardinality filters a user pages by) and the pairs of
them worth counting; the block triggers of every table are replaced by ``helpers.keep_facets``'s,
which count those and the unfiltered list only, and keep a block's row count in one upsert
instead of three statements (a vendor insert: 12 statements). The counts of every other column
set are deleted; those kept were already kept by 0012's triggers, so nothing is counted again.
A list filtered on a column that is no facet is counted, once per filter set and revision.

Frozen: literal names only (the facets as declared when this migration was written).
"""

from __future__ import annotations

from sqlite_utils import Database

from .helpers import keep_facets

__all__ = ["apply"]


def apply(db: Database) -> None:
    keep_facets(
        db,
        "vendors",
        facets=("criticality", "processes_personal_data", "ict_service", "category", "country", "dpa_status", "status"),
        pairs=(("criticality", "processes_personal_data"),),
        partition="archived",
    )
    keep_facets(db, "people", facets=("role", "department", "is_active"))
    keep_facets(db, "findings", facets=("status", "severity", "type", "source"))
    keep_facets(db, "finding_templates", facets=("category",))
    keep_facets(db, "audit_log", facets=("entity_type", "action"))
    keep_facets(db, "webhooks", facets=("active",))
    keep_facets(db, "webhook_deliveries", facets=("state",))
    keep_facets(db, "policies", facets=("status", "in_force"), partition="archived")
    keep_facets(db, "policy_versions", facets=())
    keep_facets(db, "policy_acknowledgements", facets=())
    keep_facets(
        db,
        "risks",
        facets=("status", "category", "department", "treatment_strategy", "inherent_level", "residual_level"),
        partition="archived",
    )
