"""Models with every field set to a non-default value, for round-trip checks."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from compliance_core import (
    ApiKey,
    Criticality,
    Department,
    DpaStatus,
    Finding,
    FindingSource,
    FindingStatus,
    FindingType,
    Impact,
    Likelihood,
    Organization,
    Person,
    Plan,
    PurposeCategory,
    Role,
    Severity,
    SubProcessor,
    TransferMechanism,
    Vendor,
    VendorCategory,
    VendorStatus,
)
from compliance_core.events import OutboxMessage

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def organization(id: str = "org_full", **changes: Any) -> Organization:
    return attrs.evolve(
        Organization(id=id, name="Initech Ltd", plan=Plan.ENTERPRISE, rate_limit_rpm=1500,
                     rate_limit_burst=4000, created_at=T0, updated_at=at(60)),
        **changes,
    )


def vendor(organization_id: str = "org_a", id: str = "vnd_full", **changes: Any) -> Vendor:
    full = Vendor(
        id=id,
        organization_id=organization_id,
        name="Łódź Hosting GmbH – EU",
        description="Managed Kubernetes; 24/7 \"support\"",
        category=VendorCategory.CLOUD,
        status=VendorStatus.ASSESSED,
        inherent_probability=Likelihood.LIKELY,
        inherent_impact=Impact.SEVERE,
        residual_probability=Likelihood.UNLIKELY,
        residual_impact=Impact.MINOR,
        website="https://hosting.example.com",
        assignee_id="mem_00000042",
        country="US",
        criticality=Criticality.CRITICAL,
        ict_service=True,
        processes_personal_data=True,
        is_sub_processor=True,
        dpa_status=DpaStatus.SIGNED,
        dpa_signed_at=dt.date(2025, 2, 28),
        dpa_url="https://hosting.example.com/dpa.pdf",
        last_reviewed_at=dt.date(2025, 12, 31),
        next_review_due=dt.date(2026, 12, 31),
        sub_processors=(
            SubProcessor(name="Backups Oy", country="FI", purpose_category=PurposeCategory.DATA_STORAGE),
            SubProcessor(name="Pager Inc", country="US", purpose_category=PurposeCategory.COMMUNICATIONS),
        ),
        transfer_mechanism=TransferMechanism.STANDARD_CONTRACTUAL_CLAUSES,
        archived=True,
        archived_at=at(3600.5),
        created_at=T0,
        updated_at=at(7200),
    )
    return attrs.evolve(full, **changes)


def plain_vendor(organization_id: str, id: str, created_at: dt.datetime = T0, **fields: Any) -> Vendor:
    return Vendor(id=id, organization_id=organization_id, name=f"Vendor {id}", created_at=created_at,
                  updated_at=created_at, **fields)


def person(organization_id: str = "org_a", id: str = "mem_full", **changes: Any) -> Person:
    full = Person(id=id, organization_id=organization_id, name="Zoë Ångström", email="zoe@example.com",
                  role=Role.AUDITOR, department=Department.QMS, job_title="Lead Auditor", is_active=False,
                  created_at=T0, updated_at=at(1))
    return attrs.evolve(full, **changes)


def finding(organization_id: str = "org_a", id: str = "fnd_full", **changes: Any) -> Finding:
    full = Finding(id=id, organization_id=organization_id, title="TLS 1.0 enabled", severity=Severity.CRITICAL,
                   status=FindingStatus.NEEDS_REVISION, type=FindingType.PCI_DSS,
                   source=FindingSource.PENETRATION_TEST, content="Port 443 on edge-1\nand edge-2",
                   revision_note="Add evidence", created_by="key:key_00000001", created_at=T0,
                   updated_at=at(30), closed_at=at(40))
    return attrs.evolve(full, **changes)


def api_key(organization_id: str = "org_a", id: str = "key_full", **changes: Any) -> ApiKey:
    full = ApiKey(id=id, organization_id=organization_id, name="CI pipeline", role=Role.ADMIN,
                  prefix="comp_0123abcd", secret_hash="ab" * 32, created_at=T0, expires_at=at(86400),
                  revoked_at=at(500), last_used_at=at(400.25), created_by="key:key_00000001")
    return attrs.evolve(full, **changes)


def outbox_message(id: str = "evt_full", **changes: Any) -> OutboxMessage:
    full = OutboxMessage(id=id, type="finding.created", organization_id="org_a", subject_id="fnd_1",
                         payload={"finding": {"id": "fnd_1", "title": "Ünïcode ✓", "tags": ["a", "b"],
                                              "score": 7.5, "open": True, "closedAt": None}},
                         occurred_at=T0)
    return attrs.evolve(full, **changes)
