"""The frameworks, mappings and task-template seeds the package ships: the counts enabling relies
on, the manifest's checksums against the files (drift fails here, printing what to record), files
that do not match or name unknown requirements never served, and relations turned when a mapping
is read the other way round."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from importlib import resources
from pathlib import Path

import attrs
import falcon.testing
import pytest

from compliance_core import Platform
from compliance_core.areas.frameworks.bundled import (
    BUNDLED_SOURCES,
    ISO_27001_2022,
    MAPPING_SOURCES,
    SOC2_TSC_2017,
    BundledDocuments,
    read_task_templates,
)
from compliance_core.areas.frameworks.catalogue import NIST_SOURCES, FrameworkCatalogue, Frameworks
from compliance_core.areas.frameworks.mappings import (
    MappingRelation,
    MappingSource,
    RequirementMapping,
    read_mappings,
)
from compliance_core.areas.frameworks.oscal import PublishedFile, git_blob_id
from compliance_core.areas.frameworks.task_templates import TaskTemplateDepartment, normalised_frequency
from compliance_core.kernel.errors import ValidationError
from compliance_http.app import create_app

ISO, SOC2 = ISO_27001_2022.id, SOC2_TSC_2017.id
SOC2_GROUPS = {
    "cc1": 5, "cc2": 3, "cc3": 4, "cc4": 2, "cc5": 3, "cc6": 8, "cc7": 5, "cc8": 1, "cc9": 2,
    "a1": 3, "c1": 2, "pi1": 5,
    "p1": 1, "p2": 1, "p3": 2, "p4": 3, "p5": 2, "p6": 7, "p7": 1, "p8": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def catalogue() -> FrameworkCatalogue:
    return FrameworkCatalogue(Frameworks())


def _manifest() -> list[PublishedFile]:
    files = [published for source in BUNDLED_SOURCES for published in source.files()]
    files += [source.task_templates for source in BUNDLED_SOURCES if source.task_templates is not None]
    return files + [mapping.file for mapping in MAPPING_SOURCES]


def _data_directory() -> Path:
    return Path(str(resources.files("compliance_core.areas.frameworks").joinpath("data")))


def test_the_manifests_checksums_match_the_shipped_files() -> None:
    """On a deliberate edit of a data file, record the values this prints in ``bundled.py``."""
    documents = BundledDocuments()
    for published in _manifest():
        data = documents.read(published.path)
        assert data is not None, f"data/{published.path} is in the manifest but not in the package"
        actual = (git_blob_id(data), hashlib.sha256(data).hexdigest())
        assert (published.git_blob, published.sha256) == actual, (
            f"data/{published.path} changed: record git_blob={actual[0]!r} sha256={actual[1]!r} in bundled.py"
        )
    shipped = {path.relative_to(_data_directory()).as_posix() for path in _data_directory().rglob("*.json")}
    assert shipped == {published.path for published in _manifest()}, "every shipped file is in the manifest"


def test_the_bundled_frameworks_are_installed_without_any_directory(catalogue: FrameworkCatalogue) -> None:
    assert [source.id for source in catalogue.installed()] == [ISO, SOC2, "gdpr", "dora", "nis2"]
    assert Frameworks().sources == NIST_SOURCES + BUNDLED_SOURCES
    for source in BUNDLED_SOURCES:
        assert source.bundled and source.repository == "" and source.commit == ""
        assert "own words" in source.publisher
        assert source.catalog.sha256 is not None and source.control_kinds


def test_iso_27001_has_93_annex_a_controls_to_enable_and_its_clauses(catalogue: FrameworkCatalogue) -> None:
    catalog = catalogue.catalog(ISO)
    assert catalog is not None
    assert [group.id for group in catalog.groups] == ["clauses", "a.5", "a.6", "a.7", "a.8"]
    actionable = catalogue.actionable(ISO)
    assert len(actionable) == 93
    assert Counter(item.group_id for item in actionable) == {"a.5": 37, "a.6": 8, "a.7": 14, "a.8": 34}
    assert {item.kind for item in actionable} == {"annex-a"}
    for group, count in (("5", 37), ("6", 8), ("7", 14), ("8", 34)):
        chosen = [item for item in actionable if item.group_id == f"a.{group}"]
        assert [item.label for item in chosen] == [f"A.{group}.{n}" for n in range(1, count + 1)]
        assert [item.id for item in chosen] == [f"a.{group}.{n}" for n in range(1, count + 1)]
    clauses = [item for item in catalog.requirements if item.group_id == "clauses"]
    assert {item.kind for item in clauses} == {"clause"} and not set(clauses) & set(actionable)
    assert [item.label for item in clauses][:2] == ["4.1", "4.2"] and clauses[-1].id == "c.10.2"
    assert len(clauses) == 23
    assert all(item.title and item.statement for item in catalog.requirements)


def test_soc2_has_its_criteria_to_enable(catalogue: FrameworkCatalogue) -> None:
    actionable = catalogue.actionable(SOC2)
    assert Counter(item.group_id for item in actionable) == SOC2_GROUPS
    assert len(actionable) == sum(SOC2_GROUPS.values()) == 61
    by_id = {item.id: item for item in actionable}
    assert by_id["cc6.1"].label == "CC6.1" and by_id["pi1.5"].label == "PI1.5" and by_id["p6.7"].label == "P6.7"
    assert {item.kind for item in actionable} == {"criterion"}


def test_the_eu_frameworks_enable_every_article(catalogue: FrameworkCatalogue) -> None:
    for framework_id in ("gdpr", "dora", "nis2"):
        catalog = catalogue.catalog(framework_id)
        assert catalog is not None
        assert catalogue.actionable(framework_id) == tuple(item for item in catalog.requirements if not item.withdrawn)
        assert {item.kind for item in catalogue.actionable(framework_id)} == {"article"}
    assert catalogue.actionable("no-such-framework") == ()


def test_a_file_that_does_not_match_its_checksums_is_not_served(tmp_path: Path) -> None:
    wrong = "0" * 64
    tampered = attrs.evolve(ISO_27001_2022, catalog=attrs.evolve(ISO_27001_2022.catalog, sha256=wrong))
    assert FrameworkCatalogue(Frameworks(sources=(tampered,))).installed() == ()
    original = (_data_directory() / ISO_27001_2022.catalog.path).read_bytes()
    (tmp_path / ISO_27001_2022.catalog.path).write_bytes(original.replace(b"Access control", b"Access free-for-all"))
    from_directory = attrs.evolve(ISO_27001_2022, bundled=False)
    assert FrameworkCatalogue(Frameworks(directory=tmp_path, sources=(from_directory,))).installed() == ()
    (tmp_path / ISO_27001_2022.catalog.path).write_bytes(original)
    assert len(FrameworkCatalogue(Frameworks(directory=tmp_path, sources=(from_directory,))).installed()) == 1

    (mapping,) = MAPPING_SOURCES
    altered = attrs.evolve(mapping, file=attrs.evolve(mapping.file, sha256=wrong))
    catalogue = FrameworkCatalogue(Frameworks(mappings=(altered,)))
    assert catalogue.mappings_between(ISO, SOC2) == ()
    with pytest.raises(ValidationError) as raised:
        catalogue.load_mappings(altered)
    assert raised.value.details["value"] == mapping.file.path
    seeds = attrs.evolve(ISO_27001_2022.task_templates, sha256=wrong)
    assert (
        FrameworkCatalogue(Frameworks(sources=(attrs.evolve(ISO_27001_2022, task_templates=seeds),))).task_templates(
            ISO
        )
        == ()
    )


def test_files_are_read_on_first_use_only(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    plain = BundledDocuments.read

    def counted(self: BundledDocuments, path: str) -> bytes | None:
        read.append(path)
        return plain(self, path)

    monkeypatch.setattr(BundledDocuments, "read", counted)
    catalogue = FrameworkCatalogue(Frameworks())
    assert read == []
    catalogue.actionable("gdpr")
    catalogue.catalog("gdpr")
    assert read == ["gdpr.json"]


def test_every_mapped_requirement_exists(catalogue: FrameworkCatalogue) -> None:
    for mapping in MAPPING_SOURCES:
        found = catalogue.load_mappings(mapping)  # raises, naming each unknown id
        assert (found.source, found.target) == (mapping.source, mapping.target)
    pairs = catalogue.mappings_between(ISO, SOC2)
    assert len(pairs) >= 80
    annex_a = {item.id for item in catalogue.actionable(ISO)}
    assert len({pair.source_requirement for pair in pairs} & annex_a) >= 85, "most Annex A controls are mapped"
    relations = Counter(pair.relation for pair in pairs)
    assert relations[MappingRelation.EQUAL] >= 3 and relations[MappingRelation.INTERSECTS] > len(pairs) / 2
    assert {pair.publisher for pair in pairs} == {"compliance-platform project (our own mapping)"}


def test_a_mapping_file_naming_an_unknown_requirement_is_refused(tmp_path: Path) -> None:
    document = {
        "source": ISO,
        "target": SOC2,
        "publisher": "the tests",
        "version": "1",
        "mappings": [
            {"source": "a.5.1", "target": "cc5.3", "relation": "intersects"},
            {"source": "a.5.99", "target": "cc99.1", "relation": "equal"},
        ],
    }
    data = json.dumps(document).encode()
    (tmp_path / "ours.json").write_bytes(data)
    mapping = MappingSource(
        source=ISO,
        target=SOC2,
        bundled=False,
        file=PublishedFile(path="ours.json", git_blob=git_blob_id(data), sha256=hashlib.sha256(data).hexdigest()),
    )
    catalogue = FrameworkCatalogue(Frameworks(directory=tmp_path, mappings=(mapping,)))
    with pytest.raises(ValidationError) as raised:
        catalogue.load_mappings(mapping)
    assert [entry["field"] for entry in raised.value.details["errors"]] == ["mappings[1].source", "mappings[1].target"]
    assert catalogue.mappings_between(ISO, SOC2) == ()
    assert catalogue.mappings_between(SOC2, ISO) == ()


def test_relations_turn_when_a_mapping_is_read_the_other_way(catalogue: FrameworkCatalogue) -> None:
    assert [relation.inverse() for relation in MappingRelation] == [
        MappingRelation.EQUAL,
        MappingRelation.SUPERSET,
        MappingRelation.SUBSET,
        MappingRelation.INTERSECTS,
    ]
    pair = RequirementMapping(
        source_framework="x",
        source_requirement="1",
        target_framework="y",
        target_requirement="2",
        relation=MappingRelation.SUBSET,
        publisher="p",
    )
    assert (pair.inverse().source_framework, pair.inverse().relation) == ("y", MappingRelation.SUPERSET)
    assert pair.inverse().inverse() == pair
    forward, backward = catalogue.mappings_between(ISO, SOC2), catalogue.mappings_between(SOC2, ISO)
    assert backward == tuple(item.inverse() for item in forward)
    assert {item.relation for item in backward} >= {MappingRelation.EQUAL, MappingRelation.SUPERSET}
    assert all(item.source_framework == SOC2 and item.target_framework == ISO for item in backward)
    assert catalogue.mappings_between(ISO, ISO) == () and catalogue.mappings_between(ISO, "gdpr") == ()
    without_soc2 = FrameworkCatalogue(Frameworks(sources=(ISO_27001_2022,)))
    assert without_soc2.mappings_between(ISO, SOC2) == (), "only between installed frameworks"


def test_a_bad_mapping_file_names_every_field_at_fault() -> None:
    with pytest.raises(ValidationError) as raised:
        read_mappings(
            {
                "source": "a",
                "target": "",
                "publisher": "p",
                "version": "1",
                "mappings": [
                    {"source": "x", "target": "y", "relation": "overlaps"},
                    {"source": "x", "target": "y", "relation": "equal"},
                    "x>y",
                ],
            }
        )
    fields = [entry["field"] for entry in raised.value.details["errors"]]
    assert fields == ["target", "mappings[0].relation", "mappings[1]", "mappings[2]"]
    with pytest.raises(ValidationError):
        read_mappings([])


def test_every_seed_names_requirements_of_its_framework_once_per_key(catalogue: FrameworkCatalogue) -> None:
    for source in BUNDLED_SOURCES:
        seeds = catalogue.load_task_templates(source.id)  # raises, naming each unknown requirement
        assert seeds and catalogue.task_templates(source.id) == seeds, source.id
        keys = [seed.key for seed in seeds]
        assert len(keys) == len(set(keys)), f"{source.id}: repeated keys"
        for seed in seeds:
            normalised_frequency(seed.frequency)
            TaskTemplateDepartment(seed.department)
            assert seed.name and seed.requirement_ids, (source.id, seed.key)
    assert catalogue.task_templates("no-such-framework") == ()
    without = FrameworkCatalogue(Frameworks(sources=(attrs.evolve(ISO_27001_2022, task_templates=None),)))
    assert without.task_templates(ISO) == ()


def test_a_bad_seed_file_is_refused() -> None:
    template = {"key": "k", "name": "n", "description": "", "frequency": "yearly", "department": "it"}
    with pytest.raises(ValidationError) as raised:
        read_task_templates(
            {
                "framework": "gdpr",
                "templates": [{**template, "requirements": ["art-5"]}, {**template, "requirements": [5]}],
            },
            ISO,
        )
    fields = [entry["field"] for entry in raised.value.details["errors"]]
    assert fields == ["framework", "templates[1].key", "templates[1].requirements"]


def test_the_frameworks_list_shows_the_bundled_frameworks_with_no_directory_configured() -> None:
    with Platform.open("memory://") as platform:
        boot = platform.bootstrap("Acme")
        assert boot.owner_key.secret is not None
        result = falcon.testing.simulate_get(
            create_app(platform), "/v1/frameworks", headers={"X-API-Key": boot.owner_key.secret}
        )
    assert result.status_code == 200, result.text
    listed = {item["id"]: item for item in result.json["data"]}
    assert list(listed) == [ISO, SOC2, "gdpr", "dora", "nis2"]
    assert (listed[ISO]["sourceUrl"], listed[ISO]["sourceCommit"], listed[ISO]["requirementCount"]) == ("", "", 116)
    assert listed[SOC2]["requirementCount"] == 61
