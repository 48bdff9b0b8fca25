"""/v1/vendors: the vendor register."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/vendors/{vendor_id}"

ROUTES = group(
    "Vendors",
    ("GET", "/v1/vendors", "vendors.list", "List the vendor register"),
    ("POST", "/v1/vendors", "vendors.create", "Add a vendor", 201),
    ("GET", _ONE, "vendors.get", "Read one vendor"),
    ("PATCH", _ONE, "vendors.update", "Change some of a vendor's fields"),
    ("POST", _ONE + "/archive", "vendors.archive", "Archive a vendor (kept for audits, dropped from the register)"),
    ("POST", _ONE + "/restore", "vendors.restore", "Bring an archived vendor back into the register"),
)
