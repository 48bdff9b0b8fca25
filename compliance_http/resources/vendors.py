"""/v1/vendors: the vendor register."""

from __future__ import annotations

from typing import Any

from compliance_core.platform import Platform
from compliance_core.vendors import NewVendor, VendorFilter, VendorPatch

from ..wire import Wire
from . import Collection, Item, Transition


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    vendors = platform.vendors
    collection = Collection(vendors, wire, NewVendor, VendorFilter)
    item = Item(vendors, wire, VendorPatch)
    return {
        "vendors.list": collection,
        "vendors.create": collection,
        "vendors.get": item,
        "vendors.update": item,
        "vendors.archive": Transition(vendors.archive, wire),
        "vendors.restore": Transition(vendors.restore, wire),
    }
