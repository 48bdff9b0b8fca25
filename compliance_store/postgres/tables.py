"""Every table the PostgreSQL store serves, and the repository class that serves it.

The organization-scoped tables come from the ``Records`` declarations of the areas (a generic
``PostgresRecords`` unless ``OVERRIDES`` names a class with more behaviour), plus the kernel's
tables. Sessions resolve ``session[repo]`` by ``repo.name`` over this registry, and the start-up
check (``checks``) holds the migrated schema against it, so a new area needs a migration and
nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import API_KEYS, ApiKey
from compliance_core.areas.organizations import ORGANIZATIONS, Organization
from compliance_core.areas.people import PEOPLE
from compliance_core.kernel.events import OUTBOX, OutboxMessage
from compliance_core.kernel.idempotency import IDEMPOTENCY, IdempotencyRecord
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.records import Records
from compliance_core.kernel.registry import Area

from .api_keys import PostgresApiKeys
from .idempotency import PostgresIdempotency
from .organizations import PostgresOrganizations
from .outbox import PostgresOutbox
from .people import PostgresPeople
from .rate_limits import PostgresRateLimits
from .records import PostgresRecords

__all__ = ["Table", "KERNEL_TABLES", "SUPPORT_TABLES", "OVERRIDES", "TABLES", "registry"]

SCOPED_KEY = ("organization_id", "id")
"""The key of organization-scoped tables, as the memory store keys them."""


@attrs.frozen(kw_only=True)
class Table:
    """One table and the repository sessions hand out for it.

    :param name: the repository's name, which handles use (``Repo.name``)
    :param table: the SQL table
    :param model: the model a row holds; each field is a column the start-up check requires
    :param repository: its class: ``prepare(table, converter)`` builds what every connection
        shares (mapper, page queries) once per store, ``repository(cursor, prepared, write=...)``
        binds it to one connection's cursor, for read or for write transactions
    :param key: the columns that identify a row
    :param records: the declaration of an organization-scoped table (None: a kernel table)
    """

    name: str
    table: str
    model: type
    repository: Any
    key: tuple[str, ...] = ("id",)
    records: Records[Any, Any] | None = None


KERNEL_TABLES: tuple[Table, ...] = (
    Table(name=ORGANIZATIONS.name, table="organizations", model=Organization, repository=PostgresOrganizations),
    Table(name=API_KEYS.name, table="api_keys", model=ApiKey, repository=PostgresApiKeys),
    Table(
        name=IDEMPOTENCY.name,
        table="idempotency",
        model=IdempotencyRecord,
        repository=PostgresIdempotency,
        key=("organization_id", "principal", "key"),
    ),
    Table(
        name=RATE_LIMITS.name, table="rate_limit_buckets", model=Bucket, repository=PostgresRateLimits, key=("key_id",)
    ),
    Table(name=OUTBOX.name, table="outbox", model=OutboxMessage, repository=PostgresOutbox),
)
"""What every store keeps whatever the areas."""

SUPPORT_TABLES: dict[str, tuple[str, ...]] = {
    "key_usage": ("key_id", "day", "requests"),
    "list_counts": ("table_name", "organization_id", "partition_value", "total"),
    "list_revisions": ("table_name", "organization_id", "revision"),
}
"""Tables no repository is named after, with the columns the repositories and triggers use
(``key_usage`` belongs to ``PostgresApiKeys``, the counters to the ``Records`` triggers)."""

OVERRIDES: dict[str, Any] = {PEOPLE.name: PostgresPeople}
"""Declared ``Records`` tables whose repository does more than ``PostgresRecords``."""


def registry(areas: Sequence[Area[Any]] = AREAS) -> tuple[Table, ...]:
    """The kernel tables and one per ``Records`` declaration of ``areas``.

    >>> [table.name for table in registry(areas=())]
    ['organizations', 'api_keys', 'idempotency', 'rate_limits', 'outbox']
    >>> registry()[-1].records.name == AREAS[-1].records[-1].name
    True
    """
    tables = list(KERNEL_TABLES)
    for area in areas:
        for records in area.records:
            tables.append(
                Table(
                    name=records.name,
                    table=records.name,
                    model=records.model,
                    repository=OVERRIDES.get(records.name, PostgresRecords),
                    key=SCOPED_KEY,
                    records=records,
                )
            )
    names = [table.name for table in tables]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"repositories declared twice: {repeated}")
    return tuple(tables)


TABLES: tuple[Table, ...] = registry()
"""The tables of every registered area (what ``PostgresStore`` serves by default)."""
