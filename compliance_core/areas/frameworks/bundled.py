"""The frameworks, mappings and task-template seeds this package ships in its ``data`` directory,
each file named with its checksums, and the reader of the seeds.

These are written by the project, not taken from a publisher: ISO/IEC 27001:2022 and the SOC 2
Trust Services Criteria as their identifiers with summaries in our own words (the standards'
texts belong to ISO and the AICPA), and GDPR, DORA and NIS2 as their article numbers and titles
(EU law) with the obligations summarised in our own words. They ship with the package, so every
platform has them whatever directory it names for NIST's files. The checksums make an edit to a
file a deliberate act: ``tests/unit/test_framework_bundled.py`` fails on a file that no longer
matches this manifest and prints the SHA-256 and git blob id to record here, and the catalogue
serves nothing from a file that does not match.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from .mappings import MappingSource
from .oscal import FrameworkSource, PublishedFile

__all__ = [
    "BundledDocuments",
    "TaskTemplateSeed",
    "read_task_templates",
    "ISO_27001_2022",
    "SOC2_TSC_2017",
    "GDPR",
    "DORA",
    "NIS2",
    "BUNDLED_SOURCES",
    "MAPPING_SOURCES",
]

_PACKAGE = __name__.rpartition(".")[0]


@attrs.frozen
class BundledDocuments:
    """The files under this package's ``data`` directory, wherever the package is installed
    (a wheel, an editable checkout, a zip), by their path under ``data``."""

    def read(self, path: str) -> bytes | None:
        found = resources.files(_PACKAGE).joinpath("data", *path.split("/"))
        return found.read_bytes() if found.is_file() else None


@attrs.frozen(kw_only=True)
class TaskTemplateSeed:
    """A recurring piece of work the project suggests for a framework, copied into an
    organization's task templates when it enables the framework."""

    key: str
    """Unique within its framework: what tells the seed's copy from the organization's own."""
    name: str
    description: str
    frequency: str
    """``monthly``, ``quarterly``, ``yearly`` or an RFC 5545 recurrence rule."""
    department: str
    requirement_ids: tuple[str, ...]


def read_task_templates(document: Any, framework_id: str) -> tuple[TaskTemplateSeed, ...]:
    """The seeds of a parsed task-template file for ``framework_id``; everything wrong with it is
    reported at once, each error naming where it is (``templates[3].key``)."""
    if not isinstance(document, Mapping):
        raise ValidationError.field("templates", type(document).__name__, "must be a JSON object")
    errors: list[ValidationError] = []
    if document.get("framework") != framework_id:
        errors.append(ValidationError.field("framework", document.get("framework"), f"must be {framework_id}"))
    entries = document.get("templates")
    if not isinstance(entries, list):
        errors.append(ValidationError.field("templates", entries, "must be a list of templates"))
        entries = []
    seeds: list[TaskTemplateSeed] = []
    keys: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"templates[{index}]"
        if not isinstance(entry, Mapping):
            errors.append(ValidationError.field(where, entry, "must be an object"))
            continue
        texts = {
            key: _text(entry, key, f"{where}.{key}", errors, blank=key == "description")
            for key in ("key", "name", "description", "frequency", "department")
        }
        if texts["key"] in keys:
            errors.append(ValidationError.field(f"{where}.key", texts["key"], "repeats a key used before"))
        keys.add(texts["key"])
        requirements = entry.get("requirements")
        if not isinstance(requirements, list) or not all(isinstance(item, str) and item for item in requirements):
            errors.append(
                ValidationError.field(f"{where}.requirements", requirements, "must be a list of requirement ids")
            )
            requirements = []
        seeds.append(
            TaskTemplateSeed(
                key=texts["key"],
                name=texts["name"],
                description=texts["description"],
                frequency=texts["frequency"],
                department=texts["department"],
                requirement_ids=tuple(requirements),
            )
        )
    if errors:
        raise ValidationError.every(errors)
    return tuple(seeds)


def _text(entry: Mapping[str, Any], key: str, field: str, errors: list[ValidationError], blank: bool = False) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not (blank or value.strip()):
        errors.append(ValidationError.field(field, value, "must be a non-empty string"))
        return ""
    return value


def _shipped(path: str, git_blob: str, sha256: str) -> PublishedFile:
    return PublishedFile(path=path, git_blob=git_blob, sha256=sha256)


_OURS = "compliance-platform project"

ISO_27001_2022 = FrameworkSource(
    id="iso-27001-2022",
    name="ISO/IEC 27001:2022 Information security management systems",
    version="2022",
    publisher=(
        f"{_OURS}: the identifiers of ISO/IEC 27001:2022 with summaries in the project's own words, "
        "not the standard's text (ISO sells the standard)"
    ),
    repository="",
    commit="",
    catalog=_shipped(
        "iso-27001-2022.json",
        "90158bd58661602cbbf53fe51dba929647220c8a",
        "f338566b9fc6e58c23d5ccaea5a040a308f15dbb79400e9cfaf5aa2a65672952",
    ),
    task_templates=_shipped(
        "task-templates/iso-27001-2022.json",
        "a3ba35e56b4b1a767d0d0f5f022cbad88d564a28",
        "2a2cc84c3a402026e39ddb99dbfe42b00aed0ed8764f2766eb65a21edcc0e9d3",
    ),
    bundled=True,
    control_kinds=("annex-a",),
)
"""Clauses 4 to 10 (the management system itself, kind ``clause``) and the 93 Annex A controls
(kind ``annex-a``), of which only the controls become controls and rows of the statement of
applicability."""

SOC2_TSC_2017 = FrameworkSource(
    id="soc2-tsc-2017",
    name="SOC 2 Trust Services Criteria (2017, points of focus revised 2022)",
    version="2017 (revised points of focus 2022)",
    publisher=(
        f"{_OURS}: the criteria identifiers of the AICPA's Trust Services Criteria with summaries in "
        "the project's own words, not the criteria's text"
    ),
    repository="",
    commit="",
    catalog=_shipped(
        "soc2-tsc-2017.json",
        "d7a36c46fe5f66b23ddfb357840923757d6d93e1",
        "3d19e3dd08fcb1bb35be490e0a2c90e9e0c0cd059122fbac2f0917a61811e09d",
    ),
    task_templates=_shipped(
        "task-templates/soc2-tsc-2017.json",
        "a3a96bad69a1469700c33398d45067a481fc7a5c",
        "af9cab354d4d9a936a50dd8fd4cca14846ae524d363cf153f4802fe57cc4ffe0",
    ),
    bundled=True,
    control_kinds=("criterion",),
)
"""The common criteria CC1-CC9 and the availability, confidentiality, processing integrity and
privacy criteria, all of kind ``criterion``."""

_EU_LAW = f"{_OURS}: article numbers and titles of EU law with the obligations summarised in the project's own words"

GDPR = FrameworkSource(
    id="gdpr",
    name="GDPR: General Data Protection Regulation (EU) 2016/679",
    version="2016/679",
    publisher=_EU_LAW,
    repository="",
    commit="",
    catalog=_shipped(
        "gdpr.json",
        "040892b52fd5be20bd5ee49b9cac10763c454e44",
        "ad0f2455a3121686cce4148260da0e90d2795f7f2060255db30477ef9e47c390",
    ),
    task_templates=_shipped(
        "task-templates/gdpr.json",
        "f646194010baec7b43c4a04b8c59030cc97f54d2",
        "cc8e59faca8b3be284ff72a9f0da491e6e0448405ce5693d27991f18034b16cb",
    ),
    bundled=True,
    control_kinds=("article",),
)

DORA = FrameworkSource(
    id="dora",
    name="DORA: Digital Operational Resilience Act, Regulation (EU) 2022/2554",
    version="2022/2554",
    publisher=_EU_LAW,
    repository="",
    commit="",
    catalog=_shipped(
        "dora.json",
        "0c7b5445ca7629ca70444f2a6aa8aa0958c18ada",
        "68c43880cd08c8707043747fc3413fc463cb6146dd6695d7ac81884650709c02",
    ),
    task_templates=_shipped(
        "task-templates/dora.json",
        "378b0504b71f39077ad8c232907e9ddc8473ed36",
        "9e4613aa023ce81fdbee7b9b4818bd2afb81eafc2d83ea4923b2337a065838ce",
    ),
    bundled=True,
    control_kinds=("article",),
)

NIS2 = FrameworkSource(
    id="nis2",
    name="NIS2: Directive (EU) 2022/2555 on a high common level of cybersecurity",
    version="2022/2555",
    publisher=_EU_LAW,
    repository="",
    commit="",
    catalog=_shipped(
        "nis2.json",
        "b7601054b33350dfa0c8df106bc6f617b433dfb1",
        "2f2cf13041be638921f98c2c3188eea89c11e65f434acd0ef78f34856204b613",
    ),
    task_templates=_shipped(
        "task-templates/nis2.json",
        "597fd9ad16caf5106dcdbbea64bca9d86bd5dab5",
        "f3cc262e7f334ec628f6f2581bb845d9c941b9cc67e550066ec10edaa83d1263",
    ),
    bundled=True,
    control_kinds=("article",),
)
"""Article 21(2)'s points (a) to (j) are requirements of their own under article 21."""

BUNDLED_SOURCES: tuple[FrameworkSource, ...] = (ISO_27001_2022, SOC2_TSC_2017, GDPR, DORA, NIS2)

MAPPING_SOURCES: tuple[MappingSource, ...] = (
    MappingSource(
        source=ISO_27001_2022.id,
        target=SOC2_TSC_2017.id,
        file=_shipped(
            "mappings/iso-27001-2022--soc2-tsc-2017.json",
            "bd981c9fa23a860fa7674e19ceda14c06078d182",
            "6525058367f9078552c24a1c79d955692b3985a1ed5f76bd7387d9678f90c244",
        ),
    ),
)
"""The mappings this package ships; the catalogue serves each both ways round."""
