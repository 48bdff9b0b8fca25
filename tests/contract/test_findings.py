from __future__ import annotations

from typing import Any

import attrs
import pytest

from compliance_core import PageRequest, Platform
from compliance_core.areas.findings import (
    FINDINGS,
    Finding,
    FindingFilter,
    FindingPatch,
    FindingSource,
    FindingStatus,
    FindingType,
    NewFinding,
    Severity,
)
from compliance_core.kernel.uow import Store

from . import samples


def _add(store: Store, findings: list[Finding]) -> None:
    with store.session(write=True) as session:
        for finding in findings:
            session[FINDINGS].add(finding)


def _list(
    store: Store, organization_id: str, filters: FindingFilter, page: PageRequest | None = None
) -> tuple[list[Finding], int]:
    with store.session(write=False) as session:
        items, total = session[FINDINGS].list(organization_id, filters, page or PageRequest())
    return list(items), total


def _plain(n: int, organization_id: str = "org_a", **fields: Any) -> Finding:
    fields.setdefault("severity", Severity.LOW)
    return Finding(
        id=f"fnd_{n:03d}",
        organization_id=organization_id,
        title=f"F{n}",
        created_at=samples.at(n % 4),
        updated_at=samples.at(n),
        **fields,
    )


def test_a_finding_round_trips_with_every_field(store: Store) -> None:
    finding = samples.finding()
    _add(store, [finding])
    with store.session(write=False) as session:
        assert session[FINDINGS].get(finding.organization_id, finding.id) == finding
    assert _list(store, finding.organization_id, FindingFilter()) == ([finding], 1)


def test_another_organizations_finding_is_not_found(store: Store) -> None:
    _add(store, [samples.finding(organization_id="org_a")])
    with store.session(write=False) as session:
        assert session[FINDINGS].get("org_b", "fnd_full") is None
    assert _list(store, "org_b", FindingFilter()) == ([], 0)


def test_an_update_replaces_every_field(store: Store) -> None:
    finding = samples.finding()
    _add(store, [finding])
    changed = attrs.evolve(_plain(1), id=finding.id, content="", revision_note=None, closed_at=None)
    with store.session(write=True) as session:
        session[FINDINGS].update(changed)
    with store.session(write=False) as session:
        assert session[FINDINGS].get("org_a", finding.id) == changed


@pytest.mark.parametrize(
    ("field", "wanted", "other"),
    [
        ("status", FindingStatus.CLOSED, FindingStatus.OPEN),
        ("severity", Severity.HIGH, Severity.LOW),
        ("type", FindingType.GDPR, FindingType.SOC2),
        ("source", FindingSource.DEVICE_AGENT, FindingSource.AUDIT),
    ],
)
def test_each_filter_alone_selects_exactly_the_matching_findings(
    store: Store, field: str, wanted: Any, other: Any
) -> None:
    findings = [_plain(n, **{field: wanted if n % 3 == 1 else other}) for n in range(9)]
    _add(store, findings + [_plain(99, "org_b", **{field: wanted})])
    expected = sorted((f for f in findings if getattr(f, field) == wanted), key=lambda f: (f.created_at, f.id))
    assert _list(store, "org_a", FindingFilter(**{field: wanted})) == (expected, 3)


def test_filters_combine_with_and_and_pages_cover_every_match_once(store: Store) -> None:
    findings = [
        _plain(
            n,
            status=[FindingStatus.OPEN, FindingStatus.CLOSED][n % 2],
            severity=[Severity.HIGH, Severity.LOW, Severity.CRITICAL][n % 3],
            type=[FindingType.GDPR, FindingType.ISO27001][n % 5 % 2],
            source=[FindingSource.AUDIT, FindingSource.INTEGRATION][n % 7 % 2],
        )
        for n in range(40)
    ]
    _add(store, findings)
    filters = FindingFilter(status="open", severity="high", type="gdpr", source="audit")
    expected = sorted((f for f in findings if filters.matches(f)), key=lambda f: (f.created_at, f.id))
    assert expected
    pages = [_list(store, "org_a", filters, PageRequest(page=n, per_page=2)) for n in range(1, 6)]
    assert [f for items, _ in pages for f in items] == expected
    assert {total for _, total in pages} == {len(expected)}


def test_the_service_round_trips_through_the_store(platform: Platform, owner: Any, outsider: Any) -> None:
    created = platform.findings.create(owner, NewFinding(title="Open S3 bucket", severity="high", type="iso27001"))
    platform.findings.create(outsider, NewFinding(title="elsewhere", severity="high"))
    updated = platform.findings.update(owner, created.id, FindingPatch(severity="critical"))
    closed = platform.findings.close(owner, created.id)
    assert platform.findings.get(owner, created.id) == closed
    assert closed.closed_at is not None and updated.severity is Severity.CRITICAL
    assert platform.findings.list(owner, FindingFilter(status="closed")).items == (closed,)
    assert platform.findings.list(owner, FindingFilter(status="open")).total == 0
