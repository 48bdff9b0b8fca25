"""/v1/organization: the organization the calling key belongs to."""

from __future__ import annotations

from .rows import group

ROUTES = group(
    "Organization",
    ("GET", "/v1/organization", "organizations.get", "The calling key's organization"),
)
