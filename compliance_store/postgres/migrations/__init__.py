"""The PostgreSQL schema: ordered migrations, one frozen file each, recorded in
``compliance_migrations``.

A released migration is never edited: its table and column names are literals inside it (never a
module constant that grows later), so a schema migrated in one go and one upgraded step by step
end with the same objects (``tests/contract/test_postgres.py`` checks every split). A schema
change is a new file ``mNNNN_<what>.py`` with ``apply(cur)`` appended to ``MIGRATIONS`` below; an
area's table is made by ``helpers.create_records_table`` called with literal arguments. The list
is explicit on purpose: nothing is discovered by scanning the directory.

``migrate`` applies what is pending in one transaction holding a transaction-scoped advisory
lock, so N processes starting at once on a new database never race: the first applies, the
others wait for its commit and find nothing left to do. A process that finds every migration
already recorded takes no lock at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from .. import locks
from ..codec import scalar
from . import (
    m0001_kernel,
    m0002_areas,
    m0003_list_indexes,
    m0004_audit_log,
    m0005_webhooks,
    m0006_policies,
    m0007_compliance_program,
    m0008_facet_counts,
    m0009_list_blocks,
    m0010_outbox_published,
    m0011_signature_issuers,
    m0012_declared_facets,
    m0013_unrated_ratings,
    m0014_rated_filter,
    m0015_finding_template_severity,
    m0016_people_behind_keys,
    m0017_organization_logos,
    m0018_acknowledgement_names,
    m0019_context,
    m0020_vendor_sort_indexes,
    m0021_controls,
    m0022_task_templates,
    m0023_soa,
    m0024_search_index,
    m0025_sort_indexes,
    m0026_api_key_search,
    m0027_framework_imports,
    m0028_tasks,
    m0029_comments,
    m0030_list_search_people_names,
    m0031_evidence,
    m0032_automations,
    m0033_evidence_export,
    m0034_scoped_sort_indexes,
    m0035_integrations,
)

__all__ = ["MIGRATIONS", "MIGRATION_TABLE", "migrate", "applied"]

MIGRATION_TABLE = "compliance_migrations"

MIGRATIONS: tuple[tuple[str, Callable[[psycopg.Cursor[Any]], None]], ...] = (
    ("0001_kernel", m0001_kernel.apply),
    ("0002_areas", m0002_areas.apply),
    ("0003_list_indexes", m0003_list_indexes.apply),
    ("0004_audit_log", m0004_audit_log.apply),
    ("0005_webhooks", m0005_webhooks.apply),
    ("0006_policies", m0006_policies.apply),
    ("0007_compliance_program", m0007_compliance_program.apply),
    ("0008_facet_counts", m0008_facet_counts.apply),
    ("0009_list_blocks", m0009_list_blocks.apply),
    ("0010_outbox_published", m0010_outbox_published.apply),
    ("0011_signature_issuers", m0011_signature_issuers.apply),
    ("0012_declared_facets", m0012_declared_facets.apply),
    ("0013_unrated_ratings", m0013_unrated_ratings.apply),
    ("0014_rated_filter", m0014_rated_filter.apply),
    ("0015_finding_template_severity", m0015_finding_template_severity.apply),
    ("0016_people_behind_keys", m0016_people_behind_keys.apply),
    ("0017_organization_logos", m0017_organization_logos.apply),
    ("0018_acknowledgement_names", m0018_acknowledgement_names.apply),
    ("0019_context", m0019_context.apply),
    ("0020_vendor_sort_indexes", m0020_vendor_sort_indexes.apply),
    ("0021_controls", m0021_controls.apply),
    ("0022_task_templates", m0022_task_templates.apply),
    ("0023_soa", m0023_soa.apply),
    ("0024_search_index", m0024_search_index.apply),
    ("0025_sort_indexes", m0025_sort_indexes.apply),
    ("0026_api_key_search", m0026_api_key_search.apply),
    ("0027_framework_imports", m0027_framework_imports.apply),
    ("0028_tasks", m0028_tasks.apply),
    ("0029_comments", m0029_comments.apply),
    ("0030_list_search_people_names", m0030_list_search_people_names.apply),
    ("0031_evidence", m0031_evidence.apply),
    ("0032_automations", m0032_automations.apply),
    ("0033_evidence_export", m0033_evidence_export.apply),
    ("0034_scoped_sort_indexes", m0034_scoped_sort_indexes.apply),
    ("0035_integrations", m0035_integrations.apply),
)
"""Every migration in the order it is applied, by the name recorded once it has been."""

_EXISTS = "SELECT to_regclass('compliance_migrations') IS NOT NULL"
_APPLIED = "SELECT name FROM compliance_migrations ORDER BY applied_at, name"
_CREATE = """CREATE TABLE compliance_migrations (
    name text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
)"""
_RECORD = "INSERT INTO compliance_migrations (name) VALUES (%s)"


def applied(conn: psycopg.Connection[Any]) -> list[str]:
    """The names recorded in the connection's schema, in the order they were applied."""
    cur = conn.cursor()
    if not scalar(cur, _EXISTS):
        return []
    return [name for (name,) in cur.execute(_APPLIED).fetchall()]


def migrate(conn: psycopg.Connection[Any], schema: str | None = None, *, stop_before: str | None = None) -> list[str]:
    """Create ``schema`` if missing and apply the pending migrations (those before
    ``stop_before`` only, as an older release would have); returns the names applied now.

    :param conn: an autocommit connection whose ``search_path`` starts with ``schema``
    :param schema: the schema the store lives in (None: the connection's current schema)
    """
    names = [name for name, _ in MIGRATIONS]
    wanted = names[: names.index(stop_before)] if stop_before is not None else names
    if set(wanted) <= set(applied(conn)):
        return []
    done: list[str] = []
    with conn.transaction():
        cur = conn.cursor()
        if schema is None:
            schema = scalar(cur, "SELECT current_schema()")
            if schema is None:
                raise RuntimeError("no schema to migrate: the connection's search_path names none that exists")
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", (locks.MIGRATIONS, locks.schema_key(schema)))
        if not cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone():
            cur.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        if scalar(cur, _EXISTS):
            present = {name for (name,) in cur.execute(_APPLIED).fetchall()}
        else:
            cur.execute(_CREATE)
            present = set()
        for name, apply in MIGRATIONS:
            if name not in wanted:
                break
            if name not in present:
                apply(cur)
                cur.execute(_RECORD, (name,))
                done.append(name)
    return done
