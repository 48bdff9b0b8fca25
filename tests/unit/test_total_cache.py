"""The total cache: a filter set's total is counted once per revision of the organization's
records in the area, and never served to another organization, area or filter set."""

from __future__ import annotations

import threading

import pytest

from compliance_core import FrozenClock, PageRequest, Platform, SequentialIds
from compliance_core.areas.findings import FindingFilter, FindingPatch, NewFinding
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.kernel.page_cache import PageCache, TotalCache
from compliance_store.memory import MemoryStore


class CountingRecords:
    """A repository whose totals are set per (organization, filters); it records how many times
    it had to count and which totals it was handed."""

    def __init__(self, totals: dict[tuple[str, object], int]) -> None:
        self.totals = totals
        self.revisions: dict[str, int] = {}
        self.counted = 0
        self.handed: list[int | None] = []
        self.revisions_handed: list[int | None] = []

    def revision(self, organization_id: str) -> int:
        return self.revisions.get(organization_id, 0)

    def write(self, organization_id: str) -> None:
        self.revisions[organization_id] = self.revision(organization_id) + 1

    def list(self, organization_id, filters, page, total=None, revision=None):
        self.handed.append(total)
        self.revisions_handed.append(revision)
        if total is None:
            self.counted += 1
            total = self.totals[(organization_id, filters)]
        return [], total


def test_a_total_is_reused_at_the_same_revision() -> None:
    repo = CountingRecords({("org_1", "critical"): 7})
    totals = TotalCache()
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest(page=1)) == ([], 7)
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest(page=2, per_page=10)) == ([], 7)
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest(page=9)) == ([], 7)
    assert repo.counted == 1
    assert repo.handed == [None, 7, 7]
    assert totals.hits == 2


def test_any_write_of_the_organizations_records_makes_it_count_again() -> None:
    repo = CountingRecords({("org_1", "critical"): 7, ("org_1", None): 9})
    totals = TotalCache()
    totals.list("vendors", repo, "org_1", "critical", PageRequest())
    totals.list("vendors", repo, "org_1", None, PageRequest())
    repo.write("org_1")
    repo.totals[("org_1", "critical")] = 8
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest(page=2)) == ([], 8)
    assert totals.list("vendors", repo, "org_1", None, PageRequest(page=2)) == ([], 9)
    assert repo.counted == 4
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest(page=3)) == ([], 8)
    assert repo.counted == 4


def test_a_total_is_never_shared_between_organizations_areas_or_filter_sets() -> None:
    repo = CountingRecords(
        {("org_1", "critical"): 1, ("org_2", "critical"): 2, ("org_1", "standard"): 3, ("org_1", None): 4}
    )
    totals = TotalCache()
    assert totals.list("vendors", repo, "org_1", "critical", PageRequest())[1] == 1
    assert totals.list("vendors", repo, "org_2", "critical", PageRequest())[1] == 2
    assert totals.list("vendors", repo, "org_1", "standard", PageRequest())[1] == 3
    assert totals.list("vendors", repo, "org_1", None, PageRequest())[1] == 4
    repo.totals[("org_1", "critical")] = 5
    assert totals.list("findings", repo, "org_1", "critical", PageRequest())[1] == 5
    assert repo.counted == 5 and totals.hits == 0


def test_the_revision_read_by_the_caller_is_the_one_checked() -> None:
    repo = CountingRecords({("org_1", None): 3})
    totals = TotalCache()
    totals.list("vendors", repo, "org_1", None, PageRequest(), revision=4)
    assert repo.handed[-1] is None
    totals.list("vendors", repo, "org_1", None, PageRequest(), revision=4)
    assert repo.handed[-1] == 3
    totals.list("vendors", repo, "org_1", None, PageRequest(), revision=5)
    assert repo.handed[-1] is None


def test_the_cache_is_bounded_least_recently_used_first_out() -> None:
    totals = TotalCache(entries=2)
    totals.put("a", 0, 1)
    totals.put("b", 0, 2)
    assert totals.get("a", 0) == 1  # "b" is now the least recently used
    totals.put("c", 0, 3)
    assert len(totals) == 2
    assert totals.get("b", 0) is None
    assert (totals.get("a", 0), totals.get("c", 0)) == (1, 3)
    assert totals.get("a", 1) is None  # another revision
    totals.put("a", 1, 5)
    assert len(totals) == 2 and totals.get("a", 0) is None and totals.get("a", 1) == 5


def test_a_cache_of_no_entries_keeps_nothing() -> None:
    totals = TotalCache(entries=0)
    totals.put("a", 0, 1)
    assert len(totals) == 0 and totals.get("a", 0) is None
    with pytest.raises(ValueError):
        TotalCache(entries=-1)


def test_threads_share_one_bounded_cache() -> None:
    totals = TotalCache(entries=50)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2000):
                key = ("vendors", f"org_{n}", i % 80)
                known = totals.get(key, i % 3)
                assert known is None or known == i % 80
                totals.put(key, i % 3, i % 80)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(totals) == 50


def test_a_page_cache_miss_reuses_the_total_of_another_page() -> None:
    repo = CountingRecords({("org_1", "critical"): 120})
    cache = PageCache()
    first = cache.fetch("vendors", repo, "org_1", "critical", PageRequest(page=1))
    second = cache.fetch("vendors", repo, "org_1", "critical", PageRequest(page=2))
    assert second is not first and first.total == second.total == 120
    assert repo.counted == 1 and repo.handed == [None, 120]
    # Another caller's scope reads the same records: the total is shared, the page is not.
    third = cache.fetch("vendors", repo, "org_1", "critical", PageRequest(page=1), scope="mem_1")
    assert third is not first and repo.counted == 1


def test_a_page_too_large_to_keep_still_keeps_its_total() -> None:
    repo = CountingRecords({("org_1", None): 3})
    cache = PageCache(budget=0)
    cache.fetch("vendors", repo, "org_1", None, PageRequest())
    cache.fetch("vendors", repo, "org_1", None, PageRequest())
    assert repo.counted == 1 and len(cache.totals) == 1


def _platform() -> tuple[Platform, str]:
    platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    return platform, platform.bootstrap("Totals").organization.id


def test_platform_writes_in_the_area_invalidate_and_other_organizations_do_not() -> None:
    platform, org = _platform()
    other = platform.bootstrap("Elsewhere").organization.id
    owner, outsider = platform.actor(org), platform.actor(other)
    totals = platform.services["vendors"].pages.totals
    critical = VendorFilter(criticality="critical")
    platform.vendors.create(owner, NewVendor(name="A", criticality="critical"))
    assert platform.vendors.list(owner, critical, PageRequest(per_page=1)).total == 1
    hits = totals.hits
    assert platform.vendors.list(owner, critical, PageRequest(page=2, per_page=1)).total == 1
    assert totals.hits == hits + 1
    platform.vendors.create(outsider, NewVendor(name="B", criticality="critical"))
    assert platform.vendors.list(owner, critical, PageRequest(page=3, per_page=1)).total == 1
    assert platform.vendors.list(outsider, critical, PageRequest(page=3, per_page=1)).total == 1
    assert totals.hits == hits + 2
    vendor = platform.vendors.create(owner, NewVendor(name="C", criticality="critical"))
    assert platform.vendors.list(owner, critical, PageRequest(page=4, per_page=1)).total == 2
    assert totals.hits == hits + 2
    platform.vendors.archive(owner, vendor.id)
    assert platform.vendors.list(owner, critical, PageRequest(page=5, per_page=1)).total == 1
    assert platform.vendors.list(owner, VendorFilter(archived=True)).total == 1


def test_a_write_in_another_area_keeps_the_total() -> None:
    platform, org = _platform()
    owner = platform.actor(org)
    totals = platform.services["findings"].pages.totals
    finding = platform.findings.create(owner, NewFinding(title="A", severity="low"))
    low = FindingFilter(severity="low")
    assert platform.findings.list(owner, low, PageRequest(per_page=1)).total == 1
    hits = totals.hits
    platform.vendors.create(owner, NewVendor(name="V"))
    assert platform.findings.list(owner, low, PageRequest(page=2, per_page=1)).total == 1
    assert totals.hits == hits + 1
    platform.findings.update(owner, finding.id, FindingPatch(severity="high"))
    assert platform.findings.list(owner, low, PageRequest(page=3, per_page=1)).total == 0
    assert totals.hits == hits + 1


def test_the_store_is_handed_the_revision_the_total_was_kept_at() -> None:
    """So a store may keep what it read to place deep pages at that revision (its own business)."""
    repo = CountingRecords({("org_a", None): 5})
    totals = TotalCache()
    totals.list("vendors", repo, "org_a", None, PageRequest())
    totals.list("vendors", repo, "org_a", None, PageRequest(page=2))
    repo.write("org_a")
    totals.list("vendors", repo, "org_a", None, PageRequest())
    assert repo.revisions_handed == [0, 0, 1] and repo.handed == [None, 5, None]
