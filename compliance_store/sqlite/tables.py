"""Every table the SQLite store serves, and the repository class that serves it.

The organization-scoped tables come from the ``Records`` declarations of the areas (a generic
``SqliteRecords`` or the class of ``EXTENSIONS`` serving a table that declares ``queries``), plus the kernel's
tables. Sessions resolve ``session[repo]`` by ``repo.name`` over this registry, and the start-up
check (``checks``) holds the migrated file against it, so a new area needs a migration and
nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compliance_core.areas import AREAS
from compliance_core.kernel.registry import Area

from ..registry import SCOPED_KEY, Table, derive, kernel_tables, served
from .api_keys import SqliteApiKeys
from .idempotency import SqliteIdempotency
from .organizations import SqliteOrganizations
from .outbox import SqliteOutbox
from .people import SqlitePeople
from .rate_limits import SqliteRateLimits
from .records import SqliteDeliveries, SqliteRecords

__all__ = ["Table", "SCOPED_KEY", "KERNEL_TABLES", "EXTENSIONS", "TABLES", "registry"]

KERNEL_TABLES: tuple[Table, ...] = kernel_tables(
    organizations=SqliteOrganizations,
    api_keys=SqliteApiKeys,
    idempotency=SqliteIdempotency,
    rate_limits=SqliteRateLimits,
    outbox=SqliteOutbox,
)
"""What every store keeps whatever the areas (``key_usage`` belongs to ``SqliteApiKeys``)."""

EXTENSIONS: tuple[type, ...] = (SqlitePeople, SqliteDeliveries)
"""The classes serving the ``Records`` tables that declare ``queries`` (see ``registry.served``)."""


def registry(areas: Sequence[Area[Any]] = AREAS) -> tuple[Table, ...]:
    """The kernel tables and one per ``Records`` declaration of ``areas``.

    >>> [table.name for table in registry(areas=())]
    ['organizations', 'api_keys', 'idempotency', 'rate_limits', 'outbox']
    >>> registry()[-1].records.name == AREAS[-1].records[-1].name
    True
    """
    return derive(KERNEL_TABLES, areas, records=SqliteRecords, overrides=served(areas, EXTENSIONS))


TABLES: tuple[Table, ...] = registry()
"""The tables of every registered area (what ``SqliteStore`` serves by default)."""
