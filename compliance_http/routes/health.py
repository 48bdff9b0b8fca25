"""Health and the OpenAPI document: public, for load balancers, uptime checks and tooling."""

from __future__ import annotations

from .rows import group

ROUTES = group(
    "Health",
    ("GET", "/v1/health", "health", "Service and store health (200 when ok, 503 when degraded)"),
    ("GET", "/v1/openapi.json", "openapi", "This OpenAPI 3.0 document"),
)
