"""The vendor register's operations: all standard ones, with the rules across fields and the
assignee check as their hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...kernel.directory import Directory
from ...kernel.operations import Standard
from ...kernel.page_cache import PageCache
from ...kernel.permissions import Actor
from ...kernel.registers import Register
from ...kernel.registry import Route, Session
from ...kernel.uow import Tx, UnitOfWork
from .models import (
    VENDOR_ARCHIVE,
    VENDOR_CREATE,
    VENDOR_READ,
    VENDOR_UPDATE,
    VENDORS,
    NewVendor,
    Vendor,
    VendorArchived,
    VendorCreated,
    VendorPatch,
    VendorRestored,
    VendorUpdated,
    check_vendor,
    shaped,
)

__all__ = ["VendorService", "check_assignee"]


def check_assignee(session: Session, organization_id: str, assignee_id: str | None) -> None:
    Directory(session).check_member(organization_id, "assigneeId", assignee_id)


def _check_new(service: object, tx: Tx, actor: Actor, vendor: Vendor) -> None:
    check_vendor(vendor)
    check_assignee(tx, actor.organization_id, vendor.assignee_id)


def _check_change(service: object, tx: Tx, actor: Actor, vendor: Vendor, previous: Mapping[str, Any]) -> None:
    check_vendor(vendor)
    if "assignee_id" in previous:
        check_assignee(tx, actor.organization_id, vendor.assignee_id)


_TABLE = Standard(VENDORS, id="vendor_id")
_REGISTER = Register(VENDORS, new=NewVendor, event=VendorCreated, shape=shaped, check=_check_new)
_ALL = "/v1/vendors"
_ONE = "/v1/vendors/{vendor_id}"


@attrs.define
class VendorService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(VENDOR_READ, Route("GET", _ALL, "List the vendor register"))
    create = _TABLE.create(
        VENDOR_CREATE,
        Route("POST", _ALL, "Add a vendor", 201),
        body=NewVendor,
        event=VendorCreated,
        shape=shaped,
        check=_check_new,
        example={"name": "Cloud Co", "country": "IE", "criticality": "critical"},
    )
    get = _TABLE.get(VENDOR_READ, Route("GET", _ONE, "Read one vendor"))
    update = _TABLE.update(
        VENDOR_UPDATE,
        Route("PATCH", _ONE, "Change some of a vendor's fields"),
        body=VendorPatch,
        event=VendorUpdated,
        shape=shaped,
        check=_check_change,
        example={"status": "assessed"},
    )
    export_csv, export_xlsx = _REGISTER.exports(VENDOR_READ, _ALL, "vendors")
    import_file = _REGISTER.importer(
        VENDOR_CREATE,
        Route("POST", _ALL + "/import", "Import vendors from a CSV or XLSX file: a dry run lists every row's errors"),
        example={"format": "csv", "content": "bmFtZSxjb3VudHJ5LGNyaXRpY2FsaXR5DQpJbXBvcnRlZCBDbyxJRSxjcml0aWNhbA0K"},
    )
    archive = _TABLE.archive(
        VENDOR_ARCHIVE,
        Route("POST", _ONE + "/archive", "Archive a vendor (kept for audits, dropped from the register)"),
        event=VendorArchived,
    )
    restore = _TABLE.restore(
        VENDOR_ARCHIVE,
        Route("POST", _ONE + "/restore", "Bring an archived vendor back into the register"),
        event=VendorRestored,
    )
