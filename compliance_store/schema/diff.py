"""The changes that bring a database to what the declarations ask for, or why they cannot be
generated.

Only what a migration can do without losing anything is generated: a new ``Records`` table, a
column added (nullable, or with a default for the rows already there), filter indexes made again
for a new filter list, sort indexes made or dropped for the fields declared ``indexed``, the
search index made again for the fields declared ``searchable`` (or dropped), and block counts
narrowed or recounted for new facets. A dropped column or
table, a changed type, nullability or partition, or a missing kernel table is refused, each named:
those lose data or need a decision about rows already there, so they are written by hand, as
Django's makemigrations asks before it drops anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from .expected import Column, DeclaredTable
from .introspect import FoundTable

__all__ = [
    "NewTable",
    "AddColumn",
    "Reindex",
    "SortIndexes",
    "SearchIndex",
    "Recount",
    "Change",
    "Refused",
    "changes",
]


@attrs.frozen
class NewTable:
    table: DeclaredTable


@attrs.frozen
class AddColumn:
    table: str
    column: Column


@attrs.frozen
class Reindex:
    """Filter indexes dropped and made again: each covers the other filters, so a filter added to
    or removed from the list changes every one of them."""

    table: str
    drop: tuple[str, ...]
    create: dict[str, tuple[str, ...]]


@attrs.frozen
class SortIndexes:
    """Sort indexes (``<table>_sort_<field>``) dropped and made for the fields declared
    ``indexed`` now. ``collated``: the text fields among those made, which PostgreSQL indexes
    with ``COLLATE "C"`` (the code point order the sorted pages ask for)."""

    table: str
    drop: tuple[str, ...]
    create: dict[str, tuple[str, ...]]
    collated: tuple[str, ...] = ()


@attrs.frozen
class SearchIndex:
    """The search index of ``table`` made (again) over ``columns``, the fields declared
    ``searchable`` now; ``()``: dropped, the table declares none any more."""

    table: str
    columns: tuple[str, ...]


@attrs.frozen
class Recount:
    """New facets or pairs to count. ``narrow``: every kept key is counted already, so the
    counts stay and only the others are dropped (``keep_facets``, no scan); otherwise the
    table's blocks are counted again (``recount_blocks_v2``)."""

    table: str
    facets: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    partition: str | None
    narrow: bool


Change = NewTable | AddColumn | Reindex | SortIndexes | SearchIndex | Recount


class Refused(Exception):
    """Differences the generator will not write: each one sentence, naming the table and column."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def changes(declared: Iterable[DeclaredTable], found: Mapping[str, FoundTable], dialect: str) -> list[Change]:
    """What turns ``found`` (a database of ``dialect``) into ``declared``, in the order a
    migration applies it: new tables, new columns, indexes, counts. Raises ``Refused`` naming
    every difference it will not generate."""
    made: list[Change] = []
    problems: list[str] = []
    declared = list(declared)
    for table in declared:
        there = found.get(table.name)
        if there is None:
            if table.records:
                made.append(NewTable(table))
                made += _sort_indexes(table, {})
                made += _search_index(table, None, problems)
            else:
                problems.append(f"kernel table {table.name} does not exist: write its migration by hand")
            continue
        made += _columns(table, there, dialect, problems)
        if table.records:
            made += _indexes(table, there, problems)
        # a kernel table's too (a ``Listed`` one: API keys), whose other indexes are written by hand
        made += _sort_indexes(table, there.indexes)
        made += _search_index(table, there.search, problems)
        if table.records:
            made += _counts(table, there, problems)
    names = {table.name for table in declared}
    for name, there in sorted(found.items()):
        if name not in names and there.counting is not None:
            problems.append(f"table {name} is in the database but no area declares it: drop it by hand")
    if problems:
        raise Refused(problems)
    order = (NewTable, AddColumn, Reindex, SortIndexes, SearchIndex, Recount)
    return sorted(made, key=lambda change: order.index(type(change)))


def _columns(table: DeclaredTable, there: FoundTable, dialect: str, problems: list[str]) -> list[Change]:
    added: list[Change] = []
    for column in table.columns:
        if column.name not in there.columns:
            if not column.nullable and dialect not in column.default:
                problems.append(
                    f"column {table.name}.{column.name} is new and NOT NULL without a default SQL can hold: "
                    "give the field a default, or write the migration by hand (what do the rows already there get?)"
                )
            added.append(AddColumn(table.name, column))
            continue
        kind, nullable = there.columns[column.name]
        if not column.accepts(kind, dialect) or nullable != column.nullable:
            problems.append(
                f"column {table.name}.{column.name} is {_spell(kind, nullable)} in the database but "
                f"{_spell(column.sql_type(dialect), column.nullable)} in the model: write that change by hand"
            )
    fields = {column.name for column in table.columns} | set(table.key)
    for name in there.columns:
        if name not in fields:
            problems.append(
                f"column {table.name}.{name} is in the database but no field of the model: "
                "drop it by hand (or restore the field)"
            )
    return added


def _spell(kind: str, nullable: bool) -> str:
    return f"{kind} {'NULL' if nullable else 'NOT NULL'}"


def _indexes(table: DeclaredTable, there: FoundTable, problems: list[str]) -> list[Change]:
    listing = f"{table.name}_list"
    if there.indexes.get(listing) != table.indexes[listing]:
        problems.append(
            f"index {listing} is on {there.indexes.get(listing)}, not {table.indexes[listing]}: "
            "a changed partition is written by hand"
        )
        return []
    prefix = f"{table.name}_by_"
    present = {name: columns for name, columns in there.indexes.items() if name.startswith(prefix)}
    wanted = {name: columns for name, columns in table.indexes.items() if name.startswith(prefix)}
    if present == wanted:
        return []
    drop = tuple(name for name, columns in present.items() if wanted.get(name) != columns)
    create = {name: columns for name, columns in wanted.items() if present.get(name) != columns}
    return [Reindex(table.name, tuple(sorted(drop)), create)]


def _sort_indexes(table: DeclaredTable, found: Mapping[str, tuple[str, ...]]) -> list[Change]:
    prefix = f"{table.name}_sort_"
    present = {name: columns for name, columns in found.items() if name.startswith(prefix)}
    wanted = {name: columns for name, columns in table.indexes.items() if name.startswith(prefix)}
    if present == wanted:
        return []
    drop = tuple(sorted(name for name, columns in present.items() if wanted.get(name) != columns))
    create = {name: columns for name, columns in wanted.items() if present.get(name) != columns}
    texts = {column.name for column in table.columns if column.kind == "text"} - {"id", "organization_id"}
    collated = tuple(sorted({name[len(prefix) :] for name in create} & texts))
    return [SortIndexes(table.name, drop, create, collated)]


def _search_index(table: DeclaredTable, found: tuple[str, ...] | None, problems: list[str]) -> list[Change]:
    """The index is made again whenever its columns differ (one index over all of them: a column
    more or less changes it all) and dropped when nothing is searchable any more (or when one
    made otherwise, covering ``()``, is there)."""
    texts = [name for name in table.searchable if table.column(name).kind != "text"]
    if texts:
        problems.append(f"fields {texts} of {table.name} are searchable but not text: q searches text only")
        return []
    if found == (table.searchable or None):
        return []
    return [SearchIndex(table.name, table.searchable)]


def _counts(table: DeclaredTable, there: FoundTable, problems: list[str]) -> list[Change]:
    if there.counting is None:
        problems.append(f"table {table.name} keeps no block counts: write its count_blocks_v2 migration by hand")
        return []
    prefix = f"{table.name}_by_"
    filters = list(table.filters)
    filters += sorted(name[len(prefix) :] for name in there.indexes if name.startswith(prefix))
    filters = list(dict.fromkeys(filters))
    candidates = [*filters, *(f"{a},{b}" for i, a in enumerate(filters) for b in filters[i + 1 :])]
    counted = {key for key in candidates if there.counts(key)}
    wanted = {*table.facets, *(f"{a},{b}" for a, b in table.pairs)}
    if counted == wanted:
        return []
    return [Recount(table.name, table.facets, table.pairs, table.partition, narrow=wanted <= counted)]
