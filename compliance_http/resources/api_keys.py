"""/v1/api-keys: keys of the calling organization (the value is shown once, at creation)."""

from __future__ import annotations

from typing import Any

from compliance_core.api_keys import NewApiKey
from compliance_core.platform import Platform

from ..wire import Wire
from . import Collection, Read, Transition


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    keys = platform.api_keys
    collection = Collection(keys, wire, NewApiKey)
    return {
        "api_keys.list": collection,
        "api_keys.create": collection,
        "api_keys.get": Read(keys.get, wire),
        "api_keys.revoke": Transition(keys.revoke, wire),
        "api_keys.usage": Read(keys.usage, wire),
    }
