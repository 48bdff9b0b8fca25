"""/v1/organization: the organization the calling key belongs to."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.organizations import OrganizationService
from compliance_core.platform import Platform

from ..wire import Wire
from . import send


class OrganizationItem:
    def __init__(self, organizations: OrganizationService, wire: Wire) -> None:
        self._organizations = organizations
        self._wire = wire

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        send(req, resp, self._wire.dumps(self._organizations.get(req.context.actor)))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    return {"organizations.get": OrganizationItem(platform.organizations, wire)}
