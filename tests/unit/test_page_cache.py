from __future__ import annotations

import itertools

from compliance_core import FrozenClock, PageRequest, Platform, SequentialIds
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import NewVendor, VendorFilter, VendorPatch
from compliance_core.kernel.page_cache import PageCache
from compliance_store.memory import MemoryStore


def test_an_unchanged_organization_gets_the_same_page_object(platform, owner) -> None:
    platform.vendors.create(owner, NewVendor(name="A"))
    platform.vendors.list(owner)  # asked for once: served, not kept
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
    platform.vendors.list(owner)
    first = platform.vendors.list(owner)
    platform.vendors.create(other_org, NewVendor(name="Elsewhere"))
    assert platform.vendors.list(owner) is first


class FakeRecords:
    """A repository that counts its list queries; its pages are empty unless ``full`` names them
    (then they hold ``per_page`` strings of a kilobyte)."""

    def __init__(self, full: tuple[int, ...] = ()) -> None:
        self.calls = 0
        self.full = full

    def revision(self, organization_id: str) -> int:
        return 0

    def list(self, organization_id, filters, page, total=None, revision=None):
        self.calls += 1
        if page.page in self.full:
            return [f"{n:04d}" + "x" * 1020 for n in range(page.per_page)], 1000
        return [], 0


def _charged_for_an_empty_page() -> int:
    cache = PageCache(admit_after=0)
    cache.fetch("vendors", FakeRecords(), "org_1", None, PageRequest())
    return cache.used


EMPTY_PAGE = _charged_for_an_empty_page()
"""The bytes the cache counts for an empty page (its fixed overhead)."""


def test_one_cache_per_platform_shared_by_its_areas(platform) -> None:
    caches = {id(platform.services[name].pages) for name in ("vendors", "people", "findings")}
    assert len(caches) == 1
    other = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    assert other.vendors.pages is not platform.vendors.pages


def test_the_byte_budget_evicts_the_least_recently_used_page() -> None:
    cache, repo = PageCache(2 * EMPTY_PAGE, admit_after=0), FakeRecords()
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=2))
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))  # a hit: page 1 is now the most recent
    assert repo.calls == 2
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=3))  # over budget: page 2 goes
    assert repo.calls == 3 and cache.used <= cache.budget
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=3))
    assert repo.calls == 3
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=2))
    assert repo.calls == 4


def test_the_budget_counts_bytes_not_pages() -> None:
    cache, repo = PageCache(8 * EMPTY_PAGE, admit_after=0), FakeRecords(full=(9,))
    for n in range(1, 9):
        cache.fetch("vendors", repo, "org_1", None, PageRequest(page=n))
    assert repo.calls == 8 and cache.used == 8 * EMPTY_PAGE
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=9, per_page=2))  # about 2 KiB
    assert EMPTY_PAGE < cache.used <= cache.budget
    assert _cached(cache, repo, PageRequest(page=9, per_page=2))
    # Newest first, up to the first miss (a miss stores the page again and evicts another).
    kept = list(itertools.takewhile(lambda n: _cached(cache, repo, PageRequest(page=n)), range(8, 0, -1)))
    assert 1 <= len(kept) <= 6  # one page of items pushed out several empty ones, the oldest first
    assert not _cached(cache, repo, PageRequest(page=1))


class Revised(FakeRecords):
    """A repository whose revision the test moves."""

    revision_now = 0

    def revision(self, organization_id: str) -> int:
        return self.revision_now


def test_a_page_is_kept_from_its_second_request_at_one_revision() -> None:
    cache, repo = PageCache(), Revised()
    for _ in range(2):
        cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))
    assert repo.calls == 2 and cache.used > 0  # the second request kept it
    cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))
    assert repo.calls == 2
    repo.revision_now = 1  # a write: the next request is the first at this revision
    for _ in range(3):
        cache.fetch("vendors", repo, "org_1", None, PageRequest(page=1))
    assert repo.calls == 4
    one_off = PageCache()
    for page in range(1, 50):  # pages asked for once each are never kept
        one_off.fetch("vendors", repo, "org_1", None, PageRequest(page=page))
    assert one_off.used == 0


def _cached(cache: PageCache, repo: FakeRecords, request: PageRequest) -> bool:
    before = repo.calls
    cache.fetch("vendors", repo, "org_1", None, request)
    return repo.calls == before


def test_a_page_larger_than_the_budget_is_served_but_not_kept() -> None:
    cache, repo = PageCache(EMPTY_PAGE - 1), FakeRecords()
    for _ in range(2):
        assert cache.fetch("vendors", repo, "org_1", None, PageRequest()).total == 0
    assert repo.calls == 2 and cache.used == 0


def test_scope_and_area_keep_entries_apart() -> None:
    cache, repo = PageCache(admit_after=0), FakeRecords()
    request = PageRequest()
    first = cache.fetch("findings", repo, "org_1", None, request, scope="mem_1")
    assert cache.fetch("findings", repo, "org_1", None, request, scope="mem_1") is first
    assert repo.calls == 1
    assert cache.fetch("findings", repo, "org_1", None, request, scope="mem_2") is not first
    assert cache.fetch("findings", repo, "org_1", None, request) is not first
    assert cache.fetch("vendors", repo, "org_1", None, request, scope="mem_1") is not first
    assert cache.fetch("findings", repo, "org_2", None, request, scope="mem_1") is not first
    assert repo.calls == 5
