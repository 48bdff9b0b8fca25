"""/v1/openapi.json: the document, built and encoded once, on its first request.

Not when the app is built: building it walks every operation's models (some 0.15 s), which every
app would pay and few callers need (a test suite builds thousands of apps and fetches the
document in a few), while a server pays it once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import falcon
import orjson

from . import send


class OpenApiDocument:
    """:param build: makes the document (called once, by the first request)"""

    def __init__(self, build: Callable[[], dict[str, Any]]) -> None:
        self._build = build
        self._body: bytes | None = None
        self._lock = threading.Lock()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        send(req, resp, self._encoded())

    on_head = on_get

    def _encoded(self) -> bytes:
        if self._body is None:
            with self._lock:
                if self._body is None:
                    self._body = orjson.dumps(self._build())
        return self._body
