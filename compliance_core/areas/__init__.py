"""The areas of the platform, one module each. ``AREAS`` is the one list of them: the platform
builds a service per entry, the client and the HTTP routes derive their methods from its
operations, the stores keep its record tables, and the generic test suites cover it. Adding an
area is adding its module and one line here (see docs/adding-an-area.md)."""

from __future__ import annotations

from typing import Any

from ..kernel.registry import Area
from . import (
    api_keys,
    audit_log,
    automations,
    comments,
    context,
    evidence,
    evidence_export,
    finding_templates,
    findings,
    frameworks,
    integrations,
    organization_logos,
    organizations,
    people,
    policies,
    risks,
    tasks,
    vendors,
    webhooks,
)
from .frameworks import controls, imported, soa, task_templates
from .tasks import management as task_management

__all__ = ["AREAS"]

AREAS: tuple[Area[Any], ...] = (
    organizations.AREA,
    organization_logos.AREA,
    api_keys.AREA,
    people.AREA,
    vendors.AREA,
    findings.AREA,
    finding_templates.AREA,
    audit_log.AREA,
    webhooks.AREA,
    policies.AREA,
    risks.AREA,
    context.AREA,
    frameworks.AREA,
    imported.AREA,
    controls.AREA,
    soa.AREA,
    task_templates.AREA,
    comments.AREA,
    tasks.AREA,
    task_management.AREA,
    evidence.AREA,
    evidence.ATTACHMENTS,
    evidence_export.AREA,
    evidence_export.AUDITOR,
    automations.AREA,
    integrations.CONNECTIONS_AREA,
    integrations.VARIABLES_AREA,
    integrations.CHECKS_AREA,
    integrations.CLOUD_SECURITY_AREA,
)
