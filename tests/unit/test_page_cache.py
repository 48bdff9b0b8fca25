from __future__ import annotations

from compliance_core import FindingPatch, FrozenClock, NewFinding, NewPerson, NewVendor, PageRequest, Platform, SequentialIds
from compliance_core import VendorFilter, VendorPatch
from compliance_core.pagination import PageCache
from compliance_store.memory import MemoryStore


def test_an_unchanged_organization_gets_the_same_page_object(platform, owner) -> None:
    platform.vendors.create(owner, NewVendor(name="A"))
    first = platform.vendors.list(owner)
    assert platform.vendors.list(owner) is first
    assert platform.vendors.list(owner, VendorFilter(criticality="critical")) is not first


def test_every_write_is_seen_at_once(platform, owner) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="A"))
    before = platform.vendors.list(owner)
    platform.vendors.update(owner, vendor.id, VendorPatch(name="B"))
    after = platform.vendors.list(owner)
    assert [v.name for v in after.items] == ["B"] and after is not before
    platform.vendors.archive(owner, vendor.id)
    assert platform.vendors.list(owner).total == 0


def test_writes_through_another_platform_on_the_same_store_invalidate(owner) -> None:
    """Two Platforms over one store stand for two server processes over one database."""
    store = MemoryStore()
    one = Platform(store, clock=FrozenClock(), ids=SequentialIds())
    two = Platform(store, clock=FrozenClock(), ids=SequentialIds(start=1000))
    org = one.bootstrap("Shared").organization.id
    actor_one, actor_two = one.actor(org), two.actor(org)
    one.findings.create(actor_one, NewFinding(title="A", severity="low"))
    assert one.findings.list(actor_one).total == 1
    created = two.findings.create(actor_two, NewFinding(title="B", severity="low"))
    assert one.findings.list(actor_one).total == 2
    two.findings.update(actor_two, created.id, FindingPatch(severity="high"))
    assert {f.severity for f in one.findings.list(actor_one).items} == {"low", "high"}
    two.people.create(actor_two, NewPerson(name="P", email="p@shared.test"))
    assert one.people.list(actor_one).total == 1


def test_another_organizations_writes_keep_the_page(platform, owner, other_org) -> None:
    first = platform.vendors.list(owner)
    platform.vendors.create(other_org, NewVendor(name="Elsewhere"))
    assert platform.vendors.list(owner) is first


def test_the_cache_is_bounded() -> None:
    class Repo:
        calls = 0

        def revision(self, organization_id: str) -> int:
            return 0

        def list(self, organization_id, filters, page):
            Repo.calls += 1
            return [], 0

    cache, repo = PageCache(size=2), Repo()
    for n in (1, 2, 3, 1):
        cache.fetch(repo, "org_1", None, PageRequest(page=n))
    assert Repo.calls == 4  # page 1 was evicted by page 3
    cache.fetch(repo, "org_1", None, PageRequest(page=1))
    assert Repo.calls == 4
