"""The SQLite schema: ordered sqlite-utils migrations, one frozen file each.

A released migration is never edited: its table and column names are literals inside it (never a
module constant that grows later), so a database migrated in one go and one upgraded step by step
end with the same schema (``tests/contract/test_migrations.py`` checks every split). A schema
change is a new file ``mNNNN_<what>.py`` with ``apply(db)`` appended to ``MIGRATIONS`` below; an
area's table is made by ``helpers.create_records_table`` called with literal arguments. The list
is explicit on purpose: nothing is discovered by scanning the directory.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database, Migrations

from . import (
    m0001_initial,
    m0002_list_counts,
    m0003_list_revisions,
    m0004_finding_templates,
    m0005_active_keys_by_role,
    m0006_list_indexes,
    m0007_audit_log,
    m0008_webhooks,
    m0009_policies,
    m0010_compliance_program,
    m0011_facet_counts,
    m0012_list_blocks,
    m0013_signature_issuers,
    m0014_declared_facets,
    m0015_unrated_ratings,
    m0016_rated_filter,
    m0017_finding_template_severity,
    m0018_people_behind_keys,
    m0019_organization_logos,
    m0020_acknowledgement_names,
    m0021_context,
    m0022_vendor_sort_indexes,
    m0023_controls,
    m0024_task_templates,
    m0025_soa,
    m0026_search_index,
    m0027_sort_indexes,
    m0028_api_key_search,
    m0029_framework_imports,
    m0030_tasks,
    m0031_comments,
    m0032_list_search_people_names,
    m0033_evidence,
    m0034_automations,
    m0035_evidence_export,
    m0036_scoped_sort_indexes,
    m0037_integrations,
)

__all__ = ["MIGRATION_SET", "MIGRATIONS", "migrations"]

MIGRATION_SET = "compliance_store.sqlite"
"""The set name in ``_sqlite_migrations`` (also the store's schema version count)."""

MIGRATIONS: tuple[tuple[str, Callable[[Database], None]], ...] = (
    ("0001_initial", m0001_initial.apply),
    ("0002_list_counts", m0002_list_counts.apply),
    ("0003_list_revisions", m0003_list_revisions.apply),
    ("0004_finding_templates", m0004_finding_templates.apply),
    ("0005_active_keys_by_role", m0005_active_keys_by_role.apply),
    ("0006_list_indexes", m0006_list_indexes.apply),
    ("0007_audit_log", m0007_audit_log.apply),
    ("0008_webhooks", m0008_webhooks.apply),
    ("0009_policies", m0009_policies.apply),
    ("0010_compliance_program", m0010_compliance_program.apply),
    ("0011_facet_counts", m0011_facet_counts.apply),
    ("0012_list_blocks", m0012_list_blocks.apply),
    ("0013_signature_issuers", m0013_signature_issuers.apply),
    ("0014_declared_facets", m0014_declared_facets.apply),
    ("0015_unrated_ratings", m0015_unrated_ratings.apply),
    ("0016_rated_filter", m0016_rated_filter.apply),
    ("0017_finding_template_severity", m0017_finding_template_severity.apply),
    ("0018_people_behind_keys", m0018_people_behind_keys.apply),
    ("0019_organization_logos", m0019_organization_logos.apply),
    ("0020_acknowledgement_names", m0020_acknowledgement_names.apply),
    ("0021_context", m0021_context.apply),
    ("0022_vendor_sort_indexes", m0022_vendor_sort_indexes.apply),
    ("0023_controls", m0023_controls.apply),
    ("0024_task_templates", m0024_task_templates.apply),
    ("0025_soa", m0025_soa.apply),
    ("0026_search_index", m0026_search_index.apply),
    ("0027_sort_indexes", m0027_sort_indexes.apply),
    ("0028_api_key_search", m0028_api_key_search.apply),
    ("0029_framework_imports", m0029_framework_imports.apply),
    ("0030_tasks", m0030_tasks.apply),
    ("0031_comments", m0031_comments.apply),
    ("0032_list_search_people_names", m0032_list_search_people_names.apply),
    ("0033_evidence", m0033_evidence.apply),
    ("0034_automations", m0034_automations.apply),
    ("0035_evidence_export", m0035_evidence_export.apply),
    ("0036_scoped_sort_indexes", m0036_scoped_sort_indexes.apply),
    ("0037_integrations", m0037_integrations.apply),
)
"""Every migration in the order it is applied, by the name recorded once it has been."""


def migrations() -> Migrations:
    """The ordered migration set; built on demand so importing this package does nothing."""
    steps = Migrations(MIGRATION_SET)
    for name, apply in MIGRATIONS:
        steps(name=name)(apply)
    return steps
