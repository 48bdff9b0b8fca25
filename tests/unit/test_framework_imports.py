"""Frameworks an organization imports: sheets and OSCAL catalogs become frameworks it enables
like the catalogue's, a profile tailors a framework it knows and round-trips, every error of a
file is reported at once, and nothing is kept from a refused file."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import openpyxl
import pytest
from trestle.oscal.catalog import Catalog as TrestleCatalog

from compliance_core import Platform
from compliance_core.areas.frameworks.control_models import ControlRequirementFilter
from compliance_core.areas.frameworks.controls import MappingFilter, MappingImport
from compliance_core.areas.frameworks.imported import FrameworkImport
from compliance_core.kernel.errors import Conflict, NotFound, ValidationError
from compliance_core.kernel.pages import PageRequest

ISO = "iso-27001-2022"
EXAMPLES = Path(__file__).parents[1] / "oscal_examples"
EVERYTHING = PageRequest(per_page=200)
SHEET = (
    "id,title,label,statement,group,groupTitle,parent,kind\n"
    "SUP-1,Keep a register of suppliers,S1,List every supplier with its owner.,sup,Suppliers,,rule\n"
    "SUP-1.a,Name an owner,S1(a),Each supplier has one owner.,,,SUP-1,rule\n"
    "HR-1,Screen new staff,H1,Check references before hiring.,hr,People,,rule\n"
    "HR-G,People rules in general,,,hr,People,,guidance\n"
)


def _file(data: bytes | str, file_format: str, **fields: object) -> FrameworkImport:
    raw = data.encode() if isinstance(data, str) else data
    return FrameworkImport(format=file_format, content=base64.b64encode(raw).decode(), **fields)


def _profile(*ids: str, href: str = "iso-27001-2022.json", title: str = "Our ISO subset") -> bytes:
    document = {
        "profile": {
            "uuid": "00000000-0000-4000-8000-0000000000a1",
            "metadata": {
                "title": title,
                "last-modified": "2026-01-01T00:00:00Z",
                "version": "1",
                "oscal-version": "1.1.2",
            },
            "imports": [{"href": href, "include-controls": [{"with-ids": list(ids)}]}],
        }
    }
    return json.dumps(document, indent=1).encode()


def _fields(error: pytest.ExceptionInfo[ValidationError]) -> dict[str, object]:
    entries = error.value.details.get("errors") or [error.value.details]
    return {entry["field"]: entry["value"] for entry in entries}


def test_a_sheet_becomes_a_framework_the_organization_enables(platform: Platform, owner) -> None:
    made = platform.framework_imports.create(
        owner, _file(SHEET, "csv", framework_id="supplier-rules", name="Supplier rules", control_kinds=["rule"])
    )
    assert (made.requirement_count, made.control_count, made.format) == (4, 3, "csv")
    framework = platform.frameworks.get(owner, "supplier-rules")
    assert (framework.name, framework.imported, framework.bundled, framework.control_count) == (
        "Supplier rules",
        True,
        False,
        3,
    )
    assert [group.id for group in framework.groups] == ["sup", "hr"]
    nested = platform.frameworks.requirement(owner, "supplier-rules", "SUP-1.a")
    assert (nested.label, nested.parent_id, nested.group_id, nested.statement) == (
        "S1(a)",
        "SUP-1",
        "sup",
        "Each supplier has one owner.",
    )
    assert "supplier-rules" in {item.id for item in platform.frameworks.list(owner, EVERYTHING).items}

    platform.controls.enable(owner, "supplier-rules")
    rows = platform.controls.requirement_controls(owner, "supplier-rules", ControlRequirementFilter(), EVERYTHING)
    assert sorted(row.requirement_id for row in rows.items) == ["HR-1", "SUP-1", "SUP-1.a"]


def test_an_xlsx_sheet_imports_as_its_csv_does(platform: Platform, owner) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    for line in SHEET.splitlines():
        sheet.append(line.split(","))
    buffer = io.BytesIO()
    book.save(buffer)
    made = platform.framework_imports.create(owner, _file(buffer.getvalue(), "xlsx", name="Supplier rules"))
    assert (made.framework_id, made.requirement_count, made.control_count) == (made.id, 4, 4)


def test_every_error_of_a_sheet_is_reported_at_once_and_nothing_is_kept(platform: Platform, owner) -> None:
    sheet = "id,title,parent,colour\n"  # an unknown column is refused before any row is read
    with pytest.raises(ValidationError) as unknown:
        platform.framework_imports.create(owner, _file(sheet, "csv", name="Rules"))
    assert _fields(unknown) == {"content.rows[1].colour": "colour"}
    sheet = (
        "id,title,parent\n"
        "A-1,First,\n"
        "2-bad,Starts with a digit,\n"
        "A-1,Repeated,\n"
        "A-3,,\n"
        "A-4,Orphan,A-9\n"
        "A-5,Loops,A-6\n"
        "A-6,Loops back,A-5\n"
    )
    with pytest.raises(ValidationError) as raised:
        platform.framework_imports.create(owner, _file(sheet, "csv", name="Rules"))
    assert _fields(raised) == {
        "content.rows[3].id": "2-bad",
        "content.rows[4].id": "A-1",
        "content.rows[5].title": None,
        "content.rows[6].parent": "A-9",
        "content.rows[7].parent": "A-6",
        "content.rows[8].parent": "A-5",
    }
    with pytest.raises(ValidationError) as nameless:
        platform.framework_imports.create(owner, _file(SHEET, "csv"))
    assert nameless.value.details["field"] == "name"
    assert platform.framework_imports.list(owner).total == 0


def test_an_oscal_catalog_is_checked_against_oscal_and_exports_as_imported(platform: Platform, owner) -> None:
    raw = (EXAMPLES / "example_catalog.json").read_bytes()
    made = platform.framework_imports.create(owner, _file(raw, "oscal_catalog", framework_id="example-imported"))
    assert made.requirement_count == 5 and made.name == json.loads(raw)["catalog"]["metadata"]["title"]
    exported = b"".join(platform.frameworks.export_oscal(owner, "example-imported").chunks)
    assert read_catalog_ids(exported) == read_catalog_ids(raw)
    TrestleCatalog.parse_obj(json.loads(exported)["catalog"])

    broken = json.loads(raw)
    del broken["catalog"]["metadata"]
    broken["catalog"]["uuid"] = "not-a-uuid"
    with pytest.raises(ValidationError) as raised:
        platform.framework_imports.create(owner, _file(json.dumps(broken), "oscal_catalog"))
    assert {"content.catalog.uuid", "content.catalog.metadata"} <= set(_fields(raised))
    with pytest.raises(ValidationError) as not_json:
        platform.framework_imports.create(owner, _file(b"\x00\x01", "oscal_catalog"))
    assert not_json.value.details["field"] == "content"


def read_catalog_ids(raw: bytes) -> list[str]:
    def walk(controls: list[dict]) -> list[str]:
        return [i for control in controls for i in (control["id"], *walk(control.get("controls", [])))]

    return [i for group in json.loads(raw)["catalog"]["groups"] for i in walk(group.get("controls", []))]


def test_a_sheet_exports_as_an_oscal_catalog_trestle_reads(platform: Platform, owner) -> None:
    made = platform.framework_imports.create(owner, _file(SHEET, "csv", name="Supplier rules", framework_id="sup"))
    exported = b"".join(platform.framework_imports.export_oscal(owner, made.id).chunks)
    catalog = TrestleCatalog.parse_obj(json.loads(exported)["catalog"])
    assert catalog.metadata.title == "Supplier rules"
    assert read_catalog_ids(exported) == ["SUP-1", "SUP-1.a", "HR-1", "HR-G"]


def test_a_profile_tailors_a_framework_reuses_its_controls_and_round_trips(platform: Platform, owner) -> None:
    platform.controls.enable(owner, ISO)
    before = platform.controls.list(owner).total
    raw = _profile("a.5.15", "a.5.18", "a.8.2", "a.5.1")
    made = platform.framework_imports.create(owner, _file(raw, "oscal_profile", framework_id="iso-subset"))
    assert (made.base_framework, made.requirement_count, made.control_kinds) == (ISO, 4, ("annex-a",))
    assert made.name == "Our ISO subset"
    platform.controls.enable(owner, "iso-subset")
    assert platform.controls.list(owner).total == before  # every control of the subset is ISO's own
    iso_control = platform.controls.requirement_controls(owner, ISO, ControlRequirementFilter(requirement_id="a.5.15"))
    subset_control = platform.controls.requirement_controls(
        owner, "iso-subset", ControlRequirementFilter(requirement_id="a.5.15")
    )
    assert iso_control.items[0].control_id == subset_control.items[0].control_id

    exported = b"".join(platform.framework_imports.export_oscal(owner, made.id).chunks)
    assert exported == raw  # the profile comes back as it was imported
    again = platform.framework_imports.create(owner, _file(exported, "oscal_profile", framework_id="iso-subset-2"))
    first = platform.frameworks.requirements(owner, "iso-subset", page=EVERYTHING)
    second = platform.frameworks.requirements(owner, "iso-subset-2", page=EVERYTHING)
    assert [item.id for item in first.items] == [item.id for item in second.items]
    assert again.catalog_sha256 == made.catalog_sha256


def test_a_profile_names_what_it_cannot_resolve(platform: Platform, owner) -> None:
    with pytest.raises(ValidationError) as unknown_ids:
        platform.framework_imports.create(owner, _file(_profile("a.5.15", "zz-9"), "oscal_profile"))
    assert _fields(unknown_ids) == {"content.profile.imports[0].include-controls": ["zz-9"]}
    with pytest.raises(ValidationError) as unknown_file:
        platform.framework_imports.create(owner, _file(_profile("a.5.15", href="nowhere.json"), "oscal_profile"))
    assert _fields(unknown_file) == {"baseFramework": "nowhere.json"}
    named = platform.framework_imports.create(
        owner, _file(_profile("a.5.15", href="nowhere.json"), "oscal_profile", base_framework=ISO)
    )
    assert named.base_framework == ISO and named.requirement_count == 1


def test_an_import_cannot_take_an_installed_frameworks_id(platform: Platform, owner) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.framework_imports.create(owner, _file(SHEET, "csv", name="Rules", framework_id=ISO))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("frameworkId", ISO)
    platform.framework_imports.create(owner, _file(SHEET, "csv", name="Rules", framework_id="rules"))
    with pytest.raises(ValidationError):
        platform.framework_imports.create(owner, _file(SHEET, "csv", name="Rules again", framework_id="rules"))
    with pytest.raises(ValidationError) as slug:
        _file(SHEET, "csv", framework_id="Not A Slug")
    assert slug.value.details["field"] == "frameworkId"


def test_an_enabled_import_is_not_deleted_and_its_mappings_go_with_it(platform: Platform, owner) -> None:
    made = platform.framework_imports.create(owner, _file(SHEET, "csv", name="Rules", framework_id="rules"))
    platform.controls.import_mappings(
        owner,
        MappingImport(
            source_framework="rules",
            target_framework=ISO,
            mappings=[{"source": "SUP-1", "target": "a.5.19", "relation": "subset"}],
        ),
    )
    platform.controls.enable(owner, "rules")
    with pytest.raises(Conflict):
        platform.framework_imports.delete(owner, made.id)
    platform.controls.disable(owner, "rules")
    platform.framework_imports.delete(owner, made.id)
    with pytest.raises(NotFound):
        platform.frameworks.get(owner, "rules")
    assert platform.controls.mappings(owner, MappingFilter(source_framework="rules")).total == 0


def test_another_organization_sees_none_of_an_import(platform: Platform, owner, other_org) -> None:
    made = platform.framework_imports.create(owner, _file(SHEET, "csv", name="Rules", framework_id="rules"))
    with pytest.raises(NotFound):
        platform.frameworks.get(other_org, "rules")
    with pytest.raises(NotFound):
        platform.framework_imports.get(other_org, made.id)
    with pytest.raises(NotFound):
        platform.controls.enable(other_org, "rules")
    assert "rules" not in {item.id for item in platform.frameworks.list(other_org, EVERYTHING).items}
