"""/v1/findings: the unified gaps view."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.findings import FindingFilter, FindingPatch, FindingService, NewFinding
from compliance_core.platform import Platform

from ..wire import Wire
from . import idempotency_key, json_body, send


class _Resource:
    def __init__(self, findings: FindingService, wire: Wire) -> None:
        self._findings = findings
        self._wire = wire


class FindingCollection(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters, page = self._wire.list_query(req.params, FindingFilter)
        send(req, resp, self._wire.page(self._findings.list(req.context.actor, filters, page), req.context.actor))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = self._wire.command(json_body(req, self._wire), NewFinding)
        finding = self._findings.create(req.context.actor, data, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.dumps(finding))


class FindingItem(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, finding_id: str) -> None:
        send(req, resp, self._wire.dumps(self._findings.get(req.context.actor, finding_id)))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, finding_id: str) -> None:
        patch = self._wire.command(json_body(req, self._wire), FindingPatch)
        send(req, resp, self._wire.dumps(self._findings.update(req.context.actor, finding_id, patch)))


class FindingClose(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, finding_id: str) -> None:
        send(req, resp, self._wire.dumps(self._findings.close(req.context.actor, finding_id)))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    collection = FindingCollection(platform.findings, wire)
    item = FindingItem(platform.findings, wire)
    return {
        "findings.list": collection,
        "findings.create": collection,
        "findings.get": item,
        "findings.update": item,
        "findings.close": FindingClose(platform.findings, wire),
    }
