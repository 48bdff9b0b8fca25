"""compliance_core: the compliance domain as a library.

    from compliance_core import Platform
    platform = Platform.open("sqlite:///compliance.db")   # or "memory://"

Every service call takes an ``Actor`` first and checks its permission itself, so code embedding
this package gets the same rules and errors as the HTTP API.
"""

from .api_keys import ApiKey, IssuedKey, KeyUsage, NewApiKey
from .client import Client, LocalTransport, Transport
from .clock import Clock, FrozenClock, SystemClock
from .errors import (
    ComplianceError,
    Conflict,
    Forbidden,
    InternalError,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationError,
)
from .findings import Finding, FindingFilter, FindingPatch, FindingSource, FindingStatus, FindingType, NewFinding, Severity
from .ids import IdGenerator, RandomIds, SequentialIds
from .organizations import Organization, Plan
from .pagination import Page, PageRequest
from .people import Department, NewPerson, Person, PersonFilter, PersonPatch
from .permissions import Actor, Role
from .platform import Platform
from .validation import UNSET
from .vendors import (
    Criticality,
    DpaStatus,
    Impact,
    Likelihood,
    NewVendor,
    PurposeCategory,
    SubProcessor,
    TransferMechanism,
    Vendor,
    VendorCategory,
    VendorFilter,
    VendorPatch,
    VendorStatus,
)

__all__ = [
    "Actor", "ApiKey", "Client", "Clock", "ComplianceError", "Conflict", "Criticality", "Department",
    "DpaStatus", "Finding", "FindingFilter", "FindingPatch", "FindingSource", "FindingStatus",
    "FindingType", "Forbidden", "FrozenClock", "IdGenerator", "Impact", "InternalError", "IssuedKey",
    "KeyUsage", "Likelihood", "LocalTransport", "NewApiKey", "NewFinding", "NewPerson", "NewVendor",
    "NotFound", "Organization", "Page", "PageRequest", "Person", "PersonFilter", "PersonPatch", "Plan",
    "Platform", "PurposeCategory", "RandomIds", "RateLimited", "Role", "SequentialIds", "Severity",
    "SubProcessor", "SystemClock", "TransferMechanism", "Transport", "UNSET", "Unauthorized",
    "ValidationError", "Vendor", "VendorCategory", "VendorFilter", "VendorPatch", "VendorStatus",
]
