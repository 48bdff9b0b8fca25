"""The tables a SQL store serves, derived the same way for every store.

The organization-scoped tables come from the ``Records`` declarations of the areas (the store's
generic records repository, or the store's own class for a table whose declaration names
``queries``: see ``served``), plus the
kernel's tables. Each store package (``sqlite.tables``, ``postgres.tables``) supplies its own
repository classes; sessions resolve ``session[repo]`` by ``repo.name`` over the registry, and
each store's start-up check holds the migrated schema against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, Protocol

import attrs

from compliance_core.areas.api_keys import API_KEYS, ApiKey
from compliance_core.areas.organizations import ORGANIZATIONS, Organization
from compliance_core.kernel.events import OUTBOX, OutboxMessage
from compliance_core.kernel.idempotency import IDEMPOTENCY, IdempotencyRecord
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.records import Listed, Records
from compliance_core.kernel.registry import Area

__all__ = [
    "Table",
    "SCOPED_KEY",
    "kernel_tables",
    "served",
    "derive",
    "expected_indexes",
    "filter_columns",
    "facet_names",
    "missing_facets",
    "extra_facets",
    "search_problems",
]

SCOPED_KEY = ("organization_id", "id")
"""The key of organization-scoped tables, as the memory store keys them."""


@attrs.frozen(kw_only=True)
class Table:
    """One table and the repository sessions hand out for it.

    :param name: the repository's name, which handles use (``Repo.name``)
    :param table: the SQL table
    :param model: the model a row holds; each field is a column the start-up check requires
    :param repository: its class: ``prepare(table, converter)`` builds what every connection
        shares (mapper, page queries) once per store; the store's session binds it to one
        connection (SQLite: ``repository(conn, prepared)``; PostgreSQL:
        ``repository(cursor, prepared, write=...)``, for read or for write transactions)
    :param key: the columns that identify a row
    :param records: the declaration of an organization-scoped table (None: a kernel table)
    :param listed: a kernel table's declaration of what its list searches, sorts and ranges
        (``Listed``: API keys), which gives it a search index and sort indexes as a ``Records``
        table's does
    """

    name: str
    table: str
    model: type
    repository: Any
    key: tuple[str, ...] = ("id",)
    records: Records[Any, Any] | None = None
    listed: Listed[Any] | None = None

    @property
    def lists(self) -> Records[Any, Any] | Listed[Any] | None:
        """The declaration its list's search, sorts and range come from (None: paging only)."""
        return self.records if self.records is not None else self.listed


def kernel_tables(
    *, organizations: Any, api_keys: Any, idempotency: Any, rate_limits: Any, outbox: Any
) -> tuple[Table, ...]:
    """What every store keeps whatever the areas, served by the given repository classes."""
    return (
        Table(name=ORGANIZATIONS.name, table="organizations", model=Organization, repository=organizations),
        Table(name=API_KEYS.name, table="api_keys", model=ApiKey, repository=api_keys, listed=API_KEYS),
        Table(
            name=IDEMPOTENCY.name,
            table="idempotency",
            model=IdempotencyRecord,
            repository=idempotency,
            key=("organization_id", "principal", "key"),
        ),
        Table(name=RATE_LIMITS.name, table="rate_limit_buckets", model=Bucket, repository=rate_limits, key=("key_id",)),
        Table(name=OUTBOX.name, table="outbox", model=OutboxMessage, repository=outbox),
    )


def served(areas: Sequence[Area[Any]], classes: Sequence[Any]) -> dict[str, Any]:
    """The store's own class for each table of ``areas`` whose ``Records`` declares ``queries``,
    by table name: the declared extension point, where a store keeps what the generic records
    repository does not do (people's unique e-mails, the delivery engine's queue).

    Each class names the declaration it serves in ``serves``. A table declaring queries that no
    class serves, a class lacking one of the declared methods, two classes for one table and a
    class for a table that declares no queries are each a ``TypeError`` when the store is built,
    never a missing method met at run time. Classes of tables outside ``areas`` are left out.
    """
    declared = {records.name: records for area in areas for records in area.records}
    found: dict[str, Any] = {}
    for cls in classes:
        name = cls.serves.name
        if name in found:
            raise TypeError(f"two repository classes serve {name!r}: {found[name].__name__}, {cls.__name__}")
        if name in declared and declared[name].queries is None:
            raise TypeError(f"{cls.__name__} serves {name!r}, whose Records declares no queries")
        if name in declared:
            found[name] = cls
    for name, records in declared.items():
        if records.queries is None:
            continue
        if name not in found:
            raise TypeError(f"no repository class serves {name!r}, which declares {records.queries.__name__}")
        lacking = [method for method in _methods(records.queries) if not callable(getattr(found[name], method, None))]
        if lacking:
            raise TypeError(f"{found[name].__name__} lacks {lacking} of {records.queries.__name__}")
    return found


def _methods(protocol: type) -> list[str]:
    """The public methods a Protocol (and the Protocols it extends) declares."""
    return sorted(
        {
            name
            for cls in protocol.__mro__
            if cls not in (object, Protocol, Generic)
            for name, value in vars(cls).items()
            if not name.startswith("_") and callable(value)
        }
    )


def derive(
    kernel: Sequence[Table], areas: Sequence[Area[Any]], *, records: Any, overrides: Mapping[str, Any]
) -> tuple[Table, ...]:
    """``kernel`` and one table per ``Records`` declaration of ``areas``, served by ``records``
    unless ``overrides`` names another class; a name declared twice is an error."""
    tables = list(kernel)
    for area in areas:
        for declared in area.records:
            tables.append(
                Table(
                    name=declared.name,
                    table=declared.name,
                    model=declared.model,
                    repository=overrides.get(declared.name, records),
                    key=SCOPED_KEY,
                    records=declared,
                )
            )
    names = [table.name for table in tables]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"repositories declared twice: {repeated}")
    return tuple(tables)


def expected_indexes(table: Table) -> dict[str, tuple[str, ...]]:
    """A ``Records`` table's list, filter and sort indexes (a ``Listed`` kernel table's sort
    indexes), by name, with their columns (as each
    store's ``migrations.helpers.create_records_table_v2`` makes them: a filter index ends with
    the other filter columns, in the filter model's field order; a sort index
    ``<table>_sort_<field>`` per ``Records.indexed`` field, on the scope, the field and id, and
    ``created_at`` after them for the ranged field, so that a range in the list's order sorts
    the index's entries and reads only the page's rows). A table declaring ``within`` has that
    column after the scope of its sort indexes: every list of it carries that filter, so a page
    sorted within one framework or statement reads that one's entries in order."""
    declared = table.lists
    if declared is None:
        return {}
    indexes = {}
    scope: tuple[str, ...] = ("organization_id",)
    sorted_within: tuple[str, ...] = ()
    if table.records is not None:
        partition = table.records.partition
        scope = ("organization_id", partition) if partition else scope
        sorted_within = (table.records.within,) if table.records.within else ()
        indexes[f"{table.table}_list"] = (*scope, "created_at", "id")
        filters = filter_columns(table)
        for column in filters:
            others = (other for other in filters if other != column)
            indexes[f"{table.table}_by_{column}"] = (*scope, column, "created_at", "id", *others)
    for field in declared.indexed:  # a kernel table's (``Listed``) too: its own indexes are written by hand
        covering = ("created_at",) if field == declared.ranged and field != "created_at" else ()
        indexes[f"{table.table}_sort_{field}"] = (*scope, *sorted_within, field, "id", *covering)
    return indexes


def filter_columns(table: Table) -> tuple[str, ...]:
    """A ``Records`` table's filter columns but the partition, in the filter model's field order:
    what its filter indexes cover and its ``list_facet_blocks`` counts are kept for."""
    declared = table.records
    if declared is None or declared.filters is None:
        return ()
    return tuple(field.name for field in attrs.fields(declared.filters) if field.name != declared.partition)


def facet_names(table: Table) -> tuple[str, ...]:
    """The column sets whose counts ``list_facet_blocks`` keeps for a ``Records`` table (beside
    the unfiltered ``""``), as its triggers name them: the declared facets and facet pairs
    (``"a"``, ``"a,b"``, a pair in the filter model's order; each store's
    ``migrations.helpers.count_blocks_v2`` makes them). A filter that is no facet, such as an
    id, has no counts: its lists are counted once per filter set and revision instead."""
    declared = table.records
    if declared is None or declared.filters is None:
        return ()
    return (*declared.facets, *(f"{first},{second}" for first, second in declared.facet_pairs))


def missing_facets(table: Table, trigger_text: str) -> list[str]:
    """The facets of ``table`` that its block trigger (SQLite) or function (PostgreSQL), whose
    text is given, does not count: a facet declared without ``recount_blocks_v2``, whose totals
    would otherwise read 0."""
    return [name for name in facet_names(table) if f"'{name}'" not in trigger_text]


def extra_facets(table: Table, trigger_text: str) -> list[str]:
    """The filter columns and pairs of them that the block trigger or function of ``table``
    counts although they are no declared facet: every write would pay for counters no list
    reads (the start-up check expects exactly the declared facets)."""
    declared = set(facet_names(table))
    filters = filter_columns(table)
    kept = [*filters, *(f"{a},{b}" for index, a in enumerate(filters) for b in filters[index + 1 :])]
    return [name for name in kept if name not in declared and f"'{name}'" in trigger_text]


def search_problems(table: Table, found: tuple[str, ...] | None, hint: str) -> list[str]:
    """What the search index of a table whose ``Records`` declares ``searchable`` fields lacks,
    one sentence each ending in ``hint`` (``found``: the columns the index covers, None for no
    index): its searched pages read the index, so a missing one fails there, not slowly."""
    wanted = () if table.lists is None else tuple(table.lists.searchable)
    if not wanted or found == wanted:
        return []
    if found is None:
        return [f"search index {table.table}_search does not exist ({hint})"]
    return [f"search index {table.table}_search covers {found}, not {wanted} ({hint})"]
