"""The vendor register's operations: all standard ones, with the rules across fields and the
assignee check as their hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from ...kernel.errors import ValidationError
from ...kernel.operations import Standard
from ...kernel.page_cache import PageCache
from ...kernel.permissions import Actor
from ...kernel.registry import Repo, Route, Session
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

__all__ = ["VendorService", "MemberLookup", "MEMBERS", "check_assignee"]


class MemberLookup(Protocol):
    """The port to the people area: whether an id is a person of the organization."""

    def get(self, organization_id: str, person_id: str) -> object | None: ...


MEMBERS: Repo[MemberLookup] = Repo("people")


def check_assignee(session: Session, organization_id: str, assignee_id: str | None) -> None:
    if assignee_id is not None and session[MEMBERS].get(organization_id, assignee_id) is None:
        raise ValidationError.field("assigneeId", assignee_id, "is not a person in this organization")


def _check_new(service: object, tx: Tx, actor: Actor, vendor: Vendor) -> None:
    check_vendor(vendor)
    check_assignee(tx, actor.organization_id, vendor.assignee_id)


def _check_change(service: object, tx: Tx, actor: Actor, vendor: Vendor, previous: Mapping[str, Any]) -> None:
    check_vendor(vendor)
    if "assignee_id" in previous:
        check_assignee(tx, actor.organization_id, vendor.assignee_id)


_TABLE = Standard(VENDORS, id="vendor_id")
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
