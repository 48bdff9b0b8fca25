"""/v1/findings: the unified gaps view."""

from __future__ import annotations

from typing import Any

from compliance_core.findings import FindingFilter, FindingPatch, NewFinding
from compliance_core.platform import Platform

from ..wire import Wire
from . import Collection, Item, Transition


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    findings = platform.findings
    collection = Collection(findings, wire, NewFinding, FindingFilter)
    item = Item(findings, wire, FindingPatch)
    return {
        "findings.list": collection,
        "findings.create": collection,
        "findings.get": item,
        "findings.update": item,
        "findings.close": Transition(findings.close, wire),
    }
