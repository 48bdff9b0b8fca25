"""Every table the PostgreSQL store serves, and the repository class that serves it.

The organization-scoped tables come from the ``Records`` declarations of the areas (a generic
``PostgresRecords`` or the class of ``EXTENSIONS`` serving a table that declares ``queries``), plus the kernel's
tables. Sessions resolve ``session[repo]`` by ``repo.name`` over this registry, and the start-up
check (``checks``) holds the migrated schema against it, so a new area needs a migration and
nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compliance_core.areas import AREAS
from compliance_core.kernel.registry import Area

from ..registry import SCOPED_KEY, Table, derive, kernel_tables, served
from .api_keys import PostgresApiKeys
from .idempotency import PostgresIdempotency
from .organizations import PostgresOrganizations
from .outbox import PostgresOutbox
from .people import PostgresPeople
from .rate_limits import PostgresRateLimits
from .records import PostgresDeliveries, PostgresRecords

__all__ = ["Table", "SCOPED_KEY", "KERNEL_TABLES", "SUPPORT_TABLES", "EXTENSIONS", "TABLES", "registry"]

KERNEL_TABLES: tuple[Table, ...] = kernel_tables(
    organizations=PostgresOrganizations,
    api_keys=PostgresApiKeys,
    idempotency=PostgresIdempotency,
    rate_limits=PostgresRateLimits,
    outbox=PostgresOutbox,
)
"""What every store keeps whatever the areas."""

SUPPORT_TABLES: dict[str, tuple[str, ...]] = {
    "key_usage": ("key_id", "day", "requests"),
    "list_counts": ("table_name", "organization_id", "partition_value", "total"),
    "list_revisions": ("table_name", "organization_id", "revision"),
    "list_blocks": (
        "table_name",
        "organization_id",
        "block",
        "start_created_at",
        "start_id",
        "high_created_at",
        "high_id",
        "rows",
    ),
    "list_facet_blocks": (
        "table_name",
        "organization_id",
        "partition_value",
        "columns",
        "value1",
        "value2",
        "block",
        "total",
    ),
}
"""Tables no repository is named after, with the columns the repositories and triggers use
(``key_usage`` belongs to ``PostgresApiKeys``, the counters to the ``Records`` triggers)."""

EXTENSIONS: tuple[type, ...] = (PostgresPeople, PostgresDeliveries)
"""The classes serving the ``Records`` tables that declare ``queries`` (see ``registry.served``)."""


def registry(areas: Sequence[Area[Any]] = AREAS) -> tuple[Table, ...]:
    """The kernel tables and one per ``Records`` declaration of ``areas``.

    >>> [table.name for table in registry(areas=())]
    ['organizations', 'api_keys', 'idempotency', 'rate_limits', 'outbox']
    >>> registry()[-1].records.name == AREAS[-1].records[-1].name
    True
    """
    return derive(KERNEL_TABLES, areas, records=PostgresRecords, overrides=served(areas, EXTENSIONS))


TABLES: tuple[Table, ...] = registry()
"""The tables of every registered area (what ``PostgresStore`` serves by default)."""
