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


def test_a_revision_starts_at_zero(store: Store, table: Table) -> None:
    assert _revision(store, table) == 0
    assert _revision(store, table, "org_nobody") == 0


def test_adding_updating_and_deleting_grow_the_revision(store: Store, table: Table) -> None:
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
    assert seen == sorted(set(seen)), seen


def test_deleting_nothing_leaves_the_revision(store: Store, table: Table) -> None:
    item = table.make()
    _write(store, table, "add", item)
    before = _revision(store, table)
    with store.session(write=True) as session:
        assert not session[table.records].delete("org_a", "missing_1")
        assert not session[table.records].delete("org_b", item.id)
    assert _revision(store, table) == before


def test_the_change_is_visible_inside_its_own_transaction(store: Store, table: Table) -> None:
    before = _revision(store, table)
    with store.session(write=True) as session:
        repository = session[table.records]
        repository.add(table.make())
        inside = repository.revision("org_a")
    assert before < inside == _revision(store, table)


def test_revisions_are_per_organization_and_per_area(store: Store, table: Table) -> None:
    _write(store, table, "add", table.make(organization_id="org_a"))
    mine = {other.name: _revision(store, other) for other in TABLES}
    _write(store, table, "add", table.make(organization_id="org_b"))
    _write(store, table, "update", table.change(table.make(organization_id="org_b")))
    assert {other.name: _revision(store, other) for other in TABLES} == mine
    assert _revision(store, table, "org_b") > 0
    for other in TABLES:
        if other is not table:
            assert _revision(store, other) == 0


def test_reads_do_not_change_the_revision(store: Store, table: Table) -> None:
    item = table.make()
    _write(store, table, "add", item)
    before = _revision(store, table)
    with store.session(write=False) as session:
        repository = session[table.records]
        repository.get("org_a", item.id)
        repository.list("org_a", table.records.filters(), PageRequest())
    with store.session(write=True) as session:
        session[table.records].get("org_a", item.id)
    assert _revision(store, table) == before


def test_a_rolled_back_write_leaves_the_revision(store: Store, table: Table) -> None:
    _write(store, table, "add", table.make())
    before = _revision(store, table)
    with pytest.raises(Boom):
        with store.session(write=True) as session:
            repository = session[table.records]
            repository.update(table.change(table.make()))
            repository.add(table.other("doomed"))
            repository.delete("org_a", table.make().id)
            raise Boom
    assert _revision(store, table) == before


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
