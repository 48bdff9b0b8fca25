"""How model fields become SQLite values and back.

A ``Mapper`` is built once per store from a model's attrs field types, so turning a row into a
model costs one call per column that needs converting and no reflection per row. Timestamps are
fixed-width ISO 8601 UTC text (so ``ORDER BY created_at`` is time order), dates ISO text,
booleans 0/1, enums their wire value, and nested values (sub-processors, payloads) JSON.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import operator
import typing
from typing import Any, TypeVar

import cattrs
import orjson

from ..codec import (
    BaseMapper,
    Codec,
    decode_date,
    decode_timestamp,
    encode_date,
    encode_timestamp,
    make_converter,
    quote,
    without_none,
)

__all__ = ["Mapper", "quote", "make_converter", "encode_timestamp", "decode_timestamp", "encode_date", "decode_date"]

M = TypeVar("M")


def _json_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec, Codec]:
    empty: Any = () if typing.get_origin(annotation) is tuple else None

    def encode(value: Any) -> str:
        return json.dumps(converter.unstructure(value), separators=(",", ":"))

    def decode(text: str) -> Any:
        if empty is not None and text == "[]":
            return empty
        return converter.structure(json.loads(text), annotation)

    return encode, decode


def column_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec | None, Codec | None]:
    """(encoder, decoder) for one field; None where SQLite holds the Python value as it is."""
    base = without_none(annotation)
    if base is dt.datetime:
        return encode_timestamp, decode_timestamp
    if base is dt.date:
        return encode_date, decode_date
    if base is bool:
        return None, bool
    if isinstance(base, type) and issubclass(base, enum.Enum):
        # sqlite3 binds a str subclass as its text, which for a StrEnum is the wire value
        encode = None if issubclass(base, str) else operator.attrgetter("value")
        return encode, dict(base._value2member_map_).__getitem__
    if base in (str, int, float):
        return None, None
    return _json_codec(base, converter)


class Mapper(BaseMapper[M]):
    """One model <-> one table row, columns named as the model's fields, in field order."""

    mark = "?"

    @staticmethod
    def plain_loader(value: Any) -> Any:
        # most nested lists are empty; orjson reads the others several times faster than json
        return [] if value == "[]" else orjson.loads(value)

    @staticmethod
    def column_codec(annotation: Any, converter: cattrs.Converter) -> tuple[Codec | None, Codec | None]:
        return column_codec(annotation, converter)
