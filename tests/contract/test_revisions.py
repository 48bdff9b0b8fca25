"""Per-organization revisions of vendors, people and findings: the number a page cache trusts, so
it must move with every committed change of the organization's records in the area, and with
nothing else."""

from __future__ import annotations

from typing import Any, Callable

import attrs
import pytest

from compliance_core import (
    Actor,
    FindingFilter,
    NewFinding,
    NewPerson,
    NewVendor,
    PageRequest,
    PersonFilter,
    Platform,
    VendorFilter,
)
from compliance_core.uow import Store

from . import samples


class Boom(Exception):
    pass


@attrs.frozen
class Area:
    name: str
    make: Callable[..., Any]
    changed: Callable[[Any], Any]
    filters: Any


AREAS = [
    Area("vendors", samples.vendor, lambda v: attrs.evolve(v, name="Renamed Vendor"), VendorFilter()),
    Area("people", samples.person, lambda p: attrs.evolve(p, name="Renamed Person"), PersonFilter()),
    Area("findings", samples.finding, lambda f: attrs.evolve(f, title="Renamed finding"), FindingFilter()),
]


@pytest.fixture(params=AREAS, ids=[area.name for area in AREAS])
def area(request: pytest.FixtureRequest) -> Area:
    return request.param  # type: ignore[no-any-return]


def _revision(store: Store, area: Area, organization_id: str = "org_a") -> int:
    with store.session(write=False) as session:
        return int(getattr(session, area.name).revision(organization_id))


def _other(area: Area, id: str) -> Any:
    """A second record of the area (people must differ by e-mail too)."""
    return area.make(id=id, **({"email": f"{id}@example.com"} if area.name == "people" else {}))


def _write(store: Store, area: Area, method: str, item: Any) -> None:
    with store.session(write=True) as session:
        getattr(getattr(session, area.name), method)(item)


def test_a_revision_starts_at_zero(store: Store, area: Area) -> None:
    assert _revision(store, area) == 0
    assert _revision(store, area, "org_nobody") == 0


def test_adding_and_updating_grow_the_revision(store: Store, area: Area) -> None:
    item = area.make()
    seen = [_revision(store, area)]
    _write(store, area, "add", item)
    seen.append(_revision(store, area))
    _write(store, area, "update", area.changed(item))
    seen.append(_revision(store, area))
    _write(store, area, "add", _other(area, "second"))
    seen.append(_revision(store, area))
    assert seen == sorted(set(seen)), seen


def test_the_change_is_visible_inside_its_own_transaction(store: Store, area: Area) -> None:
    before = _revision(store, area)
    with store.session(write=True) as session:
        repository = getattr(session, area.name)
        repository.add(area.make())
        inside = repository.revision("org_a")
    assert before < inside == _revision(store, area)


def test_revisions_are_per_organization_and_per_area(store: Store, area: Area) -> None:
    _write(store, area, "add", area.make(organization_id="org_a"))
    mine = {other.name: _revision(store, other) for other in AREAS}
    _write(store, area, "add", area.make(organization_id="org_b"))
    _write(store, area, "update", area.changed(area.make(organization_id="org_b")))
    assert {other.name: _revision(store, other) for other in AREAS} == mine
    assert _revision(store, area, "org_b") > 0
    for other in AREAS:
        if other is not area:
            assert _revision(store, other) == 0


def test_reads_do_not_change_the_revision(store: Store, area: Area) -> None:
    item = area.make()
    _write(store, area, "add", item)
    before = _revision(store, area)
    with store.session(write=False) as session:
        repository = getattr(session, area.name)
        repository.get("org_a", item.id)
        repository.list("org_a", area.filters, PageRequest())
    with store.session(write=True) as session:
        getattr(session, area.name).get("org_a", item.id)
    assert _revision(store, area) == before


def test_a_rolled_back_write_leaves_the_revision(store: Store, area: Area) -> None:
    _write(store, area, "add", area.make())
    before = _revision(store, area)
    with pytest.raises(Boom):
        with store.session(write=True) as session:
            repository = getattr(session, area.name)
            repository.update(area.changed(area.make()))
            repository.add(_other(area, "doomed"))
            raise Boom
    assert _revision(store, area) == before


def test_services_move_the_revision_their_lists_depend_on(platform: Platform, owner: Actor) -> None:
    def revisions() -> tuple[int, int, int]:
        with platform.store.session(write=False) as session:
            return (session.vendors.revision(owner.organization_id), session.people.revision(owner.organization_id),
                    session.findings.revision(owner.organization_id))

    start = revisions()
    platform.vendors.create(owner, NewVendor(name="Acme Hosting"))
    after_vendor = revisions()
    platform.people.create(owner, NewPerson(name="Ada Lovelace", email="ada@example.com"))
    after_person = revisions()
    platform.findings.create(owner, NewFinding(title="Open S3 bucket", severity="high"))
    after_finding = revisions()
    assert after_vendor[0] > start[0] and after_vendor[1:] == start[1:]
    assert after_person[1] > after_vendor[1] and (after_person[0], after_person[2]) == (after_vendor[0], after_vendor[2])
    assert after_finding[2] > after_person[2] and after_finding[:2] == after_person[:2]
