"""/v1/vendors: the vendor register."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.platform import Platform
from compliance_core.vendors import NewVendor, VendorFilter, VendorPatch, VendorService

from ..wire import Wire
from . import idempotency_key, json_body, send


class _Resource:
    def __init__(self, vendors: VendorService, wire: Wire) -> None:
        self._vendors = vendors
        self._wire = wire


class VendorCollection(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters, page = self._wire.list_query(req.params, VendorFilter)
        send(req, resp, self._wire.page(self._vendors.list(req.context.actor, filters, page), req.context.actor))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = self._wire.command(json_body(req, self._wire), NewVendor)
        vendor = self._vendors.create(req.context.actor, data, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.dumps(vendor))


class VendorItem(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, vendor_id: str) -> None:
        send(req, resp, self._wire.dumps(self._vendors.get(req.context.actor, vendor_id)))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, vendor_id: str) -> None:
        patch = self._wire.command(json_body(req, self._wire), VendorPatch)
        send(req, resp, self._wire.dumps(self._vendors.update(req.context.actor, vendor_id, patch)))


class VendorArchive(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, vendor_id: str) -> None:
        send(req, resp, self._wire.dumps(self._vendors.archive(req.context.actor, vendor_id)))


class VendorRestore(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, vendor_id: str) -> None:
        send(req, resp, self._wire.dumps(self._vendors.restore(req.context.actor, vendor_id)))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    collection = VendorCollection(platform.vendors, wire)
    item = VendorItem(platform.vendors, wire)
    return {
        "vendors.list": collection,
        "vendors.create": collection,
        "vendors.get": item,
        "vendors.update": item,
        "vendors.archive": VendorArchive(platform.vendors, wire),
        "vendors.restore": VendorRestore(platform.vendors, wire),
    }
