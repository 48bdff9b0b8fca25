"""/v1/health: public, for load balancers and uptime checks (no key, no rate limit)."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.platform import Platform

from ..wire import Wire
from . import send


class Health:
    def __init__(self, platform: Platform, wire: Wire) -> None:
        self._platform = platform
        self._wire = wire

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        health = self._platform.health()
        send(req, resp, self._wire.dumps(health), 200 if health["status"] == "ok" else 503)


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    return {"health": Health(platform, wire)}
