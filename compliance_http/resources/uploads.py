"""``multipart/form-data`` bodies: a file streamed into an operation whose body model has a file
field (``compliance_core.kernel.uploads.file_content``), without holding it in memory.

The parts are read in order, as they arrive. Text parts before the file are the body's other
fields, by their wire names (a part repeated, or one for a list field, gives a list). The file
part, named as the file field (``fileData``), must come last: its stream is handed to the service
as an ``Upload`` and read once, by the blob store, in chunks; a part after it is refused when the
file has been read (``validation_error``), which the blob store answers by keeping nothing. A
broken multipart stream is a ``validation_error`` on the file field, whenever it is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import falcon
from falcon.media.multipart import MultipartParseError

from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.rendering import wire_name
from compliance_core.kernel.uploads import Upload, upload_field
from compliance_core.kernel.validation import schema_of

from ..routes import Endpoint

__all__ = ["FORM_BYTES", "MULTIPART", "FileBodyLimits", "is_multipart", "multipart_body"]

MULTIPART = "multipart/form-data"
_READ_BYTES = 1024 * 1024
FORM_BYTES = 64 * 1024
"""What a multipart body may hold besides its file: the other fields, boundaries, part headers."""


def is_multipart(req: falcon.Request, model: type | None) -> bool:
    """Whether ``req`` sends its body as multipart/form-data to an operation taking a file."""
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    return media_type == MULTIPART and upload_field(model) is not None


def multipart_body(req: falcon.Request, model: type) -> dict[str, Any]:
    """The body as the JSON one would be (wire names), the file as an ``Upload`` in its field."""
    field = upload_field(model)
    assert field is not None
    file_key = wire_name(field)
    lists = {
        wire_name(f.name)
        for f in attrs.fields(model)
        if schema_of(f.converter).get("type") == "array"  # a list field sent as one part
    }
    try:
        parts = iter(req.get_media())
        body: dict[str, Any] = {}
        for part in parts:
            name = part.name or ""
            if part.filename is not None or name == file_key:
                if name != file_key:
                    raise ValidationError.field(name, part.filename, f"the file goes in the part named {file_key}")
                body[file_key] = Upload(
                    _LastPart(part.stream, parts, file_key),
                    file_name=part.filename,
                    media_type=part.content_type if part.filename is not None else None,
                )
                break
            value = part.get_text()
            if name in body:
                held = body[name]
                body[name] = [*held, value] if isinstance(held, list) else [held, value]
            else:
                body[name] = [value] if name in lists else value
    except (falcon.MediaMalformedError, MultipartParseError) as error:
        raise ValidationError.field("body", MULTIPART, f"is not a readable multipart/form-data body: {error}") from None
    return body


class FileBodyLimits:
    """The most bytes a server lets a request's body send before refusing it unread, for the
    routes that take a file as multipart/form-data: the blob store's largest file and the form
    around it (``FORM_BYTES``); None for every other route, which keeps the server's own limit
    just above ``MAX_BODY_BYTES``. The blob store is asked at the first such request, so a server
    that stores no file never opens one; one it cannot open leaves the route at the server's
    limit, and the app answers why.

    :param bound: the app's endpoints
    :param largest_file: the blob store's ``max_bytes``
    """

    def __init__(self, bound: Iterable[Endpoint], largest_file: Callable[[], int]) -> None:
        paths: dict[str, list[str]] = {}
        for endpoint in bound:
            if upload_field(endpoint.operation.body) is not None:
                for path in endpoint.paths:
                    paths.setdefault(endpoint.method, []).append(re.sub(r"\\{\w+\\}", "[^/]+", re.escape(path)))
        self._routes = {method: re.compile("|".join(found)) for method, found in paths.items()}
        """One pattern per method: every request's line is looked up here, most with no pattern."""
        self._largest_file = largest_file
        self._most: int | None = None

    def __call__(self, method: str, path: str) -> int | None:
        pattern = self._routes.get(method)
        if pattern is None or pattern.fullmatch(path) is None:
            return None
        if self._most is None:
            try:
                self._most = self._largest_file() + FORM_BYTES
            except Exception:  # no blob store here: the app's answer says so
                return None
        return self._most


class _LastPart:
    """The file part's stream, read by the blob store with ``read(n)``; at its end, the form
    must end too (a part after the file would arrive after the file was stored)."""

    def __init__(self, stream: Any, parts: Any, field: str) -> None:
        self._stream = stream
        self._parts = parts
        self._field = field
        self._done = False

    def read(self, size: int = _READ_BYTES) -> bytes:
        if self._done:
            return b""
        try:
            chunk: bytes = self._stream.read(size)
            if chunk:
                return chunk
            self._done = True
            following = next(self._parts, None)
        except (falcon.MediaMalformedError, MultipartParseError) as error:
            raise ValidationError.field(self._field, "(a file)", f"the multipart body is broken: {error}") from None
        if following is not None:
            raise ValidationError.field(
                following.name or "body", None, f"the file part ({self._field}) must be the form's last part"
            )
        return b""
