"""The vendor register: GDPR Art. 28 records, DORA Art. 28-30 ICT third parties and an ISO 27001
supplier inventory in one model.

``models`` holds what is stored and answered (the vendor, its commands, table, actions, events and
the rules across its fields), ``service`` the operations.
"""

from __future__ import annotations

from ...kernel.registry import Area
from ...kernel.scales import Impact, Likelihood
from ...kernel.subjects import Commentable
from .models import (
    DEFAULT_VENDOR_CATEGORY,
    EVENTS,
    VENDOR_ARCHIVE,
    VENDOR_CATEGORY_SUGGESTIONS,
    VENDOR_CREATE,
    VENDOR_READ,
    VENDOR_UPDATE,
    VENDORS,
    Criticality,
    DpaStatus,
    NewVendor,
    PurposeCategory,
    SubProcessor,
    TransferMechanism,
    Vendor,
    VendorArchived,
    VendorCategory,
    VendorCreated,
    VendorFilter,
    VendorPatch,
    VendorRestored,
    VendorStatus,
    VendorUpdated,
    check_vendor,
)
from .service import VendorService

__all__ = [
    "VendorCategory",
    "VENDOR_CATEGORY_SUGGESTIONS",
    "DEFAULT_VENDOR_CATEGORY",
    "VendorStatus",
    "Likelihood",
    "Impact",
    "Criticality",
    "DpaStatus",
    "TransferMechanism",
    "PurposeCategory",
    "SubProcessor",
    "Vendor",
    "NewVendor",
    "VendorPatch",
    "VendorFilter",
    "VendorService",
    "VENDORS",
    "VENDOR_READ",
    "VENDOR_CREATE",
    "VENDOR_UPDATE",
    "VENDOR_ARCHIVE",
    "VendorCreated",
    "VendorUpdated",
    "VendorArchived",
    "VendorRestored",
    "check_vendor",
    "AREA",
]


AREA = Area(
    name="vendors",
    tag="Vendors",
    service=lambda context: VendorService(context.uow, context.pages),
    api=VendorService,
    actions=(VENDOR_READ, VENDOR_CREATE, VENDOR_UPDATE, VENDOR_ARCHIVE),
    records=(VENDORS,),
    events=EVENTS,
    ports=(Commentable(kind="vendor", records=VENDORS, read=VENDOR_READ),),
)
