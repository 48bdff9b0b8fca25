"""How model fields become PostgreSQL parameters and back.

A ``Mapper`` is built once per store from a model's attrs field types, so turning a row into a
model costs one call per column that needs converting and no reflection per row. psycopg already
adapts most types both ways: timestamps are ``timestamptz`` (the connections run in UTC, so they
come back UTC-aware), dates ``date``, booleans ``boolean``, numbers ``integer``/``bigint``/``double
precision``. Two kinds need the mapper:

- enums are stored by their wire ``.value`` (psycopg would dump a plain ``Enum`` by its *name*),
  and read back through a value -> member table;
- nested values (a vendor's sub-processors) are JSON documents, written as JSON text (which
  PostgreSQL casts to the column's ``jsonb``/``json`` type) through the same cattrs converter the
  idempotency results use, and structured back into their models.
"""

from __future__ import annotations

import collections.abc
import datetime as dt
import enum
import itertools
import json
import operator
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import attrs
import cattrs

from compliance_core.kernel.clock import utc

__all__ = ["Mapper", "quote", "make_converter", "column_codec", "dumps", "scalar", "stream"]

M = TypeVar("M")
Codec = Callable[[Any], Any]


def scalar(cur: Any, query: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row of ``query`` (which always answers one row)."""
    row = cur.execute(query, params).fetchone()
    if row is None:
        raise RuntimeError(f"no row from {query!r}")
    return row[0]


_CURSORS = itertools.count(1)


def stream(cur: Any, query: str, params: Sequence[Any] = (), *, batch: int = 1000) -> Iterator[tuple[Any, ...]]:
    """The rows of ``query``, fetched ``batch`` at a time through a server-side cursor of the
    transaction ``cur`` is in (so from its snapshot), so a table of any size is never held whole.
    Stopping early closes the cursor and leaves the transaction usable, where an abandoned
    ``Cursor.stream`` would abort it."""
    with cur.connection.cursor(name=f"compliance_stream_{next(_CURSORS)}") as named:
        named.itersize = batch
        named.execute(query, params)
        yield from named


def dumps(value: Any) -> str:
    """Compact JSON text, as a parameter PostgreSQL casts to a ``json``/``jsonb`` column."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _timestamp(value: dt.datetime) -> str:
    return utc(value).isoformat(timespec="microseconds")


def make_converter() -> cattrs.Converter:
    """The converter for JSON documents and idempotency results: timestamps and dates as ISO
    text, enums as their values."""
    converter = cattrs.Converter()
    converter.register_unstructure_hook(dt.datetime, _timestamp)
    converter.register_structure_hook(dt.datetime, lambda value, _: dt.datetime.fromisoformat(value))
    converter.register_unstructure_hook(dt.date, dt.date.isoformat)
    converter.register_structure_hook(dt.date, lambda value, _: dt.date.fromisoformat(value))
    converter.register_unstructure_hook(enum.Enum, operator.attrgetter("value"))
    return converter


def _without_none(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _json_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec, Codec | None]:
    origin = typing.get_origin(annotation)
    if annotation is dict or (origin in (dict, collections.abc.Mapping) and typing.get_args(annotation)[1] is Any):
        return dumps, None  # already plain JSON values (an event body), and psycopg reads them back so

    def encode(value: Any) -> str:
        return dumps(converter.unstructure(value))

    empty: Any = () if origin is tuple else None

    def decode(value: Any) -> Any:
        if empty is not None and value == []:
            return empty
        return converter.structure(value, annotation)

    return encode, decode


def column_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec | None, Codec | None]:
    """(encoder, decoder) for one field; None where psycopg adapts the Python value as it is."""
    base = _without_none(annotation)
    if base in (str, int, float, bool, dt.datetime, dt.date):
        return None, None
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return operator.attrgetter("value"), dict(base._value2member_map_).__getitem__
    return _json_codec(base, converter)


def quote(name: str) -> str:
    """A column name as SQL text: a field may be called like a keyword (``order``)."""
    return f'"{name}"'


class Mapper(Generic[M]):
    """One model <-> one table row, columns named as the model's fields, in field order."""

    def __init__(self, model: type[M], table: str, converter: cattrs.Converter, key: tuple[str, ...] = ("id",)) -> None:
        hints = typing.get_type_hints(model)
        self.model = model
        self.table = table
        self.key = key
        self.names: tuple[str, ...] = tuple(f.name for f in attrs.fields(typing.cast(Any, model)))
        self.columns = ", ".join(map(quote, self.names))
        self.codecs = {name: column_codec(hints[name], converter) for name in self.names}
        codecs = list(self.codecs.values())
        self._encoders = [(i, enc) for i, (enc, _) in enumerate(codecs) if enc is not None]
        decoders = [(i, dec) for i, (_, dec) in enumerate(codecs) if dec is not None]
        self.from_row: Callable[[Sequence[Any]], M] = _row_reader(model, self.names, decoders)
        self._values = operator.attrgetter(*self.names)
        marks = ", ".join(["%s"] * len(self.names))
        self.insert_sql = f"INSERT INTO {table} ({self.columns}) VALUES ({marks})"
        assignments = ", ".join(f"{quote(name)} = %s" for name in self.names if name not in key)
        self.where_key = " AND ".join(f"{quote(k)} = %s" for k in key)
        self.update_sql = f"UPDATE {table} SET {assignments} WHERE {self.where_key}"
        self.select_sql = f"SELECT {self.columns} FROM {table}"
        self._key_positions = [self.names.index(name) for name in key]

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
    """``row -> model`` as one generated function (``model(id=row[0], status=decode_5(row[5]), ...)``),
    the way attrs builds ``__init__``: no loop over the columns per row."""
    scope: dict[str, Any] = {"model": model}
    arguments = [f"{name}=row[{index}]" for index, name in enumerate(names)]
    for index, decode in decoders:
        scope[f"decode_{index}"] = decode
        arguments[index] = f"{names[index]}=None if row[{index}] is None else decode_{index}(row[{index}])"
    source = f"def from_row(row):\n    return model({', '.join(arguments)})\n"
    exec(compile(source, f"<row reader for {model.__qualname__}>", "exec"), scope)
    return scope["from_row"]
