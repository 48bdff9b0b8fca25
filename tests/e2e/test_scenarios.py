"""One scenario list, run over every transport, on the default stores and on PostgreSQL.

Each scenario asserts the behaviour it is about and records what it saw; the transcript of a run
over HTTP must equal the in-process reference run's, once generated ids and timestamps are
replaced by placeholders: the same models, the same exception classes, messages and details.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from typing import Any

import attrs
import pytest

from compliance_core import (
    ComplianceError,
    Conflict,
    Forbidden,
    NotFound,
    PageRequest,
    Unauthorized,
    ValidationError,
)
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.findings import FindingFilter, FindingPatch, NewFinding
from compliance_core.areas.people import NewPerson, PersonFilter
from compliance_core.areas.policies import ApprovePolicy, NewPolicy, PolicyPatch, PublishPolicy, SubmitForApproval
from compliance_core.areas.vendors import NewVendor, VendorFilter, VendorPatch
from compliance_core.kernel.pages import RowItems
from e2e_support import Context, Harness

# --- vendors --------------------------------------------------------------------------------


def vendor_lifecycle(ctx: Context) -> None:
    vendors = ctx.client.vendors
    created = ctx.record(
        "create",
        vendors.create(
            NewVendor(
                name="Cloud Hosting GmbH",
                description="Primary IaaS",
                category="cloud",
                country="DE",
                criticality="critical",
                ict_service=True,
                processes_personal_data=True,
                dpa_status="signed",
                dpa_signed_at="2025-03-01",
                website="https://cloud.example",
                inherent_probability="possible",
                inherent_impact="moderate",
                residual_probability="unlikely",
                residual_impact="minor",
                sub_processors=[{"name": "Backup AB", "country": "SE", "purpose_category": "data_storage"}],
            )
        ),
    )
    assert created.id.startswith("vnd_") and created.status == "not_assessed"
    assert created.sub_processors[0].purpose_category == "data_storage"
    assert ctx.record("get", vendors.get(created.id)) == created

    updated = ctx.record(
        "update",
        vendors.update(
            created.id,
            VendorPatch(
                criticality="important",
                website=None,
                last_reviewed_at="2025-06-01",
                next_review_due="2026-06-01",
            ),
        ),
    )
    assert (updated.criticality, updated.website, updated.name) == ("important", None, "Cloud Hosting GmbH")
    assert updated.updated_at >= created.updated_at

    archived = ctx.record("archive", vendors.archive(created.id))
    assert archived.archived and archived.archived_at is not None
    assert ctx.record("live register", vendors.list()).total == 0
    archive = ctx.record("archive register", vendors.list(VendorFilter(archived=True)))
    assert [v.id for v in archive.items] == [created.id]

    restored = ctx.record("restore", vendors.restore(created.id))
    assert not restored.archived and restored.archived_at is None
    assert ctx.record("live again", vendors.list()).total == 1


def vendor_filters_and_paging(ctx: Context) -> None:
    vendors = ctx.client.vendors
    rows = [
        ("Alpha", dict(criticality="critical", processes_personal_data=True, country="DE", dpa_status="signed")),
        ("Bravo", dict(criticality="critical", ict_service=True, country="FR", category="cloud")),
        ("Charlie", dict(criticality="standard", processes_personal_data=True, country="DE", dpa_status="pending")),
        (
            "Delta",
            dict(
                criticality="important",
                ict_service=True,
                category="cloud",
                processes_personal_data=True,
                country="US",
                transfer_mechanism="standard_contractual_clauses",
            ),
        ),
        ("Echo", dict(criticality="standard")),
    ]
    for name, fields in rows:
        vendors.create(NewVendor(name=name, **fields))

    def names(filters: VendorFilter | None = None, page: PageRequest | None = None) -> list[str]:
        result = ctx.record(f"list {filters} {page}", vendors.list(filters, page))
        return sorted(v.name for v in result.items)

    assert names(VendorFilter(criticality="critical")) == ["Alpha", "Bravo"]
    assert names(VendorFilter(processes_personal_data=True, country="DE")) == ["Alpha", "Charlie"]
    assert names(VendorFilter(processes_personal_data=False)) == ["Bravo", "Echo"]
    assert names(VendorFilter(ict_service=True, category="cloud")) == ["Bravo", "Delta"]
    assert names(VendorFilter(dpa_status="pending")) == ["Charlie"]
    assert names(VendorFilter(country="us")) == ["Delta"]
    assert names(VendorFilter(criticality="critical", country="US")) == []

    seen: list[str] = []
    number = 1
    while True:  # the spec's loop: increase page until meta.page equals meta.totalPages
        page = ctx.record(f"page {number}", vendors.list(page=PageRequest(page=number, per_page=2)))
        assert (page.total, page.total_pages, page.per_page) == (5, 3, 2)
        seen += [v.name for v in page.items]
        if page.page == page.total_pages:
            break
        number += 1
    assert sorted(seen) == ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]
    assert [len(ctx.transcript[-i][1].items) for i in (3, 2, 1)] == [2, 2, 1]
    beyond = ctx.record("beyond the last page", vendors.list(page=PageRequest(page=9, per_page=2)))
    assert (beyond.items, beyond.total, beyond.page) == ((), 5, 9)


# --- people ---------------------------------------------------------------------------------


def people_single_and_bulk(ctx: Context) -> None:
    people = ctx.client.people
    ada = ctx.record(
        "create", people.create(NewPerson(name="Ada Lovelace", email="Ada@Example.com", role="admin", department="it"))
    )
    assert (ada.email, ada.role, ada.department) == ("ada@example.com", "admin", "it")
    assert ctx.record("get", people.get(ada.id)) == ada

    conflict = ctx.fails("same e-mail", Conflict, people.create, NewPerson(name="Other", email="ada@example.com"))
    assert conflict.details == {"field": "email", "value": "ada@example.com"}

    batch = ctx.record(
        "bulk",
        people.bulk_create(
            [
                NewPerson(name="Grace Hopper", email="grace@example.com"),
                {"name": "Alan Turing", "email": "alan@example.com", "job_title": "Cryptanalyst"},
                {"name": "Edsger Dijkstra", "email": "edsger@example.com", "role": "Auditor"},
            ]
        ),
    )
    assert [p.name for p in batch] == ["Grace Hopper", "Alan Turing", "Edsger Dijkstra"]
    assert batch[2].role == "auditor"

    invalid = ctx.fails(
        "bulk with bad entries",
        ValidationError,
        people.bulk_create,
        [
            {"name": "Ok Person", "email": "ok@example.com"},
            {"name": "Bad Mail", "email": "not-an-address"},
            {"name": "Extra", "email": "extra@example.com", "shoeSize": 44},
            {"email": "nameless@example.com"},
            {"name": "Ok Twice", "email": "ok@example.com"},
        ],
    )
    errors = invalid.details["errors"]
    assert [(e["index"], e["field"]) for e in errors] == [(1, "email"), (2, "shoeSize"), (3, "name"), (4, "email")]
    assert errors[0]["value"] == "not-an-address" and errors[1]["value"] == 44

    taken = ctx.fails(
        "bulk with a taken e-mail",
        Conflict,
        people.bulk_create,
        [
            {"name": "New Person", "email": "new@example.com"},
            {"name": "Grace Again", "email": "grace@example.com"},
        ],
    )
    assert taken.details["errors"] == [
        {"index": 1, "field": "email", "value": "grace@example.com", "reason": "already exists"}
    ]
    everyone = ctx.record("all or nothing", people.list())
    assert everyone.total == 4  # neither failed batch created anyone
    assert ctx.record("auditors", people.list(PersonFilter(role="auditor"))).total == 1


# --- findings -------------------------------------------------------------------------------


def findings_lifecycle(ctx: Context) -> None:
    findings = ctx.client.findings
    finding = ctx.record(
        "create",
        findings.create(
            NewFinding(title="MFA not enforced", severity="high", type="iso27001", content="Admins lack MFA")
        ),
    )
    assert (finding.status, finding.severity, finding.closed_at) == ("open", "high", None)
    assert finding.created_by == ctx.owner_key.key.id
    findings.create(NewFinding(title="Old TLS", severity="low"))

    raised = ctx.record("raise severity", findings.update(finding.id, FindingPatch(severity="critical")))
    assert raised.severity == "critical"
    assert [f.title for f in ctx.record("critical", findings.list(FindingFilter(severity="critical"))).items] == [
        "MFA not enforced"
    ]

    note = ctx.fails(
        "note while open",
        ValidationError,
        findings.update,
        finding.id,
        FindingPatch(revision_note="please add evidence"),
    )
    assert note.details["field"] == "revisionNote" and note.details["value"] == "please add evidence"

    closed = ctx.record("close", findings.close(finding.id))
    assert closed.status == "closed" and closed.closed_at is not None
    assert ctx.record("get closed", findings.get(finding.id)) == closed
    assert ctx.record("open ones", findings.list(FindingFilter(status="open"))).total == 1


# --- API keys and permissions ---------------------------------------------------------------


def api_keys_lifecycle(ctx: Context) -> None:
    keys = ctx.client.api_keys
    issued = ctx.record("create", keys.create(NewApiKey(name="CI pipeline", role="Admin")))
    assert issued.secret and issued.secret.startswith("comp_") and issued.key.role == "admin"
    assert issued.key.created_by == ctx.owner_key.key.id
    listed = ctx.record("list", keys.list())
    assert {k.id for k in listed.items} == {ctx.owner_key.key.id, issued.key.id}
    assert not any(hasattr(k, "secret") for k in listed.items)

    usage = ctx.record("usage of an unused key", keys.usage(issued.key.id))
    assert (usage.key_id, usage.total_requests, usage.days, usage.last_used_at) == (issued.key.id, 0, (), None)

    revoked = ctx.record("revoke", keys.revoke(issued.key.id))
    assert revoked.revoked_at is not None
    assert ctx.record("revoke again", keys.revoke(issued.key.id)) == revoked
    if ctx.over_http:  # a revoked key stops authenticating (admission is an HTTP concern)
        with pytest.raises(Unauthorized):
            ctx.connect(issued).vendors.list()
        owner_usage = keys.usage(ctx.owner_key.key.id)
        assert owner_usage.total_requests >= 5 and owner_usage.last_used_at is not None


def permissions_follow_the_key_role(ctx: Context) -> None:
    auditor = ctx.connect(ctx.client.api_keys.create(NewApiKey(name="Auditor", role="auditor")))
    admin = ctx.connect(ctx.client.api_keys.create(NewApiKey(name="Admin", role="admin")))
    vendor = ctx.client.vendors.create(NewVendor(name="Readable"))

    assert ctx.record("auditor reads", auditor.vendors.get(vendor.id)) == vendor
    denied = ctx.fails("auditor writes", Forbidden, auditor.vendors.create, NewVendor(name="Nope"))
    assert denied.details == {"action": "vendor:create", "role": "auditor"}
    ctx.fails("auditor archives", Forbidden, auditor.vendors.archive, vendor.id)
    ctx.fails("auditor raises a finding", Forbidden, auditor.findings.create, NewFinding(title="x", severity="low"))
    ctx.fails("auditor creates a key", Forbidden, auditor.api_keys.create, NewApiKey(name="x", role="auditor"))
    ctx.fails("auditor lists keys", Forbidden, auditor.api_keys.list)

    escalation = ctx.fails("admin grants owner", Forbidden, admin.api_keys.create, NewApiKey(name="x", role="owner"))
    assert escalation.details == {"role": "owner", "actorRole": "admin"}
    ctx.fails("admin revokes the owner key", Forbidden, admin.api_keys.revoke, ctx.owner_key.key.id)
    assert ctx.record("admin writes", admin.vendors.create(NewVendor(name="By admin"))).name == "By admin"


# --- errors ---------------------------------------------------------------------------------


def missing_ids_are_not_found(ctx: Context) -> None:
    client = ctx.client
    error = ctx.fails("vendor", NotFound, client.vendors.get, "vnd_00000000doesnotexist")
    assert error.details == {"resource": "vendor", "id": "vnd_00000000doesnotexist"}
    ctx.fails("vendor update", NotFound, client.vendors.update, "vnd_00000000doesnotexist", VendorPatch(name="x"))
    ctx.fails("person", NotFound, client.people.get, "mem_00000000doesnotexist")
    ctx.fails("finding close", NotFound, client.findings.close, "fnd_00000000doesnotexist")
    ctx.fails("key revoke", NotFound, client.api_keys.revoke, "key_00000000doesnotexist")

    other = ctx.connect(ctx.client.api_keys.create(NewApiKey(name="peer", role="owner")))
    mine = client.vendors.create(NewVendor(name="Mine"))
    assert ctx.record("same org, other key", other.vendors.get(mine.id)) == mine


def idempotent_creates(ctx: Context) -> None:
    vendors = ctx.client.vendors
    data = NewVendor(name="Once Only", criticality="critical")
    first = ctx.record("first", vendors.create(data, idempotency_key="create-once-only"))
    again = ctx.record("retry", vendors.create(data, idempotency_key="create-once-only"))
    assert again == first
    assert ctx.record("one vendor", vendors.list()).total == 1

    reuse = ctx.fails(
        "same key, other payload",
        Conflict,
        vendors.create,
        NewVendor(name="Different"),
        idempotency_key="create-once-only",
    )
    assert reuse.details["field"] == "Idempotency-Key" and reuse.details["value"] == "create-once-only"

    finding = NewFinding(title="Retry me", severity="medium")
    created = ctx.record("finding", ctx.client.findings.create(finding, idempotency_key="f-1"))
    assert ctx.client.findings.create(finding, idempotency_key="f-1") == created
    assert ctx.record("one finding", ctx.client.findings.list()).total == 1


def validation_errors_name_field_and_value(ctx: Context) -> None:
    vendors = ctx.client.vendors
    transfer = ctx.fails(
        "transfer mechanism",
        ValidationError,
        vendors.create,
        NewVendor(name="US Analytics", country="US", processes_personal_data=True),
    )
    assert transfer.details["field"] == "transferMechanism" and transfer.details["value"] is None

    assignee = ctx.fails(
        "unknown assignee",
        ValidationError,
        vendors.create,
        NewVendor(name="Assigned", assignee_id="mem_00000000nobody"),
    )
    assert assignee.details == {
        "field": "assigneeId",
        "value": "mem_00000000nobody",
        "reason": "is not a person in this organization",
    }

    vendor = vendors.create(NewVendor(name="Reviewed", last_reviewed_at="2025-06-01"))
    review = ctx.fails(
        "review order", ValidationError, vendors.update, vendor.id, VendorPatch(next_review_due="2025-01-01")
    )
    assert review.details["field"] == "nextReviewDue" and review.details["value"] == "2025-01-01"

    expired = ctx.fails(
        "key expiry in the past",
        ValidationError,
        ctx.client.api_keys.create,
        NewApiKey(name="Old", role="auditor", expires_at="2001-01-01T00:00:00Z"),
    )
    assert expired.details["field"] == "expiresAt"

    # Models validate on construction, so bad values never leave the caller, whatever the transport.
    with pytest.raises(ValidationError) as local:
        NewVendor(name="Bad", criticality="extreme")
    assert local.value.details["field"] == "criticality" and local.value.details["value"] == "extreme"
    with pytest.raises(ValidationError) as paging:
        PageRequest(per_page=500)
    assert paging.value.details["field"] == "perPage"
    assert ctx.record("nothing was created", vendors.list()).total == 1


def policies_publish_sign_and_approve(ctx: Context) -> None:
    client = ctx.client
    ann = client.people.create(NewPerson(name="Ann", email="ann@acme.example"))
    boss = client.people.create(NewPerson(name="Boss", email="boss@acme.example", role="admin"))
    ctx.fails(
        "staff key without a person", ValidationError, client.api_keys.create, NewApiKey(name="x", role="employee")
    )
    staff = ctx.connect(client.api_keys.create(NewApiKey(name="Ann", role="employee", person_id=ann.id)))
    boss_key = NewApiKey(name="Boss", role="admin", person_id=boss.id)
    ctx.fails("bind a key to an admin", Forbidden, client.api_keys.create, boss_key)
    approver = ctx.connect(ctx.operator(boss_key))
    policy = ctx.record("create", client.policies.create(NewPolicy(name="Acceptable use", content="# AUP\n\n- Lock")))
    ctx.fails("sign a draft", NotFound, staff.policies.acknowledge, policy.id)
    ctx.record("publish", client.policies.publish(policy.id, PublishPolicy(changelog="First")))
    signed = ctx.record("sign", staff.policies.acknowledge(policy.id))
    assert (signed.person_id, signed.version) == (ann.id, 1)
    ctx.fails("owner signs", Forbidden, client.policies.acknowledge, policy.id)
    ctx.record("staff list", staff.policies.list())
    client.policies.update(policy.id, PolicyPatch(content="# AUP\n\n- Lock\n- Report"))
    ctx.record("submit", client.policies.submit_for_approval(policy.id, SubmitForApproval(approver_id=boss.id)))
    ctx.fails("not the approver", Forbidden, client.policies.approve, policy.id, ApprovePolicy())
    approved = ctx.record("approve", approver.policies.approve(policy.id, ApprovePolicy(comment="OK")))
    assert approved.version == 2
    sign_off = ctx.record("sign-off", client.policies.sign_off(policy.id))
    assert (sign_off.required, sign_off.acknowledged) == (2, 0)
    ctx.record("versions", client.policies.list_versions(policy.id))
    ctx.record("mine", staff.policies.list_acknowledgements())
    pdf = staff.policies.download(policy.id)
    assert pdf.media_type == "application/pdf" and pdf.read().startswith(b"%PDF")
    assert client.policies.download_all().read().startswith(b"%PDF")


def organization_and_health(ctx: Context) -> None:
    organization = ctx.record("organization", ctx.client.organizations.get())
    assert organization.id == ctx.organization_id and organization.plan == "professional"
    assert ctx.client.health()["status"] == "ok"


SCENARIOS = [
    vendor_lifecycle,
    vendor_filters_and_paging,
    people_single_and_bulk,
    findings_lifecycle,
    api_keys_lifecycle,
    permissions_follow_the_key_role,
    missing_ids_are_not_found,
    idempotent_creates,
    validation_errors_name_field_and_value,
    policies_publish_sign_and_approve,
    organization_and_health,
]

# --- comparison -----------------------------------------------------------------------------

_GENERATED = re.compile(
    r"\b(?:org|vnd|mem|fnd|key|evt|pol|pv|pak)_[0-9a-f]{8,}\b|\bcomp_[0-9a-f]{8}(?:[0-9a-f]{56})?\b"
)
"""Ids, API keys and key prefixes."""
_TRANSPORT_DEPENDENT = {"last_used_at", "secret_hash"}
"""Only HTTP admission counts a key's use (in-process calls are not requests), and a key's hash
never leaves the server."""


def normalise(transcript: list[tuple[str, Any]]) -> list[Any]:
    """Generated ids become <id1>, <id2>... in order of first appearance (so "the same id" is
    still checked); timestamps become <time>; models and errors become plain data."""
    names: dict[str, str] = {}

    def rename(text: str) -> str:
        return _GENERATED.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names) + 1}>"), text)

    def walk(value: Any) -> Any:
        if isinstance(value, ComplianceError):
            return {type(value).__name__: {"message": walk(value.message), "details": walk(value.details)}}
        if attrs.has(type(value)):
            return {
                type(value).__name__: {
                    f.name: walk(getattr(value, f.name))
                    for f in attrs.fields(type(value))
                    if f.eq and f.name not in _TRANSPORT_DEPENDENT  # eq=False: not part of the value
                }
            }
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, dt.datetime):
            return "<time>"
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, str):
            return rename(value)
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, RowItems)):
            return [walk(v) for v in value]
        return value

    return [walk(step) for step in transcript]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_scenario(scenario, harness: Harness, reference: Harness) -> None:
    ctx = harness.context()
    scenario(ctx)
    if harness is not reference:
        expected = reference.context()
        scenario(expected)
        assert normalise(ctx.transcript) == normalise(expected.transcript)
