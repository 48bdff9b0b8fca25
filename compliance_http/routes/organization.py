"""/v1/organization: the organization the calling key belongs to."""

from __future__ import annotations

from .rows import group

ROUTES = group(
    "Organization",
    ("GET", "/v1/organization", "organizations.get", "The calling key's organization"),
    ("PATCH", "/v1/organization", "organizations.update", "Change the organization's profile, branding or settings"),
    (
        "POST",
        "/v1/organization/transfer-ownership/{person_id}",
        "organizations.transfer_ownership",
        "Make a member the Owner; the previous Owner becomes an Admin (Owner only, one transaction)",
    ),
)
