"""/v1/health: public, for load balancers and uptime checks (no key needed, no rate limit spent
without one).

Anyone gets ``status``, ``version`` and ``timestamp`` (200 when the store is healthy, 503 when
not). A request with a valid X-API-Key whose role may read the organization also gets the
details (``uptimeSeconds``, and ``store``: backend, location, schema), which reveal how the
service is deployed. Health is declared with no action (public), so the middleware admits nothing here;
this resource authenticates the key itself, through the same admission (and the same rate limit)
as every other route, and only when a key is sent. A missing, bad or rate-limited key, or a role
below that, gets the public report: health itself never answers 401, 403 or 429.
"""

from __future__ import annotations

import logging
from typing import Any

import falcon

from compliance_core.areas.organizations import ORGANIZATION_READ
from compliance_core.kernel.errors import ComplianceError, RateLimited
from compliance_core.kernel.permissions import can
from compliance_core.platform import Platform

from ..errors import request_id
from ..middleware import rate_headers
from ..wire import Wire
from . import send

__all__ = ["Health", "PUBLIC_FIELDS"]

PUBLIC_FIELDS = ("status", "version", "timestamp")
"""What health tells anyone; the rest of ``Platform.health()`` needs a key (see the module)."""

log = logging.getLogger("compliance_http")


class Health:
    """Genuinely special: public, details for members only, 503 when the store is not healthy."""

    def __init__(self, platform: Platform, wire: Wire) -> None:
        self._platform = platform
        self._wire = wire

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        health = self._platform.health()
        report: dict[str, Any] = health if self._shows_details(req) else {k: health[k] for k in PUBLIC_FIELDS}
        send(req, resp, self._wire.dumps(report), 200 if health["status"] == "ok" else 503)

    on_head = on_get

    def _shows_details(self, req: falcon.Request) -> bool:
        key = req.get_header("X-API-Key")
        if not key:
            return False  # no admission at all: an uptime check spends nobody's rate limit
        try:
            admission = self._platform.access.admit(key, req.get_header("X-Organization-Id") or None)
        except RateLimited as error:
            limit = error.details
            req.context.rate_headers = rate_headers(limit["limit"], limit["remaining"], limit["reset"])
            return False
        except ComplianceError:  # unknown, revoked or expired key, or another organization
            return False
        except Exception:  # e.g. the store is down: the report says so, publicly
            log.warning("health could not authenticate a key (requestId=%s)", request_id(req), exc_info=True)
            return False
        rate = admission.rate
        req.context.rate_headers = rate_headers(rate.limit, rate.remaining, rate.reset_at)
        req.context.actor = admission.actor
        return can(admission.actor.role, ORGANIZATION_READ)
