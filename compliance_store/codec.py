"""What the SQL stores' column codecs share: the model <-> row mapper around a store's
``column_codec``, its generated row reader, and the converter for JSON values.

Each store's ``codec`` module says how one field type becomes a driver value and back
(``column_codec``) and which parameter marker its SQL uses; ``Mapper`` is built once per store
from a model's attrs field types, so turning a row into a model costs one call per column that
needs converting and no reflection per row.
"""

from __future__ import annotations

import abc
import datetime as dt
import enum
import operator
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import attrs
import cattrs

from compliance_core.kernel.clock import utc
from compliance_core.kernel.pages import RowItems

__all__ = [
    "BaseMapper",
    "Codec",
    "quote",
    "without_none",
    "make_converter",
    "encode_timestamp",
    "decode_timestamp",
    "encode_date",
    "decode_date",
]

M = TypeVar("M")
Codec = Callable[[Any], Any]


def encode_timestamp(value: dt.datetime) -> str:
    return utc(value).isoformat(timespec="microseconds")


decode_timestamp: Callable[[str], dt.datetime] = dt.datetime.fromisoformat
encode_date: Callable[[dt.date], str] = dt.date.isoformat
decode_date: Callable[[str], dt.date] = dt.date.fromisoformat


def make_converter() -> cattrs.Converter:
    """The converter for JSON values and idempotency results: timestamps and dates as ISO text,
    enums as their values."""
    converter = cattrs.Converter()
    converter.register_unstructure_hook(dt.datetime, encode_timestamp)
    converter.register_structure_hook(dt.datetime, lambda value, _: decode_timestamp(value))
    converter.register_unstructure_hook(dt.date, encode_date)
    converter.register_structure_hook(dt.date, lambda value, _: decode_date(value))
    converter.register_unstructure_hook(enum.Enum, operator.attrgetter("value"))
    return converter


def without_none(annotation: Any) -> Any:
    """``X`` for ``X | None``, else the annotation as it is."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def quote(name: str) -> str:
    """A column name as SQL text: a field may be called like a keyword (``order``)."""
    return f'"{name}"'


class BaseMapper(abc.ABC, Generic[M]):
    """One model <-> one table row, columns named as the model's fields, in field order.

    A store's ``Mapper`` sets ``mark`` (its parameter marker) and ``column_codec``.
    """

    mark: ClassVar[str]

    @staticmethod
    @abc.abstractmethod
    def column_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec | None, Codec | None]:
        """(encoder, decoder) for one field; None where the driver takes the Python value as it is."""

    def __init__(self, model: type[M], table: str, converter: cattrs.Converter, key: tuple[str, ...] = ("id",)) -> None:
        hints = typing.get_type_hints(model)
        mark = self.mark
        self.model = model
        self.table = table
        self.key = key
        self.names: tuple[str, ...] = tuple(f.name for f in attrs.fields(typing.cast(Any, model)))
        self.columns = ", ".join(map(quote, self.names))
        self.codecs = {name: self.column_codec(hints[name], converter) for name in self.names}
        codecs = list(self.codecs.values())
        self._encoders = [(i, enc) for i, (enc, _) in enumerate(codecs) if enc is not None]
        decoders = [(i, dec) for i, (_, dec) in enumerate(codecs) if dec is not None]
        self.from_row: Callable[[Sequence[Any]], M] = _row_reader(model, self.names, decoders)
        self._values = operator.attrgetter(*self.names)
        marks = ", ".join([mark] * len(self.names))
        self.insert_sql = f"INSERT INTO {table} ({self.columns}) VALUES ({marks})"
        assignments = ", ".join(f"{quote(name)} = {mark}" for name in self.names if name not in key)
        self.where_key = " AND ".join(f"{quote(k)} = {mark}" for k in key)
        self.update_sql = f"UPDATE {table} SET {assignments} WHERE {self.where_key}"
        self.select_sql = f"SELECT {self.columns} FROM {table}"
        self._key_positions = [self.names.index(name) for name in key]

    def column_decoder(self, name: str) -> Codec | None:
        """The decoder of ``name``'s column (None: the driver's value is the model's)."""
        return self.codecs[name][1]

    @staticmethod
    @abc.abstractmethod
    def plain_loader(value: Any) -> Any:
        """A nested column's value as plain JSON values, not structured into models (what
        ``Renderer.row_function`` renders from)."""

    def page(self, rows: Iterable[Sequence[Any]]) -> RowItems[M]:
        """A page's rows, built into models only when read as models (see ``RowItems``)."""
        return RowItems(list(rows), self)

    def to_row(self, item: M) -> list[Any]:
        values = list(self._values(item))
        for index, encode in self._encoders:
            value = values[index]
            if value is not None:
                values[index] = encode(value)
        return values

    def update_params(self, item: M) -> list[Any]:
        """The UPDATE's parameters: every column but the key's, then the key's for the WHERE."""
        values = self.to_row(item)
        keys = [values[position] for position in self._key_positions]
        return [v for i, v in enumerate(values) if i not in self._key_positions] + keys

    def from_rows(self, rows: Iterable[Sequence[Any]]) -> list[M]:
        from_row = self.from_row
        return [from_row(row) for row in rows]


def _row_reader(
    model: type[M], names: tuple[str, ...], decoders: list[tuple[int, Codec]]
) -> Callable[[Sequence[Any]], M]:
    """``row -> model`` as one generated function (``model(id=row[0], created_at=decode_27(row[27]), ...)``),
    the way attrs builds ``__init__``: it converts a page of 50 vendors about a quarter faster than
    a loop over the columns."""
    scope: dict[str, Any] = {"model": model}
    arguments = [f"{name}=row[{index}]" for index, name in enumerate(names)]
    for index, decode in decoders:
        scope[f"decode_{index}"] = decode
        arguments[index] = f"{names[index]}=None if row[{index}] is None else decode_{index}(row[{index}])"
    source = f"def from_row(row):\n    return model({', '.join(arguments)})\n"
    exec(compile(source, f"<row reader for {model.__qualname__}>", "exec"), scope)
    from_row: Callable[[Sequence[Any]], M] = scope["from_row"]
    return from_row
