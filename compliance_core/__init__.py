"""compliance_core: the compliance domain as a library.

    from compliance_core import Platform
    from compliance_core.areas.vendors import NewVendor
    platform = Platform.open("sqlite:///compliance.db")   # or "memory://"

Every service call takes an ``Actor`` first and checks its permission itself, so code embedding
this package gets the same rules and errors as the HTTP API. Area models are imported from their
area module (``compliance_core.areas.vendors``); this package exports the few names every caller
needs.
"""

from .client import Client, LocalTransport, Transport
from .kernel.clock import FrozenClock, SystemClock
from .kernel.errors import (
    ComplianceError,
    Conflict,
    Forbidden,
    InternalError,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationError,
)
from .kernel.ids import RandomIds, SequentialIds
from .kernel.pages import Page, PageRequest
from .kernel.permissions import Actor, Role
from .kernel.validation import UNSET
from .platform import Platform

__all__ = [
    "Actor",
    "Client",
    "ComplianceError",
    "Conflict",
    "Forbidden",
    "FrozenClock",
    "InternalError",
    "LocalTransport",
    "NotFound",
    "Page",
    "PageRequest",
    "Platform",
    "RandomIds",
    "RateLimited",
    "Role",
    "SequentialIds",
    "SystemClock",
    "Transport",
    "UNSET",
    "Unauthorized",
    "ValidationError",
]
