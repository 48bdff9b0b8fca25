"""The kernel's directory port on every store: what areas read of people and organizations, and
the declared extension point through which a store serves a table with queries of its own."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from compliance_core import Actor, Platform, Role, ValidationError
from compliance_core.areas.people import PEOPLE, Person
from compliance_core.kernel.directory import Directory
from compliance_core.kernel.records import Records
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store
from compliance_core.platform import Bootstrap
from compliance_store.registry import served

from . import samples


def _person(organization_id: str, n: int, **fields: Any) -> Person:
    return Person(
        id=f"mem_d{n}",
        organization_id=organization_id,
        name=f"Person {n}",
        email=f"d{n}@example.com",
        created_at=samples.at(n),
        updated_at=samples.at(n),
        **fields,
    )


def test_the_directory_reads_people_of_one_organization(store: Store, boot: Bootstrap, outsider: Actor) -> None:
    org = boot.organization.id
    with store.session(write=True) as session:
        for n in range(3):
            session[PEOPLE].add(_person(org, n, is_active=n != 1))
        session[PEOPLE].add(_person(outsider.organization_id, 9))
    with store.session(write=False) as session:
        directory = Directory(session)
        found = directory.person(org, "mem_d0")
        assert found is not None and (found.name, found.role, found.is_active) == ("Person 0", Role.EMPLOYEE, True)
        assert directory.person(org, "mem_d9") is None  # another organization's person
        assert {p.id for p in directory.active_people(org)} >= {"mem_d0", "mem_d2"}
        assert "mem_d1" not in {p.id for p in directory.active_people(org)}
        assert directory.names(org, ["mem_d1", "mem_d9", None, "mem_d0"]) == {
            "mem_d1": "Person 1",
            "mem_d0": "Person 0",
        }
        directory.check_member(org, "ownerId", "mem_d1")  # deactivated is still a member
        directory.check_member(org, "ownerId", None)
        with pytest.raises(ValidationError) as refused:
            directory.check_member(org, "ownerId", "mem_d9")
        assert refused.value.details == {
            "field": "ownerId",
            "value": "mem_d9",
            "reason": "is not a person in this organization",
        }


def test_the_directory_reads_organizations_and_stores_a_changed_person(
    store: Store, platform: Platform, boot: Bootstrap, outsider: Actor
) -> None:
    org = boot.organization.id
    with store.session(write=True) as session:
        session[PEOPLE].add(_person(org, 0))
    with platform.uow.write(None) as tx:
        directory = Directory(tx)
        person = directory.person(org, "mem_d0")
        assert person is not None
        directory.store_person(attrs.evolve(person, role=Role.ADMIN))
    with store.session(write=False) as session:
        directory = Directory(session)
        changed = directory.person(org, "mem_d0")
        assert changed is not None and changed.role is Role.ADMIN
        assert directory.organization_ids() == [org, outsider.organization_id]
        organization = directory.organization(org)
        assert organization is not None and organization.name == "Acme"
        assert directory.owner_of(org) == boot.organization.owner_person_id
        assert directory.organization("org_nobody") is None and directory.owner_of("org_nobody") is None


class _Queries:
    def find_nothing(self) -> None: ...


class _Extended:
    serves = Records("extended", model=Person, kind="thing", prefix="ext", queries=_Queries)

    def find_nothing(self) -> None: ...


def test_a_table_declaring_queries_needs_a_store_class_serving_all_of_them() -> None:
    area: Area[Any] = Area(name="extended", service=lambda context: None, records=(_Extended.serves,))
    assert served([area], [_Extended]) == {"extended": _Extended}
    with pytest.raises(TypeError, match="no repository class serves 'extended'"):
        served([area], [])

    class Lacking:
        serves = _Extended.serves

    with pytest.raises(TypeError, match=r"lacks \['find_nothing'\]"):
        served([area], [Lacking])
    with pytest.raises(TypeError, match="two repository classes"):
        served([area], [_Extended, _Extended])
    plain = Area(name="plain", service=lambda context: None, records=(attrs.evolve(_Extended.serves, queries=None),))
    with pytest.raises(TypeError, match="declares no queries"):
        served([plain], [_Extended])
    assert served([], [_Extended]) == {}  # a table of no area given: not served here
