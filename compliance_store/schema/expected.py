"""What the declarations ask each store to hold: the only place columns and filters come from.

A table's columns are its stored model's attrs fields in field order, each typed from its
annotation (``X | None`` is nullable) the way the stores' codecs write it; a ``Records`` table
adds its filter indexes (``registry.expected_indexes``, as ``create_records_table_v2`` makes
them), its partition and its counted facets and pairs. The SQL types are those the hand-written
migrations always used, so tables made before the generator and after it read alike.
"""

from __future__ import annotations

import datetime as dt
import enum
import typing
from collections.abc import Sequence
from typing import Any

import attrs

from compliance_core.areas import AREAS
from compliance_core.kernel.registry import Area

from ..codec import without_none
from ..registry import Table, derive, expected_indexes, filter_columns, kernel_tables

__all__ = ["Column", "DeclaredTable", "declared_tables", "declared_table", "SQLITE", "POSTGRES", "DIALECTS"]

SQLITE = "sqlite"
POSTGRES = "postgresql"
DIALECTS = (SQLITE, POSTGRES)

_SQLITE_TYPES = {
    "text": "TEXT",
    "integer": "INTEGER",
    "real": "REAL",
    "boolean": "INTEGER",
    "timestamp": "TEXT",
    "date": "TEXT",
    "json": "TEXT",
}
_POSTGRES_TYPES = {
    "text": "text",
    "integer": "integer",
    "real": "double precision",
    "boolean": "boolean",
    "timestamp": "timestamp with time zone",
    "date": "date",
    "json": "jsonb",
}
_POSTGRES_SPELLING = {"timestamp with time zone": "timestamptz"}
_CODE_POINT_ORDER = ("id", "organization_id")
"""Ordered by code point on PostgreSQL as the other stores order them (``COLLATE "C"``): pages
end in ``id``."""


@attrs.frozen
class Column:
    """One column as a model field declares it.

    :param kind: what the codecs store: text, integer, real, boolean, timestamp, date or json
    :param default: the field's default as SQL text per dialect ({} when it has none that SQL
        can hold): what rows already there get when the column is added
    """

    name: str
    kind: str
    nullable: bool
    default: dict[str, str] = attrs.field(factory=dict)

    def sql_type(self, dialect: str) -> str:
        """The type as the database reports it (``pragma_table_info``, ``format_type``)."""
        return (_SQLITE_TYPES if dialect == SQLITE else _POSTGRES_TYPES)[self.kind]

    def accepts(self, found: str, dialect: str) -> bool:
        """Whether a column of type ``found`` holds this field: its own type, or on PostgreSQL
        ``json`` for a JSON field (the audit log's changes, idempotency results and outbox
        payloads keep their text as written; the codec reads both alike)."""
        return found == self.sql_type(dialect) or (dialect == POSTGRES and self.kind == "json" and found == "json")

    def definition(self, dialect: str) -> str:
        """The column's SQL definition as a migration writes it."""
        text = self.sql_type(dialect)
        if dialect == POSTGRES:
            text = _POSTGRES_SPELLING.get(text, text)
            if self.name in _CODE_POINT_ORDER:
                text += ' COLLATE "C"'
        if not self.nullable:
            text += " NOT NULL"
        if dialect in self.default:
            text += f" DEFAULT {self.default[dialect]}"
        return text


@attrs.frozen(kw_only=True)
class DeclaredTable:
    """One table as the declarations ask for it.

    :param indexes: a ``Records`` table's list, filter and sort indexes by name, with their
        columns (a kernel table's: the sort indexes its ``Listed`` declaration asks for)
    :param filters: its filter columns but the partition, in the filter model's order
    :param key: the columns that identify a row; a kernel table's key may be no model field
        (``rate_limit_buckets.key_id``: the repository writes it beside the model)
    :param records: whether it is an organization-scoped ``Records`` table (the kernel's tables
        are written by hand: the generator only adds their columns)
    :param searchable: the text columns ``q`` searches, which the search index covers (SQLite's
        ``<table>_search`` FTS5 table, PostgreSQL's ``<table>_search`` trigram index)
    """

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ("id",)
    records: bool = False
    filters: tuple[str, ...] = ()
    partition: str | None = None
    facets: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    indexes: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    searchable: tuple[str, ...] = ()

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)


def declared_tables(areas: Sequence[Area[Any]] = AREAS) -> tuple[DeclaredTable, ...]:
    """The kernel's tables and one per ``Records`` declaration of ``areas``, as the stores'
    registries derive them."""
    kernel = kernel_tables(organizations=None, api_keys=None, idempotency=None, rate_limits=None, outbox=None)
    return tuple(declared_table(table) for table in derive(kernel, areas, records=None, overrides={}))


def declared_table(table: Table) -> DeclaredTable:
    hints = typing.get_type_hints(table.model)
    columns = tuple(_column(field, hints[field.name]) for field in attrs.fields(table.model))
    declared = table.records
    if declared is None:
        listed = table.listed
        if listed is None:
            return DeclaredTable(name=table.table, columns=columns, key=table.key)
        return DeclaredTable(
            name=table.table,
            columns=columns,
            key=table.key,
            indexes=expected_indexes(table),
            searchable=tuple(listed.searchable),
        )
    return DeclaredTable(
        name=table.table,
        columns=columns,
        key=table.key,
        records=True,
        filters=filter_columns(table),
        partition=declared.partition,
        facets=tuple(declared.facets),
        pairs=tuple(declared.facet_pairs),
        indexes=expected_indexes(table),
        searchable=tuple(declared.searchable),
    )


def _column(field: attrs.Attribute[Any], annotation: Any) -> Column:
    base = without_none(annotation)
    nullable = base is not annotation or annotation is type(None)
    kind = _kind(base)
    return Column(name=field.name, kind=kind, nullable=nullable, default=_default(field.default, kind))


def _kind(base: Any) -> str:
    if base is dt.datetime:
        return "timestamp"
    if base is dt.date:
        return "date"
    if base is bool:
        return "boolean"
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return "text" if issubclass(base, str) else "integer"
    if base is str:
        return "text"
    if base is int:
        return "integer"
    if base is float:
        return "real"
    return "json"


def _default(default: Any, kind: str) -> dict[str, str]:
    """The default as SQL text per dialect; none for a field without one, a None default (the
    column is then nullable and rows already there read None) or one SQL cannot spell."""
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        made = default.factory() if not default.takes_self else None
        return {SQLITE: "'[]'", POSTGRES: "'[]'"} if kind == "json" and made in ((), []) else {}
    if default is attrs.NOTHING or default is None:
        return {}
    if kind == "json" and default in ((), []):
        return {SQLITE: "'[]'", POSTGRES: "'[]'"}
    if kind == "boolean":
        return {SQLITE: str(int(default)), POSTGRES: str(bool(default)).lower()}
    if isinstance(default, enum.Enum):
        default = default.value
    if kind in ("integer", "real") and isinstance(default, int | float):
        return {SQLITE: repr(default), POSTGRES: repr(default)}
    if kind == "text" and isinstance(default, str):
        quoted = "'" + default.replace("'", "''") + "'"
        return {SQLITE: quoted, POSTGRES: quoted}
    return {}
