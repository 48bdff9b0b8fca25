"""/v1/organization: the organization the calling key belongs to."""

from __future__ import annotations

from typing import Any

from compliance_core.platform import Platform

from ..wire import Wire
from . import Read


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    return {"organizations.get": Read(platform.organizations.get, wire)}
