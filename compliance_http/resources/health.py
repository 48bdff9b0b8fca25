"""/v1/health: public, for load balancers and uptime checks (no key, no rate limit)."""

from __future__ import annotations

import falcon

from compliance_core.platform import Platform

from ..wire import Wire
from . import send


class Health:
    """Genuinely special: public, and 503 with its report when the store is not healthy."""

    def __init__(self, platform: Platform, wire: Wire) -> None:
        self._platform = platform
        self._wire = wire

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        health = self._platform.health()
        send(req, resp, self._wire.dumps(health), 200 if health["status"] == "ok" else 503)

    on_head = on_get
