"""/v1/risks: the risk register."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/risks/{risk_id}"

ROUTES = group(
    "Risks",
    ("GET", "/v1/risks", "risks.list", "List the risk register"),
    ("POST", "/v1/risks", "risks.create", "Register a risk", 201),
    ("GET", _ONE, "risks.get", "Read one risk"),
    ("PATCH", _ONE, "risks.update", "Change some of a risk's fields (scores follow the ratings)"),
    ("POST", _ONE + "/accept", "risks.accept", "Accept a risk until an expiry date, at its current residual score"),
    ("POST", _ONE + "/archive", "risks.archive", "Archive a risk (kept for audits, dropped from the register)"),
    ("POST", _ONE + "/restore", "risks.restore", "Bring an archived risk back into the register"),
)
