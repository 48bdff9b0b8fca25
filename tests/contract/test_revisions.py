"""Per-organization revisions of every declared ``Records`` table (vendors, people, findings, ...):
the number a page cache trusts, so it must move with every committed change of the
organization's records in the table, and with nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from compliance_core import Actor, PageRequest, Platform
from compliance_core.areas.findings import FINDINGS, NewFinding
from compliance_core.areas.people import PEOPLE, NewPerson
from compliance_core.areas.vendors import VENDORS, NewVendor
from compliance_core.kernel.uow import Store

from . import samples
from .samples import Table

TABLES = list(samples.TABLES.values())


class Boom(Exception):
    pass


@pytest.fixture(params=TABLES, ids=[table.name for table in TABLES])
def table(request: pytest.FixtureRequest) -> Table:
    return request.param  # type: ignore[no-any-return]


def _revision(store: Store, table: Table, organization_id: str = "org_a") -> int:
    with store.session(write=False) as session:
        return int(session[table.records].revision(organization_id))


def _write(store: Store, table: Table, method: str, item: Any) -> None:
    with store.session(write=True) as session:
        getattr(session[table.records], method)(item)


def test_a_revision_moves_with_each_committed_change_and_nothing_else(store: Store, table: Table) -> None:
    """One store per table walks every rule in turn: opening a SQL store for each rule and table
    cost most of this file's time, and each step starts from what the last one left."""
    assert _revision(store, table) == 0, "a revision starts at zero"
    assert _revision(store, table, "org_nobody") == 0

    item = table.make()
    seen = [_revision(store, table)]
    _write(store, table, "add", item)
    seen.append(_revision(store, table))
    _write(store, table, "update", table.change(item))
    seen.append(_revision(store, table))
    _write(store, table, "add", table.other("second"))
    seen.append(_revision(store, table))
    with store.session(write=True) as session:
        assert session[table.records].delete("org_a", item.id)
    seen.append(_revision(store, table))
    assert seen == sorted(set(seen)), f"adding, updating and deleting grow the revision: {seen}"

    _write(store, table, "add", item)
    before = _revision(store, table)
    with store.session(write=True) as session:
        assert not session[table.records].delete("org_a", "missing_1")
        assert not session[table.records].delete("org_b", item.id)
    assert _revision(store, table) == before, "deleting nothing leaves the revision"

    with store.session(write=True) as session:
        repository = session[table.records]
        repository.add(table.other("third"))
        inside = repository.revision("org_a")
    assert before < inside == _revision(store, table), "the change is visible inside its own transaction"

    before = _revision(store, table)
    with store.session(write=False) as session:
        repository = session[table.records]
        repository.get("org_a", item.id)
        repository.list("org_a", table.records.filters(), PageRequest())
    with store.session(write=True) as session:
        session[table.records].get("org_a", item.id)
    assert _revision(store, table) == before, "reads do not change the revision"

    with pytest.raises(Boom):
        with store.session(write=True) as session:
            repository = session[table.records]
            repository.update(table.change(item))
            repository.add(table.other("doomed"))
            repository.delete("org_a", item.id)
            raise Boom
    assert _revision(store, table) == before, "a rolled-back write leaves the revision"

    mine = {other.name: _revision(store, other) for other in TABLES}
    _write(store, table, "add", table.make(organization_id="org_b"))
    _write(store, table, "update", table.change(table.make(organization_id="org_b")))
    assert {other.name: _revision(store, other) for other in TABLES} == mine, "per organization"
    assert _revision(store, table, "org_b") > 0
    assert all(_revision(store, other) == 0 for other in TABLES if other is not table), "per area"


def test_services_move_the_revision_their_lists_depend_on(platform: Platform, owner: Actor) -> None:
    def revisions() -> tuple[int, int, int]:
        with platform.store.session(write=False) as session:
            return (
                session[VENDORS].revision(owner.organization_id),
                session[PEOPLE].revision(owner.organization_id),
                session[FINDINGS].revision(owner.organization_id),
            )

    start = revisions()
    platform.vendors.create(owner, NewVendor(name="Acme Hosting"))
    after_vendor = revisions()
    platform.people.create(owner, NewPerson(name="Ada Lovelace", email="ada@example.com"))
    after_person = revisions()
    platform.findings.create(owner, NewFinding(title="Open S3 bucket", severity="high"))
    after_finding = revisions()
    assert after_vendor[0] > start[0] and after_vendor[1:] == start[1:]
    assert after_person[1] > after_vendor[1] and (after_person[0], after_person[2]) == (
        after_vendor[0],
        after_vendor[2],
    )
    assert after_finding[2] > after_person[2] and after_finding[:2] == after_person[:2]
