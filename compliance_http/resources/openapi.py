"""/v1/openapi.json: the document, encoded once when the app is built."""

from __future__ import annotations

from typing import Any

import falcon
import orjson

from . import send


class OpenApiDocument:
    def __init__(self, document: dict[str, Any]) -> None:
        self._body = orjson.dumps(document)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        send(req, resp, self._body)

    on_head = on_get
