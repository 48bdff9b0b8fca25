"""/v1/audit-log: the organization's audit trail, read-only (per record: filter by entityType
and entityId)."""

from __future__ import annotations

from .rows import group

ROUTES = group(
    "Audit",
    ("GET", "/v1/audit-log", "audit_log.list", "List audit entries (who changed what, when)"),
    ("GET", "/v1/audit-log/{entry_id}", "audit_log.get", "Read one audit entry"),
)
