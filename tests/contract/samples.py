"""Models with every field set to a non-default value, for round-trip checks, and ``TABLES``: a
sample maker for each declared ``Records`` table, synthesised from its model for the generic
suites."""

from __future__ import annotations

import collections.abc
import datetime as dt
import enum
import types
import typing
from typing import Any

import attrs

from compliance_core import Role
from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import ApiKey
from compliance_core.areas.findings import Finding, FindingSource, FindingStatus, FindingType, Severity
from compliance_core.areas.organizations import Organization, Plan
from compliance_core.areas.people import Department, Person
from compliance_core.areas.vendors import (
    Criticality,
    DpaStatus,
    Impact,
    Likelihood,
    PurposeCategory,
    SubProcessor,
    TransferMechanism,
    Vendor,
    VendorCategory,
    VendorStatus,
)
from compliance_core.kernel.events import OutboxMessage
from compliance_core.kernel.records import Records

UTC = dt.UTC
T0 = dt.datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def organization(id: str = "org_full", **changes: Any) -> Organization:
    return attrs.evolve(
        Organization(
            id=id,
            name="Initech Ltd",
            plan=Plan.ENTERPRISE,
            rate_limit_rpm=1500,
            rate_limit_burst=4000,
            slug=id.replace("_", "-"),
            website="https://initech.example",
            logo="https://initech.example/logo.png",
            primary_color="#0a7c5a",
            evidence_approval_enabled=True,
            device_agent_step_enabled=False,
            security_training_step_enabled=False,
            advanced_mode_enabled=True,
            owner_person_id="mem_00000042",
            created_at=T0,
            updated_at=at(60),
        ),
        **changes,
    )


def vendor(organization_id: str = "org_a", id: str = "vnd_full", **changes: Any) -> Vendor:
    full = Vendor(
        id=id,
        organization_id=organization_id,
        name="Łódź Hosting GmbH – EU",
        description='Managed Kubernetes; 24/7 "support"',
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
    return Vendor(
        id=id,
        organization_id=organization_id,
        name=f"Vendor {id}",
        created_at=created_at,
        updated_at=created_at,
        **fields,
    )


def person(organization_id: str = "org_a", id: str = "mem_full", **changes: Any) -> Person:
    full = Person(
        id=id,
        organization_id=organization_id,
        name="Zoë Ångström",
        email="zoe@example.com",
        role=Role.AUDITOR,
        department=Department.QMS,
        job_title="Lead Auditor",
        is_active=False,
        created_at=T0,
        updated_at=at(1),
    )
    return attrs.evolve(full, **changes)


def finding(organization_id: str = "org_a", id: str = "fnd_full", **changes: Any) -> Finding:
    full = Finding(
        id=id,
        organization_id=organization_id,
        title="TLS 1.0 enabled",
        severity=Severity.CRITICAL,
        status=FindingStatus.NEEDS_REVISION,
        type=FindingType.PCI_DSS,
        source=FindingSource.PENETRATION_TEST,
        content="Port 443 on edge-1\nand edge-2",
        revision_note="Add evidence",
        created_by="key:key_00000001",
        created_at=T0,
        updated_at=at(30),
        closed_at=at(40),
    )
    return attrs.evolve(full, **changes)


def api_key(organization_id: str = "org_a", id: str = "key_full", **changes: Any) -> ApiKey:
    full = ApiKey(
        id=id,
        organization_id=organization_id,
        name="CI pipeline",
        role=Role.ADMIN,
        prefix="comp_0123abcd",
        secret_hash="ab" * 32,
        created_at=T0,
        expires_at=at(86400),
        revoked_at=at(500),
        last_used_at=at(400.25),
        created_by="key:key_00000001",
        person_id="mem_1",
        issued_by_person_id="mem_1",
        self_issued=True,
    )
    return attrs.evolve(full, **changes)


def outbox_message(id: str = "evt_full", **changes: Any) -> OutboxMessage:
    full = OutboxMessage(
        id=id,
        type="finding.updated",
        organization_id="org_a",
        subject_id="fnd_1",
        payload={
            "id": id,
            "type": "finding.updated",
            "createdAt": "2026-03-04T05:06:07.891011Z",
            "organizationId": "org_a",
            "data": {
                "id": "fnd_1",
                "title": "Ünïcode ✓",
                "tags": ["a", "b"],
                "score": 7.5,
                "open": True,
                "closedAt": None,
            },
            "previous": {"title": "Unicode", "score": 7},
        },
        occurred_at=T0,
    )
    return attrs.evolve(full, **changes)


# -- any declared table: records synthesised from the model's field types -----------------------

_NEXT_TIMES = (at(60), at(3600.5), at(86400), at(90061.25))


def _strip_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return options[0]
    return hint


def _value(hint: Any, field: attrs.Attribute, seed: str, position: int) -> Any:
    """A value of the field's type that is not its default, and differs between seeds where the
    type allows (so a second record never collides on a unique text column)."""
    hint = _strip_none(hint)
    origin = typing.get_origin(hint)
    default = field.default if field.default is not attrs.NOTHING else None
    if origin is typing.Literal:
        return next((arg for arg in typing.get_args(hint) if arg != default), typing.get_args(hint)[0])
    if origin in (tuple, list):
        item = typing.get_args(hint)[0]
        values = tuple(_value(item, field, f"{seed}-{n}", position + n) for n in range(2))
        return values if origin is tuple else list(values)
    if origin in (dict, collections.abc.Mapping):
        return {"key": f"value of {seed}"}
    if attrs.has(hint):
        return synthesize(hint, seed=seed)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(member for member in reversed(list(hint)) if member != default)
    if hint is bool:
        return not default if isinstance(default, bool) else True
    if hint is int:
        return (default or 0) + 7 + position
    if hint is float:
        return 7.25 + position
    if hint is str:
        return f"{field.name} of {seed} · Zoë"
    if hint is dt.datetime:
        return _NEXT_TIMES[position % len(_NEXT_TIMES)]
    if hint is dt.date:
        return dt.date(2025, 2, 28) + dt.timedelta(days=position)
    raise TypeError(f"samples.synthesize cannot make a {hint!r} for {field.name}: teach _value")


def synthesize(
    model: type, organization_id: str = "org_a", id: str = "rec_full", *, seed: str | None = None, **changes: Any
) -> Any:
    """A ``model`` record with every field set to a value other than its default.

    ``id`` and ``organization_id`` are taken as given, ``created_at`` is ``T0`` and later
    timestamps follow it; text fields are derived from ``seed`` (default: the id)."""
    hints = typing.get_type_hints(model)
    values: dict[str, Any] = {}
    fixed = {"id": id, "organization_id": organization_id, "created_at": T0}
    later = 0
    for field in attrs.fields(model):
        if field.name in changes:
            continue
        if field.name in fixed:
            values[field.name] = fixed[field.name]
            continue
        values[field.name] = _value(hints[field.name], field, seed or id, later)
        later += 1
    return model(**values, **changes)


@attrs.frozen
class Table:
    """Samples for one declared ``Records`` table, synthesised from its model, so the generic
    suites cover an area as soon as it is registered."""

    records: Records[Any, Any]

    @property
    def name(self) -> str:
        return self.records.name

    def make(self, organization_id: str = "org_a", id: str | None = None, **changes: Any) -> Any:
        """The organization's sample record (the same one for the same arguments)."""
        return synthesize(self.records.model, organization_id, id or f"{self.records.prefix}_full", **changes)

    def other(self, id: str, organization_id: str = "org_a") -> Any:
        """Another record of the organization: its text fields differ too (people's e-mails)."""
        return self.make(organization_id=organization_id, id=id)

    def change(self, record: Any) -> Any:
        """The record with one real change, as an update would store it."""
        text = next(
            f.name
            for f in attrs.fields(type(record))
            if f.name not in ("id", "organization_id") and type(getattr(record, f.name)) is str  # not an enum
        )
        changes: dict[str, Any] = {text: f"Renamed {getattr(record, text)}"}
        if hasattr(record, "updated_at"):  # an append-only table (the audit log) has none
            changes["updated_at"] = record.updated_at + dt.timedelta(seconds=1)
        return attrs.evolve(record, **changes)


TABLES: dict[str, Table] = {records.name: Table(records) for area in AREAS for records in area.records}
"""One per declared ``Records`` table."""
