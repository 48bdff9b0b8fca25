"""``multipart/form-data`` bodies: a file streamed into an operation whose body model has a file
field (``compliance_core.kernel.uploads.file_content``), without holding it in memory.

Text parts are the body's other fields, by their wire names (a part repeated, or one for a list
field, gives a list), in any order around the file: clients order a form as they please
(``curl -F`` as written, browsers as appended, some generators alphabetically). The file part,
named as the file field (``fileData``), is copied as it arrives into a spooled temporary file
(memory up to ``SPOOL_BYTES``, disk beyond), the parts after it are read, and the service gets
the file as an ``Upload`` that the blob store reads once, in chunks. A broken multipart stream is
a ``validation_error`` on the body.
"""

from __future__ import annotations

import re
import shutil
import tempfile
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
SPOOL_BYTES = 8 * 1024 * 1024
"""A file up to this size stays in memory while the rest of the form is read; a larger one goes
to a temporary file (the server bounds the whole body: ``FileBodyLimits``)."""
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
        body: dict[str, Any] = {}
        for part in req.get_media():
            name = part.name or ""
            if part.filename is not None or name == file_key:
                if name != file_key:
                    raise ValidationError.field(name, part.filename, f"the file goes in the part named {file_key}")
                if file_key in body:
                    raise ValidationError.field(file_key, part.filename, "one file per request")
                spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (read by the service)
                shutil.copyfileobj(part.stream, spooled, _READ_BYTES)
                spooled.seek(0)
                body[file_key] = Upload(
                    spooled,
                    file_name=part.filename,
                    media_type=part.content_type if part.filename is not None else None,
                )
                continue
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
