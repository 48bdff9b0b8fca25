from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest

from compliance_core import Conflict, PageRequest, Platform, Role
from compliance_core.areas.people import (
    EMAILS,
    PEOPLE,
    Department,
    NewPerson,
    Person,
    PersonFilter,
    PersonPatch,
)
from compliance_core.kernel.uow import Store

from . import samples


def _add(store: Store, people: list[Person]) -> None:
    with store.session(write=True) as session:
        for person in people:
            session[PEOPLE].add(person)


def _list(
    store: Store, organization_id: str, filters: PersonFilter, page: PageRequest | None = None
) -> tuple[list[Person], int]:
    with store.session(write=False) as session:
        items, total = session[PEOPLE].list(organization_id, filters, page or PageRequest())
    return list(items), total


def _plain(organization_id: str, n: int, **fields: Any) -> Person:
    return Person(
        id=f"mem_{n}",
        organization_id=organization_id,
        name=f"P{n}",
        email=f"p{n}@example.com",
        created_at=samples.at(n),
        updated_at=samples.at(n),
        **fields,
    )


def test_a_person_round_trips_with_every_field(store: Store) -> None:
    person = samples.person()
    _add(store, [person])
    with store.session(write=False) as session:
        assert session[PEOPLE].get(person.organization_id, person.id) == person
    assert _list(store, person.organization_id, PersonFilter()) == ([person], 1)


def test_another_organizations_person_is_not_found(store: Store) -> None:
    _add(store, [samples.person(organization_id="org_a")])
    with store.session(write=False) as session:
        assert session[PEOPLE].get("org_b", "mem_full") is None
        assert session[EMAILS].find_emails("org_b", ["zoe@example.com"]) == set()
    assert _list(store, "org_b", PersonFilter()) == ([], 0)


def test_a_duplicate_email_in_the_organization_is_a_conflict(store: Store) -> None:
    _add(store, [samples.person(id="mem_1")])
    with pytest.raises(Conflict) as raised:
        _add(store, [samples.person(id="mem_2")])
    assert raised.value.details == {"field": "email", "value": "zoe@example.com"}
    _add(store, [samples.person(organization_id="org_b", id="mem_3")])  # another organization may reuse it
    with store.session(write=False) as session:
        assert session[PEOPLE].get("org_a", "mem_2") is None


def test_changing_to_a_taken_email_is_a_conflict_and_a_freed_email_can_be_reused(store: Store) -> None:
    first, second = _plain("org_a", 1), _plain("org_a", 2)
    _add(store, [first, second])
    with pytest.raises(Conflict) as raised:
        with store.session(write=True) as session:
            session[PEOPLE].update(attrs.evolve(second, email=first.email))
    assert raised.value.details == {"field": "email", "value": first.email}
    moved = attrs.evolve(first, email="new@example.com")
    with store.session(write=True) as session:
        session[PEOPLE].update(moved)
    _add(store, [attrs.evolve(_plain("org_a", 3), email=first.email)])
    with store.session(write=False) as session:
        assert session[PEOPLE].get("org_a", first.id) == moved
        assert session[EMAILS].find_emails("org_a", [first.email, "new@example.com", "nobody@example.com"]) == {
            first.email,
            "new@example.com",
        }


def test_find_emails_handles_many_addresses(store: Store) -> None:
    _add(store, [_plain("org_a", n) for n in range(0, 1200, 100)])
    asked = [f"p{n}@example.com" for n in range(1200)]
    with store.session(write=False) as session:
        assert session[EMAILS].find_emails("org_a", asked) == {f"p{n}@example.com" for n in range(0, 1200, 100)}


@pytest.mark.parametrize(
    ("field", "wanted", "other"),
    [
        ("role", Role.ADMIN, Role.EMPLOYEE),
        ("department", Department.IT, Department.NONE),
        ("is_active", False, True),
    ],
)
def test_each_filter_alone_selects_exactly_the_matching_people(
    store: Store, field: str, wanted: Any, other: Any
) -> None:
    people = [_plain("org_a", n, **{field: wanted if n % 2 else other}) for n in range(6)]
    _add(store, people)
    assert _list(store, "org_a", PersonFilter(**{field: wanted})) == ([people[1], people[3], people[5]], 3)


def test_filters_combine_with_and_and_pages_follow_creation_order(store: Store) -> None:
    combos = itertools.product([Role.ADMIN, Role.AUDITOR], [Department.IT, Department.HR], [True, False])
    people = [_plain("org_a", n, role=r, department=d, is_active=a) for n, (r, d, a) in enumerate(combos)]
    _add(store, people)
    filters = PersonFilter(role="admin", is_active=True)
    assert _list(store, "org_a", filters) == ([p for p in people if filters.matches(p)], 2)
    pages = [_list(store, "org_a", PersonFilter(), PageRequest(page=n, per_page=3)) for n in (1, 2, 3)]
    assert [p for items, _ in pages for p in items] == people
    assert {total for _, total in pages} == {8}


def test_the_service_keeps_emails_unique(platform: Platform, owner: Any) -> None:
    created = platform.people.create(owner, NewPerson(name="Ada", email="ada@example.com"))
    with pytest.raises(Conflict):
        platform.people.create(owner, NewPerson(name="Ada again", email="ADA@example.com"))
    with pytest.raises(Conflict):
        platform.people.bulk_create(
            owner, [{"name": "B", "email": "b@example.com"}, {"name": "A", "email": "ada@example.com"}]
        )
    assert platform.people.list(owner).items == (created,)
    updated = platform.people.update(owner, created.id, PersonPatch(job_title="CTO"))
    assert platform.people.get(owner, created.id) == updated
