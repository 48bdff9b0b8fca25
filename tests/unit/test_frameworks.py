"""The framework catalogue: OSCAL read into groups and requirements, files admitted only when
their checksums match, lists paged in memory like stored ones."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest
from oscal_examples import HERE, example_frameworks, example_source

from compliance_core import Platform
from compliance_core.areas.frameworks import RequirementFilter
from compliance_core.areas.frameworks.catalogue import (
    NIST_SOURCES,
    DirectoryDocuments,
    FrameworkCatalogue,
    Frameworks,
    git_blob_id,
)
from compliance_core.areas.frameworks.oscal import profile_ids, read_catalog
from compliance_core.kernel.errors import NotFound, ValidationError
from compliance_core.kernel.pages import PageRequest, Position
from compliance_core.kernel.permissions import Actor, Role

ACTOR = Actor(organization_id="org_1", role=Role.CONTRACTOR)
FAR_PAST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def platform() -> Platform:
    return Platform.open("memory://", settings={"frameworks": example_frameworks()})


def test_the_reader_keeps_the_nesting_statements_and_baselines() -> None:
    low = profile_ids(json.loads((HERE / "example_low_profile.json").read_text()))
    catalog = read_catalog(json.loads((HERE / "example_catalog.json").read_text()), {"low": low})
    assert [group.id for group in catalog.groups] == ["ex", "gv"]
    by_id = {item.id: item for item in catalog.requirements}
    assert list(by_id) == ["ex-1", "ex-1.1", "ex-2", "GV.OC", "GV.OC-01"]
    assert by_id["ex-1"].statement == (
        "a. Give a policy to [Assignment: organization-defined personnel or roles];\n"
        "b. Review it [Selection (one or more): yearly; on change]."
    )
    assert (by_id["ex-1.1"].parent_id, by_id["ex-1.1"].label, by_id["ex-1.1"].group_id) == ("ex-1", "EX-1(1)", "ex")
    assert by_id["ex-2"].withdrawn and not by_id["ex-1"].withdrawn
    assert by_id["GV.OC-01"].parent_id == "GV.OC" and by_id["GV.OC-01"].group_id == "gv"
    assert [item.id for item in catalog.requirements if item.baselines == ("low",)] == ["ex-1", "GV.OC-01"]


def test_a_document_that_is_no_catalog_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        read_catalog({"profile": {}})


def test_a_file_whose_checksum_differs_is_never_read(tmp_path: Path) -> None:
    for name in ("example_catalog.json", "example_low_profile.json"):
        shutil.copy(HERE / name, tmp_path / name)
    (tmp_path / "example_low_profile.json").write_text((HERE / "example_low_profile.json").read_text() + " ")
    catalogue = FrameworkCatalogue(Frameworks(directory=tmp_path, sources=(example_source(),)))
    assert catalogue.installed() == ()
    assert FrameworkCatalogue(Frameworks(sources=(example_source(),))).installed() == ()
    assert [source.id for source in FrameworkCatalogue(example_frameworks()).installed()] == ["example"]


def test_the_git_blob_id_is_gits_own() -> None:
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_nist_sources_name_files_of_nists_repository_by_checksum() -> None:
    (rev5,) = NIST_SOURCES
    assert [name for name, _ in rev5.baselines] == ["low", "moderate", "high"]
    for published in rev5.files():
        assert published.path.startswith("nist.gov/SP800-53/rev5/json/NIST_SP-800-53_rev5_")
        assert len(published.git_blob) == 40
        assert published.sha256 is None or len(published.sha256) == 64


def test_lists_filter_and_page_in_memory(platform: Platform) -> None:
    service = platform.frameworks
    assert [framework.id for framework in service.list(ACTOR).items] == ["example"]
    low = service.requirements(ACTOR, "example", RequirementFilter(baseline="low"))
    assert [item.id for item in low.items] == ["ex-1", "GV.OC-01"]
    second = service.requirements(ACTOR, "example", None, PageRequest(page=2, per_page=2))
    assert ([item.id for item in second.items], second.total, second.total_pages) == (["ex-2", "GV.OC"], 5, 3)
    children = service.requirements(ACTOR, "example", RequirementFilter(parent_id="GV.OC"))
    assert [item.id for item in children.items] == ["GV.OC-01"]


def test_a_cursor_walk_reads_every_requirement_once(platform: Platform) -> None:
    seen: list[str] = []
    request: PageRequest | None = PageRequest(per_page=2, walk=True)
    while request is not None:
        page = platform.frameworks.requirements(ACTOR, "example", None, request)
        seen += [item.id for item in page.items]
        request = page.next_request
    assert seen == ["ex-1", "ex-1.1", "ex-2", "GV.OC", "GV.OC-01"]
    foreign = Position(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "ex-1", 1)  # a stored list's row time
    for after in (foreign, Position(FAR_PAST, "ex-9", 1)):
        with pytest.raises(ValidationError):
            platform.frameworks.requirements(ACTOR, "example", None, PageRequest.walking(2, after))


def test_unknown_ids_are_404(platform: Platform) -> None:
    with pytest.raises(NotFound):
        platform.frameworks.get(ACTOR, "nist-sp-800-53-rev5")  # declared, but its files are not installed
    with pytest.raises(NotFound):
        platform.frameworks.requirement(ACTOR, "example", "ex-9")


NIST_DIRECTORY = os.environ.get("COMPLIANCE_NIST_OSCAL_DIR")


@pytest.mark.skipif(not NIST_DIRECTORY, reason="set COMPLIANCE_NIST_OSCAL_DIR to NIST's OSCAL files to check them")
def test_nists_published_files_match_the_catalogue() -> None:
    """Run against a directory holding NIST's files (by repository path or by name): each file
    there must match the checksums the catalogue records, and with all of SP 800-53's files the
    catalogue reads its 20 families and the baselines' selections (149, 287 and 370 ids)."""
    assert NIST_DIRECTORY is not None
    documents = DirectoryDocuments(Path(NIST_DIRECTORY))
    (rev5,) = NIST_SOURCES
    present = {published.path: documents.read(published.path) for published in rev5.files()}
    assert any(data is not None for data in present.values())
    for published in rev5.files():
        data = present[published.path]
        assert data is None or published.matches(data), published.path
    for (name, published), expected in zip(rev5.baselines, (149, 287, 370), strict=True):
        data = present[published.path]
        assert data is None or len(profile_ids(json.loads(data))) == expected, name
    if all(data is not None for data in present.values()):
        catalog = FrameworkCatalogue(Frameworks(directory=NIST_DIRECTORY)).catalog(rev5.id)
        assert catalog is not None and len(catalog.groups) == 20
        for name, expected in zip(("low", "moderate", "high"), (149, 287, 370), strict=True):
            assert sum(name in item.baselines for item in catalog.requirements) == expected
