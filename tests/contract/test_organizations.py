from __future__ import annotations

import attrs

from compliance_core import Platform
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.kernel.uow import Store

from . import samples


def test_an_organization_round_trips_with_every_field(store: Store) -> None:
    organization = samples.organization()
    with store.session(write=True) as session:
        session[ORGANIZATIONS].add(organization)
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].get(organization.id) == organization
        assert session[ORGANIZATIONS].get("org_missing") is None


def test_an_update_replaces_the_stored_organization(store: Store) -> None:
    organization = samples.organization()
    changed = attrs.evolve(
        organization,
        name="Initrode",
        plan=Plan.FREE,
        rate_limit_rpm=None,
        rate_limit_burst=None,
        updated_at=samples.at(99),
    )
    with store.session(write=True) as session:
        session[ORGANIZATIONS].add(organization)
    with store.session(write=True) as session:
        session[ORGANIZATIONS].update(changed)
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].get(organization.id) == changed


def test_count_counts_every_organization(store: Store) -> None:
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].count() == 0
    with store.session(write=True) as session:
        for n in range(3):
            session[ORGANIZATIONS].add(samples.organization(id=f"org_{n}"))
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].count() == 3


def test_the_platform_reads_back_what_it_bootstrapped(platform: Platform) -> None:
    boot = platform.bootstrap("Acme", plan="enterprise", rpm=100, burst=150)
    actor = platform.actor(boot.organization.id)
    assert platform.organizations.get(actor) == boot.organization
    updated = platform.organizations.set_plan(actor, "starter")
    assert platform.organizations.get(actor) == updated
    assert updated.plan is Plan.STARTER


def test_list_all_gives_every_organization_oldest_first(store: Store) -> None:
    older = samples.organization("org_b", created_at=samples.at(-60))
    newer = samples.organization("org_a", created_at=samples.at(60))
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].list_all() == []
    with store.session(write=True) as session:
        session[ORGANIZATIONS].add(newer)
        session[ORGANIZATIONS].add(older)
    with store.session(write=False) as session:
        assert session[ORGANIZATIONS].list_all() == [older, newer]


def test_slugs_are_found_and_unique(store: Store) -> None:
    with store.session(write=True) as session:
        session[ORGANIZATIONS].add(samples.organization("org_a", slug="acme"))
        session[ORGANIZATIONS].add(samples.organization("org_b", slug=None))
        session[ORGANIZATIONS].add(samples.organization("org_c", slug=None))  # many have none
    with store.session(write=False) as session:
        found = session[ORGANIZATIONS].find_slug("acme")
        assert found is not None and found.id == "org_a"
        assert session[ORGANIZATIONS].find_slug("globex") is None
