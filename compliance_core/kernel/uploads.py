"""Files in a request body: one body field that holds a file, sent either inline in JSON (its
bytes in base64, as the reference's attachment upload takes them) or streamed.

JSON carries no bytes, so a file in a JSON body is base64 text, held whole in memory with the
rest of the body (whose size the HTTP layer bounds). A large file is streamed instead: over HTTP
as the file part of a ``multipart/form-data`` request, in-process as an ``Upload`` around an open
file or any iterable of byte chunks. Both reach the service in the same body model, in the same
field, so an operation is declared once and its rules run the same way for either.

A body model marks its file field with ``file_content(...)``; ``upload_field(model)`` finds it,
which is how the HTTP layer knows an operation may be sent as multipart (and documents it so)
without the operation declaring anything more.
"""

from __future__ import annotations

import base64
import binascii
import weakref
from collections.abc import Iterator
from typing import Any

import attrs

from .blobs import CHUNK_BYTES, Source
from .errors import ValidationError
from .validation import Checked, register_schema, wire_name

__all__ = ["Upload", "file_content", "upload_field", "content_of", "chunks_of", "decoded_size"]


class Upload:
    """A file streamed into a body field rather than sent inline in base64.

    :param source: the bytes: a binary file object (anything with ``read(n)``) or an iterable of
        byte chunks; read once, by the blob store, in chunks
    :param file_name: the name the sender gave the file (a multipart part's ``filename``)
    :param media_type: the type the sender declared (a part's ``Content-Type``); the stored type
        is always sniffed from the bytes, this only tells CSV or JSON from plain text

    >>> upload = Upload(iter([b"id,name\\n", b"1,A\\n"]), file_name="users.csv", media_type="text/csv")
    >>> upload.file_name
    'users.csv'
    """

    __slots__ = ("source", "file_name", "media_type")

    def __init__(self, source: Source, *, file_name: str | None = None, media_type: str | None = None) -> None:
        self.source = source
        self.file_name = file_name
        self.media_type = media_type

    def __repr__(self) -> str:
        return f"Upload(file_name={self.file_name!r}, media_type={self.media_type!r})"


_FILE_FIELDS: weakref.WeakSet[Any] = weakref.WeakSet()
"""The converters ``file_content`` made: a field with one of them holds a file."""


def file_content(max_bytes: int, *, required: bool = False) -> Checked:
    """The converter of a body field holding a file: base64 text of at most ``max_bytes``
    decoded bytes (kept as the text, so the command still renders as JSON), or an ``Upload``
    (streamed; the blob store enforces its own limit while reading it). None stays None, unless
    the file is ``required`` (the document then says so, rather than a service refusing it).

    >>> convert = file_content(10)
    >>> @attrs.frozen
    ... class Body:
    ...     data: Any = attrs.field(default=None, converter=convert)
    >>> Body(data="aGVsbG8=").data
    'aGVsbG8='
    """
    max_chars = 4 * ((max_bytes + 2) // 3)

    def check(value: Any, field: attrs.Attribute[Any]) -> Any:
        name = wire_name(field.name)
        if (value is None and not required) or isinstance(value, Upload):
            return value
        if not isinstance(value, str) or not value:
            raise ValidationError.field(name, value, "must be the file's bytes in base64")
        if len(value) > max_chars:
            raise ValidationError.field(
                name,
                len(value),
                f"must be a file of at most {max_bytes} bytes inline; send larger files as multipart/form-data",
            )
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValidationError.field(name, value, "must be the file's bytes in base64") from None
        return value

    made = Checked(check, takes_field=True)
    _FILE_FIELDS.add(made)
    return register_schema(
        made,
        {
            "type": "string",
            "format": "byte",
            "minLength": 1,
            "maxLength": max_chars,
            **({} if required else {"nullable": True}),
            "description": f"the file's bytes in base64, at most {max_bytes} bytes; a larger file is sent as "
            "the file part of a multipart/form-data request instead",
        },
    )


def upload_field(model: type | None) -> str | None:
    """The field of ``model`` that holds a file (``file_content``), or None."""
    if model is None or not attrs.has(model):
        return None
    for field in attrs.fields(model):
        converter = field.converter
        try:
            if converter in _FILE_FIELDS:
                return str(field.name)
        except TypeError:  # not weakly referenceable: not one of ours
            continue
    return None


def content_of(value: str | Upload) -> Source:
    """The bytes of a file field's value, for ``BlobStore.put``: the decoded base64 (one chunk),
    or the streamed source as it is."""
    if isinstance(value, Upload):
        return value.source
    return _one(base64.b64decode(value))


def chunks_of(source: Source) -> Iterator[bytes]:
    """The bytes of a file field's source (``content_of``): a binary file object read in chunks,
    or an iterable of chunks as it is."""
    read = getattr(source, "read", None)
    if read is None:
        yield from source
        return
    while chunk := read(CHUNK_BYTES):
        yield bytes(chunk)


def _one(data: bytes) -> Iterator[bytes]:
    yield data


def decoded_size(value: str) -> int:
    """How many bytes base64 text decodes to (without decoding it)."""
    return len(value) // 4 * 3 - value[-2:].count("=")
