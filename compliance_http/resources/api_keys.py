"""/v1/api-keys: keys are issued once (the value is never stored) and revoked, never edited."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.api_keys import ApiKeyService, NewApiKey
from compliance_core.platform import Platform

from ..wire import Wire
from . import idempotency_key, json_body, send


class _Resource:
    def __init__(self, keys: ApiKeyService, wire: Wire) -> None:
        self._keys = keys
        self._wire = wire


class KeyCollection(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _, page = self._wire.list_query(req.params, None)
        send(req, resp, self._wire.page(self._keys.list(req.context.actor, page), req.context.actor))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = self._wire.command(json_body(req, self._wire), NewApiKey)
        issued = self._keys.create(req.context.actor, data, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.dumps(issued))


class KeyItem(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        send(req, resp, self._wire.dumps(self._keys.get(req.context.actor, key_id)))


class KeyRevoke(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        send(req, resp, self._wire.dumps(self._keys.revoke(req.context.actor, key_id)))


class KeyUsageReport(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        send(req, resp, self._wire.dumps(self._keys.usage(req.context.actor, key_id)))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    collection = KeyCollection(platform.api_keys, wire)
    return {
        "api_keys.list": collection,
        "api_keys.create": collection,
        "api_keys.get": KeyItem(platform.api_keys, wire),
        "api_keys.revoke": KeyRevoke(platform.api_keys, wire),
        "api_keys.usage": KeyUsageReport(platform.api_keys, wire),
    }
