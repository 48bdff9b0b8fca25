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
import typing
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import cattrs

from ..codec import BaseMapper, Codec, make_converter, quote, without_none

__all__ = ["Mapper", "quote", "make_converter", "column_codec", "dumps", "scalar", "stream"]

M = TypeVar("M")


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
    base = without_none(annotation)
    if base in (str, int, float, bool, dt.datetime, dt.date):
        return None, None
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return operator.attrgetter("value"), dict(base._value2member_map_).__getitem__
    return _json_codec(base, converter)


class Mapper(BaseMapper[M]):
    """One model <-> one table row, columns named as the model's fields, in field order."""

    mark = "%s"

    @staticmethod
    def plain_loader(value: Any) -> Any:
        return value  # psycopg has already read the jsonb column into plain JSON values

    @staticmethod
    def column_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec | None, Codec | None]:
        return column_codec(annotation, converter)
