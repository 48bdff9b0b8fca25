"""/v1/api-keys: keys of the calling organization (the value is shown once, at creation)."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/api-keys/{key_id}"

ROUTES = group(
    "API Keys",
    ("GET", "/v1/api-keys", "api_keys.list", "List the organization's API keys"),
    ("POST", "/v1/api-keys", "api_keys.create", "Issue an API key; its value is in `key`, shown this once", 201),
    ("GET", _ONE, "api_keys.get", "Read one API key"),
    ("POST", _ONE + "/revoke", "api_keys.revoke", "Revoke an API key"),
    ("GET", _ONE + "/usage", "api_keys.usage", "Requests per day over the last 30 days"),
)
