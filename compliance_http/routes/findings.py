"""/v1/findings: the unified gaps view."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/findings/{finding_id}"

ROUTES = group(
    "Findings",
    ("GET", "/v1/findings", "findings.list", "List findings"),
    ("POST", "/v1/findings", "findings.create", "Raise a finding", 201),
    ("GET", _ONE, "findings.get", "Read one finding"),
    ("PATCH", _ONE, "findings.update", "Change a finding's status, severity, type, text or links"),
    ("GET", _ONE + "/history", "findings.history", "The finding's history: its audit trail, newest first"),
    ("POST", _ONE + "/close", "findings.close", "Close a finding (auditor, admin or owner)"),
    (
        "POST",
        _ONE + "/request-revision",
        "findings.request_revision",
        "Send a finding back with a note on what must change (auditor, admin or owner)",
    ),
)
